"""The loaders on real output of the TypeScript exporter (tests/fixtures/*.jsonl, from generate.mts).

If the exporter renames a field these tests fail; the fix is one line in ``data.FIELDS``."""

import json
import os

from gymflow_trainer.data import FIELDS, IGNORE, load_dpo, load_rl, load_sft, read_jsonl, read_step_rewards

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def fx(name):
    return os.path.join(FIX, name)


def test_sft_fields_exist_and_masks_follow_train_flags(tokenizer):
    recs = read_jsonl(fx("sft.jsonl"))
    for r in recs:
        assert FIELDS["messages"] in r and FIELDS["reward"] in r
        for m in r[FIELDS["messages"]]:
            for k in ("role", "content", "train", "step_index", "step_reward"):
                assert FIELDS[k] in m
    exs = load_sft(fx("sft.jsonl"), tokenizer, 4096, step_weighted=True)
    assert len(exs) == len(recs)
    for r, ex in zip(recs, exs):
        trained = tokenizer.decode([t for t in ex.labels if t != IGNORE])
        want = "".join(m["content"] + "<|im_end|>" for m in r["messages"] if m["role"] == "assistant" and m["train"])
        assert trained == want
    # the second trajectory's first action was invalid (train: false): in context, not trained
    bad = [m for m in recs[1]["messages"] if m["role"] == "assistant" and not m["train"]]
    assert bad and bad[0]["content"] in tokenizer.decode(exs[1].input_ids)


def test_dpo_and_rl_fixtures_load(tokenizer):
    pairs = load_dpo(fx("dpo.jsonl"), tokenizer, 4096)
    assert pairs and all(any(t != IGNORE for t in p.chosen.labels) for p in pairs)
    samples = load_rl(fx("rl.jsonl"), tokenizer, 4096)
    rec = json.loads(open(fx("rl.jsonl")).readline())
    assert {FIELDS["task_id"], FIELDS["prompt"], FIELDS["group"]} <= set(rec)
    assert {FIELDS["completion"], FIELDS["reward"], FIELDS["advantage"], FIELDS["step_rewards"]} <= set(rec["group"][0])
    assert len({s.group for s in samples}) == 2 and len(samples) == 4
    # the process rewards the step samples read with step_reward_coef, as the exporter writes them (one per step)
    member = rec["group"][0]
    assert read_step_rewards(member, len(member[FIELDS["step_rewards"]]), "rl.jsonl:1") == [0.9, 0.9]
