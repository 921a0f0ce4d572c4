"""``kl_reference``: the KL term's reference is a given model (the SFT policy of an RL loop), not the run's start."""

import pytest

from conftest import TINY, conversation, run_command, write_jsonl
from gymflow_trainer.config import RlConfig, from_dict
from gymflow_trainer.errors import ConfigError
from gymflow_trainer.models import load_model_and_tokenizer


def data(tmp_path):
    conv = conversation()
    good = {"role": "assistant", "content": '<tool_call>\n{"name":"submit","arguments":{"answer":"hi"}}\n</tool_call>', "train": True}
    bad = {"role": "assistant", "content": "no idea", "train": True}
    return write_jsonl(tmp_path / "rl.jsonl", [{"task_id": "t0", "prompt": conv[:2], "group": [
        {"completion": [good], "reward": 1.0}, {"completion": [bad], "reward": 0.0}]}])


def run(tmp_path, out, **kw):
    doc = {"data": data(tmp_path), "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
           "batch_size": 2, "loss": {"kl_beta": 0.1}}
    doc.update(kw)
    res = run_command("rl", doc)
    return res.result, res.progress


def test_the_kl_is_taken_against_the_reference_model_not_the_runs_start(tmp_path):
    # A first run moves the policy away from the tiny model (seed 0); its result is the next run's start.
    moved, _ = run(tmp_path, "a", epochs=5)
    init = str(tmp_path / "init")
    model, tok = load_model_and_tokenizer(from_dict(RlConfig, {"data": "x", "model": {"tiny": dict(TINY)}}).model, None)
    model.save_pretrained(init)
    tok.save_pretrained(init)
    # From the moved model: against its own start the first step's KL is 0; against the tiny model it is not.
    _, own = run(tmp_path, "b", model={"path": moved["path"]}, max_steps=1)
    _, ref = run(tmp_path, "c", model={"path": moved["path"]}, max_steps=1, kl_reference=init)
    assert own[0]["kl"] == pytest.approx(0.0, abs=1e-6)
    assert ref[0]["kl"] > 1e-3


def test_kl_reference_needs_a_kl_term_and_the_same_vocabulary(tmp_path):
    with pytest.raises(ConfigError, match="kl_reference.*kl_beta"):
        from_dict(RlConfig, {"data": "x", "output_dir": "y", "model": {"tiny": dict(TINY)}, "kl_reference": "somewhere",
                             "loss": {"kl_beta": 0}}).validate()
    other = str(tmp_path / "other")
    model, tok = load_model_and_tokenizer(from_dict(RlConfig, {"data": "x", "model": {"tiny": dict(TINY)}}).model, None)
    model.resize_token_embeddings(model.config.vocab_size + 8)  # another model's vocabulary
    model.save_pretrained(other)
    tok.save_pretrained(other)
    with pytest.raises(ConfigError, match="vocabulary"):
        run(tmp_path, "d", max_steps=1, kl_reference=other)
