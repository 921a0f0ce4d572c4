"""Fitting a step's forward passes into memory (docs/trainer.md, "Running out of memory").

A run's batches are fixed up front, and a rollout batch of an RL loop holds whatever lengths the episodes had:
the one step whose micro-batch is all long sequences can run out of GPU memory after hours of training. A
retry would replay the same batches from the last checkpoint and fail on the same step, so without help one
long batch ends the run.

:class:`PieceFit` cuts every piece of a step (the examples one forward pass takes) so that its size, rows ×
longest row with the padding, stays within ``max_piece_tokens``. Every command's loss is a sum of pieces
weighted by their share of the step (sft.py, rl.py ``piece_share``, dpo.py, rm.py), so cutting changes
neither the loss nor the gradient beyond floating-point summation order. When a forward or backward pass
still runs out of memory (``on_out_of_memory: split``), the step's gradients are dropped, the limit is lowered
to half the rows of the piece that failed, and the step runs again from its first piece. It only goes down,
so a run pays for each lowering once. A single sequence that does not fit stops the run with
:class:`OutOfMemory` (exit 6), which names the step, the sequence's length, the memory the process held and
the settings that would help.

Only with one process: under torchrun the other ranks are already waiting in the gradient all-reduce of the
piece that failed, so a rank cannot quietly start its step again. There, ``max_piece_tokens`` is the remedy,
and running out of memory is :class:`OutOfMemory` at once.
"""

from __future__ import annotations

import gc
import sys
from typing import Any, Callable, Iterator, Optional, Sequence, TypeVar

import torch

from . import distributed
from .errors import OutOfMemory

T = TypeVar("T")

#: What the CPU allocator says when an allocation fails (a plain ``RuntimeError``; CUDA's is ``torch.OutOfMemoryError``).
_CPU_ALLOCATOR_FAILED = ("DefaultCPUAllocator: can't allocate memory", "DefaultCPUAllocator: not enough memory")


