"""The tool commands of the CLI (``check-config``, ``tiny``, ``probe``): the activities' one way into Python."""

import json
import os
import subprocess
import sys

from gymflow_trainer import cli

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def events(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]


def write(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_check_config_accepts_a_valid_configuration(tmp_path, capsys):
    p = write(tmp_path, "sft.json", {"data": "d.jsonl", "output_dir": "o", "model": {"path": "/m"}})
    assert cli.main(["check-config", "sft", "--config", p]) == 0
    assert events(capsys) == [{"event": "done", "command": "check-config", "checked": "sft", "config": p}]


def test_check_config_exits_2_naming_the_field_and_the_file(tmp_path, capsys):
    p = write(tmp_path, "$.train.config.json", {"data": "d", "output_dir": "o", "model": {"path": "/m"}, "optim": {"lr": -1}})
    assert cli.main(["check-config", "sft", "--config", p]) == 2
    [ev] = events(capsys)
    assert ev["event"] == "error" and ev["type"] == "ConfigError"
    assert ev["message"].startswith("$.train.config.json: ") and "optim.lr" in ev["message"]


def test_check_config_of_an_unknown_command_is_a_config_error(tmp_path, capsys):
    p = write(tmp_path, "c.json", {})
    assert cli.main(["check-config", "evaluate", "--config", p]) == 2
    [ev] = events(capsys)
    assert ev["type"] == "ConfigError" and "invalid choice" in ev["message"]


def test_check_config_loads_no_model_library():
    # The activities run it once per phase before any work: it must stay quick (no torch, no transformers).
    script = ("import sys; from gymflow_trainer import cli; rc = cli.main(['check-config', 'rl', '--config', sys.argv[1]]); "
              "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules)); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", script, "/nonexistent/rl.yaml"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": TRAINER_DIR}, timeout=60)
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 2 and json.loads(lines[0])["type"] == "ConfigError" and lines[1] == "[]"


def test_tiny_builds_a_model_from_inline_json(tmp_path, capsys):
    out = str(tmp_path / "model")
    cfg = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "seed": 3}
    assert cli.main(["tiny", "--config", json.dumps(cfg), "--out", out]) == 0
    assert events(capsys) == [{"event": "done", "command": "tiny", "path": out}]
    with open(os.path.join(out, "config.json")) as fh:
        config = json.load(fh)
    assert config["hidden_size"] == 32 and config["num_hidden_layers"] == 1
    assert os.path.isfile(os.path.join(out, "tokenizer.json")) and os.path.isfile(os.path.join(out, "model.safetensors"))


def test_tiny_takes_model_tiny_of_a_command_configuration(tmp_path, capsys):
    p = write(tmp_path, "sft.json", {"data": "d", "output_dir": "o", "model": {"tiny": {"hidden_size": 16, "intermediate_size": 32,
                                                                                        "num_hidden_layers": 1}}})
    out = str(tmp_path / "model")
    assert cli.main(["tiny", "--config", p, "--out", out]) == 0
    with open(os.path.join(out, "config.json")) as fh:
        assert json.load(fh)["hidden_size"] == 16


def test_tiny_messages_name_the_section_where_the_caller_found_it(tmp_path, capsys):
    out = str(tmp_path / "model")
    args = ["--out", out, "--name", "pipeline config", "--at", "$.policy.init.tiny"]
    assert cli.main(["tiny", "--config", json.dumps({"hidden_size": 30, "num_attention_heads": 4}), *args]) == 2
    [ev] = events(capsys)
    assert ev["type"] == "ConfigError" and ev["message"].startswith("$.policy.init.tiny.hidden_size (30) must be divisible")
    assert cli.main(["tiny", "--config", json.dumps({"hiden_size": 32}), *args]) == 2
    [ev] = events(capsys)
    assert ev["message"].startswith("pipeline config: unknown key 'hiden_size' at $.policy.init.tiny")
    assert cli.main(["tiny", "--config", "{not json", *args]) == 2
    [ev] = events(capsys)
    assert ev["message"].startswith("pipeline config: not valid JSON")
    assert not os.path.exists(out)


def test_tiny_of_a_file_without_a_tiny_model_is_a_config_error(tmp_path, capsys):
    p = write(tmp_path, "rl.json", {"data": "d", "output_dir": "o", "model": {"path": "/m"}})
    assert cli.main(["tiny", "--config", p, "--out", str(tmp_path / "model")]) == 2
    [ev] = events(capsys)
    assert ev["message"] == "rl.json: $.model has no 'tiny' section (the model is not built from a tiny config)"


def test_probe_reports_versions_and_null_for_what_does_not_import(capsys):
    assert cli.main(["probe", "json", "yaml", "gymflow_no_such_module"]) == 0
    [ev] = events(capsys)
    assert ev["event"] == "done" and ev["command"] == "probe"
    assert ev["modules"]["gymflow_no_such_module"] is None and ev["modules"]["json"] == json.__version__
    import yaml

    assert ev["modules"]["yaml"] == yaml.__version__


def test_probe_defaults_to_the_trainer_libraries(capsys):
    assert cli.main(["probe"]) == 0
    [ev] = events(capsys)
    assert list(ev["modules"]) == list(cli.PROBED_MODULES)
    assert ev["modules"]["torch"]  # installed: the trainer cannot run without it
