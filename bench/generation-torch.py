"""PyTorch side of bench/generation.ts: greedy ``model.generate`` on a checkpoint, timed per token.

    .venv/bin/python bench/generation-torch.py '{"model_dir": DIR, "prompt_ids": [...], "new_tokens": 128,
                                                "threads": 1, "reps": 5}'

``do_sample=False``, KV cache on, no stop on EOS (``eos_token_id`` cleared, nothing suppressed: the argmax is
taken over every id, as the ONNX side does). A logits processor timestamps each step: its first call follows the
prefill forward, each later one a one-token decode forward. Prints one JSON object: the generated ids (of the
last run), and per run the prefill ms and decode tokens/s (``(N - 1) / (t_last - t_first)``), with medians.
"""

from __future__ import annotations

import json
import statistics
import sys
import time


def main() -> None:
    spec = json.loads(sys.argv[1])
    import torch
    from transformers import AutoModelForCausalLM, LogitsProcessor, LogitsProcessorList

    torch.set_num_threads(int(spec["threads"]))
    torch.set_num_interop_threads(1)
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    model.eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = model.config.pad_token_id
    ids = torch.tensor([spec["prompt_ids"]], dtype=torch.long)
    n = int(spec["new_tokens"])

    class Stamp(LogitsProcessor):
        def __init__(self) -> None:
            self.t: list[float] = []

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            self.t.append(time.perf_counter())
            return scores

    runs = []
    out = None
    for r in range(int(spec["reps"]) + 1):  # the first run warms up and is not reported
        stamp = Stamp()
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=n, min_new_tokens=0,
                                 use_cache=True, logits_processor=LogitsProcessorList([stamp]), eos_token_id=None)
        if r > 0:
            runs.append({"prefill_ms": 1000 * (stamp.t[0] - t0), "decode_tokens_per_s": (n - 1) / (stamp.t[-1] - stamp.t[0]),
                         "total_s": time.perf_counter() - t0})
    assert out is not None
    print(json.dumps({
        "tokens": out[0, ids.shape[1]:].tolist(),
        "prefill_ms": statistics.median(x["prefill_ms"] for x in runs),
        "decode_tokens_per_s": statistics.median(x["decode_tokens_per_s"] for x in runs),
        "runs": runs, "torch": torch.__version__, "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
