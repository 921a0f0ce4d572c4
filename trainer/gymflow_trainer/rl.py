"""Policy-gradient update from grouped trajectories (``python -m gymflow_trainer rl``): the GRPO family.

Input: an ``rl`` export, one record per task with a group of trajectories (docs/datasets.md). Each member
is the shared prompt + its completion; trained tokens are the completion's ``train: true`` assistant
messages. Advantages per member come from ``advantages.group_advantages`` (or the exporter's field), one
value for all of a member's tokens (with ``step_reward_coef`` and step samples, each step adds its process
supervision term, :func:`sample_advantages`). The loss is ``losses.policy_loss`` with ``cfg.loss``.

Samples (``samples``): with the rollout's token ids and log-probs in the data (a ``local:`` or vLLM policy
records them), one sample per step — exactly the ids the policy saw and sampled — and the old log-probs are
the rollout's own, those of the policy that generated the data. Otherwise one sample per member (the rendered
conversation) and the old log-probs are the current policy's, computed (no gradient) before the first update on
a rollout batch (the ``grad_accum`` micro-batches of an optimiser step). ``ppo_epochs > 1`` reuses them for
further updates. With step samples the trainer's own log-probs are computed too, and ``mismatch_kl`` reports
how far the rollout engine's are from them; ``rollout_correction`` then takes the ratio against the trainer's
and weights the loss by ``losses.rollout_weights``. Checkpoints are written only at rollout-batch boundaries so
that resume never needs a lost ``old_logp`` cache.

PPO (``loss.algorithm: ppo``): a value head ``Linear(hidden, 1)`` on the last hidden state (attribute
``v_head`` of the model, trained with it, saved in checkpoints' ``trainable.safetensors``, left out of the
saved policy). Per-token advantages and returns come from one GAE recursion per member (trajectory) over its
trained tokens in order, with the old values, and the member's reward on its last trained token
(:func:`member_gae`, with each step's shaped process reward β·(s − 1) on its last token when ``step_reward_coef``
β > 0; whitened over the rollout batch when ``whiten_advantages``); the loss is
``policy_loss(ppo) + vf_coef · value_loss``. With step samples a member's steps are separate samples, which
may fall in other rollout batches or on other ranks: before the updates on a rollout batch each rank computes
the old values of its members' later steps too (no gradient), so that each step's last token bootstraps from
the value of the next step's first generated token.

Several processes (``torchrun``): each rank takes its share of every rollout batch (``distributed.shard``),
keeps the old log-probs (and PPO values, advantages, returns) of its own samples, and computes the KL
reference for the samples it will see. The loss of one micro-batch is an aggregate over that micro-batch
(token-mean, sequence-mean or a constant, ``losses.aggregate``); a rank holding part of a micro-batch scales
its part's aggregate by (its tokens or sequences) / (the micro-batch's) — :func:`piece_share` — so that the
summed gradient is the single-process one. PPO's advantage whitening takes its mean and variance over the
whole rollout batch (all-reduced sums).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, Iterable, Optional

import torch

from . import batching, checkpoints, distributed, memory, models, optim, prepare
from .advantages import chained_gae, dynamic_sampling_filter, group_advantages, process_advantages
from .config import ModelConfig, RlConfig
from .data import IGNORE, RlSample, load_rl, load_rl_steps, rollout_tokens_complete, warn_stderr
from .errors import ConfigError, DataError
from .events import EventWriter
from .losses import DEFAULT_AGGREGATION, masked_mean, policy_loss, rollout_weights, value_loss



def token_logps(model: Any, samples: list[RlSample], pad_id: int, bf16: bool = False, values: bool = False,
                forward: Any = None, packed: Optional[str] = None, logits_chunk: int = 0,
                entropy: bool = False) -> tuple[torch.Tensor, ...]:
    """``(logp, mask)`` ``[B, T-1]`` of the trained tokens; with ``values`` also the value head's ``V`` at the same
    positions (the value of the state from which the token at t+1 is generated); with ``entropy`` last the
    policy's entropy at each trained position (no gradient). ``forward``: the module to run
    the forward pass through (the DDP wrapper when training under torchrun), default ``model``. ``packed``
    ("varlen" or "mask", ``cfg.packed``): the samples run as one packed row, and the results come back in the
    padded layout, so everything downstream is the same. ``logits_chunk``: :func:`batching.trained_logps`'s."""
    dev = next(model.parameters()).device
    seqs = [s.tokens for s in samples]
    b = batching.layout_batch(seqs, pad_id, dev, packed)
    r = batching.trained_logps(forward or model, b, bf16, hidden=values, logits_chunk=logits_chunk, entropy=entropy)
    rows = [r.logp, r.mask]
    if values:
        rows.append(model.v_head(r.output.hidden_states[-1][:, :-1].float()).squeeze(-1))
    if r.entropy is not None:
        rows.append(r.entropy)
    return tuple(batching.as_padded(b, *rows))


