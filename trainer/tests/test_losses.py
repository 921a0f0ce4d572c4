"""Losses against values worked out by hand (the arithmetic is in the comments)."""

import math

import pytest
import torch

from gymflow_trainer.config import PolicyLossConfig, RolloutCorrectionConfig
from gymflow_trainer.losses import aggregate, dpo_loss, k3_kl, policy_loss, rollout_weights, value_loss

# Shared case: two sequences of two tokens.
#   seq 0: ratios r = [1.5, 0.5], advantage +1, mask [1, 1]
#   seq 1: ratios r = [1.1, 0.7], advantage -2, mask [1, 0]   (second token is padding)
RATIOS = torch.tensor([[1.5, 0.5], [1.1, 0.7]], dtype=torch.float64)
OLD = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]], dtype=torch.float64)
LOGP = OLD + torch.log(RATIOS)
ADV = torch.tensor([1.0, -2.0], dtype=torch.float64)
MASK = torch.tensor([[1, 1], [1, 0]], dtype=torch.float64)


def approx(x, y, tol=1e-6):
    return abs(float(x) - y) < tol


def test_grpo_clipped_surrogate_seq_mean_token_mean():
    # eps = 0.2.
    # seq0 t0: r·A = 1.5, clip(1.5, 0.8, 1.2)·A = 1.2 → min = 1.2 → ℓ = -1.2 (clipped branch active)
    # seq0 t1: r·A = 0.5, clip(0.5)·A = 0.8 → min = 0.5 → ℓ = -0.5
    # seq1 t0: r·A = -2.2, clip(1.1)=1.1 → -2.2 → ℓ = 2.2
    # seq-mean-token-mean: mean((-1.2 - 0.5)/2, 2.2/1) = mean(-0.85, 2.2) = 0.675
    loss, m = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="grpo", eps=0.2))
    assert approx(loss, 0.675)
    # clipped: 1 of 3 tokens
    assert approx(m["clip_frac"], 1 / 3)
    # ratio mean over masked tokens: (1.5 + 0.5 + 1.1)/3 = 1.033333
    assert approx(m["ratio_mean"], 3.1 / 3)
    # approx KL: mean of (r-1) - ln r = [0.5-0.405465, -0.5+0.693147, 0.1-0.095310] = [0.094535, 0.193147, 0.004690]
    #   → 0.292372 / 3 = 0.097457
    assert approx(m["approx_kl"], (0.5 - math.log(1.5) + -0.5 - math.log(0.5) + 0.1 - math.log(1.1)) / 3)
    assert approx(m["approx_kl"], 0.0974573, 1e-6)
    assert m["ratio_max"] == pytest.approx(1.5) and m["ratio_min"] == pytest.approx(0.5)


def test_token_mean_and_sum_norm_aggregation():
    # Same per-token losses [-1.2, -0.5 | 2.2, pad]
    # token-mean: (-1.2 - 0.5 + 2.2)/3 = 0.5/3 = 0.166667
    loss, _ = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="grpo", aggregation="token-mean"))
    assert approx(loss, 0.5 / 3)
    # Dr. GRPO default seq-mean-token-sum-norm with C = 4 over G = 2 sequences (the paper's 1/G): 0.5/4/2 = 0.0625
    loss, _ = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="dr_grpo", norm_constant=4.0))
    assert approx(loss, 0.0625)


def test_aggregate_skips_empty_sequences():
    # a sequence with no trained token does not count in seq-mean-token-mean: mean over seq0 only = (1+3)/2 = 2
    lm = torch.tensor([[1.0, 3.0], [5.0, 7.0]])
    mk = torch.tensor([[1.0, 1.0], [0.0, 0.0]])
    assert approx(aggregate(lm, mk, "seq-mean-token-mean"), 2.0)
    assert approx(aggregate(lm, mk, "token-mean"), 2.0)
    assert approx(aggregate(lm, mk, "seq-mean-token-sum-norm", 2.0), 2.0)  # (1+3)/2


def test_dapo_clip_higher_token_mean():
    # eps_low 0.2, eps_high 0.28 (DAPO defaults).
    # seq0 t0: clip(1.5, 0.8, 1.28) = 1.28 → min(1.5, 1.28) = 1.28 → ℓ = -1.28
    # seq0 t1: min(0.5, 0.8) = 0.5 → -0.5 ; seq1 t0: 2.2
    # token-mean: (-1.28 - 0.5 + 2.2)/3 = 0.42/3 = 0.14
    loss, m = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="dapo"))
    assert approx(loss, 0.14)
    assert approx(m["clip_frac"], 1 / 3)


