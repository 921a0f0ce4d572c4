"""Supervised fine-tuning on exported conversations (``python -m gymflow_trainer sft``).

A plain torch loop. The whole schedule of batches is computed up front from (seed, data, config), so
the data position of a checkpoint is just the optimiser step it reached, and ``--resume-from`` continues
exactly where the run stopped: same batches, same optimiser and scheduler state, same RNG.

Loss of one optimiser step (``grad_accum`` micro-batches ``b``; ``w`` the per-token weights — 1, or
``step_reward / mean step_reward`` with ``step_weighted``; ``N`` the trained tokens of the whole step):

    L = Σ_b Σ_t w_t · CE_t / N

so accumulation gives the same gradient as one big batch, whatever the micro-batch split. Under
``torchrun`` the step's micro-batches are shared out between ranks (``distributed.shard``); ``N`` still counts
the whole step (every rank knows it from the schedule, no all-reduce needed) and the ranks' gradients are
summed, so the loss and the update are the single-process ones.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import torch

from . import batching, checkpoints, distributed, memory, models, optim, prepare
from .config import SftConfig
from .data import IGNORE, SftExample, curriculum_order, curriculum_pool, load_sft, warn_stderr
from .errors import DataError
from .events import EventWriter


def build_schedule(examples: list[SftExample], cfg: SftConfig) -> list[tuple[int, list[list[int]]]]:
    """Every optimiser step as ``(epoch, micro-batches of example indices)``.

    Without curriculum each epoch is a permutation drawn from ``seed`` and the epoch number. With it,
    examples run easiest first (:func:`data.curriculum_order`) and each epoch uses a growing prefix of that
    order (:func:`data.curriculum_pool`). A last short group of micro-batches at an epoch's end is a step.
    """
    n = len(examples)
    easy = curriculum_order(examples) if cfg.curriculum else None
    steps: list[tuple[int, list[list[int]]]] = []
    for epoch in range(cfg.epochs):
        if easy is not None:
            order = easy[: curriculum_pool(n, epoch, cfg.epochs, cfg.curriculum_start)]
        else:
            g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch)
            order = torch.randperm(n, generator=g).tolist()
        micro = [order[i : i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)]
        for j in range(0, len(micro), cfg.grad_accum):
            steps.append((epoch, micro[j : j + cfg.grad_accum]))
    if cfg.max_steps is not None:
        steps = steps[: cfg.max_steps]
    return steps


def length_pieces(batch: list[int], lengths: Sequence[int], pieces: int) -> list[list[int]]:
    """``batch`` sorted by length and cut into at most ``pieces`` runs that minimise the padded size
    ``Σ rows × longest`` (dynamic programming over the cut points; fewer pieces on a tie). Each piece is padded
    to its own longest example only, so a long example no longer pads the short ones of its micro-batch."""
    order = sorted(batch, key=lambda i: lengths[i])
    n = len(order)
    if pieces <= 1 or n <= 1:
        return [order] if order else []
    # cost[k][i]: least padded size of the first i examples in k pieces; cut[k][i]: where the last piece starts.
    inf = float("inf")
    cost = [[inf] * (n + 1) for _ in range(pieces + 1)]
    cut = [[0] * (n + 1) for _ in range(pieces + 1)]
    cost[0][0] = 0
    for k in range(1, pieces + 1):
        for i in range(1, n + 1):
            for j in range(i):
                c = cost[k - 1][j] + (i - j) * lengths[order[i - 1]]
                if c < cost[k][i]:
                    cost[k][i], cut[k][i] = c, j
    k = min(range(1, pieces + 1), key=lambda m: (cost[m][n], m))
    out: list[list[int]] = []
    i = n
    while k > 0:
        j = cut[k][i]
        out.append(order[j:i])
        i, k = j, k - 1
    return out[::-1]


def collate(examples: list[SftExample], pad_id: int, dev: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded tensors: input_ids, attention_mask, labels (-100 on padding), weights (0 on padding)."""
    L = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), L), pad_id, dtype=torch.long)
    att = torch.zeros((len(examples), L), dtype=torch.long)
    lab = torch.full((len(examples), L), IGNORE, dtype=torch.long)
    w = torch.zeros((len(examples), L), dtype=torch.float32)
    for i, e in enumerate(examples):
        n = len(e.input_ids)
        ids[i, :n] = torch.tensor(e.input_ids)
        att[i, :n] = 1
        lab[i, :n] = torch.tensor(e.labels)
        w[i, :n] = torch.tensor(e.weights)
    return {"input_ids": ids.to(dev), "attention_mask": att.to(dev), "labels": lab.to(dev), "weights": w.to(dev)}


def collate_packed(examples: list[SftExample], pad_id: int, dev: torch.device, varlen: bool = False) -> dict[str, Any]:
    """Padding-free: :func:`batching.pack_rows` of the examples, with their weights (0 on each first token)."""
    out = batching.pack_rows(examples, dev, varlen)
    w: list[float] = []
    for e in examples:
        w += [0.0] + e.weights[1:]
    out["weights"] = torch.tensor([w], dtype=torch.float32, device=dev)
    return out