def outcome_advantages(samples: list[RlSample], cfg: RlConfig) -> torch.Tensor:
    """One advantage per sample from the members' rewards: the dataset's, or group-relative (``cfg.advantages:
    group``) with the group statistics taken over trajectories, not samples — a member split into several step
    samples counts once and every one of its steps gets its advantage."""
    if cfg.advantages != "group":
        return torch.tensor([s.advantage for s in samples], dtype=torch.float64)
    first: dict[str, int] = {}
    for i, s in enumerate(samples):
        first.setdefault(s.member or str(i), i)
    heads = list(first.values())
    rewards = torch.tensor([samples[i].reward for i in heads], dtype=torch.float64)
    member_adv = group_advantages(rewards, [samples[i].group for i in heads], norm_std=cfg.loss.algorithm != "dr_grpo")
    by_member = {key: member_adv[k] for k, key in enumerate(first)}
    return torch.stack([by_member[s.member or str(i)] for i, s in enumerate(samples)])


def process_terms(samples: list[RlSample], cfg: RlConfig) -> torch.Tensor:
    """Per sample, what the steps' process rewards add to its advantage: β times
    :func:`advantages.process_advantages` for the GRPO family with ``step_reward_coef`` β > 0; 0 otherwise (PPO
    places them in its GAE, :func:`member_gae`)."""
    if cfg.step_reward_coef <= 0 or cfg.loss.algorithm == "ppo":
        return torch.zeros(len(samples), dtype=torch.float64)
    process = process_advantages([s.step_reward for s in samples], [s.group for s in samples],
                                 [s.member or str(i) for i, s in enumerate(samples)], [s.step for s in samples],
                                 norm_std=cfg.loss.algorithm != "dr_grpo")
    return cfg.step_reward_coef * process


def sample_advantages(samples: list[RlSample], cfg: RlConfig) -> torch.Tensor:
    """One advantage per sample: :func:`outcome_advantages` plus :func:`process_terms`."""
    return outcome_advantages(samples, cfg) + process_terms(samples, cfg)


def step_reward_stats(samples: list[RlSample], cfg: RlConfig, process: torch.Tensor, outcome: torch.Tensor) -> dict[str, Any]:
    """The ``start`` event's ``step_rewards`` (with ``step_reward_coef`` > 0): steps scored and not, and the mean
    size of what the step rewards add per step next to the outcome's (GRPO family: the advantages; PPO: the
    rewards, β·(1 − s) per scored step against the members' mean |reward|), to tune β by."""
    scored = [s.step_reward for s in samples if s.step_reward is not None]
    n = max(len(samples), 1)
    if cfg.loss.algorithm == "ppo":
        term, against = cfg.step_reward_coef * sum(1.0 - x for x in scored) / n, sum(abs(s.reward) for s in samples) / n
    else:
        term, against = float(process.abs().sum()) / n, float(outcome.abs().sum()) / n
    return {"scored": len(scored), "unscored": len(samples) - len(scored), "mean_abs_term": term, "mean_abs_outcome": against}


def episodes(samples: list[RlSample]) -> dict[str, list[int]]:
    """Each member's samples in step order: its episode (a conversation sample is its member's only sample)."""
    out: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        out.setdefault(s.member or str(i), []).append(i)
    for idx in out.values():
        idx.sort(key=lambda i: samples[i].step)
    return out


def episode_tails(owned: Iterable[int], samples: list[RlSample], by_member: dict[str, list[int]]) -> list[list[int]]:
    """For every member with a sample in ``owned``, its samples from the earliest owned one to its last step:
    what GAE needs for the owned samples (an advantage depends on the rewards and values at and after its
    position only, so the steps before are not needed)."""
    first: dict[str, int] = {}
    for i in owned:
        key = samples[i].member or str(i)
        pos = by_member[key].index(i)
        first[key] = min(first.get(key, pos), pos)
    return [by_member[key][pos:] for key, pos in first.items()]


