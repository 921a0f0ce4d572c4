"""What every training command shares: model loading, optimiser and schedule, checkpoints, RNG state.

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
import math
import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple, Optional

import torch

from . import distributed, head, watchdog
from .attention import base_model, boundaries, use_varlen
from .config import LoraConfig, ModelConfig, OptimConfig, to_dict
from .errors import CheckpointError, ConfigError, TrainingDiverged
from .chat import template_for
from .portable import make_portable

STATE_FILE = "trainer_state.pt"
TRAINABLE_FILE = "trainable.safetensors"


def device() -> torch.device:
    """CPU, the GPU, or under a multi-process launch on GPUs this rank's ``cuda:LOCAL_RANK``."""
    if not torch.cuda.is_available():
        return torch.device("cpu")
    w = distributed.world()
    return torch.device("cuda", w.local_rank) if w.enabled else torch.device("cuda")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


# What a tokenizer directory holds: one of these is enough for ``AutoTokenizer``.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")


def check_model_dirs(mcfg: ModelConfig) -> str:
    """Checks that ``model.path`` is a transformers model directory and that the tokenizer's directory
    (``model.tokenizer``, else ``model.path``) holds a tokenizer, before transformers is asked to load them:
    given a path that is not a directory, transformers takes it for a Hub repo id, and given a directory without
    a tokenizer it fails with advice about sentencepiece. Returns the tokenizer's directory.

    :raises ConfigError: naming the field, the path and what is missing."""
    assert mcfg.path is not None
    if not os.path.isdir(mcfg.path):
        raise ConfigError(f"$.model.path {mcfg.path!r}: not a directory (a model saved with save_pretrained)")
    if not os.path.isfile(os.path.join(mcfg.path, "config.json")):
        if os.path.isfile(os.path.join(mcfg.path, "adapter_config.json")):
            raise ConfigError(f"$.model.path {mcfg.path!r}: holds a LoRA adapter, not a whole model; point model.path at the "
                              "base model (adapter_config.json's base_model_name_or_path), or export a merged one")
        raise ConfigError(f"$.model.path {mcfg.path!r}: no config.json there, so it is not a transformers model directory")
    field, tok_dir = ("model.tokenizer", mcfg.tokenizer) if mcfg.tokenizer else ("model.path", mcfg.path)
    if not os.path.isdir(tok_dir):
        raise ConfigError(f"$.{field} {tok_dir!r}: not a directory (a tokenizer saved with save_pretrained)")
    if not any(os.path.isfile(os.path.join(tok_dir, f)) for f in TOKENIZER_FILES):
        hint = "; set model.tokenizer to the directory that has one" if field == "model.path" else ""
        raise ConfigError(f"$.{field} {tok_dir!r}: holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}){hint}")
    return tok_dir


