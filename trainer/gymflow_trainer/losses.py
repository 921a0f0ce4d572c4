"""Losses: small pure functions of tensors. Trainers compose them; they never inline the math.

Notation (per token ``t`` of sequence ``i``): ``r = π_θ / π_old = exp(logp − old_logp)``, ``m`` the loss
mask (1 = a policy token that is trained), ``Â`` the advantage. Shapes: ``logp``, ``old_logp``, ``mask``,
``ref_logp`` are ``[B, T]``; ``advantages`` is ``[B]`` (one per sequence) or ``[B, T]`` (per token).
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from .config import PolicyLossConfig, RolloutCorrectionConfig

AGGREGATIONS = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")

#: Each algorithm's default aggregation (used when ``cfg.aggregation`` is null).
DEFAULT_AGGREGATION = {
    "grpo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
    "dapo": "token-mean",
    "gspo": "seq-mean-token-mean",
    "sapo": "seq-mean-token-mean",
    "ppo": "token-mean",
}

#: The largest |log r| a ratio is computed from (verl's bound): past it the clipped branch is active anyway.
MAX_LOG_RATIO = 20.0

#: Each algorithm's default clip range (low, high) when ``cfg.eps_low``/``cfg.eps_high`` are null
#: (``None`` = use ``cfg.eps``). DAPO: 0.2 / 0.28 (arXiv 2503.14476 §3.1); GSPO: 3e-4 / 4e-4 (2507.18071 §5.1).
DEFAULT_CLIP = {"dapo": (0.2, 0.28), "gspo": (3e-4, 4e-4)}


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: Optional[int] = None) -> torch.Tensor:
    """``Σ m·x / Σ m`` (over ``dim`` or everything); 0 where the mask is empty (never NaN)."""
    m = mask.to(x.dtype)
    if dim is None:
        return (x * m).sum() / m.sum().clamp(min=1.0)
    return (x * m).sum(dim) / m.sum(dim).clamp(min=1.0)


def aggregate(loss_mat: torch.Tensor, mask: torch.Tensor, mode: str, norm_constant: float = 1.0) -> torch.Tensor:
    """Reduces a ``[B, T]`` per-token loss to a scalar.

    - ``token-mean``: ``Σ_{i,t} m·ℓ / Σ_{i,t} m`` — every token weighs the same (DAPO, PPO).
    - ``seq-mean-token-mean``: ``mean_i(Σ_t m·ℓ / Σ_t m)`` over sequences with at least one token —
      every sequence weighs the same (GRPO, arXiv 2402.03300 eq. 3).
    - ``seq-mean-token-sum-norm``: ``(1/G) Σ_{i,t} m·ℓ / C`` over the ``G`` sequences with at least one token,
      with a constant ``C`` (Dr. GRPO, arXiv 2503.20783: no length bias; C is the generation budget).
    """
    m = mask.to(loss_mat.dtype)
    if mode == "token-mean":
        return masked_mean(loss_mat, m)
    if mode == "seq-mean-token-mean":
        per_seq = masked_mean(loss_mat, m, dim=-1)
        has = (m.sum(-1) > 0).to(loss_mat.dtype)
        return (per_seq * has).sum() / has.sum().clamp(min=1.0)
    if mode == "seq-mean-token-sum-norm":
        has = (m.sum(-1) > 0).to(loss_mat.dtype)
        return (loss_mat * m).sum() / (norm_constant * has.sum().clamp(min=1.0))
    raise ValueError(f"unknown aggregation '{mode}' (known: {', '.join(AGGREGATIONS)})")


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimator of KL(π_θ ‖ π_ref) (Schulman, "Approximating KL divergence", 2020):
    ``exp(ref − logp) − (ref − logp) − 1`` — non-negative, unbiased, low variance. Computed as
    ``expm1(d) − d``, which keeps its precision for the tiny gaps of two engines running the same weights."""
    d = ref_logp - logp
    return torch.expm1(d) - d