def member_gae(tails: list[list[int]], trained_values: dict[int, torch.Tensor], samples: list[RlSample],
               gamma: float, lam: float, step_coef: float = 0.0) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """PPO's per-token ``(advantages, returns)`` at the trained positions of every sample of ``tails`` (members'
    step samples in step order, :func:`episode_tails`): one :func:`advantages.chained_gae` recursion over each
    member's trained tokens, its steps concatenated, so a step's last token bootstraps from the value before the
    next step's first generated token; the member's reward sits on the last trained token of its last step.
    With ``step_coef`` β > 0 each scored step's last trained token also gets β·(s − 1), s its process reward.
    ``trained_values[i]``: the old values at sample i's trained positions, in order."""
    vals = [[trained_values[i] for i in tail] for tail in tails]
    rews = [[torch.zeros_like(v) for v in ep] for ep in vals]
    for tail, ep in zip(tails, rews):
        for i, r in zip(tail, ep):
            score = samples[i].step_reward
            if step_coef > 0 and score is not None and r.numel():
                r[-1] += step_coef * (score - 1.0)
        last = next((r for r in reversed(ep) if r.numel()), None)  # a step with no trained token has no last one
        if last is not None:
            last[-1] += samples[tail[-1]].reward
    return {i: res for tail, ep in zip(tails, chained_gae(rews, vals, gamma, lam)) for i, res in zip(tail, ep)}


def _pad_to(t: torch.Tensor, width: int) -> torch.Tensor:
    return torch.nn.functional.pad(t, (0, width - t.size(-1)))


def trained_counts(samples: list[RlSample]) -> list[int]:
    """Per sample, the trained positions of its loss mask (labels after the first that are not ignored)."""
    return [sum(1 for t in s.tokens.labels[1:] if t != IGNORE) for s in samples]


def piece_share(counts: list[int], piece: list[int], whole: list[int], mode: str) -> float:
    """The factor that turns the aggregate loss over ``piece`` (a part of ``whole``: an optimizer step's samples)
    into its share of the aggregate over ``whole``: Σ over pieces of share · aggregate(piece) = aggregate(whole),
    so however a step is cut into micro-batches (``grad_accum``), memory pieces or ranks, its loss and gradient
    are those of the step's batch taken at once: DAPO's and PPO's token-mean weighs every token of the batch the
    same, not every micro-batch. ``mode``: an aggregation of ``losses.aggregate`` (``seq`` for sequence means,
    gspo's); both sequence aggregations are means over sequences (Dr. GRPO's divides by the constant too)."""
    if len(piece) == len(whole):
        return 1.0
    if mode == "token-mean":
        return sum(counts[i] for i in piece) / max(sum(counts[i] for i in whole), 1)
    return sum(counts[i] > 0 for i in piece) / max(sum(counts[i] > 0 for i in whole), 1)


def schedule(n: int, cfg: RlConfig, members: Optional[list[list[int]]] = None,
             groups: Optional[list[list[int]]] = None) -> list[tuple[int, list[list[int]], int]]:
    """Every optimiser step as ``(epoch, micro-batches, inner)``: :func:`batching.batch_schedule` with each of its
    steps repeated ``ppo_epochs`` times (``inner`` counts the updates on one rollout batch), cut at ``max_steps``.
    With ``members`` (each member's step samples, in step order) whole members are shuffled and their steps stay
    together: PPO's GAE needs the values of a member's later steps, and a rollout batch that holds them needs no
    pass over other samples (shuffled steps cost about K/2 extra passes per sample for members of K steps).
    With ``groups`` (each group's samples, its members' steps in order; ``whole_groups``) whole groups are
    shuffled and no group is split between optimiser steps (:func:`group_units`)."""
    if groups is not None:
        uncut = batching.batch_schedule(n, dataclasses.replace(cfg, max_steps=None), groups, whole_units=True)
        steps = [(epoch, micro, inner) for epoch, micro in uncut for inner in range(cfg.ppo_epochs)]
        return steps[: cfg.max_steps] if cfg.max_steps is not None else steps
    uncut = batching.batch_schedule(n, dataclasses.replace(cfg, max_steps=None), members)
    steps = [(epoch, micro, inner) for epoch, micro in uncut for inner in range(cfg.ppo_epochs)]
    return steps[: cfg.max_steps] if cfg.max_steps is not None else steps


