"""Checkpoints: saving, listing, resolving ``resume_from``, loading back (or setting aside what cannot be read),
the final model directory, and the optimizer state a later run carries on from.

Checkpoint layout (``<output_dir>/checkpoint-<step>/``, written to a temporary directory and renamed into
place, so a killed run leaves complete checkpoints or none):

- ``trainable.safetensors`` — the trainable parameters (the LoRA adapter's, or the whole model's);
- ``model/`` — ``save_pretrained`` of the model (the adapter alone with LoRA) and the tokenizer, made to load
  in transformers 4 as well (``portable.make_portable``: inference servers often pin it);
- ``trainer_state.pt`` — optimiser, scheduler, RNG states (python, torch, CUDA), the optimizer step
  reached (the data position: the schedule of batches is a pure function of seed, data and config), the
  dataset's sha256 and the configuration.

Under ``torchrun`` / ``accelerate launch`` (``distributed``) only rank 0 writes checkpoints and the final
model; every other rank waits at a barrier, so when any rank returns from :func:`save_checkpoint` the
checkpoint is complete on disk.

With ``optim.carry_state`` the final model directory also holds ``optimizer_state.pt``: AdamW's per-parameter
state keyed by parameter name (the policy's parameters only: PPO's value head starts fresh with the next run),
which a run starting from that directory continues (:func:`carry_optimizer_state`).
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import torch

from . import distributed, watchdog
from .config import OptimConfig, to_dict
from .errors import CheckpointError, ConfigError
from .models import policy_only, save_tokenizer
from .optim import make_optimizer, make_scheduler, trainable_parameters
from .portable import make_portable


STATE_FILE = "trainer_state.pt"


TRAINABLE_FILE = "trainable.safetensors"


def trainable_state(model: Any) -> dict[str, torch.Tensor]:
    return {n: p.detach().to("cpu").contiguous().clone() for n, p in trainable_parameters(model)}


def save_checkpoint(out_dir: str, step: int, model: Any, tokenizer: Any, opt: Any, sched: Any, extra: dict[str, Any], keep_last: int, name: Optional[str] = None) -> str:
    from safetensors.torch import save_file

    name = name or f"checkpoint-{step}"
    final = os.path.join(out_dir, name)
    if not distributed.is_main():
        distributed.barrier()  # rank 0 writes it; the others go on once it is complete
        watchdog.beat(f"the checkpoint of step {step}")
        return final
    with _staging(out_dir, name) as tmp:
        os.makedirs(tmp)
        save_file(trainable_state(model), os.path.join(tmp, TRAINABLE_FILE))
        with policy_only(model):
            model.save_pretrained(os.path.join(tmp, "model"))
        save_tokenizer(tokenizer, model, os.path.join(tmp, "model"))
        make_portable(os.path.join(tmp, "model"))
        state = {
            "step": step,
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "rng": {
                "python": random.getstate(),
                "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            },
            "saved_at": time.time(),
            **extra,
        }
        torch.save(state, os.path.join(tmp, STATE_FILE))
        _fsync_dir(tmp)
        if os.path.exists(final):
            shutil.rmtree(final)
        os.rename(tmp, final)
    _fsync_dir(out_dir)
    if name.startswith("checkpoint-"):
        for old in list_checkpoints(out_dir)[:-keep_last]:
            shutil.rmtree(old, ignore_errors=True)
    distributed.barrier()
    watchdog.beat(f"the checkpoint of step {step}")
    return final


#: A directory being written before it is renamed into place: ``.<name>.tmp-<pid of the writer>``.
STAGING = re.compile(r"\.(.+)\.tmp-(\d+)")


@contextlib.contextmanager
def _staging(out_dir: str, name: str) -> Iterator[str]:
    """The temporary directory ``name`` is written in (see :data:`STAGING`), removed when the writing fails
    (a full disk), so a failed save leaves nothing behind. Any half-written earlier one of this process goes
    first."""
    tmp = os.path.join(out_dir, f".{name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def remove_stale_staging(out_dir: str) -> list[str]:
    """Removes from ``out_dir`` the temporary directories (:data:`STAGING`) of writers that are no longer running:
    what a trainer killed in the middle of a save (``kill -9``, the host going down) left. Such a directory can
    hold gigabytes of optimizer state, and nothing else would ever delete it. Returns the names removed."""
    removed = []
    try:
        names = os.listdir(out_dir)
    except OSError:
        return removed
    for name in names:
        m = STAGING.fullmatch(name)
        if m is None or _alive(int(m.group(2))):
            continue
        shutil.rmtree(os.path.join(out_dir, name), ignore_errors=True)
        removed.append(name)
    if removed:
        sys.stderr.write(f"removed what interrupted saves left in {out_dir}: {', '.join(sorted(removed))}\n")
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (one that exists but is not ours counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def list_checkpoints(out_dir: str) -> list[str]:
    """Complete step checkpoints, oldest first."""
    found = []
    for d in glob.glob(os.path.join(out_dir, "checkpoint-*")):
        m = re.fullmatch(r"checkpoint-(\d+)", os.path.basename(d))
        if m and os.path.isfile(os.path.join(d, STATE_FILE)):
            found.append((int(m.group(1)), d))
    return [d for _, d in sorted(found)]


def refuse_other_run(out_dir: str) -> None:
    """A run that starts from step 0 needs an output directory without step checkpoints. Another run's would be
    rotated together with its own (``keep_last`` counts them all), a later ``resume_from: latest`` would pick the
    newest of either, and ``final/`` would be overwritten: the directory would end up mixing two runs."""
    existing = list_checkpoints(out_dir)
    if existing:
        names = ", ".join(os.path.basename(c) for c in existing[-3:])
        raise ConfigError(f"output_dir {out_dir} already holds the checkpoints of a run ({names}): resume it with "
                          "resume_from: latest (--resume-from latest), or give this run an output_dir of its own")


def resolve_resume(resume_from: Optional[str], out_dir: str) -> Optional[str]:
    """``latest`` → the newest complete checkpoint in ``out_dir`` (None when there is none); a path → itself."""
    if not resume_from:
        return None
    if resume_from == "latest":
        cks = list_checkpoints(out_dir)
        return cks[-1] if cks else None
    if not os.path.isfile(os.path.join(resume_from, STATE_FILE)):
        raise CheckpointError(f"{resume_from}: not a complete checkpoint (no {STATE_FILE})")
    return resume_from


class UnreadableCheckpoint(Exception):
    """A checkpoint's files cannot be read back: missing, truncated or garbled. This can happen when the host
    went down before the kernel had written out what the trainer saved, since a checkpoint is renamed into place
    without an fsync of every file. :func:`start_training` then resumes from an older one."""


def _read(path: str, name: str, read: Callable[[], Any]) -> Any:
    """``read()`` of the checkpoint file ``path/name``. A missing file, or one that does not deserialise, is an
    :class:`UnreadableCheckpoint`; another I/O error (a share that hiccupped) stays what it is, retryable."""
    try:
        return read()
    except FileNotFoundError as e:
        raise UnreadableCheckpoint(f"{name} is missing") from e
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 - torch.load and safetensors raise many kinds for a garbled file
        raise UnreadableCheckpoint(f"{name}: {type(e).__name__}: {e}") from e


def load_checkpoint(path: str, model: Any, opt: Any, sched: Any, data_digest: str, check: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Restores model (trainable parameters), optimiser, scheduler and RNG; returns the state dict. Both files
    are read before anything is restored, so an :class:`UnreadableCheckpoint` leaves the model as it was."""
    from safetensors.torch import load_file

    state = _read(path, STATE_FILE, lambda: torch.load(os.path.join(path, STATE_FILE), map_location="cpu", weights_only=False))
    if not isinstance(state, dict) or not {"step", "optimizer", "scheduler", "rng"} <= set(state):
        raise UnreadableCheckpoint(f"{STATE_FILE} does not hold a trainer state")
    if state.get("data_digest") != data_digest:
        raise CheckpointError(f"{path}: was written for a different dataset ({state.get('data_digest')} != {data_digest}); "
                              "resuming would skip or repeat data")
    if check:
        check(state)
    tensors = _read(path, TRAINABLE_FILE, lambda: load_file(os.path.join(path, TRAINABLE_FILE)))
    want = {n for n, _ in trainable_parameters(model)}
    if set(tensors) != want:
        raise CheckpointError(f"{path}: its parameters do not match the model (is LoRA on in one and off in the other?)")
    params = dict(model.named_parameters())
    shapes = [f"{n} {tuple(t.shape)} in the checkpoint, {tuple(params[n].shape)} in the model" for n, t in tensors.items() if t.shape != params[n].shape]
    if shapes:
        raise CheckpointError(f"{path}: was written for a model of another shape ({shapes[0]}{f'; {len(shapes) - 1} more' if len(shapes) > 1 else ''}); "
                              "resume with the configuration it was made with, or start without resume_from")
    dev = next(model.parameters()).device
    with torch.no_grad():
        for n, t in tensors.items():
            params[n].copy_(t.to(dev))
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    rng = state["rng"]
    random.setstate(rng["python"])
    torch.set_rng_state(rng["torch"])
    if rng.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    return state


