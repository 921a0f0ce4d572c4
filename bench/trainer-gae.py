"""What PPO's advantage estimation costs per call: ``advantages.gae`` (a doubling scan over each row's acting
positions) against the recursion as written, one step per acting position (how ``gae`` computed it until
2026-11-27), on the same rows.

Each shape is ``B`` rows of ``T`` tokens: the first quarter of every row is a prompt, and 30% of the rest act
(assistant tokens; the others are observations), with the reward on the last token, as the PPO rollout cache
builds them. Time is the median of ``--repeats`` calls after one warm-up call, synchronised on CUDA. The two
results must agree to 1e-5 (float32), or the benchmark fails.

    .venv/bin/python bench/trainer-gae.py            # CPU
    python3 bench/trainer-gae.py                     # GPU (the device machine): CUDA when torch sees it

Prints a table and writes ``bench/results/trainer-gae.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))

import torch  # noqa: E402

from gymflow_trainer.advantages import gae  # noqa: E402


def gae_recursion(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``A_t = δ_t + γλ·A_{t+1}`` one acting position at a time, every row at once: a few kernels per position."""
    m = mask.to(values.dtype)
    adv = torch.zeros_like(values)
    next_v = torch.zeros(values.size(0), dtype=values.dtype, device=values.device)
    next_a = torch.zeros_like(next_v)
    for t in reversed(torch.nonzero(m.any(0)).flatten().tolist()):
        mt = m[:, t]
        a = rewards[:, t] + gamma * next_v - values[:, t] + gamma * lam * next_a
        adv[:, t] = a * mt
        next_v = torch.where(mt > 0, values[:, t], next_v)
        next_a = torch.where(mt > 0, a, next_a)
    return adv, (adv + values) * m


def rows(b: int, t: int, device: torch.device, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    values = torch.randn(b, t, generator=g)
    mask = (torch.rand(b, t, generator=g) < 0.3).float()
    mask[:, : t // 4] = 0
    mask[:, -1] = 1
    rewards = torch.zeros(b, t)
    rewards[:, -1] = torch.randn(b, generator=g)
    return rewards.to(device), values.to(device), mask.to(device)


def timed(fn, args, repeats: int, device: torch.device) -> tuple[float, tuple[torch.Tensor, torch.Tensor]]:
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    out = fn(*args)
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*args)
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default="8x1024,8x4096,8x16384", help="comma-separated BxT")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--out", default=os.path.join(HERE, "results", "trainer-gae.json"))
    a = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else (platform.processor() or platform.machine())
    results = []
    for k, shape in enumerate(a.shapes.split(",")):
        b, t = (int(x) for x in shape.lower().split("x"))
        args = (*rows(b, t, device, k), a.gamma, a.lam)
        ms_rec, (adv_rec, ret_rec) = timed(gae_recursion, args, a.repeats, device)
        ms_scan, (adv_scan, ret_scan) = timed(gae, args, a.repeats, device)
        diff = max(float((adv_rec - adv_scan).abs().max()), float((ret_rec - ret_scan).abs().max()))
        if diff > 1e-5:
            sys.exit(f"{shape}: the scan and the recursion differ by {diff:.2e} (> 1e-5)")
        results.append({"rows": b, "tokens": t, "acting": int(args[2].sum()), "recursion_ms": ms_rec, "scan_ms": ms_scan, "max_abs_diff": diff})
    print(f"\ngae per call, {device.type} ({name}), torch {torch.__version__}, median of {a.repeats} calls\n")
    print("| rows × tokens | acting positions | one step per position (ms) | scan (ms) | speed-up | max diff |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['rows']} × {r['tokens']:,} | {r['acting']:,} | {r['recursion_ms']:.1f} | {r['scan_ms']:.2f} | "
              f"{r['recursion_ms'] / r['scan_ms']:.0f}× | {r['max_abs_diff']:.1e} |")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump({"bench": "trainer-gae", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device.type, "name": name,
                   "torch": torch.__version__, "gamma": a.gamma, "lam": a.lam, "repeats": a.repeats, "results": results}, fh, indent=2)
    print(f"wrote {os.path.relpath(a.out)}")


if __name__ == "__main__":
    main()