def group_units(samples: list[RlSample], by_member: dict[str, list[int]]) -> list[list[int]]:
    """Each group's samples, its members one after another and each member's steps in step order (the units of
    ``whole_groups``), groups in order of first appearance."""
    units: dict[str, list[int]] = {}
    for idx in by_member.values():
        units.setdefault(samples[idx[0]].group, []).extend(idx)
    return list(units.values())


def run(cfg: RlConfig, events: EventWriter) -> dict[str, Any]:
    """The ``rl`` command (see the module documentation); returns what goes in the ``done`` event."""
    by_steps = uses_step_samples(cfg)
    check_sample_kind(cfg, by_steps)  # before any model is loaded
    dev, digest, resume, model, tok, samples = prepare.prepare_run(cfg, _data_loader(cfg, by_steps))
    chosen = choose_samples(samples, cfg, by_steps)
    t = _Training.build(cfg, model, tok, chosen, by_steps)
    steps = schedule(len(t.samples), cfg, list(t.by_member.values()) if t.use_value and by_steps else None,
                     group_units(t.samples, t.by_member) if cfg.whole_groups else None)
    if t.use_value:
        add_value_head(model, cfg.seed)
    model.to(dev)
    models.prepare_layout(model, cfg)
    t.fit = memory.fit_for(cfg, (memory.packed_size if cfg.packing else memory.padded_size)([len(x.tokens.input_ids) for x in t.samples]))
    if cfg.loss.kl_beta > 0:  # the initial policy (or kl_reference), before any checkpoint is loaded
        t.ref = reference_logps(t, steps, reference_model(cfg, model, dev))
    model.train()
    if cfg.compile:
        models.compile_layers(model)
    opt, sched, start, resumed = checkpoints.start_training(model, cfg.optim, len(steps), resume, digest, cfg.model.path)
    t.fwd = distributed.wrap(model)  # training forwards (DDP under torchrun); `model` for everything else
    events.emit("start", command="rl", samples=len(t.samples), dropped=chosen.dropped, cut_samples=chosen.cut,
                total_steps=len(steps), start_step=start,
                **resumed.fields(), device=str(dev), algorithm=cfg.loss.algorithm, sample_kind="steps" if by_steps else "conversation",
                processes=distributed.world().size, **chosen.shaping)
    extra = {**checkpoints.config_extra(cfg, digest), "total_steps": len(steps)}
    loss_val = train_steps(t, steps, start, opt, sched, events, lambda done: checkpoints.save_checkpoint(
        cfg.output_dir, done, model, tok, opt, sched, extra, cfg.keep_last))
    path = checkpoints.save_checkpoint(cfg.output_dir, len(steps), model, tok, opt, sched, extra, cfg.keep_last)
    events.checkpoint(path, len(steps))
    final = checkpoints.save_final(cfg.output_dir, model, tok, opt if cfg.optim.carry_state else None)
    return {"step": len(steps), "loss": loss_val, "path": final, "checkpoint": path}


# ------------------------------------------------------------------------------------------ run's steps


def uses_step_samples(cfg: RlConfig) -> bool:
    """Whether the run trains one sample per step (the rollout's token ids and log-probs) rather than one per
    member (the rendered conversation): ``samples``, or with ``auto`` whether the data carries them."""
    return cfg.samples == "steps" or (cfg.samples == "auto" and rollout_tokens_complete(cfg.data))


def check_sample_kind(cfg: RlConfig, by_steps: bool) -> None:
    """Refuses what needs step samples without them (:class:`ConfigError`), and warns of LoRA dropout."""
    if cfg.lora is not None and cfg.lora.dropout > 0 and distributed.is_main():
        # The old (and reference) log-probs come from eval-mode passes, the training passes run with dropout.
        warn_stderr(f"lora.dropout {cfg.lora.dropout}: the training passes drop out what the old log-probs kept, so even the first update "
                    "is off-policy (ratio ≠ 1, clipping may act at once); RL usually runs LoRA with dropout 0")
    if cfg.rollout_correction.level != "off" and not by_steps:
        raise ConfigError(f"rollout_correction.level: '{cfg.rollout_correction.level}' needs the rollout's log-probs, but {cfg.data} "
                          "does not carry token ids and log-probs for every step (samples: auto chose 'conversation')")
    if cfg.step_reward_coef > 0 and not by_steps:
        raise ConfigError(f"step_reward_coef: step rewards go on each step's own sample, but {cfg.data} does not carry token ids and "
                          "log-probs for every step (samples: auto chose 'conversation')")


