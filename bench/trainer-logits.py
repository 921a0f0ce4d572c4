"""What ``logits_chunk`` saves and costs: peak memory and time of one training forward + backward through
``batching.trained_logps`` at a real vocabulary, with the head on every trained position at once (``0``) and in
chunks of N positions.

The model is a randomly initialised Qwen2-style model with Qwen2's vocabulary (151,936 tokens) and a small body
(``--hidden``, ``--layers``), so the LM head's output is what a step's memory is about: one packed row of
``--tokens`` tokens, ``--trained`` of them trained (an assistant-only loss mask trains a part of each
conversation). Each setting runs in a fresh process (one allocator each):

- peak memory: on CUDA, the allocator's peak during the step above what was allocated before it; on the CPU,
  the process's peak resident memory after the first step above its peak before it (glibc hands tensors this
  large to mmap, so they show in the resident set);
- time: median of ``--steps`` steps after one warm-up step (bf16 autocast on CUDA, float32 on the CPU).

    .venv/bin/python bench/trainer-logits.py                          # CPU: 4,096 tokens, hidden 128
    python3 bench/trainer-logits.py --tokens 16384 --hidden 896 --layers 4   # GPU

Prints a table and writes ``bench/results/trainer-logits.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))

VOCAB = 151_936  # Qwen2's


def child(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from gymflow_trainer import batching

    torch.manual_seed(0)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    heads = max(spec["hidden"] // 64, 2)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, hidden_size=spec["hidden"], intermediate_size=spec["hidden"] * 4,
                                         num_hidden_layers=spec["layers"], num_attention_heads=heads, num_key_value_heads=heads,
                                         max_position_embeddings=spec["tokens"], tie_word_embeddings=True)).to(dev)
    model.train()
    n, trained = spec["tokens"], int(spec["tokens"] * spec["trained"])
    ids = torch.randint(0, VOCAB, (1, n), device=dev)
    labels = ids.clone()
    labels[0, : n - trained] = -100
    batch = {"input_ids": ids, "labels": labels, "position_ids": torch.arange(n, device=dev)[None]}
    bf16 = cuda

    def step() -> None:
        logp, mask = batching.trained_logps(model, batch, bf16, logits_chunk=spec["chunk"])[:2]  # the output dropped, as the trainers do
        (-(logp * mask).sum() / mask.sum()).backward()
        model.zero_grad(set_to_none=True)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    if cuda:
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    step()
    sync()
    peak = (torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) - before
    times = []
    for _ in range(spec["steps"]):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return {"chunk": spec["chunk"], "peak_bytes": peak, "ms": 1000 * statistics.median(times), "trained": trained,
            "device": torch.cuda.get_device_name() if cuda else platform.processor() or platform.machine(),
            "memory": "CUDA allocator peak" if cuda else "peak RSS", "torch": torch.__version__}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--trained", type=float, default=0.5, help="share of the row's tokens that are trained")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--chunks", default="0,4096,1024,256", help="logits_chunk settings, comma-separated (0: off)")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out", default=os.path.join(HERE, "results", "trainer-logits.json"))
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(json.loads(a.child))))
        return
    if not 0 < a.trained <= 1:
        p.error(f"--trained: expected a share in (0, 1], got {a.trained}")
    rows = []
    for chunk in (int(c) for c in a.chunks.split(",")):
        spec = {"tokens": a.tokens, "trained": a.trained, "hidden": a.hidden, "layers": a.layers, "chunk": chunk, "steps": a.steps}
        out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], check=True, capture_output=True, text=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print(f"\nQwen2-style model, vocabulary {VOCAB:,}, hidden {a.hidden}, {a.layers} layers; one row of {a.tokens:,} tokens, "
          f"{base['trained']:,} trained; {base['device']}, {base['memory']}, median of {a.steps} steps\n")
    print("| logits_chunk | peak memory (GiB) | vs 0 | ms/step | vs 0 |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['chunk'] or 'off'} | {r['peak_bytes'] / 2**30:.2f} | {r['peak_bytes'] / base['peak_bytes']:.2f} | "
              f"{r['ms']:.0f} | {r['ms'] / base['ms']:.2f} |")
    print(f"\nfloat32 logits of every trained position: {base['trained'] * VOCAB * 4 / 2**30:.2f} GiB")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump({"bench": "trainer-logits", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "vocab": VOCAB,
                   **{k: getattr(a, k) for k in ("tokens", "trained", "hidden", "layers", "steps")}, "results": rows}, fh, indent=2)
    print(f"wrote {os.path.relpath(a.out)}")


if __name__ == "__main__":
    main()