def rollout_weights(
    train_logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    mask: torch.Tensor,
    cfg: RolloutCorrectionConfig,
) -> tuple[Optional[torch.Tensor], dict[str, float]]:
    """Importance weights for the gap between the policy that sampled the tokens, as the rollout engine
    computed it (``rollout_logp``), and the trainer's own log-probs of the same tokens before the update
    (``train_logp``). Returns ``(weights, metrics)``; ``weights`` is ``None`` when ``cfg.level`` is "off".

    Per trained token ``δ = train_logp − rollout_logp`` and ``ρ = e^δ``; for ``level: sequence`` every token of
    a sample carries the sample's ``ρ = e^{Σ_t δ}``. ``mode: truncate`` gives ``w = min(ρ, cap)`` (truncated
    importance sampling, Yao et al. 2025); ``mode: mask`` gives ``w = 1`` where ``1/cap ≤ ρ ≤ cap``, else 0
    (masked importance sampling). The weights carry no gradient and are 0 at untrained positions.

    Metrics: ``mismatch_kl``, the token mean of ``ρ − 1 − δ`` (k3, an unbiased estimate of
    KL(π_rollout ‖ π_trainer) from the rollout's samples; always reported); with weights also
    ``is_weight_mean`` (token mean of ``w``) and ``is_cut_frac`` (share of trained tokens whose weight was
    truncated or masked).
    """
    with torch.no_grad():
        m = mask.to(train_logp.dtype)
        d = (train_logp - rollout_logp) * m  # untrained positions: δ = 0 (padding may hold junk)
        # KL(π_rollout ‖ π_trainer) from the rollout's samples, in float64: a healthy gap is ~1e-12, below what
        # float32 resolves in e^δ itself
        metrics = {"mismatch_kl": float(masked_mean(k3_kl(rollout_logp.double() * m, train_logp.double() * m), m))}
        if cfg.level == "off":
            return None, metrics
        rho = torch.exp(d) if cfg.level == "token" else torch.exp(d.sum(-1, keepdim=True)).expand_as(d)
        if cfg.mode == "truncate":
            w, cut = rho.clamp(max=cfg.cap), rho > cfg.cap
        else:
            kept = (rho >= 1.0 / cfg.cap) & (rho <= cfg.cap)
            w, cut = kept.to(d.dtype), ~kept
        w = torch.where(m > 0, w, torch.zeros_like(w))  # a sequence ρ may overflow to inf: never inf · 0
        metrics.update(is_weight_mean=float(masked_mean(w, m)), is_cut_frac=float(masked_mean(cut.to(d.dtype), m)))
    return w, metrics