#: In a final model directory: the optimizer state a later run carries on from (``optim.carry_state``).
OPTIMIZER_STATE_FILE = "optimizer_state.pt"


OPTIMIZER_STATE_FORMAT = "gymflow-optimizer-state/1"


def optimizer_state(model: Any, opt: torch.optim.Optimizer) -> dict[str, Any]:
    """What ``optimizer_state.pt`` holds: each policy parameter's optimizer state (AdamW: step, first and second
    moments) under the parameter's name, so that it maps onto the same model however it is built next time.
    PPO's value head (``v_head.*``) is left out: the saved model does not have it."""
    named = trainable_parameters(model)
    state = {named[i][0]: {k: v.detach().to("cpu") if torch.is_tensor(v) else v for k, v in s.items()}
             for i, s in opt.state_dict()["state"].items() if not named[i][0].startswith("v_head.")}
    return {"format": OPTIMIZER_STATE_FORMAT, "state": state}


def carry_optimizer_state(model_dir: str, model: Any, opt: torch.optim.Optimizer) -> Optional[str]:
    """Loads the ``optimizer_state.pt`` of ``model_dir`` (:func:`optimizer_state`, written with the model) into
    ``opt``; returns its path, or None when the directory has none (the optimizer then starts from zero moments).
    Parameters the file does not name (a new value head) start from zero too.

    :raises CheckpointError: the file cannot be read, or it names a parameter this model does not have, or one
        of another shape (it was saved for another model)."""
    path = os.path.join(model_dir, OPTIMIZER_STATE_FILE)
    if not os.path.exists(path):
        return None
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch.load raises many kinds for a garbled file
        raise CheckpointError(f"{path}: cannot be read ({type(e).__name__}: {e}); delete it to start from fresh moments") from e
    if not isinstance(saved, dict) or saved.get("format") != OPTIMIZER_STATE_FORMAT or not isinstance(saved.get("state"), dict):
        raise CheckpointError(f"{path}: is not a gymflow optimizer state (format {OPTIMIZER_STATE_FORMAT})")
    named = trainable_parameters(model)
    index = {n: i for i, (n, _) in enumerate(named)}
    sd = opt.state_dict()
    for name, s in saved["state"].items():
        i = index.get(name)
        if i is None:
            raise CheckpointError(f"{path}: holds the optimizer state of parameter {name!r}, which this model does not train: "
                                  "it was saved for another model")
        shape = tuple(named[i][1].shape)
        for key, value in s.items():
            if torch.is_tensor(value) and value.dim() > 0 and tuple(value.shape) != shape:
                raise CheckpointError(f"{path}: {name}.{key} has shape {tuple(value.shape)}, the parameter has {shape}: "
                                      "it was saved for another model")
        sd["state"][i] = s
    opt.load_state_dict(sd)
    return path