def _data_loader(cfg: RlConfig, by_steps: bool) -> Callable[[Any, bool], list[RlSample]]:
    """``prepare_run``'s data loader: the step samples, or the members' conversations rendered by the tokenizer."""
    def load(tokenizer: Any, keep_system: bool) -> list[RlSample]:
        if by_steps:
            return load_rl_steps(cfg.data, cfg.max_length, step_rewards=cfg.step_reward_coef > 0)
        return load_rl(cfg.data, tokenizer, cfg.max_length, system=keep_system)

    return load


@dataclasses.dataclass
class ChosenSamples:
    """What :func:`choose_samples` keeps: the samples trained on and their advantages, how many were dropped
    and cut, and the ``start`` event's ``step_rewards`` (with ``step_reward_coef``)."""

    samples: list[RlSample]
    advantages: torch.Tensor
    dropped: int
    cut: int
    shaping: dict[str, Any]


def choose_samples(samples: list[RlSample], cfg: RlConfig, by_steps: bool) -> ChosenSamples:
    """Each sample's advantage (outcome + process terms), then the samples kept for training: all of them, or
    with ``drop_uniform_groups`` those of groups whose rewards (or step rewards) tell their members apart.
    :class:`DataError` when nothing is left; warnings for unscored steps and cut samples."""
    rewards = torch.tensor([s.reward for s in samples], dtype=torch.float64)
    groups = [s.group for s in samples]
    outcome, process = outcome_advantages(samples, cfg), process_terms(samples, cfg)
    adv = outcome + process
    shaping = {"step_rewards": step_reward_stats(samples, cfg, process, outcome)} if cfg.step_reward_coef > 0 else {}
    if shaping and distributed.is_main():
        unscored = shaping["step_rewards"]["unscored"]
        if unscored:
            warn_stderr(f"{cfg.data}: {unscored} of {len(samples)} steps carry no process reward; they add no step reward")
        if cfg.drop_uniform_groups and cfg.loss.algorithm == "ppo":
            warn_stderr("drop_uniform_groups drops the groups whose members' rewards are all equal, though their step rewards may still "
                        "tell their steps apart (step_reward_coef)")
    keep = torch.ones(len(samples), dtype=torch.bool)
    if cfg.drop_uniform_groups:
        keep = dynamic_sampling_filter(rewards, groups)
        # The GRPO family with step rewards: a group of equal outcomes whose steps the process terms still tell
        # apart has something to learn. (Equal scores leave rounding residue of ~1e-11 after the std's ε.)
        apart = {groups[i] for i in range(len(samples)) if abs(float(process[i])) > 1e-9}
        keep |= torch.tensor([g in apart for g in groups], dtype=torch.bool)
    idx = [i for i in range(len(samples)) if keep[i]]
    if not idx:
        also = " and step rewards" if cfg.step_reward_coef > 0 and cfg.loss.algorithm != "ppo" else ""
        raise DataError(f"{cfg.data}: every group has equal rewards{also}; nothing to learn (drop_uniform_groups)")
    samples = [samples[i] for i in idx]
    cut = sum(s.cut for s in samples)
    if cut and distributed.is_main():
        why = ": their sampled tokens are scored after a shorter prompt than the policy saw (mismatch_kl rises)" if by_steps else ""
        warn_stderr(f"{cfg.data}: {cut} of {len(samples)} samples are longer than max_length {cfg.max_length} and were cut{why}; "
                    "raise max_length")
    return ChosenSamples(samples, adv[idx].float(), int((~keep).sum()), cut, shaping)


def add_value_head(model: Any, seed: int) -> None:
    """PPO's critic: ``v_head``, a seeded ``Linear(hidden, 1)`` on the last hidden state (small weights, zero bias)."""
    hidden = model.config.hidden_size
    g = torch.Generator().manual_seed(seed)
    v_head = torch.nn.Linear(hidden, 1)
    with torch.no_grad():
        v_head.weight.normal_(0.0, 1.0 / (hidden + 1) ** 0.5, generator=g)
        v_head.bias.zero_()
    model.add_module("v_head", v_head)


