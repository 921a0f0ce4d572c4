"""Batches: the padded and padding-free (packed) layouts of tokenised sequences, the trained positions'
log-probabilities under a model (``trained_logps``), bf16 autocast, and the schedule of every optimiser step's
micro-batches.
"""

from __future__ import annotations

import contextlib
from typing import Any, NamedTuple, Optional

import torch

from . import head
from .attention import boundaries
from .models import device


#: A batch's fields, besides ``input_ids``, that go to the model call as they are (padded or packed layout).
MODEL_KEYS = ("attention_mask", "position_ids", "cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")


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


def batch_schedule(n: int, cfg: Any, units: Optional[list[list[int]]] = None,
                   whole_units: bool = False) -> list[tuple[int, list[list[int]]]]:
    """Every optimiser step of ``n`` examples as ``(epoch, micro-batches)``: a seeded shuffle per epoch,
    ``cfg.batch_size`` per micro-batch, ``cfg.grad_accum`` micro-batches per step, cut at ``cfg.max_steps``.
    With ``units`` (groups of example indices that cover all ``n``) the groups are shuffled instead, and each one's
    examples follow one another in its order: PPO keeps a trajectory's step samples together this way.
    ``whole_units``: no unit is split between optimiser steps either — each step takes shuffled units while
    they fit in ``batch_size × grad_accum`` examples (a larger unit is a step of its own) and is cut into
    micro-batches of at most ``batch_size``: GRPO's ``whole_groups``, so a step holds every member of its groups."""
    steps = []
    for epoch in range(cfg.epochs):
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch)
        if units is None:
            order = torch.randperm(n, generator=g).tolist()
        else:
            order = [i for u in torch.randperm(len(units), generator=g).tolist() for i in units[u]]
        if whole_units and units is not None:
            for step in _whole_unit_steps(order, units, cfg.batch_size * cfg.grad_accum):
                steps.append((epoch, [step[i : i + cfg.batch_size] for i in range(0, len(step), cfg.batch_size)]))
            continue
        micro = [order[i : i + cfg.batch_size] for i in range(0, n, cfg.batch_size)]
        for j in range(0, len(micro), cfg.grad_accum):
            steps.append((epoch, micro[j : j + cfg.grad_accum]))
    return steps[: cfg.max_steps] if cfg.max_steps is not None else steps


def _whole_unit_steps(order: list[int], units: list[list[int]], capacity: int) -> list[list[int]]:
    """``order`` (whole units one after another) cut into steps at unit boundaries only: a step takes the next
    units while its size stays within ``capacity``; a unit larger than ``capacity`` makes a step of its own."""
    size = {u[0]: len(u) for u in units if u}
    steps: list[list[int]] = []
    cur: list[int] = []
    pos = 0
    while pos < len(order):
        k = size[order[pos]]
        if cur and len(cur) + k > capacity:
            steps.append(cur)
            cur = []
        cur = cur + order[pos : pos + k]
        pos += k
    if cur:
        steps.append(cur)
    return steps
