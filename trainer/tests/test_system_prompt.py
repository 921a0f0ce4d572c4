"""The prompt format ``system_prompt`` (keep / drop): SFT without the system message, recorded in the saved
model, followed by later runs, refused when contradicted, and carried into the exported ONNX policy."""

import json

import pytest

from conftest import TINY, run_command, sft_record, write_jsonl
from gymflow_trainer.data import load_sft
from gymflow_trainer.errors import ConfigError


def run_sft(tmp_path, out, **kw):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record() for _ in range(2)])
    doc = {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "max_steps": 1, **kw}
    return run_command("sft", doc).result


def test_drop_leaves_the_system_message_out_of_the_tokens(tmp_path, tokenizer):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record()])
    kept = load_sft(data, tokenizer, 4096)[0]
    dropped = load_sft(data, tokenizer, 4096, system=False)[0]
    text = tokenizer.decode(dropped.input_ids)
    assert "<|im_start|>system" in tokenizer.decode(kept.input_ids) and "<|im_start|>system" not in text
    assert text.startswith("<|im_start|>user\n")
    # the same tokens are trained: the system message never is
    trained = lambda ex: [t for t in ex.labels if t != -100]  # noqa: E731
    assert trained(kept) == trained(dropped)


def test_the_format_is_recorded_followed_and_exported(tmp_path):
    res = run_sft(tmp_path, "sft", system_prompt="drop")
    with open(f"{res['path']}/config.json") as fh:
        assert json.load(fh)["gymflow_system_prompt"] == "drop"
    # a later run on that model follows it without being told, and refuses the other format
    again = run_sft(tmp_path, "again", model={"path": res["path"]})
    with open(f"{again['path']}/config.json") as fh:
        assert json.load(fh)["gymflow_system_prompt"] == "drop"
    with pytest.raises(ConfigError, match="system_prompt: 'keep' contradicts the model"):
        run_sft(tmp_path, "keep", model={"path": res["path"]}, system_prompt="keep")
    run_command("export-onnx", {"checkpoint": res["path"], "output_dir": str(tmp_path / "onnx")})
    with open(tmp_path / "onnx" / "gymflow_policy.json") as fh:
        assert json.load(fh)["system_prompt"] == "drop"


def test_default_keeps_the_system_message(tmp_path):
    res = run_sft(tmp_path, "sft")
    with open(f"{res['path']}/config.json") as fh:
        assert json.load(fh)["gymflow_system_prompt"] == "keep"


def test_a_tiny_model_is_born_with_its_format(tmp_path):
    res = run_sft(tmp_path, "born", model={"tiny": {**TINY, "system_prompt": "drop"}})
    with open(f"{res['path']}/config.json") as fh:
        assert json.load(fh)["gymflow_system_prompt"] == "drop"
    with pytest.raises(ConfigError, match="contradicts the model"):
        run_sft(tmp_path, "born2", model={"tiny": {**TINY, "system_prompt": "drop"}}, system_prompt="keep")