@dataclasses.dataclass
class _Training:
    """What the passes of every step share: the configuration, the model (``fwd``: its training forward, DDP
    under torchrun), the samples and their advantages, the reference log-probs (``kl_beta``), the memory fit,
    and the per-sample log-prob function in the configured layout."""

    cfg: RlConfig
    model: Any
    samples: list[RlSample]
    adv: torch.Tensor
    by_steps: bool
    by_member: dict[str, list[int]]
    logps: Callable[..., tuple[torch.Tensor, ...]]
    counts: list[int]
    pg_mode: str
    fit: Any = None
    fwd: Any = None
    ref: Optional[list[Optional[torch.Tensor]]] = None

    @property
    def use_value(self) -> bool:
        return self.cfg.loss.algorithm == "ppo"

    @property
    def correcting(self) -> bool:
        return self.cfg.rollout_correction.level != "off"

    @staticmethod
    def build(cfg: RlConfig, model: Any, tok: Any, chosen: ChosenSamples, by_steps: bool) -> "_Training":
        # the samples' per-token log-probs (and more, as asked) under a model, in the configured layout
        logps = functools.partial(token_logps, pad_id=tok.pad_token_id, bf16=cfg.bf16, packed=cfg.packed, logits_chunk=cfg.logits_chunk)
        pg_mode = "seq" if cfg.loss.algorithm == "gspo" else (cfg.loss.aggregation or DEFAULT_AGGREGATION[cfg.loss.algorithm])
        return _Training(cfg, model, chosen.samples, chosen.advantages, by_steps, episodes(chosen.samples), logps,
                         trained_counts(chosen.samples), pg_mode)


def reference_model(cfg: RlConfig, model: Any, dev: Any) -> Any:
    """The KL reference's model: ``kl_reference`` loaded (eval mode, on ``dev``), else None (the policy itself,
    before any update). :class:`ConfigError` when its vocabulary is not the policy's."""
    if cfg.kl_reference is None:
        return None
    ref, _ = models.load_model_and_tokenizer(ModelConfig(path=cfg.kl_reference, dtype=cfg.model.dtype), None)
    mine, theirs = model.get_output_embeddings().weight.shape[0], ref.get_output_embeddings().weight.shape[0]
    if mine != theirs:
        raise ConfigError(f"kl_reference: {cfg.kl_reference} has a vocabulary of {theirs} tokens, the policy {mine}: "
                          "the reference must share the policy's tokenizer")
    return ref.to(dev).eval()


def reference_logps(t: _Training, steps: list[tuple[int, list[list[int]], int]],
                    ref_model: Any = None) -> list[Optional[torch.Tensor]]:
    """The KL reference: the initial policy's log-probs of the samples this rank will train (every sample with
    one process), computed once, before any update and before a checkpoint is loaded; with ``ref_model``
    (``kl_reference``) that model's instead."""
    t.model.eval()
    scorer = t.model if ref_model is None else ref_model
    ref: list[Optional[torch.Tensor]] = [None] * len(t.samples)
    mine = sorted(distributed.owned_indices([micro for _, micro, _ in steps]))  # all samples with one process

    def reference() -> None:
        with torch.no_grad():
            for i in range(0, len(mine), t.cfg.batch_size):
                for chunk in t.fit.chunks(mine[i : i + t.cfg.batch_size]):
                    lp, _ = t.logps(scorer, [t.samples[k] for k in chunk])
                    for row, k in enumerate(chunk):
                        ref[k] = lp[row, : len(t.samples[k].tokens.input_ids) - 1].cpu()

    t.fit.run("the reference log-probs", t.model, reference)
    return ref


