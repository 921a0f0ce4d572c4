"""TensorBoard curves (``tensorboard_dir``): what the event stream reports, read back with TensorBoard's own reader."""

import json
import os

import pytest

from conftest import TINY, run_cli, sft_record, write_jsonl
from gymflow_trainer.errors import ConfigError


def points(log_dir):
    """Every scalar TensorBoard shows for ``log_dir``: {tag: [(step, value), …]} (purged steps already hidden)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def curves(log_dir):
    """{tag: {step: value}}, each step shown once."""
    out = {}
    for tag, pts in points(log_dir).items():
        assert len({s for s, _ in pts}) == len(pts), f"{tag}: a step shown twice: {pts}"
        out[tag] = dict(pts)
    return out


def run_sft(tmp_path, capsys, out="out", **kw):
    """Runs ``python -m gymflow_trainer sft`` in this process; returns its exit code, events and stderr."""
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(instruction=f"Echo the word hi {i}.") for i in range(8)])
    cfg = {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
           "batch_size": 2, "epochs": 1, "save_every": 2, "keep_last": 10, "tensorboard_dir": str(tmp_path / "tb"), **kw}
    path = tmp_path / "sft.json"
    path.write_text(json.dumps(cfg))
    return run_cli(capsys, "sft", "--config", str(path))


def test_every_progress_number_is_a_curve_at_its_step(tmp_path, capsys):
    rc, events, err = run_sft(tmp_path, capsys)
    assert rc == 0
    progress = [e for e in events if e["event"] == "progress"]
    assert [e["step"] for e in progress] == [1, 2, 3, 4]
    got = curves(tmp_path / "tb")
    for name in ("loss", "lr", "grad_norm", "tokens", "trained_tokens", "epoch"):
        assert got[f"sft/{name}"] == pytest.approx({e["step"]: e[name] for e in progress}, rel=1e-6), name
    # The x axis and a constant are not curves; the final numbers are, at the last step.
    assert "sft/step" not in got and "sft/total_steps" not in got
    done = events[-1]
    assert done["event"] == "done"
    assert got["sft/done/loss"] == pytest.approx({4: done["loss"]}, rel=1e-6)


def test_a_resumed_run_replaces_what_the_interrupted_one_logged_past_its_checkpoint(tmp_path, capsys):
    # The interrupted attempt: checkpoint 2 written, step 3 logged, then it ended (before its final save, say).
    rc, first, _ = run_sft(tmp_path, capsys, max_steps=3)
    assert rc == 0
    # Its retry resumes from checkpoint 2 and logs step 3 again. TensorBoard on its own hides only steps that go
    # backwards, so without the purge both runs' step 3 would be shown.
    rc, again, _ = run_sft(tmp_path, capsys, max_steps=3, resume_from=os.path.join(str(tmp_path / "out"), "checkpoint-2"))
    assert rc == 0 and again[0]["start_step"] == 2, again[-1]
    first_steps = {e["step"]: e for e in first if e["event"] == "progress"}
    again_steps = {e["step"]: e for e in again if e["event"] == "progress"}
    assert sorted(first_steps) == [1, 2, 3] and sorted(again_steps) == [3]
    got = curves(tmp_path / "tb")  # each step once
    assert got["sft/loss"] == pytest.approx({s: first_steps[s]["loss"] for s in (1, 2, 3)}, rel=1e-6)
    # Step 3 is the retry's (its throughput, a measured number, is its own).
    assert got["sft/tokens_per_s"][3] == pytest.approx(again_steps[3]["tokens_per_s"], rel=1e-6)
    assert got["sft/tokens_per_s"][3] != pytest.approx(first_steps[3]["tokens_per_s"], rel=1e-6)


def test_a_directory_that_cannot_be_written_stops_the_curves_not_the_training(tmp_path, capsys):
    (tmp_path / "tb").write_text("a file where the directory should be")
    rc, events, err = run_sft(tmp_path, capsys)
    assert rc == 0 and events[-1]["event"] == "done"
    assert f"warning: TensorBoard logging to {tmp_path / 'tb'} stopped" in err


def test_the_setting_is_checked_before_any_model_loads(tmp_path, capsys, monkeypatch):
    rc, events, err = run_sft(tmp_path, capsys, tensorboard_dir="")
    assert rc == 2 and events[-1]["event"] == "error"
    assert events[-1]["message"] == "sft.json: $.tensorboard_dir must be a directory or null, got an empty string"

    from gymflow_trainer import tensorboard_log

    monkeypatch.setattr(tensorboard_log.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"sft\.tensorboard_dir is set, but the tensorboard package is not installed"):
        tensorboard_log.check_available("sft")