def token_losses(model: Any, batch: dict[str, Any], bf16: bool = False, logits_chunk: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token cross-entropy ``[B, T-1]`` (float32, 0 where not trained) and the matching weights; the logits
    only where a token is trained (:func:`batching.trained_logps`).

    A varlen packed batch (``collate_packed(..., varlen=True)``) needs the model switched to
    :mod:`attention`'s implementation (:func:`attention.use_varlen`)."""
    r = batching.trained_logps(model, batch, bf16, logits_chunk=logits_chunk)
    return -r.logp, batch["weights"][:, 1:] * r.mask


def run(cfg: SftConfig, events: EventWriter) -> dict[str, Any]:
    """Trains and returns the ``done`` event's fields."""
    def load_data(tok: Any, keep_system: bool) -> list[SftExample]:
        examples = load_sft(cfg.data, tok, cfg.max_length, mask_observations=cfg.mask_observations, step_weighted=cfg.step_weighted,
                            overlong=cfg.overlong, chunk_overlap=cfg.chunk_overlap, warn=warn_stderr, system=keep_system)
        if not examples:
            raise DataError(f"{cfg.data}: no example has a trained token")
        return examples

    dev, digest, resume, model, tok, examples = prepare.prepare_run(cfg, load_data)
    schedule = build_schedule(examples, cfg)
    lengths = [len(e.input_ids) for e in examples]
    model.to(dev)
    model.train()
    models.prepare_layout(model, cfg)
    if cfg.compile:
        models.compile_layers(model)
    varlen = cfg.packed == "varlen"
    opt, sched, start, resumed = checkpoints.start_training(model, cfg.optim, len(schedule), resume, digest, cfg.model.path)
    fwd = distributed.wrap(model)  # training forwards (DDP under torchrun); `model` for everything else
    events.emit("start", command="sft", examples=len(examples), total_steps=len(schedule), start_step=start,
                **resumed.fields(), device=str(dev), processes=distributed.world().size,
                trainable_params=sum(p.numel() for p in model.parameters() if p.requires_grad))

    extra = {**checkpoints.config_extra(cfg, digest), "total_steps": len(schedule)}
    loss_val = float("nan")
    skipped = optim.SkippedSteps(cfg.optim.max_skipped_steps)
    fit = memory.fit_for(cfg, (memory.packed_size if cfg.packing else memory.padded_size)(lengths))
    for step in range(start, len(schedule)):
        epoch, micro = schedule[step]
        if cfg.length_pieces > 1 and not cfg.packing:
            micro = [p for mb in micro for p in length_pieces(mb, lengths, cfg.length_pieces)]
        t0 = time.perf_counter()
        n_trained = sum(examples[i].num_trained for mb in micro for i in mb)
        n_tokens = sum(len(examples[i].input_ids) for mb in micro for i in mb)
        done_steps = step + 1

        def forward_backward() -> float:
            total = 0.0
            for _, mb, live in fit.pieces(fwd, micro):  # with one process and no limit: the micro-batches
                exs = [examples[i] for i in mb]
                batch = collate_packed(exs, tok.pad_token_id, dev, varlen) if cfg.packing else collate(exs, tok.pad_token_id, dev)
                ce, w = token_losses(fwd, batch, cfg.bf16, cfg.logits_chunk)
                loss = (ce * w).sum() / max(n_trained, 1) * live
                loss.backward()
                total += float(loss.detach())
            return total

        (total,) = distributed.all_reduce_sum([fit.run(f"step {done_steps}", model, forward_backward)])
        grad_norm, lr = optim.optimizer_step(model, opt, sched, cfg.optim.max_grad_norm, skipped, done_steps)
        loss_val = total
        dt = time.perf_counter() - t0
        if done_steps % cfg.log_every == 0 or done_steps == len(schedule):
            events.progress(step=done_steps, total_steps=len(schedule), epoch=epoch, loss=loss_val, lr=lr,
                            grad_norm=float(grad_norm), tokens=n_tokens, trained_tokens=n_trained,
                            tokens_per_s=n_tokens / dt if dt > 0 else None, **skipped.fields(), **fit.fields())
        if cfg.save_every and done_steps % cfg.save_every == 0 and done_steps < len(schedule):
            path = checkpoints.save_checkpoint(cfg.output_dir, done_steps, model, tok, opt, sched, extra, cfg.keep_last)
            events.checkpoint(path, done_steps)
    path = checkpoints.save_checkpoint(cfg.output_dir, len(schedule), model, tok, opt, sched, extra, cfg.keep_last)
    events.checkpoint(path, len(schedule))
    final = checkpoints.save_final(cfg.output_dir, model, tok, opt if cfg.optim.carry_state else None)
    return {"step": len(schedule), "loss": loss_val, "path": final, "checkpoint": path}


def evaluate_loss(model: Any, examples: list[SftExample], pad_id: int, bf16: bool = False) -> float:
    """Weighted token-mean loss over ``examples`` (no gradient)."""
    dev = next(model.parameters()).device
    tot, n = 0.0, 0
    with torch.no_grad():
        for e in examples:
            ce, w = token_losses(model, collate([e], pad_id, dev), bf16)
            tot += float((ce * w).sum())
            n += e.num_trained
    return tot / max(n, 1)


__all__ = ["run", "build_schedule", "length_pieces", "collate", "collate_packed", "token_losses", "evaluate_loss"]
