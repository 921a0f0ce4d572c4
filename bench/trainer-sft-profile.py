"""Where an SFT step's time goes: the body of ``gymflow_trainer.sft``'s loop, phase by phase, on the GPU.

Same model and data as ``bench/trainer-sft.py`` (its ``write_model`` and synthetic conversations; one packed
row of the same number of examples per step), and the same code the ``sft`` command runs for one step:
``collate_packed``, ``token_losses`` (the forward and the loss), the backward, ``optim.optimizer_step``.
Each phase is timed on the host (``perf_counter``, the time to issue it) and on the device (CUDA events, the
time its kernels took), medians over ``--steps`` after ``--warmup``; a phase whose host time is near its device
time is launch-bound, and a step whose phases' device times add up to much less than its wall time waits on
the host. Then ``torch.profiler`` over 3 steps lists the kernels by device time (top ``--top``) and writes a
Chrome trace (``--trace``, gzipped).

    python3 bench/trainer-sft-profile.py --trace $OUT/sft-trace.json.gz      # GPU
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("trainer_sft_bench", os.path.join(HERE, "trainer-sft.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="0.5b")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--rows", type=int, default=4, help="tokens per step = rows × seq-len, as the bench's TRL rows")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--packed-attention", choices=["varlen", "mask"], default="varlen")
    p.add_argument("--compile", action="store_true", help="torch.compile each decoder layer (dynamic shapes) first")
    p.add_argument("--trace", default=None, help="write a gzipped Chrome trace of the profiled steps here")
    a = p.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gymflow_trainer import attention, models, optim, sft
    from gymflow_trainer.config import OptimConfig
    from gymflow_trainer.data import load_sft

    bench = load_bench()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    work = tempfile.mkdtemp(prefix="gymflow-sft-profile-")
    try:
        model_dir = os.path.join(work, "model")
        bench.write_model(model_dir, a.size, 0)
        data = os.path.join(work, "sft.jsonl")
        with open(data, "w", encoding="utf-8") as fh:
            for rec in bench.synthetic_records(400, 0):
                fh.write(json.dumps(rec) + "\n")
        tok = AutoTokenizer.from_pretrained(model_dir)
        examples = load_sft(data, tok, a.seq_len, mask_observations=True, overlong="chunk", chunk_overlap=0, warn=lambda m: None)
        mean_len = sum(len(e.input_ids) for e in examples) / len(examples)
        per_row = max(1, round(a.rows * a.seq_len / mean_len))
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(dev).train()
        model.config.use_cache = False
        varlen = a.packed_attention == "varlen"
        if varlen:
            attention.use_varlen(model)
        if a.compile:  # as the sft command's compile: true
            models.compile_layers(model)
        opt = optim.make_optimizer(model, OptimConfig(lr=1e-5, max_grad_norm=1.0))
        sched = optim.make_scheduler(opt, OptimConfig(lr=1e-5), a.steps + 10)
        skipped = optim.SkippedSteps(10)
        phases = ["collate", "forward+loss", "backward", "optimizer"]
        host: dict[str, list[float]] = {k: [] for k in phases}
        device: dict[str, list[float]] = {k: [] for k in phases}
        walls: list[float] = []
        tokens: list[int] = []

        def step(i: int, record: bool) -> None:
            batch_ex = [examples[(i * per_row + j) % len(examples)] for j in range(per_row)]
            n_trained = sum(e.num_trained for e in batch_ex)
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(len(phases) + 1)] if dev.type == "cuda" else []
            t = [time.perf_counter()]
            if ev:
                ev[0].record()
            batch = sft.collate_packed(batch_ex, tok.pad_token_id, dev, varlen)
            t.append(time.perf_counter())
            if ev:
                ev[1].record()
            ce, w = sft.token_losses(model, batch, bf16=dev.type == "cuda")
            loss = (ce * w).sum() / max(n_trained, 1)
            t.append(time.perf_counter())
            if ev:
                ev[2].record()
            loss.backward()
            float(loss.detach())
            t.append(time.perf_counter())
            if ev:
                ev[3].record()
            optim.optimizer_step(model, opt, sched, 1.0, skipped, i + 1)
            t.append(time.perf_counter())
            if ev:
                ev[4].record()
                torch.cuda.synchronize()
            if record:
                walls.append(1000 * (t[-1] - t[0]))
                tokens.append(sum(len(e.input_ids) for e in batch_ex))
                for k, name in enumerate(phases):
                    host[name].append(1000 * (t[k + 1] - t[k]))
                    if ev:
                        device[name].append(ev[k].elapsed_time(ev[k + 1]))

        t_warm = time.perf_counter()
        for i in range(a.warmup):
            step(i, False)
        print(f"warm-up: {a.warmup} steps in {time.perf_counter() - t_warm:.1f} s")
        for i in range(a.warmup, a.warmup + a.steps):
            step(i, True)
        med = statistics.median
        print(f"{a.size}, {per_row} examples per packed row ({med(tokens):.0f} tokens), packed_attention {a.packed_attention}{', compiled layers' if a.compile else ''}, "
              f"{torch.cuda.get_device_name(0) if dev.type == 'cuda' else 'CPU'}, torch {torch.__version__}")
        print(f"{'phase':<14} {'host ms':>9} {'device ms':>10}")
        for name in phases:
            d = f"{med(device[name]):>10.1f}" if device[name] else f"{'n/a':>10}"
            print(f"{name:<14} {med(host[name]):>9.1f} {d}")
        print(f"{'step (wall)':<14} {med(walls):>9.1f}   -> {med(tokens) / med(walls) * 1000:.0f} tokens/s")

        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        with profile(activities=acts) as prof:
            for i in range(3):
                step(a.warmup + a.steps + i, False)
        key = "self_device_time_total" if dev.type == "cuda" else "self_cpu_time_total"
        try:
            table = prof.key_averages().table(sort_by=key, row_limit=a.top, max_name_column_width=70)
        except (AttributeError, KeyError, ValueError):
            table = prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=a.top, max_name_column_width=70)
        print(table)
        if a.trace:
            raw = os.path.join(work, "trace.json")
            prof.export_chrome_trace(raw)
            with open(raw, "rb") as src, gzip.open(a.trace, "wb") as dst:
                shutil.copyfileobj(src, dst)
            print(f"wrote {a.trace}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
