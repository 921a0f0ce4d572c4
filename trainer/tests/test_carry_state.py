"""``optim.carry_state``: AdamW's moments go from a run's final model to the next run started from it."""

import os

import pytest
import torch

from conftest import TINY, run_command, sft_record, write_jsonl
from gymflow_trainer import checkpoints
from gymflow_trainer.config import RlConfig, SftConfig, from_dict
from gymflow_trainer.errors import CheckpointError, ConfigError
from test_rl import rl_file


def sft_doc(tmp_path, out, epochs, model, carry):
    # One batch holds all eight examples, so every epoch is the same single step whatever the shuffle, and a
    # run of 2 + 3 epochs sees what one run of 5 sees.
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(instruction=f"Echo the word hi {i}.") for i in range(8)])
    return {"data": data, "output_dir": str(tmp_path / out), "model": model, "batch_size": 8, "epochs": epochs, "log_every": 1,
            "optim": {"lr": 1e-2, "weight_decay": 0.1, "carry_state": carry}}


def test_two_runs_with_carried_state_train_as_one_run(tmp_path):
    tiny = {"tiny": dict(TINY)}
    whole = run_command("sft", sft_doc(tmp_path, "whole", 5, tiny, False)).losses
    first = run_command("sft", sft_doc(tmp_path, "first", 2, tiny, True))
    assert first.start["optimizer_from"] is None  # a model built from model.tiny has no state to carry
    saved = os.path.join(first.result["path"], checkpoints.OPTIMIZER_STATE_FILE)
    assert os.path.isfile(saved)

    second = {**sft_doc(tmp_path, "carried", 3, {"path": first.result["path"]}, True), "save_every": 1, "keep_last": 5}
    run = run_command("sft", second)
    carried = run.losses
    assert run.start["optimizer_from"] == saved
    # The second run's steps are the whole run's steps 3 to 5: same weights and the same moments.
    assert [carried[k] for k in (1, 2, 3)] == pytest.approx([whole[k] for k in (3, 4, 5)], rel=1e-5)
    # Resumed, it takes the state in its checkpoint (the carried moments after step 1), not the file again: the
    # loss of step 3 follows the update of step 2, made with those moments.
    run = run_command("sft", {**second, "resume_from": os.path.join(str(tmp_path / "carried"), "checkpoint-1")})
    resumed = run.losses
    assert "optimizer_from" not in run.start and list(resumed) == [2, 3]
    assert [resumed[2], resumed[3]] == pytest.approx([carried[2], carried[3]], rel=1e-6)

    # From zero moments the first update is another one (AdamW's first step moves each weight by ~lr).
    run = run_command("sft", sft_doc(tmp_path, "fresh", 3, {"path": first.result["path"]}, False))
    fresh = run.losses
    assert "optimizer_from" not in run.start
    assert fresh[1] == pytest.approx(whole[3], rel=1e-5)
    assert abs(fresh[2] - whole[4]) > 1e-3 * whole[4]
    assert not os.path.exists(os.path.join(str(tmp_path / "fresh"), "final", checkpoints.OPTIMIZER_STATE_FILE))


def test_ppo_carries_the_policy_state_and_starts_a_new_value_head(tmp_path):
    def doc(out, model):
        return {"data": rl_file(tmp_path), "output_dir": str(tmp_path / out), "model": model, "batch_size": 6,
                "optim": {"lr": 1e-2, "carry_state": True}, "loss": {"algorithm": "ppo"}}

    first = run_command("rl", doc("first", {"tiny": dict(TINY)})).result
    saved = torch.load(os.path.join(first["path"], checkpoints.OPTIMIZER_STATE_FILE), weights_only=True)
    names = set(saved["state"])
    assert names and not any(n.startswith("v_head.") for n in names)
    assert all(int(s["step"]) == first["step"] for s in saved["state"].values())
    start = run_command("rl", doc("second", {"path": first["path"]})).start
    assert start["optimizer_from"] == os.path.join(first["path"], checkpoints.OPTIMIZER_STATE_FILE)


def test_a_state_saved_for_another_model_is_refused_by_name(tmp_path):
    first = run_command("sft", sft_doc(tmp_path, "first", 1, {"tiny": dict(TINY)}, True)).result
    path = os.path.join(first["path"], checkpoints.OPTIMIZER_STATE_FILE)
    saved = torch.load(path, weights_only=True)
    name = next(iter(saved["state"]))
    doc = sft_doc(tmp_path, "next", 1, {"path": first["path"]}, True)

    saved["state"][name + ".other"] = saved["state"][name]
    torch.save(saved, path)
    with pytest.raises(CheckpointError, match=rf"{path}: .*parameter '{name}\.other', which this model does not train"):
        run_command("sft", doc)

    del saved["state"][name + ".other"]
    saved["state"][name]["exp_avg"] = saved["state"][name]["exp_avg"].reshape(-1)[:3].clone()
    torch.save(saved, path)
    with pytest.raises(CheckpointError, match=rf"{name}\.exp_avg has shape \(3,\)"):
        run_command("sft", doc)

    with open(path, "wb") as fh:
        fh.write(b"not a torch file")
    with pytest.raises(CheckpointError, match=rf"{path}: cannot be read"):
        run_command("sft", doc)


def test_carry_state_with_lora_is_a_config_error(tmp_path):
    doc = sft_doc(tmp_path, "x", 1, {"tiny": dict(TINY)}, True)
    with pytest.raises(ConfigError, match=r"\$\.optim\.carry_state does not combine with lora"):
        from_dict(SftConfig, {**doc, "lora": {"r": 4}}).validate()
    with pytest.raises(ConfigError, match=r"\$\.optim\.carry_state does not combine with lora"):
        from_dict(RlConfig, {**doc, "data": rl_file(tmp_path), "lora": {"r": 4}}).validate()
