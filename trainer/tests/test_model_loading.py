"""Loading a model from ``model.path``: a directory transformers cannot use, a missing tokenizer or LoRA target
modules that match nothing are ConfigErrors that name the field and say what is wrong, not library tracebacks
(given a path that is not a directory, transformers goes looking for a Hub repo of that name)."""

import json
import shutil

import pytest

from conftest import sft_record, write_jsonl
from gymflow_trainer import cli, models
from gymflow_trainer.models import load_model, load_model_and_tokenizer, load_tokenizer_and_config, system_prompt_mode
from gymflow_trainer.config import LoraConfig, ModelConfig
from gymflow_trainer.errors import ConfigError
from gymflow_trainer.rm import load_reward_model
from gymflow_trainer.tiny import save_tiny


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny(str(tmp_path_factory.mktemp("tiny") / "model"))


def copy_without(model_dir, dest, *names):
    shutil.copytree(model_dir, dest)
    for n in names:
        (dest / n).unlink()
    return str(dest)


def test_a_saved_model_loads_from_its_path(model_dir):
    model, tok = load_model_and_tokenizer(ModelConfig(path=model_dir), None)
    assert tok.pad_token_id is not None and model.config.use_cache is False
    # The prompt format is decided on the config before the weights load, and the model keeps it.
    tok, config, built = load_tokenizer_and_config(ModelConfig(path=model_dir))
    assert built is None and system_prompt_mode(config, "drop") == "drop"
    assert system_prompt_mode(load_model(ModelConfig(path=model_dir), None, config).config, None) == "drop"
    scorer, _ = load_reward_model(ModelConfig(path=model_dir))
    assert scorer.config.num_labels == 1


@pytest.mark.parametrize("load", [lambda m: load_model_and_tokenizer(m, None), load_reward_model], ids=["policy", "reward-model"])
def test_directories_transformers_cannot_use_are_named(tmp_path, model_dir, load):
    cases = [
        (ModelConfig(path=str(tmp_path / "nope")), r"^\$\.model\.path '.*nope': not a directory"),
        (ModelConfig(path=str(tmp_path)), r"^\$\.model\.path '.*': no config\.json there"),
        (ModelConfig(path=copy_without(model_dir, tmp_path / "untokenized", "tokenizer.json", "tokenizer_config.json")),
         r"^\$\.model\.path '.*untokenized': holds no tokenizer \(none of tokenizer\.json, .*\); set model\.tokenizer"),
        (ModelConfig(path=model_dir, tokenizer=str(tmp_path / "tok")), r"^\$\.model\.tokenizer '.*tok': not a directory"),
        (ModelConfig(path=model_dir, tokenizer=str(tmp_path)), r"^\$\.model\.tokenizer '.*': holds no tokenizer \(none of .*\)$"),
    ]
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    cases.append((ModelConfig(path=str(adapter)), r"^\$\.model\.path '.*adapter': holds a LoRA adapter, not a whole model"))
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    (broken / "config.json").write_text("{not json")
    cases.append((ModelConfig(path=str(broken)), r"^\$\.model\.path '.*broken': cannot be loaded: .*config\.json"))
    for mcfg, message in cases:
        with pytest.raises(ConfigError, match=message):
            load(mcfg)


def test_lora_target_modules_that_match_nothing_list_the_linear_layers(model_dir):
    with pytest.raises(ConfigError, match=r"^\$\.lora\.target_modules \['qkv'\]: .*not found.* \(the model's linear layers are "
                                          r"named: down_proj, gate_proj, k_proj, lm_head, o_proj, q_proj, up_proj, v_proj\)$"):
        load_model_and_tokenizer(ModelConfig(path=model_dir), LoraConfig(target_modules=["qkv"]))


def test_the_cli_reports_it_as_a_config_error_event_exit_2(tmp_path, model_dir, capsys):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record()])
    p = tmp_path / "sft.json"
    p.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "o"),
                             "model": {"path": model_dir}, "lora": {"target_modules": ["qkv"]}}))
    assert cli.main(["sft", "--config", str(p)]) == 2
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["event"] == "error" and ev["type"] == "ConfigError" and ev["message"].startswith("$.lora.target_modules ['qkv']")


@pytest.mark.parametrize("command", ["sft", "dpo", "rl"])
def test_bad_data_is_reported_before_the_weights_load(tmp_path, model_dir, capsys, monkeypatch, command):
    """A large model takes minutes to load: a mistake in the data must not wait for it."""
    bad = {"role": "robot", "content": "hi"}
    record = {"sft": {**sft_record(), "messages": [bad]},
              "dpo": {"prompt": [bad], "chosen": [bad], "rejected": [bad]},
              "rl": {"prompt": [bad], "group": [{"completion": [bad], "reward": 1.0}]}}[command]
    data = write_jsonl(tmp_path / "data.jsonl", [record])
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "o"), "model": {"path": model_dir}}))

    def load(*args, **kwargs):
        raise AssertionError("the weights were loaded before the data was checked")

    monkeypatch.setattr(models, "load_model", load)
    assert cli.main([command, "--config", str(p)]) == 3
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["type"] == "DataError" and "unknown role 'robot'" in ev["message"]


def test_running_out_of_memory_while_loading_stays_out_of_memory():
    """A device too small for the weights is not a configuration mistake: the CLI's OutOfMemory exit (6) must see it."""
    import torch

    from gymflow_trainer.models import pretrained

    def load():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(torch.OutOfMemoryError):
        pretrained("model.path", "/m", load)
    with pytest.raises(ConfigError, match=r"^\$\.model\.path '/m': cannot be loaded: size mismatch"):
        pretrained("model.path", "/m", lambda: (_ for _ in ()).throw(RuntimeError("size mismatch for lm_head.weight")))