def pretrained(field: str, where: str, load: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``load(*args, **kwargs)`` (a ``from_pretrained``), with what transformers raises for files it cannot use
    (a broken config.json, weights that do not fit the config, an unknown architecture) as a ConfigError naming
    ``$.field`` and ``where``, on one line."""
    from .memory import is_out_of_memory

    try:
        return load(*args, **kwargs)
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        if is_out_of_memory(e):  # the files are fine, the device is too small: OutOfMemory's exit, not a config error
            raise
        raise ConfigError(f"$.{field} {where!r}: cannot be loaded: {_one_line(e)}") from e


def _one_line(e: BaseException) -> str:
    text = " ".join(line.strip() for line in str(e).splitlines() if line.strip()) or type(e).__name__
    return text if len(text) <= 400 else text[:400] + "…"


def add_lora(model: Any, lora: LoraConfig, task_type: str) -> Any:
    """``model`` wrapped with a LoRA adapter; target modules that match nothing are a ConfigError that lists the
    names of the model's linear layers (what ``lora.target_modules`` may name)."""
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model

    try:
        return get_peft_model(model, PeftLoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                                    target_modules=list(lora.target_modules), task_type=task_type))
    except ValueError as e:
        linear = sorted({name.rsplit(".", 1)[-1] for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
        raise ConfigError(f"$.lora.target_modules {list(lora.target_modules)}: {_one_line(e)} "
                          f"(the model's linear layers are named: {', '.join(linear)})") from e


def load_model_and_tokenizer(mcfg: ModelConfig, lora: Optional[LoraConfig]) -> tuple[Any, Any]:
    """The policy (optionally wrapped with a LoRA adapter) and its tokenizer."""
    tok, config, built = load_tokenizer_and_config(mcfg)
    return load_model(mcfg, lora, config, built), tok


def load_tokenizer_and_config(mcfg: ModelConfig) -> tuple[Any, Any, Any]:
    """``(tokenizer, model config, model or None)``: what the data needs (the tokenizer, and the prompt format the
    config records), without the weights, which may take minutes to load; :func:`load_model` loads them. A tiny
    model is built whole here (it takes a moment)."""
    from transformers import AutoConfig, AutoTokenizer

    from .tiny import build_tiny

    if mcfg.tiny is not None:
        tok, model = build_tiny(mcfg.tiny)
        config = model.config
    else:
        tok_dir = check_model_dirs(mcfg)
        tok = pretrained("model.tokenizer" if mcfg.tokenizer else "model.path", tok_dir, AutoTokenizer.from_pretrained, tok_dir)
        config = pretrained("model.path", mcfg.path, AutoConfig.from_pretrained, mcfg.path)
        model = None
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok, config, model


def load_model(mcfg: ModelConfig, lora: Optional[LoraConfig], config: Any, built: Any = None) -> Any:
    """The policy of :func:`load_tokenizer_and_config` (``built``, or its weights loaded from ``model.path`` with
    ``config``, which keeps what was set on it), optionally wrapped with a LoRA adapter."""
    from transformers import AutoModelForCausalLM

    model = built
    if model is None:
        dtype = torch.bfloat16 if mcfg.dtype == "bfloat16" else torch.float32
        model = pretrained("model.path", mcfg.path, AutoModelForCausalLM.from_pretrained, mcfg.path, config=config, dtype=dtype)
    model.config.use_cache = False
    if lora is not None:
        model = add_lora(model, lora, "CAUSAL_LM")
    if mcfg.gradient_checkpointing:
        # transformers 5 renamed it (the old name warns); the non-reentrant variant works with frozen inputs (LoRA)
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:  # transformers 4
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model


def compile_layers(model: Any) -> int:
    """``torch.compile`` (dynamic shapes) on each decoder layer of the model (``get_decoder().layers``, every
    causal LM transformers ships); the layers share one compiled graph. Returns how many were compiled;
    :class:`ConfigError` for a model without such layers."""
    base = base_model(model)
    decoder = base.get_decoder() if hasattr(base, "get_decoder") else None
    layers = getattr(decoder, "layers", None)
    if not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0:
        raise ConfigError(f"compile: found no decoder layers (get_decoder().layers) in {type(base).__name__}")
    for layer in layers:
        layer.compile(dynamic=True)
    return len(layers)


def _trainable(model: Any) -> list[tuple[str, torch.nn.Parameter]]:
    """The trainable parameters with their names, in the order :func:`make_optimizer` gives them to the optimizer."""
    return [(n, p) for n, p in model.named_parameters() if p.requires_grad]


def make_optimizer(model: Any, ocfg: OptimConfig) -> torch.optim.Optimizer:
    """AdamW; on CUDA its fused kernel (one launch for every parameter instead of one per tensor group: the
    same update up to rounding, and its state dict is the same, so a checkpoint resumes either way)."""
    params = [p for _, p in _trainable(model)]
    fused = bool(params) and all(p.is_cuda for p in params)
    return torch.optim.AdamW(params, lr=ocfg.lr, betas=(ocfg.betas[0], ocfg.betas[1]), weight_decay=ocfg.weight_decay,
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


def trainable_state(model: Any) -> dict[str, torch.Tensor]:
    return {n: p.detach().to("cpu").contiguous().clone() for n, p in _trainable(model)}


@contextlib.contextmanager
def policy_only(model: Any) -> Iterator[Any]:
    """The model without an attached value head (``v_head``, PPO) for ``save_pretrained``: the saved policy
    loads with ``from_pretrained`` without unexpected keys. The head stays in ``trainable.safetensors``."""
    head = model._modules.pop("v_head", None)
    try:
        yield model
    finally:
        if head is not None:
            model._modules["v_head"] = head


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
    want = {n for n, _ in _trainable(model)}
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
    named = _trainable(model)
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
    named = _trainable(model)
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


def prepare_layout(model: Any, cfg: Any) -> None:
    """Before any forward (and before a reference model is copied, so that the copy runs the same layout):
    switches the model to varlen attention when ``cfg.packed`` says so. Compiling (``cfg.compile``,
    :func:`compile_layers`) comes later, just before training: reference log-probs and a reference copy stay
    eager. With ``cfg.logits_chunk``, checks that the model's logits are its head's output (:func:`head.check`)."""
    if cfg.packed == "varlen":
        use_varlen(model)
    if cfg.logits_chunk:
        head.check(model)


def pack_rows(seqs: list[Any], dev: torch.device, varlen: bool) -> dict[str, Any]:
    """Padding-free layout of tokenised sequences (``input_ids``/``labels`` lists): concatenated into one row,
    ``position_ids`` restarting at each sequence, and no token attending across sequences. The first token of
    each sequence is never a label (as in the padded layout, where nothing predicts it), so no position
    predicts across a boundary. ``lengths`` holds the sequences' lengths (:func:`unpack_rows`).

    ``varlen``: the sequences' boundaries for :mod:`attention` (``cu_seq_lens_q`` and friends, passed to the
    model call as they are). Otherwise transformers builds the mask from the restarting ``position_ids`` (no
    ``attention_mask``): block-diagonal and causal, and within a sliding window on a model's sliding layers."""
    from .data import IGNORE

    ids, lab, pos = [], [], []
    for s in seqs:
        ids += s.input_ids
        lab += [IGNORE] + s.labels[1:]
        pos += list(range(len(s.input_ids)))
    lengths = [len(s.input_ids) for s in seqs]
    out: dict[str, Any] = {"input_ids": torch.tensor([ids], device=dev), "position_ids": torch.tensor([pos], device=dev),
                           "labels": torch.tensor([lab], device=dev), "lengths": lengths}
    if varlen:
        out.update(boundaries(lengths, dev))
    return out


def unpack_rows(x: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """A packed row's per-position values ``[1, N-1]`` (position t predicts t+1, as :func:`trained_logps` returns
    them) in the padded layout ``[B, max(lengths)-1]``: row k, column t is the packed position of sequence k's
    token t; zeros past each sequence's end."""
    width = max(lengths) - 1
    out = x.new_zeros((len(lengths), width))
    start = 0
    for k, n in enumerate(lengths):
        out[k, : n - 1] = x[0, start : start + n - 1]
        start += n
    return out


def layout_batch(seqs: list[Any], pad_id: int, dev: torch.device, packed: Optional[str]) -> dict[str, Any]:
    """``seqs`` in the layout ``packed`` names (``cfg.packed``): right-padded rows (None, :func:`pad_batch`) or one
    packed row ("varlen" or "mask", :func:`pack_rows`)."""
    return pad_batch(seqs, pad_id, dev) if packed is None else pack_rows(seqs, dev, packed == "varlen")


def as_padded(batch: dict[str, Any], *xs: torch.Tensor) -> list[torch.Tensor]:
    """Per-position results of a :func:`layout_batch` batch in the padded layout (:func:`unpack_rows` for a
    packed row; as they are otherwise)."""
    if "lengths" not in batch:
        return list(xs)
    return [unpack_rows(x, batch["lengths"]) for x in xs]


#: A batch's fields, besides ``input_ids``, that go to the model call as they are (padded or packed layout).
MODEL_KEYS = ("attention_mask", "position_ids", "cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")


class LogProbs(NamedTuple):
    """What :func:`trained_logps` returns."""

    #: ``[B, T-1]``: log-probability of each trained label, 0 where ``mask`` is 0.
    logp: torch.Tensor
    #: ``[B, T-1]``: 1 where the label is trained.
    mask: torch.Tensor
    #: The model's output (with ``hidden``, its hidden states at every position).
    output: Any
    #: ``[B, T-1]`` with ``entropy``: the model's entropy at each trained position (no gradient), 0 elsewhere.
    entropy: Optional[torch.Tensor] = None


def trained_logps(forward: Any, batch: dict[str, Any], bf16: bool = False, hidden: bool = False,
                  logits_chunk: int = 0, entropy: bool = False) -> LogProbs:
    """Per-token log-probabilities of the trained labels (shifted: position t predicts t+1) under the model
    ``forward`` runs, for a batch of ``input_ids``, ``labels`` (``IGNORE`` where not trained) and the layout's
    :data:`MODEL_KEYS` (:class:`LogProbs`; with ``entropy`` also the entropy at each trained position).

    Only the positions that predict a trained label in some row get logits (``logits_to_keep``). With
    observations, prompts or tool results untrained that is a fraction of the sequence, and the LM head's
    output (positions × vocabulary, upcast to float32 for the softmax) is most of a step's activation memory at
    a 150k-token vocabulary: 8 rows of 4k tokens would need 20 GB for the logits alone.

    ``logits_chunk`` > 0: not even those; the head runs on that many trained positions at a time
    (:mod:`head`; the model is checked first by :func:`prepare_layout`)."""
    from .data import IGNORE

    labels = batch["labels"][:, 1:]
    mask = labels != IGNORE
    keep = mask.any(0).nonzero().squeeze(-1)
    sparse = keep.numel() < labels.size(1)
    # use_cache off: no KV cache to fill, and transformers reads a packed row's boundaries from its position ids
    # only without one
    kw: dict[str, Any] = {"use_cache": False, **{k: batch[k] for k in MODEL_KEYS if k in batch}}
    if sparse:
        kw["logits_to_keep"] = keep
    if hidden:
        kw["output_hidden_states"] = True
    with autocast_ctx(bf16), (head.bypassed(forward) if logits_chunk else contextlib.nullcontext()) as own_head:
        out = forward(input_ids=batch["input_ids"], **kw)
        logits = out.logits  # with the head bypassed: the final hidden states
        if sparse and logits.size(1) != keep.numel():  # a model that returned every position
            logits = logits[:, keep]
        elif not sparse:
            logits = logits[:, :-1]
        kept = labels[:, keep] if sparse else labels
        kept_mask = kept != IGNORE
        if logits_chunk:  # the chunks take the trained positions only: put them back in their places
            part, h = head.chunked_logps(own_head, logits[kept_mask], kept[kept_mask], logits_chunk, entropy)
            lp = _placed(part, kept.shape, kept_mask)
            ent = _placed(h, kept.shape, kept_mask) if h is not None else None
        else:
            lp, ent = head.logps_of(logits, kept.masked_fill(~kept_mask, 0), entropy)
            lp = lp * kept_mask
            ent = ent * kept_mask if ent is not None else None
    if sparse:  # the kept positions back in their places
        lp = _placed(lp, labels.shape, (slice(None), keep))
        ent = _placed(ent, labels.shape, (slice(None), keep)) if ent is not None else None
    return LogProbs(lp, mask.to(lp.dtype), out, ent)


def _placed(x: torch.Tensor, shape: torch.Size, index: Any) -> torch.Tensor:
    """Zeros of ``shape`` with ``x`` at ``index``."""
    y = x.new_zeros(shape)
    y[index] = x
    return y


def autocast_ctx(bf16: bool) -> Any:
    if not bf16:
        return contextlib.nullcontext()
    dev = device()
    if dev.type == "cuda" and not torch.cuda.is_bf16_supported():
        return contextlib.nullcontext()
    return torch.autocast(device_type=dev.type, dtype=torch.bfloat16)


def pad_batch(seqs: list[Any], pad_id: int, dev: torch.device) -> dict[str, torch.Tensor]:
    """Right-pads tokenised sequences (``input_ids``/``labels`` lists) into ``input_ids``, ``attention_mask`` and
    ``labels`` tensors ``[B, L]`` on ``dev``; padding is masked out of attention and loss (``IGNORE``)."""
    from .data import IGNORE

    L = max(len(s.input_ids) for s in seqs)
    ids = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    lab = torch.full((len(seqs), L), IGNORE, dtype=torch.long)
    for i, s in enumerate(seqs):
        n = len(s.input_ids)
        ids[i, :n] = torch.tensor(s.input_ids)
        att[i, :n] = 1
        lab[i, :n] = torch.tensor(s.labels)
    return {"input_ids": ids.to(dev), "attention_mask": att.to(dev), "labels": lab.to(dev)}


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
    params = [p for _, p in _trainable(model)]
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


#: The model-config attribute that records the model's prompt format: "keep" (the system message, with the tool
#: list, starts every prompt) or "drop" (no system message). ``save_pretrained`` writes it into ``config.json``,
#: ``export-onnx`` copies it into ``gymflow_policy.json``, and the TypeScript ``local:`` policy renders prompts
#: accordingly — so rollouts always see what the model was trained on.
SYSTEM_PROMPT_ATTR = "gymflow_system_prompt"


def save_tokenizer(tokenizer: Any, model: Any, directory: str) -> None:
    """Saves the tokenizer with the chat template of the prompts ``model`` was trained on (``chat.template_for``
    its prompt format), in place of whatever template a base model came with, such as Qwen's, which renders tool
    results as ``<tool_response>`` user turns and adds a default system message. A server that renders prompts
    from the tokenizer, such as vLLM or SGLang, then gives the model exactly what training gave it."""
    tokenizer.chat_template = template_for(getattr(getattr(model, "config", None), SYSTEM_PROMPT_ATTR, None))
    tokenizer.save_pretrained(directory)


def system_prompt_mode(config: Any, requested: Optional[str]) -> str:
    """The prompt format of a run: the configured ``system_prompt``, else the one the model was trained with
    (recorded in its config), else "keep". Stamps it on the model's config so every checkpoint carries it; a
    request that contradicts what the loaded model was trained with is refused (rollouts would differ)."""
    recorded = getattr(config, SYSTEM_PROMPT_ATTR, None)
    if requested is not None and recorded is not None and requested != recorded:
        raise ConfigError(f"system_prompt: '{requested}' contradicts the model, which was trained with system_prompt '{recorded}' "
                          "(its config.json); leave system_prompt unset to follow the model")
    mode = requested or recorded or "keep"
    if config is not None:
        setattr(config, SYSTEM_PROMPT_ATTR, mode)
    return mode


class Run(NamedTuple):
    """What :func:`prepare_run` gives a training command."""

    device: torch.device
    digest: str
    resume: Optional[str]
    model: Any
    tokenizer: Any
    data: Any


def prepare_run(cfg: Any, load_data: Callable[[Any, bool], Any]) -> Run:
    """The start every training command shares: create the output directory, seed every RNG, pick the
    device, fingerprint the data file (checkpoints refuse a resume on other data), resolve ``resume_from``
    (``latest`` → newest checkpoint), load the tokenizer and the model's config, then the data with
    ``load_data(tokenizer, keep_system)`` (``keep_system``: the run's :func:`system_prompt_mode` is "keep"), and
    only then the model's weights: a mistake in the data is reported before a large model spends minutes
    loading."""
    from .data import file_digest

    os.makedirs(cfg.output_dir, exist_ok=True)
    if distributed.is_main():
        remove_stale_staging(cfg.output_dir)
    seed_everything(cfg.seed)
    dev = device()
    digest = file_digest(cfg.data)
    resume = resolve_resume(cfg.resume_from, cfg.output_dir)
    if resume is None:
        refuse_other_run(cfg.output_dir)
    distributed.check_same(resume, "the checkpoint to resume from")  # every rank loads the same one
    tok, config, built = load_tokenizer_and_config(cfg.model)
    data = load_data(tok, system_prompt_mode(config, cfg.system_prompt) == "keep")
    model = load_model(cfg.model, cfg.lora, config, built)
    context = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    max_length = getattr(cfg, "max_length", None)
    if isinstance(context, int) and isinstance(max_length, int) and max_length > context and distributed.is_main():
        # Positions past the context were never trained; the ONNX export and `serve` keep the model's context.
        sys.stderr.write(f"warning: max_length {max_length} is more than the model's context ({context} positions, "
                         "config.max_position_embeddings); longer rows train positions the model will not serve\n")
    return Run(dev, digest, resume, model, tok, data)


def batch_schedule(n: int, cfg: Any, units: Optional[list[list[int]]] = None) -> list[tuple[int, list[list[int]]]]:
    """Every optimiser step of ``n`` examples as ``(epoch, micro-batches)``: a seeded shuffle per epoch,
    ``cfg.batch_size`` per micro-batch, ``cfg.grad_accum`` micro-batches per step, cut at ``cfg.max_steps``.
    With ``units`` (groups of example indices that cover all ``n``) the groups are shuffled instead, and each one's
    examples follow one another in its order: PPO keeps a trajectory's step samples together this way."""
    steps = []
    for epoch in range(cfg.epochs):
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch)
        if units is None:
            order = torch.randperm(n, generator=g).tolist()
        else:
            order = [i for u in torch.randperm(len(units), generator=g).tolist() for i in units[u]]
        micro = [order[i : i + cfg.batch_size] for i in range(0, n, cfg.batch_size)]
        for j in range(0, len(micro), cfg.grad_accum):
            steps.append((epoch, micro[j : j + cfg.grad_accum]))
    return steps[: cfg.max_steps] if cfg.max_steps is not None else steps