def test_dapo_low_clip_with_negative_advantage():
    # r = 0.5, A = -1: r·A = -0.5; clip(0.5, 0.8, 1.28)·A = -0.8; min = -0.8 → ℓ = 0.8 (clipped)
    logp = torch.log(torch.tensor([[0.5]], dtype=torch.float64))
    loss, m = policy_loss(logp, torch.zeros_like(logp), torch.tensor([-1.0], dtype=torch.float64), torch.ones_like(logp),
                          PolicyLossConfig(algorithm="dapo"))
    assert approx(loss, 0.8) and m["clip_frac"] == 1.0


def test_gspo_sequence_ratio():
    # eps 0.2 both sides (given explicitly).
    # seq0: s = exp(mean(ln1.5, ln0.5)) = sqrt(1.5·0.5) = sqrt(0.75) = 0.8660254; A = 1:
    #   min(0.8660, clip(0.8660, 0.8, 1.2) = 0.8660) → ℓ0 = -0.8660254
    # seq1: s = 1.1 (one token); A = -2: s·A = -2.2 = clipped → ℓ1 = 2.2
    # loss = (-0.8660254 + 2.2)/2 = 0.6669873
    loss, _ = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="gspo", eps_low=0.2, eps_high=0.2))
    assert approx(loss, (2.2 - math.sqrt(0.75)) / 2)
    assert approx(loss, 0.6669873)


def test_gspo_default_tiny_clip_range():
    # Paper defaults eps_low 3e-4, eps_high 4e-4. seq1 with A = +2 instead:
    #   s = 1.1 > 1.0004 → clipped term 1.0004·2 = 2.0008 < 2.2 → ℓ1 = -2.0008 (clipped)
    # seq0: s = 0.8660 < 0.9997; A = 1 → min(0.8660, 0.9997) = 0.8660 → ℓ0 = -0.8660254 (not clipped)
    # loss = (-0.8660254 - 2.0008)/2 = -1.4334127; clip_frac = 1/2
    adv = torch.tensor([1.0, 2.0], dtype=torch.float64)
    loss, m = policy_loss(LOGP, OLD, adv, MASK, PolicyLossConfig(algorithm="gspo"))
    assert approx(loss, -(math.sqrt(0.75) + 2.0008) / 2)
    assert approx(m["clip_frac"], 0.5)


def test_sapo_soft_gate():
    # f(r) = σ(τ(r−1))·4/τ. seq0: r = [1.0, 1.5], A = +1 (τ_pos = 1):
    #   f(1) = 0.5·4 = 2 → ℓ = -2 ; f(1.5) = σ(0.5)·4 = 0.6224593·4 = 2.4898373 → ℓ = -2.4898373
    # seq1: r = [1.0, pad], A = -1 (τ_neg = 1.05): f(1) = 0.5·4/1.05 = 1.9047619 → ℓ = +1.9047619
    # seq-mean-token-mean: mean(-2.2449187, 1.9047619) = -0.1700784
    ratios = torch.tensor([[1.0, 1.5], [1.0, 1.0]], dtype=torch.float64)
    old = torch.zeros_like(ratios)
    loss, _ = policy_loss(torch.log(ratios), old, torch.tensor([1.0, -1.0], dtype=torch.float64), MASK, PolicyLossConfig(algorithm="sapo"))
    sig = 1 / (1 + math.exp(-0.5))
    expected = ((-2 - 4 * sig) / 2 + 2 / 1.05) / 2
    assert approx(loss, expected) and approx(loss, -0.1700784)


def test_sapo_gradient_equals_policy_gradient_on_policy():
    # at r = 1: d/dlogp [-f(r)·A] = -f'(1)·r·A = -(τ·σ'(0)·4/τ)·A = -(0.25·4)·A = -A. With A = 3 → -3.
    logp = torch.zeros((1, 1), dtype=torch.float64, requires_grad=True)
    loss, _ = policy_loss(logp, torch.zeros((1, 1), dtype=torch.float64), torch.tensor([3.0], dtype=torch.float64),
                          torch.ones((1, 1), dtype=torch.float64), PolicyLossConfig(algorithm="sapo"))
    loss.backward()
    assert approx(logp.grad[0, 0], -3.0)