def save_final(out_dir: str, model: Any, tokenizer: Any, opt: Optional[torch.optim.Optimizer] = None) -> str:
    """``<output_dir>/final``: a full model directory (LoRA merged) + tokenizer, loadable by
    ``from_pretrained`` and by ``export-onnx``; with ``opt`` (``optim.carry_state``) also the optimizer's
    state (:func:`optimizer_state`)."""
    final = os.path.join(out_dir, "final")
    if not distributed.is_main():
        distributed.barrier()
        watchdog.beat("the final model")
        return final
    carried = None if opt is None else optimizer_state(model, opt)  # before policy_only hides the value head
    with _staging(out_dir, "final") as tmp, policy_only(model):
        m = model
        if hasattr(model, "merge_and_unload"):
            import copy

            m = copy.deepcopy(model).merge_and_unload()
        m.save_pretrained(tmp)
        if carried is not None:
            torch.save(carried, os.path.join(tmp, OPTIMIZER_STATE_FILE))
        save_tokenizer(tokenizer, model, tmp)
        make_portable(tmp)
        if os.path.exists(final):
            shutil.rmtree(final)
        os.rename(tmp, final)
    distributed.barrier()
    watchdog.beat("the final model")
    return final


def config_extra(cfg: Any, data_digest: str) -> dict[str, Any]:
    return {"config": to_dict(cfg), "data_digest": data_digest}


