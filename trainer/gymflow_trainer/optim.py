"""The optimiser step: AdamW and its learning-rate schedule, gradient clipping, skipped non-finite steps, and
the passes of a step whose loss is a mean over its examples.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

import torch

from . import watchdog
from .config import OptimConfig
from .errors import TrainingDiverged


def trainable_parameters(model: Any) -> list[tuple[str, torch.nn.Parameter]]:
    """The trainable parameters with their names, in the order :func:`make_optimizer` gives them to the optimizer."""
    return [(n, p) for n, p in model.named_parameters() if p.requires_grad]


def make_optimizer(model: Any, ocfg: OptimConfig) -> torch.optim.Optimizer:
    """AdamW; on CUDA its fused kernel (one launch for every parameter instead of one per tensor group: the
    same update up to rounding, and its state dict is the same, so a checkpoint resumes either way)."""
    params = [p for _, p in trainable_parameters(model)]
    fused = bool(params) and all(p.is_cuda for p in params)
    return torch.optim.AdamW(params, lr=ocfg.lr, betas=(ocfg.betas[0], ocfg.betas[1]), eps=ocfg.eps, weight_decay=ocfg.weight_decay,
                             fused=fused or None)


def make_scheduler(opt: torch.optim.Optimizer, ocfg: OptimConfig, total_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over ``warmup_steps``, then constant, linear decay to 0, or cosine to 0."""
    warm = ocfg.warmup_steps
    total = max(total_steps, 1)

    def factor(step: int) -> float:
        if warm and step < warm:
            return (step + 1) / warm
        if ocfg.scheduler == "constant":
            return 1.0
        prog = min(1.0, (step - warm) / max(1, total - warm))
        if ocfg.scheduler == "linear":
            return 1.0 - prog
        return 0.5 * (1.0 + math.cos(math.pi * prog))

    return torch.optim.lr_scheduler.LambdaLR(opt, factor)


class SkippedSteps:
    """Optimizer steps whose gradient norm was NaN or infinite (a diverging run, an overflow, a batch with an
    impossible token). :func:`optimizer_step` skips such a step: the weights and the optimizer's moments stay as
    they were, and the schedule moves on. So one bad batch costs one step, not the run, and no checkpoint holds
    NaN weights. After ``limit`` skipped in a row, the next one raises :class:`TrainingDiverged`. Past that
    point the run would only spend GPU hours on a model it can no longer update.

    Under torchrun every rank sees the same all-reduced gradient norm, so all ranks skip the same steps."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: Skipped since this process started.
        self.total = 0
        self.in_row = 0

    def record(self, step: int, finite: bool) -> None:
        """Counts optimizer step ``step`` (1-based) as taken or skipped."""
        if finite:
            self.in_row = 0
            return
        self.total += 1
        self.in_row += 1
        sys.stderr.write(f"step {step}: gradient norm is not finite; the step is skipped ({self.in_row} in a row)\n")
        if self.in_row > self.limit:
            first = step - self.in_row + 1
            raise TrainingDiverged(
                f"steps {first}-{step}: the gradient norm was NaN or infinite {self.in_row} times in a row (optim.max_skipped_steps: "
                f"{self.limit}); the weights are those after step {first - 1}, as in its checkpoint. Lower optim.lr, keep "
                f"optim.max_grad_norm > 0, or look at the data of these steps")

    def fields(self) -> dict[str, int]:
        """For ``progress`` events: ``skipped_steps`` once any step was skipped."""
        return {"skipped_steps": self.total} if self.total else {}


def optimizer_step(model: Any, opt: torch.optim.Optimizer, sched: Any, max_grad_norm: float, skipped: SkippedSteps, step: int) -> tuple[float, float]:
    """Optimizer step ``step`` (1-based) after the micro-batches' gradients were accumulated: clip the trainable
    parameters' gradient norm (``max_grad_norm`` <= 0: no clipping, norm still reported), step optimizer and
    scheduler, clear the gradients. A step whose norm is not finite updates nothing but the schedule
    (:class:`SkippedSteps`). Returns ``(grad_norm, lr)`` with the learning rate the step used."""
    params = [p for _, p in trainable_parameters(model)]
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else float("inf")))
    lr = sched.get_last_lr()[0]
    finite = math.isfinite(grad_norm)
    if finite:
        opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    skipped.record(step, finite)
    watchdog.beat(f"optimizer step {step}")
    return grad_norm, lr


def example_mean_passes(fit: Any, fwd: Any, micro: list[list[int]], loss_of: Callable[[list[int]], tuple[torch.Tensor, dict[str, float]]]) -> tuple[float, dict[str, float]]:
    """The forward and backward passes of one step whose loss is a mean over its examples (DPO pairs, reward-model
    examples): ``loss_of(piece)`` is the piece's mean loss and metrics, weighted by the piece's share of the step's
    examples, so any cut of the step into pieces (``fit``, a ``memory.PieceFit``; ranks) gives the same gradient.
    Returns this rank's share of the step's loss and metrics."""
    n = sum(len(mb) for mb in micro)
    total, agg = 0.0, {}
    for _, mb, live in fit.pieces(fwd, micro):  # with one process and no limit: the micro-batches
        loss, metrics = loss_of(mb)
        share = len(mb) / n * live
        (loss * share).backward()
        total += float(loss.detach()) * share
        for k, v in metrics.items():
            agg[k] = agg.get(k, 0.0) + v * share
    return total, agg