def train_steps(t: _Training, steps: list[tuple[int, list[list[int]], int]], start: int, opt: Any, sched: Any,
                events: EventWriter, save: Callable[[int], str]) -> float:
    """The optimiser steps from ``start``: each one's passes (:func:`step_passes`), the optimiser step, its
    ``progress`` event, and every ``save_every`` steps a checkpoint (``save``) at a rollout-batch boundary, so
    that a resume never needs a lost ``old_logp`` cache. Returns the last step's loss."""
    cfg = t.cfg
    old_cache: dict[int, Any] = {}
    loss_val = float("nan")
    skipped = optim.SkippedSteps(cfg.optim.max_skipped_steps)
    for step in range(start, len(steps)):
        epoch, micro, inner = steps[step]
        t0 = time.perf_counter()
        own, idle = distributed.local_pieces(micro)
        rebuild = inner == 0 or not old_cache
        bootstrapped = 0  # later steps of this batch's members whose values the pre-pass computed (PPO, step samples)

        def forward_backward() -> tuple[float, dict[str, float]]:
            nonlocal old_cache, bootstrapped
            if rebuild:  # inside the step, so that running out of memory here cuts these passes too
                old_cache = {}  # a failed build leaves no partial cache behind
                old_cache, bootstrapped = rollout_cache(t, own, idle)
            return step_passes(t, micro, old_cache)

        total, agg = t.fit.run(f"step {step + 1}", t.model, forward_backward)
        (total, bootstrapped_all) = distributed.all_reduce_sum([total, bootstrapped])
        agg = distributed.sum_dict(agg)
        if t.use_value and t.by_steps:
            agg["bootstrap_samples"] = int(bootstrapped_all)
        done_steps = step + 1
        grad_norm, lr = optim.optimizer_step(t.model, opt, sched, cfg.optim.max_grad_norm, skipped, done_steps)
        loss_val = total
        dt = time.perf_counter() - t0
        n_tokens = sum(len(t.samples[i].tokens.input_ids) for mb in micro for i in mb)
        # also the run's first step: with step samples its mismatch_kl is the rollout engine's gap alone (no update
        # has moved the policy away from the one that collected the data yet)
        if done_steps % cfg.log_every == 0 or done_steps == len(steps) or step == start:
            events.progress(step=done_steps, total_steps=len(steps), epoch=epoch, loss=loss_val, lr=lr, grad_norm=float(grad_norm),
                            tokens_per_s=n_tokens / dt if dt > 0 else None, **agg, **skipped.fields(), **t.fit.fields())
        at_boundary = inner == cfg.ppo_epochs - 1
        if cfg.save_every and done_steps % cfg.save_every == 0 and at_boundary and done_steps < len(steps):
            events.checkpoint(save(done_steps), done_steps)
    return loss_val


def rollout_cache(t: _Training, own: list[tuple[int, list[int]]], idle: bool) -> tuple[dict[int, Any], int]:
    """The behaviour policy's log-probs (and with a value head: values, advantages, returns) of this rank's
    samples of the rollout batch, computed without gradient; and how many later steps of its members had their
    values computed for GAE's bootstrap (PPO with step samples)."""
    cache: dict[int, Any] = {}
    bootstrapped = 0
    t.model.eval()
    with torch.no_grad():
        for mb in (part for _, idx in own for part in t.fit.chunks(idx)):
            out = t.logps(t.model, [t.samples[i] for i in mb], values=t.use_value)
            lp, mk = out[0], out[1]
            for k, i in enumerate(mb):
                n = len(t.samples[i].tokens.input_ids) - 1
                rollout = t.samples[i].old_logp
                mine_now = lp[k, :n].detach()
                if rollout is None:  # no rollout log-probs: this policy's now
                    entry = {"logp": mine_now}
                else:  # the ratio against the behaviour policy's own, or against this policy's with weights between
                    behaviour = torch.tensor(rollout, dtype=lp.dtype, device=lp.device)
                    entry = {"logp": mine_now if t.correcting else behaviour, "rollout": behaviour, "trainer": mine_now}
                if t.use_value:
                    entry.update(values=out[2][k, :n].detach(), mask=mk[k, :n])
                cache[i] = entry
        if t.use_value:
            bootstrapped = _gae_advantages(t, cache, idle)
    if t.use_value and t.cfg.whiten_advantages:
        _whiten_advantages(cache, idle)
    t.model.train()
    return cache, bootstrapped


def _gae_advantages(t: _Training, cache: dict[int, Any], idle: bool) -> int:
    """Sets each cached sample's ``adv`` and ``ret`` from GAE over its member's steps (:func:`member_gae`);
    returns how many later steps' values were computed for it."""
    # GAE runs over each member's steps in order, so it needs the old values of its steps after those in this
    # batch too: wherever they are trained (a later optimizer step, another rank), they are computed here with
    # the same critic (no gradient).
    # An idle rank's stand-in is trained with weight 0: its own values do, without passes over its member.
    tails = [[i] for i in cache] if idle else episode_tails(cache, t.samples, t.by_member)
    trained_values = {i: e["values"][e["mask"] > 0] for i, e in cache.items()}
    later = [i for tail in tails for i in tail if i not in cache]
    for b in range(0, len(later), t.cfg.batch_size):
        for mb in t.fit.chunks(later[b : b + t.cfg.batch_size]):
            out = t.logps(t.model, [t.samples[i] for i in mb], values=True)
            for k, i in enumerate(mb):
                n = len(t.samples[i].tokens.input_ids) - 1
                trained_values[i] = out[2][k, :n][out[1][k, :n] > 0]
    for i, (a, ret) in member_gae(tails, trained_values, t.samples, t.cfg.gamma, t.cfg.lam, t.cfg.step_reward_coef).items():
        if i in cache:
            e = cache[i]
            at = e["mask"] > 0
            e["adv"] = torch.zeros_like(e["values"]).masked_scatter(at, a)
            e["ret"] = torch.zeros_like(e["values"]).masked_scatter(at, ret)
    return len(later)


