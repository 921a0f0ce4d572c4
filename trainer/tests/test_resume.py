"""Resume from a mid-run checkpoint continues exactly, for dpo and rl (sft: the SIGKILL test in test_sft.py)."""

import os

import pytest

from conftest import TINY, run_command
from test_dpo import pairs_file
from test_rl import rl_file


CASES = {
    "dpo": ("dpo", pairs_file, {"batch_size": 1, "epochs": 2, "lora": {"r": 4, "alpha": 8, "dropout": 0.1}}),
    "rl-grpo": ("rl", rl_file, {"batch_size": 2, "epochs": 2, "ppo_epochs": 2, "loss": {"algorithm": "grpo", "kl_beta": 0.05}}),
    "rl-ppo": ("rl", rl_file, {"batch_size": 2, "epochs": 2, "ppo_epochs": 2, "loss": {"algorithm": "ppo"}}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_resume_matches_uninterrupted(tmp_path, case):
    command, data_fn, extra = CASES[case]
    data = data_fn(tmp_path)

    def go(out, **kw):
        run = run_command(command, {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)},
                                    "optim": {"lr": 1e-2, "scheduler": "linear"}, "save_every": 2, "keep_last": 10, **extra, **kw})
        return run.result, run.losses, run.start

    full, full_losses, _ = go("a")
    ck = os.path.join(str(tmp_path / "a"), "checkpoint-2")
    assert os.path.isdir(ck)
    resumed, res_losses, start = go("b", resume_from=ck)
    assert start["start_step"] == 2 and min(res_losses) == 3
    for step, loss in res_losses.items():
        assert loss == pytest.approx(full_losses[step], rel=1e-6, abs=1e-6)
    assert resumed["loss"] == pytest.approx(full["loss"], rel=1e-6, abs=1e-6)


def sft_run(tmp_path, out, **kw):
    from conftest import sft_record, write_jsonl

    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(instruction=f"Echo the word hi {i}.") for i in range(8)])
    run = run_command("sft", {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)},
                              "optim": {"lr": 1e-2}, "batch_size": 2, "epochs": 2, "save_every": 2, "keep_last": 10, **kw})
    return run.losses, run.start


def garble(path, keep=0.5):
    """What a host that went down mid-writeback leaves: the file cut short."""
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(int(size * keep))


def test_an_unreadable_checkpoint_is_set_aside_and_an_older_one_resumed_exactly(tmp_path, capfd):
    full, _ = sft_run(tmp_path, "a")
    assert max(full) == 8
    out = str(tmp_path / "a")
    garble(os.path.join(out, "checkpoint-6", "trainer_state.pt"))
    garble(os.path.join(out, "checkpoint-4", "trainable.safetensors"), keep=0.1)
    # A retry resumes from the newest complete checkpoint, which is the garbled one.
    resumed, start = sft_run(tmp_path, "a", resume_from=os.path.join(out, "checkpoint-6"))
    assert start["start_step"] == 2 and start["resumed_from"] == os.path.join(out, "checkpoint-2")
    assert [u["path"] for u in start["unreadable_checkpoints"]] == [os.path.join(out, f"checkpoint-{s}") for s in (6, 4)]
    assert start["unreadable_checkpoints"][0]["error"].startswith("trainer_state.pt: ")
    assert start["unreadable_checkpoints"][1]["error"].startswith("trainable.safetensors: ")
    assert "cannot be read back" in capfd.readouterr().err
    # The same steps and losses as the uninterrupted run from step 3 on.
    assert min(resumed) == 3 and max(resumed) == 8
    for step, loss in resumed.items():
        assert loss == pytest.approx(full[step], rel=1e-6, abs=1e-6)
    # Set aside, so no later retry picks them again; the run wrote its own checkpoints 4 and 6 in their place.
    names = sorted(os.listdir(out))
    assert "checkpoint-6.unreadable" in names and "checkpoint-4.unreadable" in names
    assert {"checkpoint-4", "checkpoint-6", "checkpoint-8"} <= set(names)


