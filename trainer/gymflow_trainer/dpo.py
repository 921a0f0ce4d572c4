"""Direct preference optimisation (``python -m gymflow_trainer dpo``): sigmoid (DPO) or IPO.

Each pair is scored as the sum of the trained tokens' log-probabilities (the continuation's assistant
messages) for ``sigmoid``, and their per-token mean for ``ipo`` (as TRL does; see ``losses.dpo_loss``).
The reference is the initial policy: precomputed once before training (``reference: precompute``, no
second model in memory), or a frozen copy (``reference: model``; with LoRA the same model with its
adapter disabled). Loss per optimiser step: the mean over its pairs, whatever the micro-batch split.
Checkpoints and ``--resume-from`` work as in ``sft``. Under ``torchrun`` each rank takes its share of every
step's pairs (``distributed.shard``), weighs each pair by 1/(pairs of the whole step) and the gradients are
summed across ranks; a precomputed reference is computed by each rank for the pairs it will see.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import time
from typing import Any, Optional

import torch

from . import batching, checkpoints, distributed, memory, models, optim, prepare
from .config import DpoConfig
from .data import DpoExample, load_dpo
from .events import EventWriter
from .losses import dpo_loss


def sequence_logps(model: Any, pairs: list[DpoExample], pad_id: int, mean: bool, bf16: bool = False,
                   packed: Optional[str] = None, logits_chunk: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(chosen, rejected) sequence log-probs ``[B]``: sum (or mean, for IPO) over trained tokens. ``packed``
    ("varlen" or "mask", ``cfg.packed``): the 2B sequences run as one packed row. ``logits_chunk``:
    :func:`batching.trained_logps`'s."""
    dev = next(model.parameters()).device
    seqs = [p.chosen for p in pairs] + [p.rejected for p in pairs]
    b = batching.layout_batch(seqs, pad_id, dev, packed)
    r = batching.trained_logps(model, b, bf16, logits_chunk=logits_chunk)
    logp, mask = batching.as_padded(b, r.logp, r.mask)
    seq = logp.sum(-1)
    if mean:
        seq = seq / mask.sum(-1).clamp(min=1.0)
    return seq[: len(pairs)], seq[len(pairs) :]