def _clip_range(cfg: PolicyLossConfig) -> tuple[float, float]:
    lo, hi = DEFAULT_CLIP.get(cfg.algorithm, (None, None))
    low = cfg.eps_low if cfg.eps_low is not None else (lo if lo is not None else cfg.eps)
    high = cfg.eps_high if cfg.eps_high is not None else (hi if hi is not None else cfg.eps)
    return low, high


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: PolicyLossConfig | dict[str, Any] | None = None,
    ref_logp: Optional[torch.Tensor] = None,
    weights: Optional[torch.Tensor] = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Policy-gradient loss of the GRPO family and PPO. Returns ``(loss, metrics)``.

    Per-token losses ``ℓ`` by ``cfg.algorithm`` (``ε_lo``/``ε_hi`` from :func:`_clip_range`):

    - ``grpo`` (Shao et al., arXiv 2402.03300): ``ℓ = −min(r·Â, clip(r, 1−ε, 1+ε)·Â)``; default
      aggregation seq-mean-token-mean.
    - ``dr_grpo`` (Liu et al., arXiv 2503.20783): the same clipped term; aggregation Σ m·ℓ / C (advantages
      without the std division come from ``advantages.group_advantages(norm_std=False)``).
    - ``dapo`` (Yu et al., arXiv 2503.14476): ``clip(r, 1−ε_lo, 1+ε_hi)`` with 0.2 / 0.28 ("clip-higher");
      token-mean over the whole batch.
    - ``ppo`` (Schulman et al., arXiv 1707.06347): the clipped term with per-token (GAE) advantages;
      token-mean.
    - ``gspo`` (Zheng et al., arXiv 2507.18071): a sequence-level ratio
      ``s_i = exp(mean_t log r_{i,t})`` (masked mean), per sequence ``ℓ_i = −min(s_i·Â_i,
      clip(s_i, 1−ε_lo, 1+ε_hi)·Â_i)`` with 3e-4 / 4e-4; the loss is ``mean_i ℓ_i`` (``aggregation``
      only applies to the KL term). Per-token advantages are reduced to ``Â_i`` by their masked mean.
    - ``sapo`` (arXiv 2511.20347): a soft gate instead of a hard clip,
      ``ℓ = −f(r)·Â``, ``f(r) = σ(τ(r−1))·4/τ`` with ``τ = τ_pos`` (1.0) where ``Â > 0`` else ``τ_neg``
      (1.05); ``f(1) = 2/τ`` and ``f'(1) = 1``, so on-policy its gradient equals the plain policy gradient.

    With ``weights`` (``[B, T]``, no gradient: :func:`rollout_weights`) each token's policy term is multiplied
    by its weight before aggregation, ``ℓ ← w·ℓ``; for gspo, whose term is per sequence, the sequence's term
    is weighted by the masked mean of its tokens' weights. The KL term is not weighted.

    With ``ref_logp`` and ``cfg.kl_beta > 0`` the k3 KL to the reference (:func:`k3_kl`) is added per token,
    ``ℓ += β·k3``, before aggregation (GRPO eq. 3).

    Metrics: ``clip_frac`` (share of masked tokens — sequences for gspo — whose clipped branch is the
    active one; for sapo the share with ``|r − 1| > ε``), ``approx_kl`` (k3 estimate of KL(π_old ‖ π_θ):
    token-mean of ``(r − 1) − log r``), ``ratio_mean``, ``ratio_max``, ``ratio_min``, ``kl`` (to the reference,
    when given), ``pg_loss``.
    """
    if cfg is None:
        cfg = PolicyLossConfig()
    elif isinstance(cfg, dict):
        cfg = PolicyLossConfig(**cfg)
    algo = cfg.algorithm
    mode = cfg.aggregation or DEFAULT_AGGREGATION[algo]
    m = mask.to(logp.dtype)
    adv = advantages.to(logp.dtype)
    if adv.dim() == 1:
        adv = adv.unsqueeze(-1).expand_as(logp)
    # Padding may hold junk (NaN, ±inf): replaced, not multiplied by 0 (NaN · 0 is NaN, in the gradient too).
    live = m > 0
    old_logp = torch.where(live, old_logp, logp.detach())
    adv = torch.where(live, adv, torch.zeros_like(adv))
    if weights is not None:
        weights = torch.where(live, weights, torch.zeros_like(weights))
    if ref_logp is not None:
        ref_logp = torch.where(live, ref_logp, logp.detach())
    # Masked positions: ratio exactly 1. The clamp keeps exp finite for corrupt or sentinel log-probs (a ratio of
    # e^20 is clipped anyway): an overflow would make a whole step's loss or gradient NaN and skip it.
    log_ratio = torch.clamp((logp - old_logp) * m, -MAX_LOG_RATIO, MAX_LOG_RATIO)
    ratio = torch.exp(log_ratio)
    eps_lo, eps_hi = _clip_range(cfg)

    if algo in ("grpo", "dr_grpo", "dapo", "ppo"):
        unclipped = -adv * ratio
        clipped = -adv * torch.clamp(ratio, 1.0 - eps_lo, 1.0 + eps_hi)
        loss_mat = torch.maximum(unclipped, clipped)
        clip_frac = masked_mean((clipped > unclipped).to(logp.dtype), m)
        pg = aggregate(loss_mat if weights is None else loss_mat * weights, m, mode, cfg.norm_constant)
    elif algo == "sapo":
        tau = torch.where(adv > 0, torch.full_like(adv, cfg.tau_pos), torch.full_like(adv, cfg.tau_neg))
        gate = torch.sigmoid(tau * (ratio - 1.0)) * 4.0 / tau
        loss_mat = -gate * adv
        clip_frac = masked_mean(((ratio - 1.0).abs() > cfg.eps).to(logp.dtype), m)
        pg = aggregate(loss_mat if weights is None else loss_mat * weights, m, mode, cfg.norm_constant)
    elif algo == "gspo":
        has = (m.sum(-1) > 0).to(logp.dtype)
        seq_log_ratio = masked_mean(log_ratio, m, dim=-1)
        s = torch.exp(seq_log_ratio)
        seq_adv = masked_mean(adv, m, dim=-1)
        unclipped = -seq_adv * s
        clipped = -seq_adv * torch.clamp(s, 1.0 - eps_lo, 1.0 + eps_hi)
        seq_loss = torch.maximum(unclipped, clipped)
        if weights is not None:
            seq_loss = seq_loss * masked_mean(weights, m, dim=-1)
        pg = (seq_loss * has).sum() / has.sum().clamp(min=1.0)
        clip_frac = ((clipped > unclipped).to(logp.dtype) * has).sum() / has.sum().clamp(min=1.0)
    else:
        raise ValueError(f"unknown algorithm '{algo}'")

    loss = pg
    metrics: dict[str, float] = {}
    if ref_logp is not None:
        kl_mat = k3_kl(logp, ref_logp)
        kl = aggregate(kl_mat, m, mode if algo != "gspo" else "seq-mean-token-mean", cfg.norm_constant)
        metrics["kl"] = float(masked_mean(kl_mat, m).detach())
        if cfg.kl_beta > 0:
            loss = loss + cfg.kl_beta * kl

    with torch.no_grad():
        metrics.update(
            pg_loss=float(pg.detach()),
            clip_frac=float(clip_frac),
            approx_kl=float(masked_mean((ratio - 1.0) - log_ratio, m)),
            ratio_mean=float(masked_mean(ratio, m)),
            ratio_max=float(ratio.masked_fill(m == 0, float("-inf")).max()) if m.any() else 1.0,
            ratio_min=float(ratio.masked_fill(m == 0, float("inf")).min()) if m.any() else 1.0,
        )
    return loss, metrics


def value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    clip: Optional[float] = 0.2,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO's clipped value loss (Schulman et al., arXiv 1707.06347; the clipping as in OpenAI baselines):

    ``V_clip = V_old + clip(V − V_old, −c, c)``,
    ``L = ½ · token-mean(max((V − R)², (V_clip − R)²))``; ``clip=None`` gives ``½ · token-mean((V − R)²)``.
    Metrics: ``vf_clip_frac`` (share of tokens where the clipped error is the larger), ``value_mean``.
    """
    m = mask.to(values.dtype)
    live = m > 0  # padding may hold junk: replaced, since NaN · 0 is NaN
    old_values = torch.where(live, old_values, values.detach())
    returns = torch.where(live, returns, values.detach())
    err = (values - returns) ** 2
    if clip is None:
        mat = err
        frac = torch.zeros((), dtype=values.dtype)
    else:
        v_clip = old_values + torch.clamp(values - old_values, -clip, clip)
        err_clip = (v_clip - returns) ** 2
        mat = torch.maximum(err, err_clip)
        frac = masked_mean((err_clip > err).to(values.dtype), m)
    loss = 0.5 * masked_mean(mat, m)
    return loss, {"vf_loss": float(loss.detach()), "vf_clip_frac": float(frac), "value_mean": float(masked_mean(values.detach(), m))}


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float = 0.1,
    loss_type: str = "sigmoid",
) -> tuple[torch.Tensor, dict[str, float]]:
    """Preference losses on sequence log-probabilities (shape ``[B]`` each).

    ``h = (log π_c − log π_ref,c) − (log π_r − log π_ref,r)``.

    - ``sigmoid`` (DPO, Rafailov et al., arXiv 2305.18290 eq. 7): ``L = −mean log σ(β·h)``.
    - ``ipo`` (Azar et al., arXiv 2310.12036 eq. 17): ``L = mean (h − 1/(2β))²``. The paper's ``h`` is on
      sequence log-likelihoods; TRL feeds length-averaged log-probs — the DPO trainer passes per-token means
      for IPO for the same reason (the target ``1/(2β)`` is then independent of length).

    Metrics: ``rewards_chosen = β·mean(log π_c − log π_ref,c)``, ``rewards_rejected``, ``reward_margin``
    (their difference), ``reward_accuracy`` (share of pairs with a positive implicit-reward margin).
    """
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    if loss_type == "sigmoid":
        losses = -F.logsigmoid(beta * h)
    elif loss_type == "ipo":
        losses = (h - 1.0 / (2.0 * beta)) ** 2
    else:
        raise ValueError(f"unknown DPO loss_type '{loss_type}' (known: sigmoid, ipo)")
    loss = losses.mean()
    with torch.no_grad():
        rc = beta * (policy_chosen - ref_chosen)
        rr = beta * (policy_rejected - ref_rejected)
        metrics = {
            "rewards_chosen": float(rc.mean()),
            "rewards_rejected": float(rr.mean()),
            "reward_margin": float((rc - rr).mean()),
            "reward_accuracy": float((rc > rr).float().mean()),
        }
    return loss, metrics
