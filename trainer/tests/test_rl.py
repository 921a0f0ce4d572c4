"""RL trainer (GRPO family): on-policy first step, and the update moves probability toward the better member."""


import json
import math

import pytest
import torch
import tempfile

from conftest import TINY, conversation, run_command, write_jsonl
from gymflow_trainer import rl
from gymflow_trainer.models import load_model_and_tokenizer
from gymflow_trainer.config import RlConfig, from_dict
from gymflow_trainer.data import load_rl




def rl_file(tmp_path):
    conv = conversation()
    good = {"role": "assistant", "content": '<tool_call>\n{"name":"submit","arguments":{"answer":"hi"}}\n</tool_call>', "train": True}
    bad = {"role": "assistant", "content": "no idea", "train": True}
    recs = []
    for t in range(2):
        recs.append({"task_id": f"t{t}", "prompt": conv[:2], "group": [
            {"completion": [good], "reward": 1.0, "advantage": 1.0},
            {"completion": [bad], "reward": 0.0, "advantage": -1.0},
        ]})
    recs.append({"task_id": "uniform", "prompt": conv[:2], "group": [{"completion": [good], "reward": 1.0, "advantage": 0.0},
                                                                     {"completion": [bad], "reward": 1.0, "advantage": 0.0}]})
    return write_jsonl(tmp_path / "rl.jsonl", recs)


