"""Advantage estimators and DAPO's sampling helpers: pure functions of tensors."""

from __future__ import annotations

from typing import Hashable, Sequence

import torch
import torch.nn.functional as F


def _group_index(group_ids: Sequence[Hashable] | torch.Tensor) -> tuple[torch.Tensor, int]:
    ids = group_ids.tolist() if isinstance(group_ids, torch.Tensor) else list(group_ids)
    seen: dict[Hashable, int] = {}
    idx = [seen.setdefault(g, len(seen)) for g in ids]
    return torch.tensor(idx, dtype=torch.long), len(seen)


def group_advantages(
    rewards: torch.Tensor,
    group_ids: Sequence[Hashable] | torch.Tensor,
    norm_std: bool = True,
    eps: float = 1e-6,
    unbiased: bool = False,
) -> torch.Tensor:
    """Group-relative advantages, one per sample (broadcast to its tokens by the loss).

    - GRPO (Shao et al., arXiv 2402.03300 §4.1.2), ``norm_std=True``: ``Â_i = (R_i − mean_G R) / (std_G R + ε)``.
    - Dr. GRPO (Liu et al., arXiv 2503.20783 §3.2), ``norm_std=False``: ``Â_i = R_i − mean_G R`` (dividing
      by the std up-weights near-uniform groups, a difficulty bias).

    ``std`` is the population standard deviation by default (``unbiased=False``), as the exporter's
    ``advantage`` field uses; ``unbiased=True`` gives the sample std (TRL/verl's ``torch.std``). A group
    of one has advantage 0.
    """
    r = rewards.to(torch.float64)
    idx, n = _group_index(group_ids)
    if idx.numel() != r.numel():
        raise ValueError(f"rewards ({r.numel()}) and group_ids ({idx.numel()}) differ in length")
    count = torch.zeros(n, dtype=r.dtype).index_add_(0, idx, torch.ones_like(r))
    mean = torch.zeros(n, dtype=r.dtype).index_add_(0, idx, r) / count
    centred = r - mean[idx]
    if not norm_std:
        return centred.to(rewards.dtype if rewards.is_floating_point() else torch.float32)
    sq = torch.zeros(n, dtype=r.dtype).index_add_(0, idx, centred**2)
    denom = (count - 1).clamp(min=1) if unbiased else count
    std = torch.sqrt(sq / denom)
    out = centred / (std[idx] + eps)
    return out.to(rewards.dtype if rewards.is_floating_point() else torch.float32)


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor,
    gamma: float = 1.0,
    lam: float = 0.95,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation (Schulman et al., arXiv 1506.02438), per token, ``[B, T]``:

    ``δ_t = r_t + γ·V_{t+1} − V_t``, ``A_t = δ_t + γλ·A_{t+1}``, ``returns = A + V``.

    Time runs over the **masked** positions only: ``t+1`` is the next position with ``mask = 1`` (tool /
    observation tokens between two assistant turns are not actions and are skipped), and after the last
    one ``V = 0`` and ``A = 0`` (the episode ended). Masked positions get advantage 0 and return 0.
    """
    m = mask.to(values.dtype)
    active = m > 0
    count = active.sum(1)
    n = int(count.max()) if count.numel() else 0
    adv = torch.zeros_like(values)
    if n == 0:
        return adv, adv.clone()
    # Each row's acting positions first, in order (a stable sort of the "not acting" flags), padded to n.
    order = torch.sort((~active).to(torch.int8), dim=1, stable=True).indices[:, :n]
    valid = torch.arange(n, device=values.device) < count[:, None]
    zero = values.new_zeros(())
    v = torch.where(valid, values.gather(1, order), zero)
    r = torch.where(valid, rewards.to(values.dtype).gather(1, order), zero)
    a = torch.where(valid, r + gamma * F.pad(v[:, 1:], (0, 1)) - v, zero)  # δ; after a row's last acting position V = 0
    # A_t = δ_t + γλ·A_{t+1} as a doubling scan: after the step with shift k, A_t sums 2k terms of the series.
    # log2(n) vector operations instead of one step per position (on a GPU, each step's kernel launches).
    c, k = gamma * lam, 1
    while k < n:
        a = a + c * F.pad(a[:, k:], (0, k))
        c, k = c * c, k * 2
    adv.scatter_(1, order, a)  # the padding's zeros land on positions that do not act
    returns = (adv + values) * m
    return adv, returns


def process_advantages(
    scores: Sequence[float | None],
    group_ids: Sequence[Hashable],
    members: Sequence[Hashable],
    steps: Sequence[int],
    norm_std: bool = True,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Process supervision for the GRPO family (Shao et al., arXiv 2402.03300 §4.1.3), one value per step sample.

    The scored steps of a group (every step of every member; ``None`` = not scored, left out) are normalised
    together as :func:`group_advantages` normalises rewards: ``r̃ = (s − mean_G s) / (std_G s + ε)``, or
    ``s − mean_G s`` without ``norm_std`` (Dr. GRPO). A step's value is the sum of ``r̃`` over its member's scored
    steps from it on, in step order (``steps``): what each of its tokens would get, since every token of a step
    comes before that step's end."""
    n = len(scores)
    if not (len(group_ids) == len(members) == len(steps) == n):
        raise ValueError(f"scores ({n}), group_ids ({len(group_ids)}), members ({len(members)}) and steps ({len(steps)}) differ in length")
    scored = [i for i, s in enumerate(scores) if s is not None]
    z = torch.zeros(n, dtype=torch.float64)
    if scored:
        values = torch.tensor([scores[i] for i in scored], dtype=torch.float64)
        z[scored] = group_advantages(values, [group_ids[i] for i in scored], norm_std=norm_std, eps=eps).to(torch.float64)
    out = torch.zeros(n, dtype=torch.float64)
    by_member: dict[Hashable, list[int]] = {}
    for i, m in enumerate(members):
        by_member.setdefault(m, []).append(i)
    for idx in by_member.values():
        total = 0.0
        for i in sorted(idx, key=lambda i: steps[i], reverse=True):
            total += float(z[i])
            out[i] = total
    return out


