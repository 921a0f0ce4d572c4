"""Advantages and DAPO helpers against values worked out by hand."""

import math

import torch

import pytest

from gymflow_trainer.advantages import chained_gae, dynamic_sampling_filter, gae, group_advantages, overlong_penalty, process_advantages


def close(t, xs, tol=1e-6):
    return all(abs(float(a) - b) < tol for a, b in zip(t.flatten().tolist(), xs)) and t.numel() == len(xs)


def test_group_advantages_grpo_and_dr_grpo():
    # group a: rewards [1, 0, 1] → mean 2/3; population std = sqrt(((1/3)²·2 + (2/3)²)/3) = sqrt(2/9) = 0.4714045
    #   → (1 − 2/3)/0.4714045 = 0.7071068, (0 − 2/3)/0.4714045 = −1.4142136
    # group b: rewards [0.5, 0.5] → std 0 → 0/(0 + eps) = 0
    r = torch.tensor([1.0, 0.0, 1.0, 0.5, 0.5])
    g = ["a", "a", "a", "b", "b"]
    assert close(group_advantages(r, g, eps=0.0 + 1e-12), [0.7071068, -1.4142136, 0.7071068, 0.0, 0.0])
    # Dr. GRPO (no std): R − mean = [1/3, −2/3, 1/3, 0, 0]
    assert close(group_advantages(r, g, norm_std=False), [1 / 3, -2 / 3, 1 / 3, 0.0, 0.0])
    # sample std: sqrt((6/9)/2) = sqrt(1/3) = 0.5773503 → 0.3333/0.5774 = 0.5773503, −0.6667/0.5774 = −1.1547005
    assert close(group_advantages(r, g, eps=1e-12, unbiased=True), [0.5773503, -1.1547005, 0.5773503, 0.0, 0.0])
    # default eps 1e-6: (1/3)/(sqrt(2/9) + 1e-6)
    assert abs(float(group_advantages(r, g)[0]) - (1 / 3) / (math.sqrt(2 / 9) + 1e-6)) < 1e-6


def test_gae_contiguous():
    # γ = 1, λ = 0.5, rewards [0, 0, 1], V [0.5, 0.6, 0.7]:
    # t2: δ = 1 + 0 − 0.7 = 0.3 → A2 = 0.3
    # t1: δ = 0 + 0.7 − 0.6 = 0.1 → A1 = 0.1 + 0.5·0.3 = 0.25
    # t0: δ = 0 + 0.6 − 0.5 = 0.1 → A0 = 0.1 + 0.5·0.25 = 0.225
    # returns = A + V = [0.725, 0.85, 1.0]
    adv, ret = gae(torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor([[0.5, 0.6, 0.7]]), torch.ones(1, 3), gamma=1.0, lam=0.5)
    assert close(adv, [0.225, 0.25, 0.3]) and close(ret, [0.725, 0.85, 1.0])


def test_gae_skips_masked_positions():
    # mask [1, 0, 1] (an observation token in the middle): t2: A2 = 0.3 as above; t1 masked → 0;
    # t0: next valid V is V2 = 0.7 → δ = 0 + 0.7 − 0.5 = 0.2 → A0 = 0.2 + 0.5·0.3 = 0.35
    # returns [0.85, 0, 1.0]
    adv, ret = gae(torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor([[0.5, 0.6, 0.7]]), torch.tensor([[1.0, 0.0, 1.0]]), gamma=1.0, lam=0.5)
    assert close(adv, [0.35, 0.0, 0.3]) and close(ret, [0.85, 0.0, 1.0])


def test_gae_rows_of_a_batch_are_independent_of_each_others_masks():
    # A shared prompt (columns 0-1 masked in both rows) and an observation masked in one row only: each row
    # gets what it gets alone (the worked examples above, shifted right by the prompt).
    rewards = torch.tensor([[0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 1.0]])
    values = torch.tensor([[9.0, 9.0, 0.5, 0.6, 0.7], [9.0, 9.0, 0.5, 0.6, 0.7]])
    mask = torch.tensor([[0.0, 0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0, 1.0]])
    adv, ret = gae(rewards, values, mask, gamma=1.0, lam=0.5)
    assert close(adv, [0.0, 0.0, 0.225, 0.25, 0.3, 0.0, 0.0, 0.35, 0.0, 0.3])
    assert close(ret, [0.0, 0.0, 0.725, 0.85, 1.0, 0.0, 0.0, 0.85, 0.0, 1.0])


def test_gae_matches_the_recursion_on_long_rows():
    # The recursion as written, one row and one acting position at a time, against rows of hundreds of positions
    # (many rounds of the doubling scan), random masks, a row that never acts, and γλ < 1.
    torch.manual_seed(0)
    B, T, gamma, lam = 5, 700, 0.99, 0.95
    values, rewards = torch.randn(B, T, dtype=torch.float64), torch.randn(B, T, dtype=torch.float64)
    mask = (torch.rand(B, T) < 0.4).to(torch.float64)
    mask[:, :50] = 0  # the prompt
    mask[3] = 0
    adv, ret = gae(rewards, values, mask, gamma=gamma, lam=lam)
    want = torch.zeros(B, T, dtype=torch.float64)
    for b in range(B):
        next_v = next_a = 0.0
        for t in reversed(range(T)):
            if mask[b, t]:
                next_a = float(rewards[b, t]) + gamma * next_v - float(values[b, t]) + gamma * lam * next_a
                next_v = float(values[b, t])
                want[b, t] = next_a
    torch.testing.assert_close(adv, want, rtol=0, atol=1e-9)
    torch.testing.assert_close(ret, (want + values) * mask, rtol=0, atol=1e-9)