def test_ppo_per_token_advantages():
    # per-token A = [[1, -1], [0.5, 9]] (the 9 is padding), eps 0.2, token-mean (PPO default):
    # seq0 t0: r=1.5, A=1 → ℓ=-1.2 ; seq0 t1: r=0.5, A=-1 → r·A=-0.5, clip·A=-0.8 → min -0.8 → ℓ=0.8
    # seq1 t0: r=1.1, A=0.5 → r·A=0.55, clip 1.1 → ℓ=-0.55
    # token-mean: (-1.2 + 0.8 - 0.55)/3 = -0.95/3 = -0.3166667
    adv = torch.tensor([[1.0, -1.0], [0.5, 9.0]], dtype=torch.float64)
    loss, m = policy_loss(LOGP, OLD, adv, MASK, PolicyLossConfig(algorithm="ppo"))
    assert approx(loss, -0.95 / 3)
    assert approx(m["clip_frac"], 2 / 3)


def test_k3_kl_to_reference():
    # ref − logp = ln 2 → k3 = e^{ln2} − ln2 − 1 = 2 − 0.6931472 − 1 = 0.3068528
    logp = torch.tensor([[0.0]], dtype=torch.float64)
    ref = torch.tensor([[math.log(2.0)]], dtype=torch.float64)
    assert approx(k3_kl(logp, ref)[0, 0], 0.3068528)
    # GRPO with A = 0 (pg = 0) and β = 0.1: loss = 0.1·0.3068528 = 0.03068528
    loss, m = policy_loss(logp, logp, torch.tensor([0.0], dtype=torch.float64), torch.ones_like(logp),
                          PolicyLossConfig(algorithm="grpo", kl_beta=0.1), ref_logp=ref)
    assert approx(loss, 0.03068528) and approx(m["kl"], 0.3068528)


def test_value_loss_clipped():
    # V = [1.0, 2.0], V_old = [0.5, 2.0], R = [2.0, 1.0], clip 0.2
    # t0: (V−R)² = 1; V_clip = 0.5 + clamp(0.5, ±0.2) = 0.7 → (0.7−2)² = 1.69 → max 1.69
    # t1: (2−1)² = 1; V_clip = 2.0 → 1 → max 1
    # loss = ½·(1.69 + 1)/2 = 0.6725; clipped branch larger on 1 of 2 tokens
    v = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    old = torch.tensor([[0.5, 2.0]], dtype=torch.float64)
    ret = torch.tensor([[2.0, 1.0]], dtype=torch.float64)
    mk = torch.ones_like(v)
    loss, m = value_loss(v, old, ret, mk, clip=0.2)
    assert approx(loss, 0.6725) and approx(m["vf_clip_frac"], 0.5)
    # unclipped: ½·(1 + 1)/2 = 0.5
    loss, _ = value_loss(v, old, ret, mk, clip=None)
    assert approx(loss, 0.5)


def test_dpo_sigmoid_and_ipo():
    # π_c = -1, π_r = -3, ref_c = ref_r = -2 → h = (−1+2) − (−3+2) = 1 − (−1) = 2
    # sigmoid, β = 0.5: −log σ(0.5·2) = log(1 + e^{−1}) = 0.3132617
    # ipo, β = 0.5: (2 − 1/(2·0.5))² = (2 − 1)² = 1
    t = lambda x: torch.tensor([x], dtype=torch.float64)  # noqa: E731
    loss, m = dpo_loss(t(-1.0), t(-3.0), t(-2.0), t(-2.0), beta=0.5, loss_type="sigmoid")
    assert approx(loss, math.log(1 + math.exp(-1))) and approx(loss, 0.3132617)
    # implicit rewards: chosen 0.5·(−1+2) = 0.5, rejected 0.5·(−3+2) = −0.5; margin 1; accuracy 1
    assert approx(m["rewards_chosen"], 0.5) and approx(m["rewards_rejected"], -0.5)
    assert approx(m["reward_margin"], 1.0) and m["reward_accuracy"] == 1.0
    loss, _ = dpo_loss(t(-1.0), t(-3.0), t(-2.0), t(-2.0), beta=0.5, loss_type="ipo")
    assert approx(loss, 1.0)
    with pytest.raises(ValueError):
        dpo_loss(t(0.0), t(0.0), t(0.0), t(0.0), loss_type="hinge")


