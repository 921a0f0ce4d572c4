"""Configuration: unknown keys and bad values are errors that name the key and the file, before any model loads."""

import json

import pytest

from gymflow_trainer import cli
from gymflow_trainer.config import DpoConfig, RlConfig, SftConfig, load_config
from gymflow_trainer.errors import ConfigError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_yaml_and_json_load_into_the_dataclass(tmp_path):
    y = write(tmp_path, "sft.yaml", "data: d.jsonl\noutput_dir: out\nmodel: {tiny: {hidden_size: 32}}\noptim: {lr: 0.001}\nlora: {r: 4}\n")
    cfg = load_config("sft", y)
    assert isinstance(cfg, SftConfig) and cfg.optim.lr == 0.001 and cfg.lora.r == 4 and cfg.model.tiny.hidden_size == 32
    j = write(tmp_path, "dpo.json", json.dumps({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "loss_type": "ipo"}))
    assert isinstance(load_config("dpo", j), DpoConfig)
    r = write(tmp_path, "rl.json", json.dumps({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "loss": {"algorithm": "dapo"}}))
    assert load_config("rl", r).loss.algorithm == "dapo" and isinstance(load_config("rl", r), RlConfig)


def test_unknown_key_names_key_path_and_file(tmp_path):
    p = write(tmp_path, "sft.yaml", "data: d\noutput_dir: o\nmodel: {path: /m}\noptim: {lr_rate: 0.1}\n")
    with pytest.raises(ConfigError, match=r"sft\.yaml: unknown key 'lr_rate' at \$\.optim"):
        load_config("sft", p)
    p = write(tmp_path, "top.json", json.dumps({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "epochz": 2}))
    with pytest.raises(ConfigError, match=r"top\.json: unknown key 'epochz' at \$ "):
        load_config("sft", p)


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "epochs": "2"}, r"\$\.epochs must be an integer"),
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "overlong": "wrap"}, r"\$\.overlong must be one of"),
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "epochs": 0}, r"epochs must be > 0"),
        ({"data": "d", "output_dir": "o", "model": {}}, r"exactly one of 'path'"),
        ({"output_dir": "o", "model": {"path": "/m"}}, r"\$\.data is required"),
        ({"data": "d", "output_dir": "o", "model": {"tiny": {"hidden_size": 30}}}, r"divisible by num_attention_heads"),
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "mask_observations": 1}, r"must be true or false"),
        # YAML's .inf and .nan slip past `lr <= 0`; an infinite learning rate trained NaN weights
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "optim": {"lr": float("inf")}}, r"\$\.optim\.lr must be a finite number \(got inf\)"),
        ({"data": "d", "output_dir": "o", "model": {"path": "/m"}, "optim": {"max_grad_norm": float("nan")}}, r"\$\.optim\.max_grad_norm must be a finite number"),
    ],
)
def test_bad_values(tmp_path, doc, message):
    p = write(tmp_path, "c.json", json.dumps(doc))
    with pytest.raises(ConfigError, match=message):
        load_config("sft", p)


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config("sft", str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config("sft", write(tmp_path, "bad.yaml", "a: [1,\n"))
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config("sft", write(tmp_path, "list.yaml", "- 1\n"))


def test_cli_config_error_prints_error_event_and_exits_2(tmp_path, capsys, monkeypatch):
    # no model may load: make any import of transformers fail loudly
    import builtins

    real_import = builtins.__import__

    def guard(name, *a, **k):
        if name.startswith("transformers"):
            raise AssertionError("a model library was imported before the config was validated")
        return real_import(name, *a, **k)

    p = write(tmp_path, "sft.yaml", "data: d\noutput_dir: o\nmodel: {path: /m}\nbogus: 1\n")
    monkeypatch.setattr(builtins, "__import__", guard)
    rc = cli.main(["sft", "--config", p])
    monkeypatch.setattr(builtins, "__import__", real_import)
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 2
    ev = json.loads(out[-1])
    assert ev["event"] == "error" and ev["type"] == "ConfigError" and "'bogus'" in ev["message"] and "sft.yaml" in ev["message"]
    assert len(out) == 1


def test_cli_unknown_command_is_an_error_event(capsys):
    assert cli.main(["train", "--config", "x.yaml"]) == 2
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["event"] == "error" and ev["type"] == "ConfigError"


def test_cli_data_error_exit_3(tmp_path, capsys):
    p = write(tmp_path, "sft.json", json.dumps({"data": str(tmp_path / "none.jsonl"), "output_dir": str(tmp_path / "o"),
                                                "model": {"tiny": {"hidden_size": 32, "intermediate_size": 64}}}))
    assert cli.main(["sft", "--config", p]) == 3
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["event"] == "error" and ev["type"] == "DataError" and "none.jsonl" in ev["message"]


def test_commands_that_do_not_exist_are_config_errors(tmp_path, capsys):
    p = write(tmp_path, "c.json", json.dumps({"output_dir": "o", "model": {"path": "/m"}}))
    assert cli.main(["evaluate", "--config", p]) == 2
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["event"] == "error" and ev["type"] == "ConfigError" and "invalid choice" in ev["message"]


def test_events_are_one_json_object_per_line_and_nan_is_null():
    import io

    from gymflow_trainer.events import EventWriter

    buf = io.StringIO()
    w = EventWriter(buf)
    w.progress(step=1, loss=float("nan"), lr=1e-4, tokens_per_s=10.0)
    w.checkpoint("/x", 1)
    w.error("ConfigError", "bad")
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert lines[0] == {"event": "progress", "step": 1, "loss": None, "lr": 1e-4, "tokens_per_s": 10.0}
    assert lines[1] == {"event": "checkpoint", "path": "/x", "step": 1}
    assert lines[2] == {"event": "error", "type": "ConfigError", "message": "bad"}


def test_resume_latest_without_checkpoints_starts_fresh(tmp_path):
    from gymflow_trainer.checkpoints import resolve_resume
    from gymflow_trainer.errors import CheckpointError

    assert resolve_resume("latest", str(tmp_path)) is None
    assert resolve_resume(None, str(tmp_path)) is None
    with pytest.raises(CheckpointError, match="not a complete checkpoint"):
        resolve_resume(str(tmp_path / "checkpoint-3"), str(tmp_path))
