"""GPU check of ``packed_attention: varlen`` (gymflow_trainer/attention.py) and ``logits_chunk``
(gymflow_trainer/head.py), for the device machine.

CI has no GPU, so the CUDA flash path of the varlen attention is checked here, on the GPU, against the dense
block-diagonal mask (``packed_attention: mask``). A Qwen2-style model (head dim 64, grouped-query heads 8:2, the
0.5B model's attention layout) gets one packed row of examples of very different lengths; the per-token losses
and every parameter's gradient are compared:

- fp32 reference: the masked path without autocast (sdpa's math or memory-efficient kernel in float32);
- bf16 autocast: the masked path (sdpa, memory-efficient kernel) and the varlen path (flash kernel), with and
  without gradient checkpointing. Each one's error against the reference is ``‖x − ref‖ / ‖ref‖``; the varlen
  error must be bf16-sized (< 2e-2) and no more than 2× the masked path's;
- fp32 without autocast: the varlen path's per-example fallback, which must match the reference to 1e-4;
- bf16 autocast, varlen, with ``logits_chunk: 256`` (the LM head on 256 trained positions at a time,
  recomputed in the backward pass): the same bound as the varlen path;
- the same with sliding-window layers (window 256 on layers 2-3; transformers builds the masked path's
  windowed mask, the varlen path passes flash a left window).

Fresh random weights and token ids for every run (``--seed``). Exit code 1 when a check fails.

    python3 bench/trainer-gpu-check.py
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))

import torch  # noqa: E402

from gymflow_trainer import attention, sft  # noqa: E402
from gymflow_trainer.data import IGNORE, SftExample  # noqa: E402

LENGTHS = [1, 37, 300, 1029, 64, 2048, 5]
WINDOW = 256  # shorter than the longer examples
CHUNK = 256  # a few chunks of the row's ~1,700 trained positions


def make_model(seed: int, checkpointing: bool, window: Optional[int] = None) -> Any:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=1024, hidden_size=512, intermediate_size=1024, num_hidden_layers=3, num_attention_heads=8,
                      num_key_value_heads=2, max_position_embeddings=4096, attn_implementation="sdpa",
                      use_sliding_window=window is not None, sliding_window=window, max_window_layers=1)
    model = Qwen2ForCausalLM(cfg).cuda().train()
    if checkpointing:
        enable = getattr(model, "activation_checkpointing_enable", None)  # transformers 5's name
        if enable is not None:
            enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model


def make_examples(seed: int) -> list[SftExample]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for i, n in enumerate(LENGTHS):
        ids = torch.randint(0, 1024, (n,), generator=g).tolist()
        trained = torch.rand(n, generator=g) < 0.5
        labels = [t if m else IGNORE for t, m in zip(ids, trained.tolist())]
        out.append(SftExample(input_ids=ids, labels=labels, weights=[1.0 if m else 0.0 for m in trained.tolist()],
                              reward=1.0, source=i))
    return out


def run(seed: int, varlen: bool, bf16: bool, checkpointing: bool, window: Optional[int] = None,
        logits_chunk: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token losses and the flattened gradient of their weighted sum."""
    model = make_model(seed, checkpointing, window)
    if varlen:
        attention.use_varlen(model)
    batch = sft.collate_packed(make_examples(seed), 0, torch.device("cuda"), varlen=varlen)
    ce, w = sft.token_losses(model, batch, bf16=bf16, logits_chunk=logits_chunk)
    (ce * w).sum().backward()
    grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    return (ce * (w > 0)).detach().double(), grad.double()


def rel(x: torch.Tensor, ref: torch.Tensor) -> float:
    if not torch.isfinite(x).all():
        return float("inf")
    return float((x - ref).norm() / ref.norm())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this check is for the GPU machine (the CPU path is in trainer/tests)")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, examples of {LENGTHS} tokens in one row")
    failures = []
    for checkpointing, window in ((False, None), (True, None), (False, WINDOW)):
        ref_ce, ref_g = run(a.seed, varlen=False, bf16=False, checkpointing=checkpointing, window=window)
        mask_ce, mask_g = run(a.seed, varlen=False, bf16=True, checkpointing=checkpointing, window=window)
        var_ce, var_g = run(a.seed, varlen=True, bf16=True, checkpointing=checkpointing, window=window)
        f32_ce, f32_g = run(a.seed, varlen=True, bf16=False, checkpointing=checkpointing, window=window)
        chunk_ce, chunk_g = run(a.seed, varlen=True, bf16=True, checkpointing=checkpointing, window=window, logits_chunk=CHUNK)
        rows = {"mask bf16": (rel(mask_ce, ref_ce), rel(mask_g, ref_g)),
                "varlen bf16 (flash)": (rel(var_ce, ref_ce), rel(var_g, ref_g)),
                "varlen fp32 (per example)": (rel(f32_ce, ref_ce), rel(f32_g, ref_g)),
                f"varlen bf16, chunks of {CHUNK}": (rel(chunk_ce, ref_ce), rel(chunk_g, ref_g))}
        label = f"sliding window {window} on layers 2-3" if window else f"gradient checkpointing {'on' if checkpointing else 'off'}"
        print(f"\n{label}: relative error against the fp32 mask")
        print(f"{'path':<27} {'losses':>10} {'gradient':>10}")
        for name, (e_ce, e_g) in rows.items():
            print(f"{name:<27} {e_ce:>10.2e} {e_g:>10.2e}")
        (m_ce, m_g), (v_ce, v_g), (f_ce, f_g), (c_ce, c_g) = rows.values()
        for name, what, err, mask_err in (("varlen bf16", "losses", v_ce, m_ce), ("varlen bf16", "gradient", v_g, m_g),
                                          (f"logits_chunk {CHUNK}", "losses", c_ce, m_ce), (f"logits_chunk {CHUNK}", "gradient", c_g, m_g)):
            bound = min(2e-2, max(2 * mask_err, 1e-3))  # bf16-sized, and no worse than twice the masked path
            if not err <= bound:
                failures.append(f"{name} {what} (checkpointing {checkpointing}, window {window}): {err:.2e} > {bound:.2e}")
        for what, err in (("losses", f_ce), ("gradient", f_g)):
            if not err <= 1e-4:
                failures.append(f"varlen fp32 {what} (checkpointing {checkpointing}, window {window}): {err:.2e} > 1e-4")
    print()
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        raise SystemExit(1)
    print("varlen attention and logits_chunk on CUDA: OK")


if __name__ == "__main__":
    main()