def test_with_no_readable_checkpoint_training_starts_over(tmp_path):
    full, _ = sft_run(tmp_path, "a", max_steps=2)
    out = str(tmp_path / "a")
    os.remove(os.path.join(out, "checkpoint-2", "trainable.safetensors"))
    again, start = sft_run(tmp_path, "a", max_steps=2, resume_from=os.path.join(out, "checkpoint-2"))
    assert start["start_step"] == 0 and start["resumed_from"] is None
    assert start["unreadable_checkpoints"] == [{"path": os.path.join(out, "checkpoint-2"), "error": "trainable.safetensors is missing"}]
    assert again == pytest.approx(full)


def test_a_failed_save_leaves_nothing_behind(tmp_path, monkeypatch):
    """A full disk in the middle of a checkpoint: the save fails, and neither a half-written directory nor the
    checkpoints before it are touched."""
    import errno

    import torch

    from gymflow_trainer import checkpoints

    sft_run(tmp_path, "a", max_steps=2)
    out = str(tmp_path / "a")
    before = sorted(os.listdir(out))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    tok, model = tiny_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    monkeypatch.setattr(checkpoints.torch, "save", full)
    with pytest.raises(OSError, match="No space left"):
        checkpoints.save_checkpoint(out, 4, model, tok, opt, sched, {}, keep_last=2)
    monkeypatch.setattr(model, "save_pretrained", full)
    with pytest.raises(OSError, match="No space left"):
        checkpoints.save_final(out, model, tok)
    assert sorted(os.listdir(out)) == before


def tiny_model():
    from gymflow_trainer import tiny
    from gymflow_trainer.config import TinyModelConfig

    return tiny.build_tiny(TinyModelConfig(**TINY))


def test_what_a_killed_save_left_is_removed_when_training_starts(tmp_path, capfd):
    import subprocess
    import sys

    out = tmp_path / "a"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for name in (f".checkpoint-4.tmp-{dead}", f".final.tmp-{dead}", f".checkpoint-6.tmp-{live.pid}"):
            (out / name).mkdir()
            (out / name / "trainable.safetensors").write_bytes(b"\0" * 1024)
        sft_run(tmp_path, "a", max_steps=2)
        left = sorted(n for n in os.listdir(out) if n.startswith("."))
    finally:
        live.kill()
        live.wait()
    # The dead writer's leftovers are gone; a directory a running process may still be writing stays.
    assert left == [f".checkpoint-6.tmp-{live.pid}"]
    assert f"removed what interrupted saves left in {out}: .checkpoint-4.tmp-{dead}, .final.tmp-{dead}" in capfd.readouterr().err


def test_a_fresh_run_refuses_a_directory_with_another_runs_checkpoints(tmp_path):
    from gymflow_trainer.errors import ConfigError

    sft_run(tmp_path, "shared", max_steps=4)
    # Starting over there would rotate the first run's checkpoints away and mix the two in final/.
    with pytest.raises(ConfigError, match=r"output_dir .*shared already holds the checkpoints of a run \(checkpoint-2, checkpoint-4\): resume it"):
        sft_run(tmp_path, "shared", max_steps=4, optim={"lr": 5e-3})
    _, start = sft_run(tmp_path, "shared", max_steps=4, resume_from="latest")
    assert start["start_step"] == 4


def test_resuming_into_a_model_of_another_shape_names_the_parameter(tmp_path):
    from gymflow_trainer.errors import CheckpointError

    sft_run(tmp_path, "small", max_steps=2)
    wide = {**TINY, "hidden_size": 2 * TINY["hidden_size"], "intermediate_size": 2 * TINY.get("intermediate_size", 64)}
    with pytest.raises(CheckpointError, match=r"checkpoint-2: was written for a model of another shape \(.* in the checkpoint, .* in the model"):
        sft_run(tmp_path, "wide", max_steps=2, model={"tiny": wide}, resume_from=os.path.join(str(tmp_path / "small"), "checkpoint-2"))


def test_a_max_length_past_the_models_context_is_warned_about(tmp_path, capfd):
    sft_run(tmp_path, "ctx", max_steps=1, max_length=256, model={"tiny": {**TINY, "max_position_embeddings": 64}})
    assert "warning: max_length 256 is more than the model's context (64 positions" in capfd.readouterr().err
    sft_run(tmp_path, "ctx-ok", max_steps=1, max_length=64, model={"tiny": {**TINY, "max_position_embeddings": 64}})
    assert "max_position_embeddings" not in capfd.readouterr().err