# Rollout correction: the trainer's log-probs OLD against a rollout engine's, with per-token ρ = π_trainer / π_rollout
#   seq 0: ρ = [1.5, 3.0]; seq 1: ρ = [0.4, pad] (the padding's rollout log-prob is junk and must not count)
RHO = torch.tensor([[1.5, 3.0], [0.4, 1.0]], dtype=torch.float64)
ROLLOUT = (OLD - torch.log(RHO)).index_put((torch.tensor([1]), torch.tensor([1])), torch.tensor([-100.0], dtype=torch.float64))


def weights_of(level, mode="truncate", cap=2.0):
    w, m = rollout_weights(OLD, ROLLOUT, MASK, RolloutCorrectionConfig(level=level, mode=mode, cap=cap))
    return (sum(w.tolist(), []) if w is not None else None), m  # flat: [seq0 t0, seq0 t1, seq1 t0, seq1 pad]


def test_rollout_mismatch_kl_is_reported_with_the_correction_off():
    # k3 = ρ − 1 − ln ρ: 0.5 − 0.405465 = 0.094535; 2 − 1.098612 = 0.901388; −0.6 + 0.916291 = 0.316291 → /3
    w, m = weights_of("off")
    assert w is None and set(m) == {"mismatch_kl"}
    assert approx(m["mismatch_kl"], (0.094535 + 0.901388 + 0.316291) / 3)
    same, _ = rollout_weights(OLD, OLD, MASK, RolloutCorrectionConfig(level="token"))
    assert same.tolist() == [[1.0, 1.0], [1.0, 0.0]]


def test_rollout_weights_token_level():
    # truncate at 2: [1.5, min(3, 2) | 0.4]; one of three tokens cut; mean (1.5 + 2 + 0.4)/3 = 1.3
    w, m = weights_of("token")
    assert w == pytest.approx([1.5, 2.0, 0.4, 0.0])
    assert approx(m["is_weight_mean"], 1.3) and approx(m["is_cut_frac"], 1 / 3)
    # mask outside [1/2, 2]: 1.5 kept; 3.0 and 0.4 dropped
    w, m = weights_of("token", "mask")
    assert w == [1.0, 0.0, 0.0, 0.0]
    assert approx(m["is_weight_mean"], 1 / 3) and approx(m["is_cut_frac"], 2 / 3)


def test_rollout_weights_sequence_level():
    # seq 0: ρ = 1.5 · 3 = 4.5 on both tokens; seq 1: ρ = 0.4
    w, m = weights_of("sequence")  # truncate at 2
    assert w == pytest.approx([2.0, 2.0, 0.4, 0.0])
    assert approx(m["is_weight_mean"], 4.4 / 3) and approx(m["is_cut_frac"], 2 / 3)
    assert weights_of("sequence", "mask", cap=5.0)[0] == [1.0, 1.0, 1.0, 0.0]  # 4.5 <= 5 and 0.4 >= 1/5
    assert weights_of("sequence", "mask", cap=4.0)[0] == [0.0, 0.0, 1.0, 0.0]  # 4.5 > 4


def test_a_sequence_ratio_that_overflows_is_cut_never_nan():
    far = OLD - 400.0  # e^{800} overflows float64 for seq 0
    w, m = rollout_weights(OLD, far, MASK, RolloutCorrectionConfig(level="sequence"))
    assert w.tolist() == [[2.0, 2.0], [2.0, 0.0]] and not math.isnan(m["is_weight_mean"])
    w, _ = rollout_weights(OLD, far, MASK, RolloutCorrectionConfig(level="sequence", mode="mask"))
    assert w.tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("algorithm", ["grpo", "dr_grpo", "dapo", "gspo", "sapo", "ppo"])
def test_unit_weights_leave_every_policy_loss_unchanged(algorithm):
    cfg = PolicyLossConfig(algorithm=algorithm)
    plain, _ = policy_loss(LOGP, OLD, ADV, MASK, cfg)
    weighted, _ = policy_loss(LOGP, OLD, ADV, MASK, cfg, weights=torch.ones_like(LOGP))
    assert float(weighted) == pytest.approx(float(plain), abs=1e-12)