def chained_gae(
    rewards: Sequence[Sequence[torch.Tensor]],
    values: Sequence[Sequence[torch.Tensor]],
    gamma: float = 1.0,
    lam: float = 0.95,
) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    """:func:`gae` over episodes given in pieces: ``values[e]`` is episode ``e``'s pieces in time order (1-D, the
    acting positions of one piece each: the generated tokens of one agent step), ``rewards[e]`` the same shapes.

    One recursion runs over each episode's pieces concatenated, so the last position of piece k bootstraps from
    the first position of piece k+1 (``δ = r + γ·V_next − V``), and only after the episode's last position is
    ``V = 0``. Returns, per episode and piece, ``(advantages, returns)`` of the piece's positions. A suffix of an
    episode (its pieces from some step on) gives its positions the same results as the whole episode: nothing
    before a position enters its advantage. All episodes run as one batch of :func:`gae`'s doubling scan."""
    lengths = [sum(int(p.numel()) for p in ep) for ep in values]
    if not lengths:
        return []
    ref = next((p for ep in values for p in ep), None)
    dev, dtype = (ref.device, ref.dtype) if ref is not None else (torch.device("cpu"), torch.float32)
    width = max(lengths)
    v = torch.zeros(len(values), width, dtype=dtype, device=dev)
    r = torch.zeros_like(v)
    m = torch.zeros_like(v)
    if len(rewards) != len(values):
        raise ValueError(f"rewards ({len(rewards)} episodes) and values ({len(values)}) differ in length")
    for e, (rs, vs) in enumerate(zip(rewards, values)):
        if [int(p.numel()) for p in rs] != [int(p.numel()) for p in vs]:
            raise ValueError(f"episode {e}: reward pieces {[int(p.numel()) for p in rs]} and value pieces {[int(p.numel()) for p in vs]} differ")
        if lengths[e]:
            v[e, : lengths[e]] = torch.cat([p.reshape(-1) for p in vs]).to(dev, dtype)
            r[e, : lengths[e]] = torch.cat([p.reshape(-1) for p in rs]).to(dev, dtype)
            m[e, : lengths[e]] = 1
    adv, ret = gae(r, v, m, gamma, lam)
    out = []
    for e, vs in enumerate(values):
        sizes = [int(p.numel()) for p in vs]
        out.append(list(zip(adv[e, : lengths[e]].split(sizes), ret[e, : lengths[e]].split(sizes))))
    return out


def dynamic_sampling_filter(
    rewards: torch.Tensor,
    group_ids: Sequence[Hashable] | torch.Tensor,
    atol: float = 0.0,
) -> torch.Tensor:
    """DAPO's dynamic sampling (Yu et al., arXiv 2503.14476 §3.2): a group whose rewards are all equal (all
    solved or all failed) has zero advantage everywhere and only dilutes the batch. Returns a boolean mask
    over samples: True where the sample's group has ``max − min > atol``."""
    r = rewards.to(torch.float64)
    idx, n = _group_index(group_ids)
    hi = torch.full((n,), float("-inf"), dtype=r.dtype).scatter_reduce(0, idx, r, reduce="amax")
    lo = torch.full((n,), float("inf"), dtype=r.dtype).scatter_reduce(0, idx, r, reduce="amin")
    return ((hi - lo) > atol)[idx]


def overlong_penalty(lengths: torch.Tensor, l_max: int, l_cache: int) -> torch.Tensor:
    """DAPO's soft overlong punishment (arXiv 2503.14476 eq. 13), added to the reward:

    ``0`` if ``L ≤ L_max − L_cache``; ``((L_max − L_cache) − L) / L_cache`` if ``L_max − L_cache < L ≤ L_max``
    (linear from 0 to −1); ``−1`` if ``L > L_max``.
    """
    if l_cache <= 0 or l_cache > l_max:
        raise ValueError("overlong_penalty needs 0 < l_cache <= l_max")
    L = lengths.to(torch.float64)
    start = float(l_max - l_cache)
    pen = torch.where(L <= start, torch.zeros_like(L), (start - L) / l_cache)
    pen = torch.where(L > l_max, torch.full_like(L, -1.0), pen)
    return pen.to(torch.float32)