def make(tmp_path, out, **kw):
    doc = {"data": rl_file(tmp_path), "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 6}
    doc.update(kw)
    cfg = from_dict(RlConfig, doc)
    cfg.validate()
    return cfg


def seq_logps(model_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    samples = load_rl(rl_file(tmp_path), tok, 4096)
    with torch.no_grad():
        lp, mask = rl.token_logps(model, samples, tok.pad_token_id)
    return (lp.sum(-1) / mask.sum(-1)).tolist(), [s.reward for s in samples]


@pytest.mark.parametrize("algorithm", ["grpo", "dr_grpo", "dapo", "gspo", "sapo"])
def test_first_step_is_on_policy(tmp_path, algorithm):
    prog = run_command("rl", make(tmp_path, algorithm, loss={"algorithm": algorithm}, max_steps=1)).progress[0]
    assert prog["ratio_mean"] == pytest.approx(1.0, abs=1e-6) and prog["clip_frac"] == 0.0


def test_grpo_moves_toward_the_better_member_and_drops_uniform_groups(tmp_path):
    cfg = make(tmp_path, "grpo", epochs=6, ppo_epochs=2, drop_uniform_groups=True, loss={"algorithm": "grpo", "kl_beta": 0.01})
    run = run_command("rl", cfg)
    res, prog = run.result, run.progress
    assert run.start["dropped"] == 2 and run.start["samples"] == 4
    assert any(p["ratio_mean"] != pytest.approx(1.0, abs=1e-9) for p in prog)  # reuse epochs are off-policy
    # the policy after training prefers the rewarded completion (per-token log-prob) more than before
    init_dir = str(tmp_path / "init")
    model, tok = load_model_and_tokenizer(cfg.model, None)
    model.save_pretrained(init_dir)
    tok.save_pretrained(init_dir)
    before, rewards = seq_logps(init_dir, tmp_path)
    after, _ = seq_logps(res["path"], tmp_path)
    gap = lambda lps: lps[0] - lps[1]  # noqa: E731  (member 0 rewarded, member 1 not, task t0)
    assert rewards[:2] == [1.0, 0.0]
    assert gap(after) > gap(before) + 0.1


def test_ppo_with_value_head(tmp_path):
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    run = run_command("rl", make(tmp_path, "ppo", loss={"algorithm": "ppo"}, epochs=8, ppo_epochs=2, vf_coef=1.0, optim={"lr": 5e-3}))
    res, prog = run.result, run.progress
    assert prog[0]["ratio_mean"] == pytest.approx(1.0, abs=1e-6)
    assert {"vf_loss", "vf_clip_frac", "value_mean", "clip_frac"} <= set(prog[0])
    # the value head learns the (single) reward scale: value loss falls
    first = sum(p["vf_loss"] for p in prog[:4]) / 4
    last = sum(p["vf_loss"] for p in prog[-4:]) / 4
    assert last < first
    # the head is in the resumable state, not in the saved policy
    assert "v_head.weight" in load_file(f"{res['checkpoint']}/trainable.safetensors")
    AutoModelForCausalLM.from_pretrained(res["path"])
    assert "v_head" not in str(load_file(f"{res['path']}/model.safetensors").keys())


def rollout_file(tmp_path, shift=0.0, with_logprobs=True):
    """An RL record as a local policy writes it: per step the prompt ids it saw, the ids it sampled and their
    log-probs under the sampling policy (here the tiny model itself, shifted by ``shift``)."""
    from gymflow_trainer.chat import render

    model, tok = load_model_and_tokenizer(from_dict(RlConfig, {"data": "x", "output_dir": "y", "model": {"tiny": dict(TINY)}}).model, None)
    conv = conversation()

    def step(prompt_msgs, completion_text):
        prompt = tok.encode(render(prompt_msgs, add_generation_prompt=True)[0], add_special_tokens=False)
        comp = tok.encode(completion_text + "<|im_end|>", add_special_tokens=False)
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([prompt + comp])).logits[0]
        lp = torch.log_softmax(logits.float(), -1)[len(prompt) - 1 : -1].gather(-1, torch.tensor(comp)[:, None])[:, 0]
        return {"prompt": prompt, "completion": comp}, (lp + shift).tolist()

    def member(texts, reward):
        toks, lps = zip(*[step(conv[:2], t) for t in texts])
        m = {"completion": [{"role": "assistant", "content": t, "train": True} for t in texts], "reward": reward, "advantage": 0.0, "tokens": list(toks)}
        if with_logprobs:
            m["logprobs"] = list(lps)
        return m

    good = '<tool_call>\n{"name":"submit","arguments":{"answer":"hi"}}\n</tool_call>'
    rec = {"task_id": "t0", "prompt": conv[:2], "group": [member([good, good, good], 1.0), member(["no idea"], 0.0)]}
    return write_jsonl(tmp_path / f"rollout{shift}{with_logprobs}.jsonl", [rec])


def run_rollout(tmp_path, data, **kw):
    # A fresh output directory per run: a run never starts over another run's checkpoints.
    out = tempfile.mkdtemp(dir=tmp_path, prefix="out-")
    doc = {"data": data, "output_dir": out, "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 8, "max_steps": 1}
    doc.update(kw)
    run = run_command("rl", doc)
    return run.start, run.progress[0]


def test_rollout_tokens_give_one_sample_per_step_and_the_behaviour_logprobs(tmp_path):
    start, prog = run_rollout(tmp_path, rollout_file(tmp_path))
    assert start["sample_kind"] == "steps" and start["samples"] == 4  # 3 steps + 1 step
    # the rollout's log-probs are this model's: the first update is on-policy
    assert prog["ratio_mean"] == pytest.approx(1.0, abs=1e-5)
    # log-probs of another (behaviour) policy: the ratio is measured against them, not recomputed
    _, off = run_rollout(tmp_path, rollout_file(tmp_path, shift=-0.5))
    assert off["ratio_mean"] == pytest.approx(torch.exp(torch.tensor(0.5)).item(), rel=1e-4)


def test_rollout_steps_share_their_members_advantage(tmp_path):
    from gymflow_trainer.data import load_rl_steps

    samples = load_rl_steps(rollout_file(tmp_path), 4096)
    assert [s.member for s in samples] == ["t0#0/0"] * 3 + ["t0#0/1"]
    assert all(s.old_logp is not None and len(s.old_logp) == len(s.tokens.input_ids) - 1 for s in samples)
    cfg = from_dict(RlConfig, {"data": "x", "output_dir": "y", "model": {"tiny": dict(TINY)}})
    # GRPO statistics over the two trajectories (rewards 1, 0; population std 0.5): +1 / -1, whatever their step counts
    assert rl.sample_advantages(samples, cfg).tolist() == pytest.approx([1.0, 1.0, 1.0, -1.0], abs=1e-4)
    cfg.loss.algorithm = "dr_grpo"
    assert rl.sample_advantages(samples, cfg).tolist() == pytest.approx([0.5, 0.5, 0.5, -0.5])


def test_rollout_tokens_fall_back_or_fail_clearly(tmp_path):
    start, _ = run_rollout(tmp_path, rollout_file(tmp_path, with_logprobs=False))
    assert start["sample_kind"] == "conversation"
    from gymflow_trainer.errors import DataError

    with pytest.raises(DataError, match=r"rollout tokens requested but 'tokens'/'logprobs' are missing"):
        run_rollout(tmp_path, rollout_file(tmp_path, with_logprobs=False), samples="steps")


def test_steps_where_nothing_was_sampled_are_skipped(tmp_path):
    from gymflow_trainer.data import load_rl_steps, rollout_tokens_complete

    path = rollout_file(tmp_path)
    rec = first_record(path)
    member = rec["group"][0]
    member["tokens"][1] = None  # e.g. the policy's context was full at that step
    member["logprobs"][1] = None
    fixed = write_jsonl(tmp_path / "gap.jsonl", [rec])
    assert rollout_tokens_complete(fixed)
    assert [s.member for s in load_rl_steps(fixed, 4096)] == ["t0#0/0"] * 2 + ["t0#0/1"]
    # a member with no sampled step at all is not rollout data
    member["tokens"] = [None] * 3
    member["logprobs"] = [None] * 3
    assert not rollout_tokens_complete(write_jsonl(tmp_path / "none.jsonl", [rec]))


def test_the_rollout_engines_gap_is_reported_and_corrected(tmp_path, capsys):
    gap = math.exp(0.5)  # the rollout's log-probs are the tiny model's − 0.5: ρ = π_trainer / π_rollout = e^0.5 per token
    start, same = run_rollout(tmp_path, rollout_file(tmp_path))
    assert same["mismatch_kl"] == pytest.approx(0.0, abs=1e-9) and "is_weight_mean" not in same and start["cut_samples"] == 0
    assert "were cut" not in capsys.readouterr().err
    # prompts cut at max_length: the trainer scores the sampled tokens in a shorter context than the policy saw
    start, cut = run_rollout(tmp_path, rollout_file(tmp_path), max_length=80)
    assert start["cut_samples"] == 4 and cut["mismatch_kl"] > 1e-6  # 1.9e-4 here; uncut: 0
    assert "4 of 4 samples are longer than max_length 80 and were cut: their sampled tokens are scored after" in capsys.readouterr().err
    _, off = run_rollout(tmp_path, rollout_file(tmp_path, shift=-0.5))
    assert off["mismatch_kl"] == pytest.approx(gap - 1.5, rel=1e-4)  # k3: ρ − 1 − ln ρ
    assert off["ratio_mean"] == pytest.approx(gap, rel=1e-4)  # off: the ratio is against the rollout's log-probs

    def corrected(**correction):
        return run_rollout(tmp_path, rollout_file(tmp_path, shift=-0.5), rollout_correction=correction)[1]

    tis = corrected(level="token")  # cap 2 > e^0.5: every token weighs ρ
    assert tis["ratio_mean"] == pytest.approx(1.0, abs=1e-5)  # against the trainer's own log-probs: on-policy
    assert tis["is_weight_mean"] == pytest.approx(gap, rel=1e-4) and tis["is_cut_frac"] == 0.0
    assert tis["loss"] == pytest.approx(gap * same["loss"], rel=1e-4)  # on-policy, every term weighted by ρ
    assert tis["mismatch_kl"] == pytest.approx(off["mismatch_kl"], rel=1e-6)
    low = corrected(level="token", cap=1.5)
    assert low["is_weight_mean"] == pytest.approx(1.5) and low["is_cut_frac"] == 1.0
    assert low["loss"] == pytest.approx(1.5 * same["loss"], rel=1e-4)
    masked = corrected(level="token", mode="mask", cap=1.5)
    assert masked["is_weight_mean"] == 0.0 and masked["loss"] == 0.0
    seq = corrected(level="sequence")  # a step's ρ = e^{0.5 n} with n its completion's tokens: cut to 2
    assert seq["is_weight_mean"] == pytest.approx(2.0) and seq["is_cut_frac"] == 1.0
    _, ppo = run_rollout(tmp_path, rollout_file(tmp_path, shift=-0.5), loss={"algorithm": "ppo"},
                         rollout_correction={"level": "token", "mode": "mask", "cap": 1.5})
    assert ppo["pg_loss"] == 0.0 and ppo["vf_loss"] > 0  # PPO's policy term is weighted too; its value loss is not


def test_rollout_correction_without_rollout_logprobs_fails_clearly(tmp_path):
    from gymflow_trainer.errors import ConfigError

    with pytest.raises(ConfigError, match=r"rollout_correction.level: 'token' needs the rollout's log-probs, but .* chose 'conversation'"):
        run_rollout(tmp_path, rollout_file(tmp_path, with_logprobs=False), rollout_correction={"level": "token"})
    with pytest.raises(ConfigError, match=r"\$.rollout_correction.level: 'sequence' needs the rollout's log-probs, but samples is 'conv"):
        make(tmp_path, "x", samples="conversation", rollout_correction={"level": "sequence"})
    with pytest.raises(ConfigError, match=r"\$.rollout_correction.cap must be > 1, got 1.0"):
        make(tmp_path, "x", rollout_correction={"level": "token", "cap": 1.0})
    _, conv = run_rollout(tmp_path, rollout_file(tmp_path, with_logprobs=False))
    assert "mismatch_kl" not in conv  # no rollout log-probs, no gap to report


def test_the_first_step_is_always_reported(tmp_path):
    # its mismatch_kl is the rollout engine's gap before any update: the one reading that is not also drift
    steps = [e["step"] for e in run_command("rl", make(tmp_path, "first", epochs=3, log_every=100)).progress]
    assert steps == [1, steps[-1]] and steps[-1] > 2


@pytest.mark.parametrize("algorithm", ["dapo", "grpo", "dr_grpo", "ppo"])
def test_a_step_cut_into_micro_batches_trains_as_one_batch(tmp_path, algorithm):
    """The aggregation is over the step's batch however it is accumulated (up to summation order: Adam moves a weight with
    a near-zero gradient by ~1e-5 of noise, a per-micro-batch mean by ~lr = 1e-2): DAPO's token-mean weighs every token
    of the batch the same (a 1-token and a 50-token sample do not count alike per sample), GRPO's sequence mean
    every sequence, Dr. GRPO's sum over the batch is divided by its G sequences."""
    from safetensors.torch import load_file

    def final(out, batch_size, grad_accum):
        cfg = make(tmp_path, out, loss={"algorithm": algorithm}, batch_size=batch_size, grad_accum=grad_accum, max_steps=1, keep_last=1)
        run_command("rl", cfg)
        return load_file(str(tmp_path / out / "checkpoint-1" / "trainable.safetensors"))

    whole = final("whole", 6, 1)
    for batch_size, grad_accum in ((1, 6), (2, 3)):
        cut = final(f"cut-{batch_size}", batch_size, grad_accum)
        for k in whole:
            torch.testing.assert_close(cut[k], whole[k], rtol=0, atol=1e-4, msg=lambda m: f"{batch_size}×{grad_accum} {k}: {m}")


def test_dr_grpo_refuses_the_datasets_std_normalised_advantages(tmp_path):
    from gymflow_trainer.errors import ConfigError

    with pytest.raises(ConfigError, match=r"\$\.advantages: 'dataset' gives std-normalised advantages, which dr_grpo does without"):
        make(tmp_path, "x", loss={"algorithm": "dr_grpo"}, advantages="dataset")


def test_lora_dropout_warns_that_the_first_update_is_off_policy(tmp_path, capsys):
    run_command("rl", make(tmp_path, "lora", lora={"r": 4, "alpha": 8, "dropout": 0.1}, max_steps=1))
    assert "lora.dropout 0.1: the training passes drop out what the old log-probs kept" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- PPO's GAE over a member's steps


#: Process rewards of the members of :func:`episode_file` when scored: member 0's second step is redundant (0), its
#: third half right; member 1's only step is not scored.
STEP_REWARDS = ([1.0, 0.0, 0.5], [None])


def first_record(path):
    """The first record of a JSON Lines file, to edit and write back as another case."""
    with open(path) as fh:
        return json.loads(fh.readline())


def episode_file(tmp_path, name="episodes.jsonl", scored=False):
    """One task's group as a rollout records it, in raw token ids: member 0 acts three times (each step's prompt is
    the conversation so far: the previous prompt, the previous completion and an observation), member 1 once.
    ``scored``: the members carry :data:`STEP_REWARDS`."""
    system = [1, 60, 61, 62, 63, 2, 10, 1, 70, 71, 72, 2, 10, 1, 80, 10]

    def member(completions, reward, step_rewards):
        toks, lps, prompt = [], [], list(system)
        for k, comp in enumerate(completions):
            toks.append({"prompt": list(prompt), "completion": comp})
            lps.append([-1.0] * len(comp))
            prompt = prompt + comp + [10, 1, 90 + k, 91, 92, 93, 2, 10, 1, 80, 10]  # the tool's answer, then the next header
        texts = [{"role": "assistant", "content": "x", "train": True}] * len(completions)
        return {"completion": texts, "reward": reward, "advantage": 0.0, "tokens": toks, "logprobs": lps,
                "step_rewards": step_rewards if scored else None}

    rec = {"task_id": "t0", "prompt": [{"role": "user", "content": "go", "train": False}],
           "group": [member([[40, 41, 42, 2], [43, 44, 2], [45, 46, 47, 48, 2]], 1.0, STEP_REWARDS[0]),
                     member([[50, 51, 2]], 0.25, STEP_REWARDS[1])]}
    return write_jsonl(tmp_path / name, [rec])


def state_value(prefix):
    """A critic that is a fixed function of the state (the tokens so far), whatever the weights or the batch."""
    return ((sum(prefix) * 7 + len(prefix)) % 11) / 10 - 0.5


@pytest.fixture
def trained_advantages(monkeypatch):
    """Runs ``rl.run`` with the value head's outputs replaced by :func:`state_value` and returns, per training pass,
    ``{(member, step): advantages at the trained positions}`` as ``policy_loss`` was given them."""
    real_logps, real_loss = rl.token_logps, rl.policy_loss
    seen, passes = [], []

    def logps(model, samples, *a, values=False, forward=None, **kw):
        out = real_logps(model, samples, *a, values=values, forward=forward, **kw)
        if forward is not None:
            seen[:] = [(s.member, s.step) for s in samples]
        if not values:
            return out
        forced = torch.zeros_like(out[2])
        for k, s in enumerate(samples):
            for t in range(len(s.tokens.input_ids) - 1):
                forced[k, t] = state_value(s.tokens.input_ids[: t + 1])
        return (out[0], out[1], out[2] * 0 + forced, *out[3:])

    def loss(logp, old, adv, mask, *a, **kw):
        passes.append({key: adv[k][mask[k] > 0].tolist() for k, key in enumerate(seen)})
        return real_loss(logp, old, adv, mask, *a, **kw)

    monkeypatch.setattr(rl, "token_logps", logps)
    monkeypatch.setattr(rl, "policy_loss", loss)

    def run(tmp_path, scored=False, **kw):
        passes.clear()
        doc = {"data": episode_file(tmp_path, scored=scored), "samples": "steps", "loss": {"algorithm": "ppo"}, "whiten_advantages": False,
               "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 4, "log_every": 1,
               "output_dir": tempfile.mkdtemp(dir=tmp_path, prefix="out-"), **kw}
        progress = run_command("rl", doc).progress
        return list(passes), progress

    return run


def reference_advantages(path, gamma, lam, step_coef=0.0):
    """The per-token recursion written out over each member's generated tokens, its steps concatenated in order, with
    :func:`state_value` at the position that predicts each token and the reward after the last one (and, with
    ``step_coef`` β, β·(s − 1) after each scored step's last token)."""
    from gymflow_trainer.data import load_rl_steps

    samples = load_rl_steps(path, 4096, step_rewards=step_coef > 0)
    out = {}
    for member in dict.fromkeys(s.member for s in samples):
        steps = sorted((s for s in samples if s.member == member), key=lambda s: s.step)
        chain = [(s.step, t) for s in steps for t in range(len(s.tokens.input_ids) - 1) if s.tokens.labels[t + 1] != -100]
        ids = {s.step: s.tokens.input_ids for s in steps}
        values = [state_value(ids[k][: t + 1]) for k, t in chain]
        shaped = {s.step: step_coef * (s.step_reward - 1.0) for s in steps if s.step_reward is not None}
        adv, next_v, next_a = [0.0] * len(chain), 0.0, 0.0
        for j in reversed(range(len(chain))):
            reward = steps[0].reward if j == len(chain) - 1 else 0.0
            if j == len(chain) - 1 or chain[j + 1][0] != chain[j][0]:  # the step's last generated token
                reward += shaped.get(chain[j][0], 0.0)
            next_a = reward + gamma * next_v - values[j] + gamma * lam * next_a
            next_v = values[j]
            adv[j] = next_a
        for s in steps:
            out[(member, s.step)] = [a for (k, _), a in zip(chain, adv) if k == s.step]
    return out


def test_ppo_gae_runs_over_the_members_steps_as_one_episode(tmp_path, trained_advantages):
    """γ < 1: a step's last token bootstraps from the value before the next step's first token, and the outcome reward
    counts once, after the last step (each step on its own, ending in the reward, gave the early steps more credit)."""
    gamma, lam = 0.9, 0.8
    passes, _ = trained_advantages(tmp_path, gamma=gamma, lam=lam, max_steps=1)
    want = reference_advantages(episode_file(tmp_path), gamma, lam)
    assert len(want) == 4 and set(passes[0]) == set(want)
    for key, adv in passes[0].items():
        assert adv == pytest.approx(want[key], abs=1e-6), key


@pytest.mark.parametrize("coef", [0.0, 0.5])  # with β > 0 the steps' process rewards too (step_reward_coef)
@pytest.mark.parametrize("layout", [
    {"batch_size": 1, "grad_accum": 4},  # one step, four micro-batches
    {"batch_size": 1, "epochs": 2},  # every step sample an optimizer step of its own: a member across four steps
    {"batch_size": 2, "max_piece_tokens": 40, "packing": True},  # packed rows cut into memory pieces
])
def test_ppo_gae_does_not_depend_on_how_a_members_steps_are_batched(tmp_path, trained_advantages, layout, coef):
    gamma, lam = 0.95, 0.9
    want = reference_advantages(episode_file(tmp_path, scored=coef > 0), gamma, lam, coef)
    passes, progress = trained_advantages(tmp_path, scored=coef > 0, gamma=gamma, lam=lam, ppo_epochs=2, step_reward_coef=coef, **layout)
    assert {key for p in passes for key in p} == set(want)
    for p in passes:  # the updates reuse what the pre-pass computed before the first of them
        for key, adv in p.items():
            assert adv == pytest.approx(want[key], abs=1e-6), (layout, key)
    if layout.get("grad_accum"):
        assert [p["bootstrap_samples"] for p in progress] == [0, 0]  # the members' steps are all in the rollout batch
    if layout.get("epochs"):  # the pre-pass of a batch holding step k of member 0 computes the values of its 2 − k later steps
        assert sum(p["bootstrap_samples"] for p in progress) == 2 * 3


def test_ppo_schedules_whole_members_so_a_rollout_batch_needs_few_values_from_outside():
    """Members of 20 steps in batches of 32: shuffled step samples needed the values of ~10 later steps per trained
    sample; whole members in step order leave only the member that straddles a batch's end."""
    members = [list(range(20 * m, 20 * m + 20)) for m in range(64)]
    cfg = from_dict(RlConfig, {"data": "x.jsonl", "loss": {"algorithm": "ppo"}, "batch_size": 32, "epochs": 2})
    steps = rl.schedule(20 * 64, cfg, members)
    for epoch in (0, 1):
        order = [i for e, micro, _ in steps if e == epoch for mb in micro for i in mb]
        assert sorted(order) == list(range(20 * 64))
        starts = [order.index(m[0]) for m in members]
        assert all(order[p : p + 20] == m for p, m in zip(starts, members))  # consecutive, in step order

    def outside(schedule):
        """The pre-pass's work: per rollout batch, its members' steps after their first one there, not in it."""
        total = 0
        for _, micro, _ in schedule:
            batch = {i for mb in micro for i in mb}
            for m in {i // 20 for i in batch}:
                first = min(i for i in batch if i // 20 == m)
                total += sum(1 for i in members[m] if i > first and i not in batch)
        return total

    shuffled = rl.schedule(20 * 64, cfg)
    assert outside(steps) < 20 * len(steps) < outside(shuffled) / 5


def test_ppo_gae_with_gamma_and_lambda_1_gives_every_token_the_return_minus_its_value(tmp_path, trained_advantages):
    # The estimator before (each step its own episode, ending in the outcome reward) gave the same with γ = λ = 1.
    passes, _ = trained_advantages(tmp_path, gamma=1.0, lam=1.0, max_steps=1)
    from gymflow_trainer.data import load_rl_steps

    for s in load_rl_steps(episode_file(tmp_path), 4096):
        ids = s.tokens.input_ids
        want = [s.reward - state_value(ids[: t + 1]) for t in range(len(ids) - 1) if s.tokens.labels[t + 1] != -100]
        assert passes[0][(s.member, s.step)] == pytest.approx(want, abs=1e-6)


def test_ppo_step_rewards_go_on_each_steps_last_token(tmp_path, trained_advantages, capsys):
    """β·(s − 1) after each scored step's last token (nothing for a step scored 1 or not scored), the outcome once
    after the last step: member 0's redundant second step lowers the advantages of its own tokens the most."""
    gamma, lam, coef = 0.9, 0.8, 0.5
    passes, _ = trained_advantages(tmp_path, scored=True, gamma=gamma, lam=lam, step_reward_coef=coef, max_steps=1)
    path = episode_file(tmp_path, scored=True)
    want = reference_advantages(path, gamma, lam, coef)
    plain = reference_advantages(path, gamma, lam)
    assert set(passes[0]) == set(want)
    for key, adv in passes[0].items():
        assert adv == pytest.approx(want[key], abs=1e-6), key
    member0 = sorted(k for k in want if k[1] == 0)[0][0]
    drop = {step: passes[0][(member0, step)][-1] - plain[(member0, step)][-1] for step in range(3)}
    assert drop[1] < drop[0] < 0 and drop[1] < drop[2] < 0  # the redundant step's own last token pays the most
    (member1,) = {m for m, _ in want} - {member0}
    assert passes[0][(member1, 0)] == pytest.approx(plain[(member1, 0)], abs=1e-6)  # not scored: no step reward
    assert "1 of 4 steps carry no process reward" in capsys.readouterr().err


def test_step_rewards_are_validated_and_need_step_samples(tmp_path, capsys):
    from gymflow_trainer.data import load_rl_steps
    from gymflow_trainer.errors import ConfigError, DataError

    base = {"data": episode_file(tmp_path, scored=True), "model": {"tiny": dict(TINY)}, "output_dir": str(tmp_path / "out"),
            "loss": {"algorithm": "ppo"}, "step_reward_coef": 0.5}
    for bad, message in [({"step_reward_coef": -1}, "step_reward_coef must be a finite number >= 0"),
                         ({"samples": "conversation"}, "samples is 'conversation'")]:
        with pytest.raises(ConfigError, match=message):
            from_dict(RlConfig, {**base, **bad}).validate()
    auto = from_dict(RlConfig, {**base, "data": rl_file(tmp_path)})  # no rollout tokens: auto chooses conversation samples
    with pytest.raises(ConfigError, match=r"step_reward_coef: .* \(samples: auto chose 'conversation'\)"):
        run_command("rl", auto)
    unscored = from_dict(RlConfig, {**base, "data": episode_file(tmp_path, "unscored.jsonl")})
    unscored.validate()
    with pytest.raises(DataError, match=r"unscored.jsonl: no step carries a process reward"):
        run_command("rl", unscored)
    rec = first_record(episode_file(tmp_path, scored=True))
    for i, (scores, message) in enumerate([
        ([1.0, 1.5, 0.5], r":1 \$.group\[0\].step_rewards\[1\]: expected a process reward in \[0, 1\] or null, got '1.5'"),
        ([1.0, "high", 0.5], r"step_rewards\[1\]: expected a process reward in \[0, 1\] or null, got 'high'"),
        ([1.0, 0.5], r":1 \$.group\[0\].step_rewards: expected a list of 3 numbers or nulls \(one per step, as 'tokens'\), got 2 entries"),
    ]):
        rec["group"][0]["step_rewards"] = scores
        broken = write_jsonl(tmp_path / f"broken{i}.jsonl", [rec])
        with pytest.raises(DataError, match=message):
            run_command("rl", from_dict(RlConfig, {**base, "data": broken}))
        assert [s.step_reward for s in load_rl_steps(broken, 4096)] == [None] * 4  # not read unless asked (β = 0, GRPO)


def group_scored_file(tmp_path, member1=0.25, rewards=(1.0, 0.25)):
    """:func:`episode_file` scored, with member 1's step scored too and the members' rewards as given."""
    rec = first_record(episode_file(tmp_path, scored=True))
    rec["group"][1]["step_rewards"] = [member1]
    for mem, r in zip(rec["group"], rewards):
        mem["reward"] = r
    return write_jsonl(tmp_path / "group-scored.jsonl", [rec])


@pytest.mark.parametrize("algorithm", ["grpo", "dr_grpo", "dapo", "gspo", "sapo"])
def test_grpo_family_step_rewards_add_process_supervision_to_each_steps_advantage(tmp_path, algorithm):
    """Member 0 (reward 1; steps scored 1, 0, 0.5) and member 1 (reward 0.25; its step scored 0.25): the four scored
    steps are normalised over the group, and each step adds β times the sum of its own member's from it on."""
    from gymflow_trainer.data import load_rl_steps

    samples = load_rl_steps(group_scored_file(tmp_path), 4096, step_rewards=True)
    cfg = from_dict(RlConfig, {"data": "x", "output_dir": "y", "model": {"tiny": dict(TINY)}, "loss": {"algorithm": algorithm},
                               "step_reward_coef": 0.5})
    dr = algorithm == "dr_grpo"
    outcome = [0.375, 0.375, 0.375, -0.375] if dr else [1.0, 1.0, 1.0, -1.0]
    centred = [s - 0.4375 for s in (1.0, 0.0, 0.5, 0.25)]  # the group's mean step score 0.4375
    std = math.sqrt(sum(c * c for c in centred) / 4)
    z = centred if dr else [c / std for c in centred]
    process = [z[0] + z[1] + z[2], z[1] + z[2], z[2], z[3]]
    assert rl.sample_advantages(samples, cfg).tolist() == pytest.approx([o + 0.5 * p for o, p in zip(outcome, process)], abs=1e-4)
    cfg.step_reward_coef = 0.0
    assert rl.sample_advantages(samples, cfg).tolist() == pytest.approx(outcome, abs=1e-4)
    if not dr:  # the dataset's advantages (0 in this file) get the same process terms
        cfg.advantages, cfg.step_reward_coef = "dataset", 0.5
        assert rl.sample_advantages(samples, cfg).tolist() == pytest.approx([0.5 * p for p in process], abs=1e-4)


def test_grpo_with_step_rewards_trains_end_to_end_and_keeps_groups_the_steps_tell_apart(tmp_path):
    """Equal outcomes: drop_uniform_groups drops the group without step rewards, and keeps it when its step scores
    differ (the process terms have something to teach). The start event sizes the process terms for tuning β."""
    from gymflow_trainer.errors import DataError

    doc = {"data": group_scored_file(tmp_path, rewards=(1.0, 1.0)), "samples": "steps", "loss": {"algorithm": "grpo"},
           "drop_uniform_groups": True, "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 4, "epochs": 2,
           "log_every": 1, "output_dir": str(tmp_path / "out")}
    with pytest.raises(DataError, match="every group has equal rewards; nothing to learn"):
        run_command("rl", from_dict(RlConfig, doc))
    rec = first_record(doc["data"])
    # Three equal scores leave ~1e-11 of rounding after the std's ε: not a difference.
    rec["group"][0]["step_rewards"], rec["group"][1]["step_rewards"] = [0.1] * 3, [None]
    same = write_jsonl(tmp_path / "same-steps.jsonl", [rec])
    with pytest.raises(DataError, match="every group has equal rewards and step rewards; nothing to learn"):
        run_command("rl", from_dict(RlConfig, {**doc, "data": same, "step_reward_coef": 0.5}))
    run = run_command("rl", {**doc, "step_reward_coef": 0.5})
    start, prog = run.start, run.progress
    assert start["sample_kind"] == "steps" and start["dropped"] == 0 and len(prog) == 2
    assert all(math.isfinite(p["loss"]) for p in prog)
    stats = start["step_rewards"]
    assert (stats["scored"], stats["unscored"], stats["mean_abs_outcome"]) == (4, 0, 0.0) and stats["mean_abs_term"] > 0


def test_step_rewards_stay_with_their_steps_when_a_step_sampled_nothing(tmp_path):
    from gymflow_trainer.data import load_rl_steps

    rec = first_record(episode_file(tmp_path, scored=True))
    member = rec["group"][0]
    member["tokens"].insert(1, None)  # the policy sampled nothing at step 1
    member["logprobs"].insert(1, None)
    member["completion"].insert(1, member["completion"][0])
    member["step_rewards"] = [0.25, 0.5, 0.75, 1.0]
    got = [(s.step, s.step_reward) for s in load_rl_steps(write_jsonl(tmp_path / "gap.jsonl", [rec]), 4096, step_rewards=True)]
    assert got == [(0, 0.25), (2, 0.75), (3, 1.0), (0, None)]


def test_ppo_with_step_samples_trains_end_to_end(tmp_path):
    """The real critic: a member's steps in different optimizer steps, γ < 1; the value loss falls."""
    doc = {"data": episode_file(tmp_path), "samples": "steps", "loss": {"algorithm": "ppo"}, "gamma": 0.9, "lam": 0.9,
           "model": {"tiny": dict(TINY)}, "optim": {"lr": 5e-3}, "batch_size": 2, "epochs": 6, "ppo_epochs": 2, "vf_coef": 1.0,
           "output_dir": str(tmp_path / "out"), "log_every": 1}
    run = run_command("rl", doc)
    prog = run.progress
    assert run.start["sample_kind"] == "steps" and len(prog) == 24
    assert all(math.isfinite(p["loss"]) for p in prog) and any(p["bootstrap_samples"] > 0 for p in prog)
    assert sum(p["vf_loss"] for p in prog[-4:]) < sum(p["vf_loss"] for p in prog[:4])