def test_weights_scale_each_tokens_term():
    # per-token ℓ [-1.2, -0.5 | 2.2] (the grpo case above) times w [0.5, 2 | 3] = [-0.6, -1.0 | 6.6]
    # seq-mean-token-mean: mean((-0.6 - 1.0)/2, 6.6) = 2.9; the padding's weight (7) does not count
    w = torch.tensor([[0.5, 2.0], [3.0, 7.0]], dtype=torch.float64)
    loss, m = policy_loss(LOGP, OLD, ADV, MASK, PolicyLossConfig(algorithm="grpo", eps=0.2), weights=w)
    assert approx(loss, 2.9) and approx(m["clip_frac"], 1 / 3)  # the clip statistics are the ratio's
    # token-mean is linear in the terms: the gradient of each token is its weight times the unweighted one
    grads = []
    for ws in (None, w):
        lp = LOGP.clone().requires_grad_(True)
        policy_loss(lp, OLD, ADV, MASK, PolicyLossConfig(algorithm="dapo", aggregation="token-mean"), weights=ws)[0].backward()
        grads.append(lp.grad * MASK)
    assert torch.allclose(grads[1], grads[0] * w * MASK)


def test_gspo_weights_a_sequence_by_its_tokens_mean_weight():
    cfg = PolicyLossConfig(algorithm="gspo")
    per_seq = [float(policy_loss(LOGP[i : i + 1], OLD[i : i + 1], ADV[i : i + 1], MASK[i : i + 1], cfg)[0]) for i in range(2)]
    w = torch.tensor([[0.5, 2.0], [3.0, 7.0]], dtype=torch.float64)  # means over trained tokens: 1.25 and 3
    loss, _ = policy_loss(LOGP, OLD, ADV, MASK, cfg, weights=w)
    assert approx(loss, (1.25 * per_seq[0] + 3.0 * per_seq[1]) / 2)


@pytest.mark.parametrize("algorithm", ["grpo", "dr_grpo", "dapo", "ppo", "gspo", "sapo"])
def test_junk_in_padding_and_extreme_ratios_stay_finite(algorithm):
    """NaN or inf where the mask is 0 must not reach the loss or the gradient (NaN · 0 is NaN), and a log-ratio
    of 100 (corrupt rollout log-probs) must not overflow exp: either would make the step's gradient NaN."""
    nan, inf = float("nan"), float("inf")
    logp = torch.tensor([[0.0, -0.5, -1.0, -0.3]], dtype=torch.float32, requires_grad=True)
    mask = torch.tensor([[0.0, 1.0, 1.0, 0.0]])
    cfg = PolicyLossConfig(algorithm=algorithm, kl_beta=0.1)
    old = torch.tensor([[nan, -0.4, -1.2, -inf]])
    ref = torch.tensor([[inf, -0.5, -1.0, nan]])
    adv = torch.tensor([[nan, 1.0, 1.0, inf]])
    loss, metrics = policy_loss(logp, old, adv, mask, cfg, ref_logp=ref, weights=torch.tensor([[nan, 1.0, 1.0, nan]]))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logp.grad).all() and logp.grad[0, 0] == 0 and logp.grad[0, 3] == 0
    clean, _ = policy_loss(logp[:, 1:3].detach(), old[:, 1:3], adv[:, 1:3], mask[:, 1:3], cfg, ref_logp=ref[:, 1:3])
    assert float(loss.detach()) == pytest.approx(float(clean), rel=1e-6)
    assert all(math.isfinite(v) for v in metrics.values())
    for a in (0.0, 1.0, -1.0):
        far = torch.tensor([[0.0, -100.5, -1.2, 0.0]])  # log r = 100 at token 1
        lp = logp.detach().clone().requires_grad_(True)
        loss, _ = policy_loss(lp, far, torch.full((1, 4), a), mask, PolicyLossConfig(algorithm=algorithm))
        loss.backward()
        assert torch.isfinite(loss) and torch.isfinite(lp.grad).all()


def test_value_loss_ignores_junk_in_padding():
    values = torch.tensor([[0.5, 0.2, 0.0]], requires_grad=True)
    loss, _ = value_loss(values, torch.tensor([[0.4, 0.1, float("nan")]]), torch.tensor([[1.0, 0.0, float("inf")]]), torch.tensor([[1.0, 1.0, 0.0]]), 0.2)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(values.grad).all() and values.grad[0, 2] == 0

