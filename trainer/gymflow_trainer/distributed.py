"""Data parallelism across processes: one trainer process per GPU, started by ``torchrun`` or ``accelerate launch``
(docs/trainer.md, "Several GPUs").

The launchers set ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT``. With
``WORLD_SIZE > 1`` :func:`init` joins the process group (``nccl`` on CUDA with ``cuda:LOCAL_RANK`` pinned,
``gloo`` on CPU); with 1 or unset everything here is a no-op and the trainers run as a plain process.

Semantics (the same for sft, dpo, rl and rm):

- ``batch_size`` × ``grad_accum`` is the **global** batch of one optimiser step, whatever the number of
  processes, and ``batch_size`` stays the most examples one forward pass holds. Every rank builds the same
  schedule (a pure function of seed, data and config); :func:`shard` gives each rank a contiguous, near-equal
  share of the step's examples, cut at micro-batch boundaries. So the same configuration gives the same
  training on 1 or N processes (up to float reduction order), and adding GPUs makes steps faster, not bigger.
- Losses are written as the single-process loss of the step (normalisers — trained-token counts, pair counts —
  are taken over the whole step, which every rank knows from the schedule) restricted to the rank's examples,
  and gradients are **summed** across ranks (:func:`wrap`'s communication hook), so the gradient is exactly the
  single-process one.
- Only rank 0 writes events on stdout, checkpoints and the final model; the others wait at a barrier
  (``checkpoints.save_checkpoint`` / ``checkpoints.save_final``). Every rank loads the same checkpoint on resume.

Why ``DistributedDataParallel`` rather than accelerate's ``Accelerator``: the trainers already own what
``Accelerator`` would take over — device placement, autocast, the accumulation schedule and its loss
normalisation, atomic checkpoints with RNG state — and its ``accumulate``/``backward`` divide losses by its
own step count, which would fight the exact normalisation above. DDP adds only what is missing, gradient
all-reduce overlapped with the backward pass. ``accelerate launch`` still works: it sets the same variables.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    local_rank: int = 0
    size: int = 1

    @property
    def enabled(self) -> bool:
        return self.size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        from .errors import ConfigError

        raise ConfigError(f"environment variable {name}={raw!r} is not an integer (set by torchrun / accelerate launch)") from None


def from_env() -> World:
    """The process's place in the job, from the launcher's environment (a plain process: rank 0 of 1)."""
    return World(rank=_env_int("RANK", 0), local_rank=_env_int("LOCAL_RANK", 0), size=_env_int("WORLD_SIZE", 1))


_world = World()


def world() -> World:
    return _world


def is_main() -> bool:
    """Whether this process writes events, checkpoints and the final model (rank 0, or the only process)."""
    return _world.is_main


def init() -> World:
    """Joins the process group when the launcher started several processes; pins ``cuda:LOCAL_RANK`` on GPU.

    ``GYMFLOW_DIST_TIMEOUT_S`` (default 1800) bounds every collective, barriers included: rank 0 writing a
    large checkpoint while the others wait must fit in it."""
    global _world
    w = from_env()
    if not w.enabled:
        _world = w
        return w
    if not 0 <= w.rank < w.size:
        from .errors import ConfigError

        raise ConfigError(f"environment: RANK={w.rank} is outside WORLD_SIZE={w.size}")
    timeout = datetime.timedelta(seconds=_env_int("GYMFLOW_DIST_TIMEOUT_S", 1800))
    if torch.cuda.is_available():
        if w.local_rank >= torch.cuda.device_count():
            from .errors import ConfigError

            raise ConfigError(f"environment: LOCAL_RANK={w.local_rank} but only {torch.cuda.device_count()} GPU(s) are visible "
                              "(start at most one process per GPU)")
        torch.cuda.set_device(w.local_rank)
        dist.init_process_group("nccl", timeout=timeout, device_id=torch.device("cuda", w.local_rank))
    else:
        dist.init_process_group("gloo", timeout=timeout)
    _world = w
    return w


def shutdown() -> None:
    """Leaves the process group (safe to call when none was joined, and after a failure)."""
    global _world
    if dist.is_available() and dist.is_initialized():
        with contextlib.suppress(Exception):
            dist.destroy_process_group()
    _world = World()


def _device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")


def barrier() -> None:
    if _world.enabled:
        if torch.cuda.is_available():
            dist.barrier(device_ids=[_world.local_rank])
        else:
            dist.barrier()


def all_reduce_sum(values: Sequence[float]) -> list[float]:
    """Element-wise sum over ranks (float64); the values themselves with one process."""
    if not _world.enabled:
        return [float(v) for v in values]
    t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=_device())
    dist.all_reduce(t)
    return t.tolist()


def sum_dict(d: dict[str, float]) -> dict[str, float]:
    """Sums a dict of floats over ranks; every rank must hold the same keys (the trainers' metrics do: an idle
    rank's stand-in piece reports them too, with weight 0)."""
    if not _world.enabled:
        return d
    keys = sorted(d)
    return dict(zip(keys, all_reduce_sum([d[k] for k in keys])))


def all_gather_object(obj: Any) -> list[Any]:
    if not _world.enabled:
        return [obj]
    out: list[Any] = [None] * _world.size
    dist.all_gather_object(out, obj)
    return out


def check_same(value: Any, what: str) -> None:
    """Refuses to go on when ranks disagree on ``value`` (e.g. the checkpoint ``latest`` resolves to)."""
    if not _world.enabled:
        return
    seen = all_gather_object(value)
    if any(v != seen[0] for v in seen):
        from .errors import CheckpointError

        raise CheckpointError(f"{what} differs between ranks: {seen!r} (is output_dir on a filesystem every rank sees?)")


# ---------------------------------------------------------------------------------------------------- sharding

#: One forward pass of a rank: (index of the micro-batch of the step it belongs to, example indices).
Piece = tuple[int, list[int]]


def shard(micro: Sequence[Sequence[int]], rank: Optional[int] = None, size: Optional[int] = None) -> list[Piece]:
    """This rank's share of one optimiser step: the step's examples (micro-batches concatenated) cut into
    ``size`` contiguous near-equal blocks, rank ``rank`` taking block ``rank``, split again at micro-batch
    boundaries. Each piece holds at most one micro-batch's examples, so at most ``batch_size``. With one
    process: the micro-batches themselves."""
    r = _world.rank if rank is None else rank
    w = _world.size if size is None else size
    flat = [(j, i) for j, mb in enumerate(micro) for i in mb]
    lo, hi = r * len(flat) // w, (r + 1) * len(flat) // w
    pieces: list[Piece] = []
    for j, i in flat[lo:hi]:
        if pieces and pieces[-1][0] == j:
            pieces[-1][1].append(i)
        else:
            pieces.append((j, [i]))
    return pieces


def local_pieces(micro: Sequence[Sequence[int]]) -> tuple[list[Piece], bool]:
    """``(pieces, idle)``. A rank whose share is empty (a step with fewer examples than ranks) gets the step's
    first example as a stand-in, to be trained with weight 0: DDP needs every rank in every gradient
    all-reduce."""
    own = shard(micro)
    if own:
        return own, False
    return [(0, [micro[0][0]])], True


def owned_indices(steps_micro: Sequence[Sequence[Sequence[int]]]) -> set[int]:
    """Every example index this rank's forward passes will touch over the given steps (stand-ins included)."""
    out: set[int] = set()
    for micro in steps_micro:
        for _, idx in local_pieces(micro)[0]:
            out.update(idx)
    return out


# ------------------------------------------------------------------------------------------------ the model


def _sum_hook(state, bucket):  # type: ignore[no-untyped-def]  # DDP checks annotations: none, or its exact ones
    """DDP communication hook: the gradient *sum* over ranks (DDP's default divides by the world size)."""
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def wrap(model: torch.nn.Module) -> torch.nn.Module:
    """The module to run training forwards through: ``model`` itself with one process, else a
    ``DistributedDataParallel`` over it whose gradient all-reduce sums. Keep using ``model`` for everything
    else (no-grad forwards, ``v_head``, ``disable_adapter``, saving)."""
    if not _world.enabled:
        return model
    from torch.nn.parallel import DistributedDataParallel as DDP

    # No buffer sync per forward: buffers (rotary tables) are equal on every rank, and a per-forward broadcast
    # would need every rank to run the same number of forwards, which shard() does not promise.
    device_ids = [_world.local_rank] if torch.cuda.is_available() else None
    try:
        ddp = DDP(model, device_ids=device_ids, forward_sync_buffers=False)
    except TypeError:  # torch before forward_sync_buffers
        ddp = DDP(model, device_ids=device_ids, broadcast_buffers=False)
    ddp.register_comm_hook(None, _sum_hook)
    return ddp


def pieces(fwd: torch.nn.Module, micro: Sequence[Sequence[int]],
           cut: Optional[Callable[[list[int]], list[list[int]]]] = None) -> Iterator[tuple[int, list[int], float]]:
    """Iterates over this rank's pieces of one step as ``(micro-batch index, example indices, live)``;
    ``live`` is 0.0 for an idle rank's stand-in (multiply its loss by it) and 1.0 otherwise. ``cut`` splits each
    piece further (memory.PieceFit). Gradients are synchronised on the last piece's backward only (``no_sync``
    before), one all-reduce per step."""
    own, idle = local_pieces(micro)
    if cut is not None:
        own = [(j, part) for j, idx in own for part in cut(idx)]
    live = 0.0 if idle else 1.0
    for k, (j, idx) in enumerate(own):
        last = k == len(own) - 1
        ctx = fwd.no_sync() if (not last and hasattr(fwd, "no_sync")) else contextlib.nullcontext()
        with ctx:
            yield j, idx, live
