"""DPO trainer: the first step's loss is the loss at policy = reference; training separates the pair."""

import math

import pytest

from conftest import TINY, conversation, run_command, write_jsonl




def pairs_file(tmp_path, n=4):
    conv = conversation()
    plain = lambda ms: [{"role": m["role"], "content": m["content"]} for m in ms]  # noqa: E731
    recs = []
    for i in range(n):
        recs.append({"prompt": plain(conv[:2]), "chosen": [{"role": "assistant", "content": f'<tool_call>\n{{"name":"submit","arguments":{{"answer":"{i}"}}}}\n</tool_call>'}],
                     "rejected": [{"role": "assistant", "content": "I give up."}], "chosen_reward": 1.0, "rejected_reward": 0.0, "margin": 1.0})
    return write_jsonl(tmp_path / "dpo.jsonl", recs)


def run(tmp_path, out, **kw):
    doc = {"data": pairs_file(tmp_path), "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 2}
    doc.update(kw)
    res = run_command("dpo", doc)
    return res.result, res.progress


@pytest.mark.parametrize("reference", ["precompute", "model"])
def test_sigmoid_first_step_is_log2_and_training_separates(tmp_path, reference):
    # policy = reference at step 1 → h = 0 → −log σ(0) = log 2 = 0.693147
    _, prog = run(tmp_path, reference, reference=reference, epochs=5)
    assert prog[0]["loss"] == pytest.approx(math.log(2), abs=1e-5)
    assert prog[-1]["loss"] < prog[0]["loss"] and prog[-1]["reward_margin"] > 0 and prog[-1]["reward_accuracy"] == 1.0


def test_ipo_first_step(tmp_path):
    # h = 0 at step 1 → (0 − 1/(2·0.1))² = 5² = 25
    _, prog = run(tmp_path, "ipo", loss_type="ipo", beta=0.1, max_steps=3)
    assert prog[0]["loss"] == pytest.approx(25.0, abs=1e-4)
    assert prog[-1]["loss"] < 25.0


def test_lora_reference_is_the_disabled_adapter(tmp_path):
    _, prog = run(tmp_path, "lora", reference="model", lora={"r": 4, "alpha": 8}, epochs=3)
    assert prog[0]["loss"] == pytest.approx(math.log(2), abs=1e-5)
    assert prog[-1]["loss"] < prog[0]["loss"]
