"""``whole_groups``: no GRPO group is split between optimiser steps, so what a group's members share gets no
gradient on-policy (docs/trainer.md, "RL that learns"). Found on gymflow/recall-v0: with samples shuffled one by
one, a step holding mostly a group's failures raised every token the policy did not sample at the answer's
position, stray bytes included, until the tool-call format broke."""

import json

import pytest
import torch

from conftest import TINY, conversation, run_command, write_jsonl
from gymflow_trainer import batching, rl
from gymflow_trainer.config import RlConfig, from_dict
from gymflow_trainer.models import load_model_and_tokenizer


def test_whole_group_steps_hold_every_member_of_their_groups():
    sizes = [8] * 9 + [10, 10, 40, 3]  # 40: larger than a step, a step of its own
    units, start = [], 0
    for n in sizes:
        units.append(list(range(start, start + n)))
        start += n
    cfg = from_dict(RlConfig, {"data": "x.jsonl", "batch_size": 16, "grad_accum": 2, "epochs": 2, "whole_groups": True})
    steps = rl.schedule(start, cfg, groups=units)
    owner = {i: k for k, u in enumerate(units) for i in u}
    for epoch in (0, 1):
        mine = [micro for e, micro, _ in steps if e == epoch]
        assert sorted(i for micro in mine for mb in micro for i in mb) == list(range(start))  # each sample once
        for micro in mine:
            batch = [i for mb in micro for i in mb]
            assert all(len(mb) <= 16 for mb in micro)
            assert len(batch) <= 32 or {owner[i] for i in batch} == {11}  # the large group alone
            for k in {owner[i] for i in batch}:
                assert set(units[k]) <= set(batch)  # the whole group
    # without whole_groups the same sizes split groups between steps
    shuffled = rl.schedule(start, from_dict(RlConfig, {"data": "x.jsonl", "batch_size": 16, "grad_accum": 2}))
    assert any(not set(units[owner[i]]) <= {j for mb in micro for j in mb} for _, micro, _ in shuffled for mb in micro for i in mb)


def test_whole_units_are_packed_in_order_up_to_the_capacity():
    units = [[0, 1, 2], [3, 4], [5, 6, 7, 8, 9, 10], [11]]
    assert batching._whole_unit_steps(list(range(12)), units, 5) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10], [11]]


def one_token_groups(tmp_path):
    """Two tasks, each a group of four members that sampled one token each after the same prompt (step samples,
    with the tiny model's own log-probs: the first update is on-policy); the first member of each is rewarded."""
    from gymflow_trainer.chat import render

    model, tok = load_model_and_tokenizer(from_dict(RlConfig, {"data": "x", "model": {"tiny": dict(TINY)}}).model, None)
    recs = []
    for t, letters in enumerate(("abcd", "efgh")):
        conv = conversation(instruction=f"Say one letter, task {t}.")[:2]
        prompt = tok.encode(render(conv, add_generation_prompt=True)[0], add_special_tokens=False)
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=torch.tensor([prompt])).logits[0, -1].float(), -1)
        group = []
        for k, c in enumerate(letters):
            (token,) = tok.encode(c, add_special_tokens=False)
            group.append({"completion": [{"role": "assistant", "content": c, "train": True}], "reward": float(k == 0),
                          "tokens": [{"prompt": prompt, "completion": [token]}], "logprobs": [[float(logp[token])]]})
        recs.append({"task_id": f"t{t}", "prompt": conv, "group": group})
    return write_jsonl(tmp_path / "rl.jsonl", recs)


@pytest.mark.parametrize("whole", [True, False])
def test_an_on_policy_step_on_whole_groups_leaves_unsampled_tokens_alone(tmp_path, whole):
    """At a context a group's members share, the output-layer row of a token none of them sampled gets the
    gradient −p(token)·h·Σ Â = 0 (the group's advantages sum to zero): a step of whole groups leaves those rows
    as they were, while a step holding half of each group moves every one of them, by AdamW's ~lr whatever the
    gradient's size."""
    data = one_token_groups(tmp_path)
    cfg = from_dict(RlConfig, {"data": data, "output_dir": str(tmp_path / "out"), "model": {"tiny": dict(TINY)}, "seed": 3,
                               "optim": {"lr": 1e-2}, "batch_size": 4, "max_steps": 1, "whole_groups": whole})
    cfg.validate()
    model, tok = load_model_and_tokenizer(cfg.model, None)
    used = {i for line in open(data) for m in json.loads(line)["group"] for i in m["tokens"][0]["prompt"] + m["tokens"][0]["completion"]}
    unused = [i for i in range(model.config.vocab_size) if i not in used]
    before = model.get_output_embeddings().weight.detach().clone()
    run = run_command("rl", cfg)
    res, start, prog = run.result, run.start, run.progress[0]
    assert start["sample_kind"] == "steps" and start["samples"] == 8
    assert prog["ratio_mean"] == pytest.approx(1.0, abs=1e-5)  # on-policy
    after, _ = load_model_and_tokenizer(from_dict(RlConfig, {"data": data, "model": {"path": res["path"]}}).model, None)
    moved = (after.get_output_embeddings().weight.detach() - before)[unused].abs().max().item()
    if whole:  # float32 leaves a residue of the sum that AdamW's ε (1e-8) mostly absorbs
        assert moved < 1e-2 / 20
    else:  # the first step holds part of each group (seed 3): AdamW's first step moves each weight by ~lr
        assert moved > 1e-2 / 2