@dataclass
class Resumed:
    """Where :func:`start_training` resumed from (``path``, None: from the start), the checkpoints it found
    unreadable on the way (``{"path", "error"}``, newest first), and with ``optim.carry_state`` (``carry``) the
    optimizer state a run from step 0 carried on from (``optimizer_from``, None: zero moments)."""

    path: Optional[str] = None
    unreadable: list[dict[str, str]] = field(default_factory=list)
    carry: bool = False
    optimizer_from: Optional[str] = None

    def fields(self) -> dict[str, Any]:
        """The ``start`` event's fields: ``resumed_from``, ``unreadable_checkpoints`` when there were any, and
        ``optimizer_from`` with ``optim.carry_state`` unless the run resumed (its checkpoint has the state)."""
        return {"resumed_from": self.path, **({"unreadable_checkpoints": self.unreadable} if self.unreadable else {}),
                **({"optimizer_from": self.optimizer_from} if self.carry and self.path is None else {})}


def start_training(
    model: Any, ocfg: OptimConfig, total_steps: int, resume: Optional[str], data_digest: str, model_dir: Optional[str] = None
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR, int, Resumed]:
    """Optimizer, scheduler, the step to start from, and where it came from. With ``resume`` the checkpoint's
    model, optimizer, scheduler and RNG states are restored, after checking it was made for the same data and the
    same planned number of steps (a resume that would silently skip or repeat data is refused).

    A checkpoint that cannot be read back (:class:`UnreadableCheckpoint`) is set aside as
    ``<name>.unreadable``: the newest complete checkpoint is what a retry resumes from, and a retry would fail
    on it every time. When it is a step checkpoint, the next older complete one beside it is tried instead, and
    so on, down to the start of training when none can be read. The ``start`` event lists what was skipped, and
    stderr says so.

    Training that starts from step 0 with ``ocfg.carry_state`` continues the optimizer state saved beside the
    model in ``model_dir`` (``model.path``), when there is one (:func:`carry_optimizer_state`); a resumed run
    has its checkpoint's own."""
    opt = make_optimizer(model, ocfg)
    sched = make_scheduler(opt, ocfg, total_steps)
    resumed = Resumed(carry=ocfg.carry_state)
    if not resume:
        _carry(resumed, model_dir, model, opt)
        return opt, sched, 0, resumed
    # Then its older siblings, newest first, when `resume` is a step checkpoint (`checkpoint-N`).
    step = _step_of(resume)
    siblings = list_checkpoints(os.path.dirname(os.path.abspath(resume)))
    candidates = [resume, *([] if step is None else [c for c in reversed(siblings) if (_step_of(c) or 0) < step])]
    start = 0
    path = resume

    def check(state: dict[str, Any]) -> None:  # called while `path` is being loaded
        if state.get("total_steps") != total_steps:
            raise CheckpointError(f"{path}: planned {state.get('total_steps')} steps, this configuration plans {total_steps}")

    for k, path in enumerate(candidates):
        try:
            start = int(load_checkpoint(path, model, opt, sched, data_digest, check)["step"])
        except UnreadableCheckpoint as e:
            resumed.unreadable.append({"path": path, "error": str(e)})
            then = "trying an older checkpoint" if k + 1 < len(candidates) else "starting from step 0"
            sys.stderr.write(f"resume: {path} cannot be read back ({e}); {then}\n")
            continue
        resumed.path = path
        break
    if resumed.unreadable:
        _set_aside([u["path"] for u in resumed.unreadable])
    if resumed.path is None:
        _carry(resumed, model_dir, model, opt)
    return opt, sched, start, resumed


def _carry(resumed: Resumed, model_dir: Optional[str], model: Any, opt: torch.optim.Optimizer) -> None:
    if not resumed.carry:
        return
    resumed.optimizer_from = carry_optimizer_state(model_dir, model, opt) if model_dir else None
    if resumed.optimizer_from is None:
        sys.stderr.write(f"optim.carry_state: {model_dir or 'a model built from model.tiny'} has no {OPTIMIZER_STATE_FILE}; "
                         "the optimizer starts from zero moments\n")


def _step_of(checkpoint: str) -> Optional[int]:
    m = re.fullmatch(r"checkpoint-(\d+)", os.path.basename(os.path.normpath(checkpoint)))
    return int(m.group(1)) if m else None


def _set_aside(paths: list[str]) -> None:
    """Renames unreadable checkpoints to ``<name>.unreadable`` (rank 0, once every rank has stopped reading them),
    out of the way of the next resume and of rotation."""
    distributed.barrier()
    if distributed.is_main():
        for path in paths:
            aside = f"{os.path.normpath(path)}.unreadable"
            shutil.rmtree(aside, ignore_errors=True)
            try:
                os.rename(path, aside)
            except OSError as e:
                sys.stderr.write(f"resume: could not set {path} aside: {e}\n")
    distributed.barrier()