def is_out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` is an allocation that failed: CUDA (or another accelerator) out of memory, or the CPU
    allocator refused (a ulimit, overcommit off). The kernel's OOM killer sends SIGKILL instead: no exception."""
    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    if isinstance(e, oom):
        return True
    return isinstance(e, RuntimeError) and any(s in str(e) for s in _CPU_ALLOCATOR_FAILED)


def memory_report() -> str:
    """What this process holds on its accelerator, for messages; empty on CPU."""
    if not torch.cuda.is_available():
        return ""
    gib = 1024**3
    dev = torch.cuda.current_device()
    free, total = torch.cuda.mem_get_info(dev)
    peak = torch.cuda.max_memory_allocated(dev)
    reserved = torch.cuda.memory_reserved(dev)
    others = max(total - free - reserved, 0)
    text = f"; GPU {dev}: peak {peak / gib:.1f} GiB allocated by this process, {total / gib:.1f} GiB in all, {free / gib:.1f} GiB free"
    if others > 0.05 * total:
        text += f", {others / gib:.1f} GiB held by other processes"
    return text


def release_memory() -> None:
    """Frees what a failed pass left: its tensors (once no traceback holds their frames) and CUDA's cached blocks."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


class PieceFit:
    """The pieces of each step, cut to fit in memory (see the module comment).

    ``size(idx)`` is the tokens one forward pass over examples ``idx`` holds: rows × longest row for padded
    batches (DPO counts chosen and rejected), the total length for a packed row. ``max_tokens`` None: pieces are
    not cut until a pass runs out of memory. ``split``: lower the limit and run the step again on running out of
    memory (one process only); else stop at once."""

    def __init__(self, size: Callable[[Sequence[int]], int], max_tokens: Optional[int], split: bool) -> None:
        self.size = size
        self.max_tokens = max_tokens
        self.split = split
        #: Steps run again after running out of memory, in this process.
        self.retries = 0
        self._current: list[int] = []

    def cut(self, idx: list[int]) -> list[list[int]]:
        """``idx`` in order, cut into runs of at most ``max_tokens`` (a longer single example is a run of its own)."""
        if self.max_tokens is None or self.size(idx) <= self.max_tokens:
            return [idx]
        runs: list[list[int]] = [[]]
        for i in idx:
            if runs[-1] and self.size(runs[-1] + [i]) > self.max_tokens:
                runs.append([])
            runs[-1].append(i)
        return runs

    def chunks(self, idx: list[int]) -> Iterator[list[int]]:
        """:meth:`cut`, remembering the piece being run: for passes outside :meth:`pieces` (no gradient)."""
        for part in self.cut(idx):
            self._current = part
            yield part

    def pieces(self, fwd: torch.nn.Module, micro: Sequence[Sequence[int]]) -> Iterator[tuple[int, list[int], float]]:
        """:func:`distributed.pieces` with each piece cut by :meth:`cut`; remembers the piece being run."""
        for j, idx, live in distributed.pieces(fwd, micro, cut=self.cut):
            self._current = idx
            yield j, idx, live

    def run(self, where: str, model: Any, body: Callable[[], T]) -> T:
        """Runs ``body`` (the forward and backward passes of one optimizer step, ``where`` = "step N", through
        :meth:`pieces` or :meth:`cut`; or no-grad passes such as a reference's log-probs) and returns what it
        returns. On running out of memory it drops the gradients ``body`` left, lowers the limit and runs ``body``
        again from the start, or raises :class:`OutOfMemory`."""
        while True:
            failed = ""
            self._current = []
            try:
                return body()
            except Exception as e:  # noqa: BLE001 - anything but running out of memory is re-raised
                if not is_out_of_memory(e):
                    raise
                failed = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            # Out of the except clause: the traceback, and with it the failed pass's tensors, is released.
            model.zero_grad(set_to_none=True)
            release_memory()
            self._lower(where, failed)

    def _lower(self, where: str, error: str) -> None:
        idx = self._current
        if not idx:  # before the first forward pass: nothing to cut
            raise OutOfMemory(f"{where}: ran out of memory outside the forward passes ({error}){memory_report()}")
        rows, tokens = len(idx), self.size(idx)
        piece = f"a forward pass of {rows} sequence{'s' if rows != 1 else ''} ({tokens:,} tokens with padding)"
        advice = "lower max_length (longer sequences are chunked or truncated), batch_size, or set model.gradient_checkpointing, logits_chunk, lora or bf16"
        if distributed.world().enabled:
            raise OutOfMemory(f"{where}: {piece} ran out of memory ({error}){memory_report()}. With several processes a step "
                              f"cannot be cut after the fact: set max_piece_tokens below {tokens:,} (pieces are cut to it up front), or {advice}")
        if not self.split:
            raise OutOfMemory(f"{where}: {piece} ran out of memory ({error}){memory_report()} (on_out_of_memory: fail). "
                              f"Set max_piece_tokens below {tokens:,}, or {advice}")
        if rows <= 1:
            raise OutOfMemory(f"{where}: one sequence of {tokens:,} tokens does not fit in memory ({error}){memory_report()}; "
                              f"{advice}")
        longest = max(self.size([i]) for i in idx)
        self.max_tokens = max(longest, (rows // 2) * longest) if self.max_tokens is None else min(self.max_tokens, tokens) // 2
        self.max_tokens = max(self.max_tokens, 1)
        self.retries += 1
        sys.stderr.write(f"{where}: {piece} ran out of memory ({error}); running it again with max_piece_tokens "
                         f"{self.max_tokens:,}\n")

    def fields(self) -> dict[str, int]:
        """For ``progress`` events, once the limit was lowered: ``oom_retries`` and the ``max_piece_tokens`` in force."""
        if not self.retries:
            return {}
        return {"oom_retries": self.retries, "max_piece_tokens": int(self.max_tokens or 0)}


def fit_for(cfg: Any, size: Callable[[Sequence[int]], int]) -> PieceFit:
    """The :class:`PieceFit` of a training command's configuration (``max_piece_tokens``, ``on_out_of_memory``)."""
    return PieceFit(size, cfg.max_piece_tokens, cfg.on_out_of_memory == "split")


def padded_size(lengths: Sequence[int], per_example: int = 1) -> Callable[[Sequence[int]], int]:
    """``size`` for padded batches: rows × longest row × ``per_example`` (2 for DPO's chosen and rejected)."""
    return lambda idx: len(idx) * max((lengths[i] for i in idx), default=0) * per_example


def packed_size(lengths: Sequence[int]) -> Callable[[Sequence[int]], int]:
    """``size`` for a packed row: the examples' lengths summed."""
    return lambda idx: sum(lengths[i] for i in idx)


__all__ = ["PieceFit", "fit_for", "is_out_of_memory", "memory_report", "release_memory", "padded_size", "packed_size"]