def test_gae_discounted_return():
    # γ = 0.9, λ = 1, V = 0, rewards [1, 1]: A1 = 1; A0 = 1 + 0.9·1 = 1.9 (the discounted return)
    adv, ret = gae(torch.tensor([[1.0, 1.0]]), torch.zeros(1, 2), torch.ones(1, 2), gamma=0.9, lam=1.0)
    assert close(adv, [1.9, 1.0]) and close(ret, [1.9, 1.0])


def test_chained_gae_runs_one_recursion_over_an_episodes_pieces():
    # Two steps of one episode, V [0.5, 0.6] then [0.7], reward 1 at the very end, γ = 0.9, λ = 0.5:
    # t2: δ = 1 − 0.7 = 0.3 → A = 0.3
    # t1 (the first step's last token bootstraps from the second step's first value):
    #     δ = 0 + 0.9·0.7 − 0.6 = 0.03 → A = 0.03 + 0.45·0.3 = 0.165
    # t0: δ = 0.9·0.6 − 0.5 = 0.04 → A = 0.04 + 0.45·0.165 = 0.11425
    # Each step on its own with the reward at its end (what PPO did with step samples before) would give the first
    # step A1 = 1 − 0.6 = 0.4, A0 = 0.04 + 0.45·0.4 = 0.22.
    t = torch.tensor
    [[(a0, r0), (a1, r1)]] = chained_gae([[t([0.0, 0.0]), t([1.0])]], [[t([0.5, 0.6]), t([0.7])]], gamma=0.9, lam=0.5)
    assert close(a0, [0.11425, 0.165]) and close(a1, [0.3])
    assert close(r0, [0.61425, 0.765]) and close(r1, [1.0])


def test_chained_gae_matches_the_recursion_over_the_concatenated_pieces():
    # Episodes of random pieces (an empty one too), in one batch: each equals the plain recursion over its pieces
    # concatenated, and an episode's suffix gives its positions what the whole episode gives them.
    torch.manual_seed(1)
    gamma, lam = 0.97, 0.9
    eps = [[torch.randn(n, dtype=torch.float64) for n in sizes] for sizes in ([5, 1, 7], [3], [4, 0, 2, 6])]
    rews = [[torch.randn(p.numel(), dtype=torch.float64) for p in ep] for ep in eps]
    got = chained_gae(rews, eps, gamma, lam)
    for ep, rs, res in zip(eps, rews, got):
        v, r = torch.cat(ep), torch.cat(rs)
        want, next_v, next_a = torch.zeros_like(v), 0.0, 0.0
        for k in reversed(range(v.numel())):
            next_a = float(r[k]) + gamma * next_v - float(v[k]) + gamma * lam * next_a
            next_v = float(v[k])
            want[k] = next_a
        torch.testing.assert_close(torch.cat([a for a, _ in res]), want, rtol=0, atol=1e-9)
        torch.testing.assert_close(torch.cat([ret for _, ret in res]), want + v, rtol=0, atol=1e-9)
        assert [a.numel() for a, _ in res] == [p.numel() for p in ep]
    tail = chained_gae([rews[2][2:]], [eps[2][2:]], gamma, lam)[0]
    for (a, ret), (a_all, ret_all) in zip(tail, got[2][2:]):
        torch.testing.assert_close(a, a_all, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"episode 0: reward pieces \[2\] and value pieces \[3\] differ"):
        chained_gae([[torch.zeros(2)]], [[torch.zeros(3)]])


def test_process_advantages_sum_a_members_group_normalised_step_scores_from_each_step_on():
    # Group g: member a's steps score 1, 0, 0.5 and member b's one step 0.5 (mean 0.5, population std √0.125); a step
    # of c is not scored (None: out of the statistics, adds nothing). Group h is normalised on its own.
    scores = [0.5, 1.0, None, 0.0, 0.5, 0.2, 0.8]
    groups = ["g", "g", "g", "g", "g", "h", "h"]
    members = ["a", "a", "c", "a", "b", "d", "e"]
    steps = [1, 2, 0, 0, 0, 0, 0]  # a's steps 0, 1, 2 score 0, 0.5, 1 and are given out of order: the sums follow step order
    z = 0.5 / math.sqrt(0.125)
    got = process_advantages(scores, groups, members, steps).tolist()
    assert got == pytest.approx([z, z, 0.0, -z + 0.0 + z, 0.0, -1.0, 1.0], abs=1e-5)
    # Dr. GRPO: centred, not divided by the std
    got = process_advantages(scores, groups, members, steps, norm_std=False).tolist()
    assert got == pytest.approx([0.5, 0.5, 0.0, 0.0, 0.0, -0.3, 0.3])
    assert process_advantages([None, None], ["g", "g"], ["a", "b"], [0, 0]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="differ in length"):
        process_advantages([1.0], ["g", "h"], ["a"], [0])


def test_dynamic_sampling_filter():
    # a: [1, 1, 0] mixed → keep; b: [1] single → all equal → drop; c: [0.5, 0.5] → drop
    keep = dynamic_sampling_filter(torch.tensor([1.0, 1.0, 0.0, 1.0, 0.5, 0.5]), ["a", "a", "a", "b", "c", "c"])
    assert keep.tolist() == [True, True, True, False, False, False]


def test_overlong_penalty():
    # L_max = 10, L_cache = 4 → ramp starts after 6: L=6 → 0; L=7 → (6−7)/4 = −0.25; L=8 → −0.5; L=10 → −1; L=11 → −1
    p = overlong_penalty(torch.tensor([3, 6, 7, 8, 10, 11]), l_max=10, l_cache=4)
    assert close(p, [0.0, 0.0, -0.25, -0.5, -1.0, -1.0])