def run(cfg: DpoConfig, events: EventWriter) -> dict[str, Any]:
    dev, digest, resume, model, tok, pairs = prepare.prepare_run(cfg, lambda tokenizer, keep_system: load_dpo(cfg.data, tokenizer, cfg.max_length, system=keep_system))
    steps = batching.batch_schedule(len(pairs), cfg)
    model.to(dev)
    models.prepare_layout(model, cfg)  # before the reference model is copied from it
    mean = cfg.loss_type == "ipo"
    # the pairs' (chosen, rejected) log-probs under a model, in the configured layout
    logps = functools.partial(sequence_logps, pad_id=tok.pad_token_id, mean=mean, bf16=cfg.bf16, packed=cfg.packed,
                              logits_chunk=cfg.logits_chunk)
    if cfg.packing:  # a pair's chosen and rejected sequences in the same packed row
        fit = memory.fit_for(cfg, memory.packed_size([len(p.chosen.input_ids) + len(p.rejected.input_ids) for p in pairs]))
    else:  # a piece pads chosen and rejected sequences together: 2 × rows × the longest of either
        fit = memory.fit_for(cfg, memory.padded_size([max(len(p.chosen.input_ids), len(p.rejected.input_ids)) for p in pairs], 2))

    # The reference is the *initial* policy, so it is set up before a checkpoint is loaded.
    ref_model = None
    ref_c = ref_r = None
    if cfg.reference == "precompute":
        model.eval()
        # Only the pairs this rank's share of the schedule touches (all of them with one process); 0 elsewhere.
        mine = sorted(distributed.owned_indices([micro for _, micro in steps]))
        ref_c, ref_r = torch.zeros(len(pairs)), torch.zeros(len(pairs))

        def precompute() -> None:
            with torch.no_grad():
                for i in range(0, len(mine), cfg.batch_size):
                    for chunk in fit.chunks(mine[i : i + cfg.batch_size]):
                        c, r = logps(model, [pairs[k] for k in chunk])
                        ref_c[chunk], ref_r[chunk] = c.float().cpu(), r.float().cpu()

        fit.run("the reference log-probs", model, precompute)
    elif cfg.lora is None:
        ref_model = copy.deepcopy(model).eval()
        for p in ref_model.parameters():
            p.requires_grad_(False)
    model.train()
    if cfg.compile:  # the reference (copy or precomputed) stays eager
        models.compile_layers(model)
    opt, sched, start, resumed = checkpoints.start_training(model, cfg.optim, len(steps), resume, digest, cfg.model.path)
    fwd = distributed.wrap(model)  # training forwards (DDP under torchrun); `model` for everything else
    events.emit("start", command="dpo", pairs=len(pairs), total_steps=len(steps), start_step=start, **resumed.fields(),
                device=str(dev), reference=cfg.reference, processes=distributed.world().size)

    def reference(idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        if ref_c is not None and ref_r is not None:
            t = torch.tensor(idx)
            return ref_c[t], ref_r[t]
        with torch.no_grad():
            if ref_model is not None:
                return logps(ref_model, [pairs[i] for i in idx])
            ctx = model.disable_adapter() if hasattr(model, "disable_adapter") else contextlib.nullcontext()
            with ctx:
                return logps(model, [pairs[i] for i in idx])

    extra = {**checkpoints.config_extra(cfg, digest), "total_steps": len(steps)}
    loss_val = float("nan")
    skipped = optim.SkippedSteps(cfg.optim.max_skipped_steps)
    for step in range(start, len(steps)):
        epoch, micro = steps[step]
        t0 = time.perf_counter()
        done_steps = step + 1

        def pair_loss(mb: list[int]) -> tuple[torch.Tensor, dict[str, float]]:
            rc, rr = reference(mb)
            pc, pr = logps(fwd, [pairs[i] for i in mb])
            return dpo_loss(pc, pr, rc.to(pc.device), rr.to(pc.device), cfg.beta, cfg.loss_type)

        total, agg = fit.run(f"step {done_steps}", model, lambda: optim.example_mean_passes(fit, fwd, micro, pair_loss))
        (total,) = distributed.all_reduce_sum([total])
        agg = distributed.sum_dict(agg)
        grad_norm, lr = optim.optimizer_step(model, opt, sched, cfg.optim.max_grad_norm, skipped, done_steps)
        loss_val = total
        dt = time.perf_counter() - t0
        n_tokens = sum(len(pairs[i].chosen.input_ids) + len(pairs[i].rejected.input_ids) for mb in micro for i in mb)
        if done_steps % cfg.log_every == 0 or done_steps == len(steps):
            events.progress(step=done_steps, total_steps=len(steps), epoch=epoch, loss=loss_val, lr=lr, grad_norm=float(grad_norm),
                            tokens_per_s=n_tokens / dt if dt > 0 else None, **agg, **skipped.fields(), **fit.fields())
        if cfg.save_every and done_steps % cfg.save_every == 0 and done_steps < len(steps):
            path = checkpoints.save_checkpoint(cfg.output_dir, done_steps, model, tok, opt, sched, extra, cfg.keep_last)
            events.checkpoint(path, done_steps)
    path = checkpoints.save_checkpoint(cfg.output_dir, len(steps), model, tok, opt, sched, extra, cfg.keep_last)
    events.checkpoint(path, len(steps))
    final = checkpoints.save_final(cfg.output_dir, model, tok, opt if cfg.optim.carry_state else None)
    return {"step": len(steps), "loss": loss_val, "path": final, "checkpoint": path}