def _whiten_advantages(cache: dict[int, Any], idle: bool) -> None:
    """Whitens the cached advantages over the whole rollout batch: sums over this rank's samples (none for an
    idle rank), all-reduced."""
    live = [] if idle else list(cache.values())
    flat_a = torch.cat([e["adv"] for e in live]) if live else torch.zeros(0, dtype=torch.float64)
    flat_m = torch.cat([e["mask"] for e in live]).to(flat_a.dtype) if live else torch.zeros(0, dtype=torch.float64)
    if distributed.world().enabled:
        s_am, s_m = distributed.all_reduce_sum([float((flat_a * flat_m).sum()), float(flat_m.sum())])
        mean = torch.tensor(s_am / max(s_m, 1.0), dtype=flat_a.dtype, device=flat_a.device)
        (s_var,) = distributed.all_reduce_sum([float(((flat_a - mean) ** 2 * flat_m).sum())])
        std = torch.tensor(s_var / max(s_m, 1.0), dtype=flat_a.dtype, device=flat_a.device).sqrt()
    else:
        mean = masked_mean(flat_a, flat_m)
        std = masked_mean((flat_a - mean) ** 2, flat_m).sqrt()
    for e in cache.values():
        e["adv"] = (e["adv"] - mean) / (std + 1e-8) * e["mask"]


def step_passes(t: _Training, micro: list[list[int]], old_cache: dict[int, Any]) -> tuple[float, dict[str, float]]:
    """The forward and backward passes of one optimiser step over this rank's pieces of its micro-batches: the
    policy loss (+ PPO's value loss) of each piece, weighted by its share of the step (:func:`piece_share`), so
    the gradients of all ranks add up to the single-process one. Returns this rank's loss and metrics."""
    cfg = t.cfg
    total, agg = 0.0, {}
    batch = [i for m in micro for i in m]  # the step's samples, over every rank
    for j, mb, live in t.fit.pieces(t.fwd, micro):  # with one process and no limit: the micro-batches
        batch_samples = [t.samples[i] for i in mb]
        out = t.logps(t.model, batch_samples, values=t.use_value, forward=t.fwd, entropy=True)
        logp, mask, ent = out[0], out[1], out[-1]
        width = logp.size(1)
        stack = lambda key: torch.stack([_pad_to(old_cache[i][key], width) for i in mb]).to(logp.device)  # noqa: E731
        ref_lp = torch.stack([_pad_to(t.ref[i], width) for i in mb]).to(logp.device) if t.ref is not None else None
        share = piece_share(t.counts, mb, batch, t.pg_mode) * live
        tshare = piece_share(t.counts, mb, batch, "token-mean") * live
        token_means = {"entropy": float(masked_mean(ent, mask))}  # the policy's, at the trained tokens
        weights = None
        if t.by_steps:  # the rollout engine's log-probs against the trainer's, and weights when correcting
            weights, gap = rollout_weights(stack("trainer"), stack("rollout"), mask, cfg.rollout_correction)
            token_means.update(gap)
        if t.use_value:
            loss, metrics = policy_loss(logp, stack("logp"), stack("adv"), mask, cfg.loss, ref_logp=ref_lp, weights=weights)
            vloss, vmetrics = value_loss(out[2], stack("values"), stack("ret"), mask, cfg.vf_clip)
            loss = loss * share + cfg.vf_coef * vloss * tshare
            token_means.update(vmetrics)
        else:
            loss, metrics = policy_loss(logp, stack("logp"), t.adv[mb].to(logp.device), mask, cfg.loss,
                                        ref_logp=ref_lp, weights=weights)
            loss = loss * share
        # token means are weighted by the piece's token share (× tshare, ÷ the share every metric gets below)
        metrics.update({k: v * tshare / share if share else 0.0 for k, v in token_means.items()})
        loss.backward()  # the piece's share of the step's loss (the gradients of all ranks add up)
        total += float(loss.detach())
        for k, v in metrics.items():
            agg[k] = agg.get(k, 0.0) + v * share
    return total, agg
