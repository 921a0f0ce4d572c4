"""Learned step reward model: step rendering, losses, learning on synthetic data with a known rule, ONNX export."""

import json
import math
import random

import numpy as np
import pytest
import torch

from conftest import run_cli, run_command, write_jsonl
from gymflow_trainer import onnx_export, rm
from gymflow_trainer.config import RmConfig, from_dict
from gymflow_trainer.errors import CheckpointError

TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}
TOOLS = ["search", "lookup", "calculator", "read_file"]


def synthetic(n, seed, p_error=0.5, force=None):
    """Trajectories whose step label follows a known rule: a step whose tool result is an error scores 0,
    any other step 1. Errors also occur in earlier steps, so the model must read the *last* result."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        steps = []
        for i in range(rng.randint(2, 4)):
            bad = (rng.random() < p_error) if force is None else force(i)
            obs = f"Error: nothing matches {rng.randint(0, 99)}" if bad else f"Found item {rng.randint(0, 99)}"
            steps.append({"index": i, "action": {"tool": rng.choice(TOOLS), "params": {"q": str(rng.randint(0, 999))}}, "observation": obs,
                          "startedAt": "2026-01-01T00:00:00.000Z", "durationMs": 0, "reward": {"score": 0.0 if bad else 1.0, "rubrics": {}}})
        out.append({"id": f"t-{seed}-{k}", "task": {"id": f"task-{seed}-{k}", "domain": "demo", "instruction": "Find the item."}, "steps": steps})
    return out


def train(tmp_path, name, **kw):
    doc = {"output_dir": str(tmp_path / name), "model": {"tiny": dict(TINY)}, "optim": {"lr": 3e-3}, "batch_size": 16, "max_length": 128}
    doc.update(kw)
    return run_command("rm", doc)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One regression run shared by the tests below (about 10 s on a CPU)."""
    tmp = tmp_path_factory.mktemp("rm")
    data = write_jsonl(tmp / "steps.jsonl", synthetic(40, 0))
    res, events = train(tmp, "run", data=data, epochs=4, eval_fraction=0.25)
    return tmp, res, events


# ----------------------------------------------------------------------------------------------- rendering


def test_js_number_matches_json_stringify():
    # The right-hand sides are what Node prints for JSON.stringify(x).
    cases = {1.0: "1", -0.0: "0", 0.1 + 0.2: "0.30000000000000004", 1e21: "1e+21", 1e20: "100000000000000000000", 1.5e-7: "1.5e-7",
             1e-6: "0.000001", 123.456: "123.456", -2.5e-10: "-2.5e-10", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
             2**53 + 2: "9007199254740994", 12345678901234567890: "12345678901234567000", 42: "42", 1e16: "10000000000000000"}
    for x, want in cases.items():
        assert rm.js_number(x) == want, x


def test_canonical_json_sorts_keys_like_javascript():
    v = {"b": [1, 2.0, None, True], "a": {"z": "x\ny\u0001\"", "é": 1, "\U0001F600": 2, "\uff61": 3}, "": False}
    # JS sorts by UTF-16 code units: U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF61.
    assert rm.canonical_json(v) == '{"":false,"a":{"z":"x\\ny\\u0001\\"","é":1,"\U0001F600":2,"\uff61":3},"b":[1,2,null,true]}'
    assert rm.tool_call_text("search", {"q": "x", "k": 3}) == '<tool_call>\n{"name":"search","arguments":{"k":3,"q":"x"}}\n</tool_call>'


def test_step_input_renders_instruction_and_steps_up_to_i():
    t = synthetic(1, 3, force=lambda i: i == 0)[0]
    t["steps"][1]["thought"] = "\u00a0 look again \n"
    head, tail = rm.render_step(t, 1)
    assert head == "<|im_start|>user\nFind the item.<|im_end|>\n"
    assert len(tail) == 4
    assert tail[2].startswith("<|im_start|>assistant\nlook again\n\n<tool_call>\n{\"name\":")
    assert tail[3] == f"<|im_start|>tool\n{t['steps'][1]['observation']}<|im_end|>\n"


def test_truncation_keeps_the_instruction_and_the_latest_tokens(tokenizer):
    assert rm.truncate_ids([1, 2], [3, 4, 5], 5) == [1, 2, 3, 4, 5]
    assert rm.truncate_ids([1, 2], [3, 4, 5, 6], 5) == [1, 2, 4, 5, 6]
    assert rm.truncate_ids([1, 2, 3, 4], [5, 6, 7], 4) == [1, 2, 6, 7]  # the head keeps at most half
    t = synthetic(1, 1)[0]
    full = tokenizer.encode("".join([rm.render_step(t, 1)[0], *rm.render_step(t, 1)[1]]), add_special_tokens=False)
    assert rm.encode_step(tokenizer, t, 1, 10_000) == full  # per-message encoding = whole-text encoding
    assert rm.encode_trajectory(tokenizer, t, 64) == [rm.encode_step(tokenizer, t, p, 64) for p in range(len(t["steps"]))]
    cut = rm.encode_step(tokenizer, t, 1, 64)
    head = tokenizer.encode(rm.render_step(t, 1)[0], add_special_tokens=False)
    assert len(cut) == 64 and cut[: len(head)] == head and cut[-5:] == full[-5:]


# -------------------------------------------------------------------------------------------------- losses


def test_losses_by_hand():
    loss, m = rm.regression_loss(torch.tensor([0.0, math.log(3)]), torch.tensor([1.0, 1.0]))
    assert float(loss) == pytest.approx(((0.5 - 1) ** 2 + (0.75 - 1) ** 2) / 2)  # σ(0) = ½, σ(log 3) = ¾
    assert m["accuracy"] == 0.5
    loss, m = rm.bradley_terry_loss(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]))
    assert float(loss) == pytest.approx((math.log(1 + math.exp(-1)) + math.log(2)) / 2)
    assert m["accuracy"] == 0.5 and m["margin"] == pytest.approx(0.5)


# --------------------------------------------------------------------------------------------------- learning


def test_regression_learns_the_rule_on_held_out_trajectories(trained):
    _, res, events = trained
    start = next(e for e in events if e["event"] == "start")
    assert start["heldout"] > 20 and start["examples"] > 60
    ev = res["eval"]
    # chance: accuracy ≈ 0.5 (errors are drawn with p = ½), correlation ≈ 0
    assert ev["accuracy"] >= 0.9 and ev["correlation"] >= 0.8, ev
    meta = json.load(open(f"{res['path']}/{rm.RM_META_FILE}"))
    assert meta["input"] == rm.STEP_INPUT_FORMAT and meta["max_length"] == 128


def test_preferences_learn_pairwise_order(tmp_path):
    good = synthetic(36, 1, force=lambda i: False)
    bad = synthetic(36, 2, force=lambda i: i % 2 == 0)
    pairs = []
    for g, b in zip(good, bad):
        b["task"] = g["task"]
        pairs.append({"task": {"id": g["task"]["id"], "domain": "demo"}, "chosenId": g["id"], "rejectedId": b["id"], "chosenScore": 1, "rejectedScore": 0, "margin": 1})
    data = write_jsonl(tmp_path / "trajs.jsonl", good + bad)
    pf = write_jsonl(tmp_path / "pairs.jsonl", pairs)
    res, _ = train(tmp_path, "pref", data=data, pairs=pf, objective="preference", batch_size=4, epochs=2, eval_fraction=0.25)
    assert res["eval"]["n"] == 9 and res["eval"]["accuracy"] >= 0.85, res["eval"]  # chance: 0.5


def test_human_labels_with_a_scale(tmp_path):
    trajs = synthetic(4, 5)
    data = write_jsonl(tmp_path / "t.jsonl", trajs)
    labels = [{"trajectoryId": t["id"], "stepIndex": 0, "score": 5 if s["observation"].startswith("Found") else 1} for t in trajs for s in t["steps"][:1]]
    labels.append({"trajectoryId": trajs[0]["id"], "score": 3})  # a trajectory label: not a step label, skipped
    lf = write_jsonl(tmp_path / "labels.jsonl", labels)
    cfg = from_dict(RmConfig, {"data": data, "labels": lf, "label_range": [1, 5], "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)}, "max_length": 128})
    from gymflow_trainer.tiny import build_tokenizer

    ex = rm.load_step_labels(cfg, build_tokenizer(0))
    assert [e.target for e in ex] == [1.0 if t["steps"][0]["observation"].startswith("Found") else 0.0 for t in trajs]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"trajectoryId": trajs[0]["id"], "stepIndex": 9, "score": 1}])
    cfg.labels = bad
    with pytest.raises(rm.DataError, match=r"bad.jsonl:1 \$.stepIndex: trajectory t-5-0 has no step 9"):
        rm.load_step_labels(cfg, build_tokenizer(0))


def test_cli_events_and_config_errors(tmp_path, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", synthetic(3, 7))
    cfg = tmp_path / "rm.json"
    cfg.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)}, "max_steps": 1, "max_length": 128}))
    rc, events, _ = run_cli(capsys, "rm", "--config", str(cfg))
    assert rc == 0
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and "checkpoint" in kinds
    cfg.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)}, "objective": "preference"}))
    rc, events, _ = run_cli(capsys, "rm", "--config", str(cfg))
    assert rc == 2
    assert "pairs is required with objective 'preference'" in events[-1]["message"]
    unscored = synthetic(1, 8)
    del unscored[0]["steps"][1]["reward"]
    cfg.write_text(json.dumps({"data": write_jsonl(tmp_path / "u.jsonl", unscored), "output_dir": str(tmp_path / "o2"), "model": {"tiny": dict(TINY)}}))
    rc, events, _ = run_cli(capsys, "rm", "--config", str(cfg))
    assert rc == 3
    assert r"u.jsonl:1 $.steps[1].reward.score: missing" in events[-1]["message"]


# -------------------------------------------------------------------------------------------------------- ONNX


def test_onnx_scores_equal_torch(trained, tmp_path):
    import onnxruntime as ort
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    run_dir, res, _ = trained
    out = onnx_export.export_reward_model(str(run_dir / "run"), str(tmp_path / "onnx"), 18, True)  # a run's output_dir → its final/
    assert out["max_abs_diff"] <= 1e-4
    manifest = json.load(open(tmp_path / "onnx" / onnx_export.REWARD_MODEL_FILE))
    assert manifest["format"] == "gymflow-onnx-reward-model" and manifest["max_length"] == 128 and manifest["input"] == rm.STEP_INPUT_FORMAT
    model = AutoModelForSequenceClassification.from_pretrained(res["path"]).eval()
    tok = AutoTokenizer.from_pretrained(tmp_path / "onnx")
    rows = [r for t in synthetic(5, 11) for r in rm.encode_trajectory(tok, t, 128)]
    want = rm.score_steps(model, tok, rows)
    sess = ort.InferenceSession(str(tmp_path / "onnx" / "model.onnx"), providers=["CPUExecutionProvider"])
    ids, att = rm.pad(rows, tok.pad_token_id, torch.device("cpu"))
    batched = sess.run(["scores"], {"input_ids": ids.numpy(), "attention_mask": att.numpy()})[0]
    single = [sess.run(["scores"], {"input_ids": np.array([r]), "attention_mask": np.ones((1, len(r)), dtype=np.int64)})[0][0] for r in rows]
    assert np.abs(batched - np.array(want)).max() <= 1e-4
    assert np.abs(np.array(single) - np.array(want)).max() <= 1e-4


def test_export_refuses_a_policy_checkpoint(tmp_path):
    from gymflow_trainer.tiny import save_tiny

    save_tiny(str(tmp_path / "policy"))
    with pytest.raises(CheckpointError, match="not a reward model"):
        onnx_export.export_reward_model(str(tmp_path / "policy"), str(tmp_path / "out"), 18, True)


def test_a_reward_model_is_refused_as_a_policy(trained, tmp_path):
    """It would load as a causal LM (its backbone with an untrained LM head) and export without complaint."""
    from gymflow_trainer.onnx_export import load_policy

    run_dir, _, _ = trained
    with pytest.raises(CheckpointError, match=r"a reward model \(architectures \['\w+ForSequenceClassification'\]\), not a policy; export it with kind: reward_model"):
        load_policy(str(run_dir / "run"))


def test_lora_trains_the_adapter_and_head_and_exports_from_final_and_a_step_checkpoint(tmp_path):
    """With ``lora`` only the adapter and the score head train; ``final/`` is the merged model, a step
    checkpoint's ``model/`` the adapter alone, and both export to the same ONNX scores."""
    import onnxruntime as ort
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    data = write_jsonl(tmp_path / "steps.jsonl", synthetic(40, 0))
    res, events = train(tmp_path, "lora", data=data, epochs=4, eval_fraction=0.25, lora={"r": 8, "alpha": 16}, save_every=10, keep_last=10)
    assert res["eval"]["accuracy"] >= 0.9, res["eval"]  # chance: 0.5
    ckpts = sorted((tmp_path / "lora").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    adapter = json.loads((ckpts[0] / "model" / "adapter_config.json").read_text())
    assert adapter["task_type"] == "SEQ_CLS" and "score" in adapter["modules_to_save"]
    assert not (ckpts[0] / "model" / "config.json").exists()
    trained_names = load_file(str(ckpts[-1] / "trainable.safetensors")).keys()
    assert any("lora_A" in k for k in trained_names) and any("score" in k for k in trained_names)
    assert not any(k.endswith("q_proj.weight") or "base_layer" in k for k in trained_names), sorted(trained_names)[:5]
    assert AutoConfig.from_pretrained(res["path"]).architectures == ["LlamaForSequenceClassification"]

    start = next(e for e in events if e["event"] == "start")
    merged = AutoModelForSequenceClassification.from_pretrained(res["path"])
    assert 0 < start["trainable_params"] < 0.5 * sum(p.numel() for p in merged.parameters()), start
    tok = AutoTokenizer.from_pretrained(res["path"])
    rows = [r for t in synthetic(5, 11) for r in rm.encode_trajectory(tok, t, 128)]
    scores = {}
    for name, source in (("final", res["path"]), ("step", str(ckpts[-1]))):
        out = onnx_export.export_reward_model(source, str(tmp_path / f"onnx-{name}"), 18, True)
        assert out["max_abs_diff"] <= 1e-4
        sess = ort.InferenceSession(str(tmp_path / f"onnx-{name}" / "model.onnx"), providers=["CPUExecutionProvider"])
        ids, att = rm.pad(rows, tok.pad_token_id, torch.device("cpu"))
        scores[name] = sess.run(["scores"], {"input_ids": ids.numpy(), "attention_mask": att.numpy()})[0]
    assert np.abs(scores["final"] - scores["step"]).max() <= 1e-4
    assert np.std(scores["final"]) > 0.05  # a trained head, not a constant


def test_export_refuses_a_policy_lora_checkpoint(tmp_path):
    data = write_jsonl(tmp_path / "sft.jsonl", [{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}])
    run_command("sft", {"data": data, "output_dir": str(tmp_path / "sft"), "model": {"tiny": dict(TINY)}, "lora": {"r": 4, "alpha": 8},
                        "max_steps": 1, "max_length": 64})
    with pytest.raises(CheckpointError, match=r"not a reward model \(a LoRA adapter for task 'CAUSAL_LM'\)"):
        onnx_export.export_reward_model(str(tmp_path / "sft" / "checkpoint-1"), str(tmp_path / "out"), 18, True)


def test_exporting_a_lora_step_checkpoint_whose_base_is_gone_names_it(tmp_path):
    import shutil

    from gymflow_trainer.tiny import save_tiny

    save_tiny(str(tmp_path / "base"))
    data = write_jsonl(tmp_path / "steps.jsonl", synthetic(3, 3))
    train(tmp_path, "run", data=data, model={"path": str(tmp_path / "base")}, lora={"r": 4, "alpha": 8}, max_steps=1)
    shutil.rmtree(tmp_path / "base")
    with pytest.raises(CheckpointError, match=r"checkpoint-1/model: cannot rebuild the reward model from its adapter and the base model in .*trainer_state.pt \(ConfigError: .*base"):
        onnx_export.export_reward_model(str(tmp_path / "run" / "checkpoint-1"), str(tmp_path / "out"), 18, True)


def test_pairs_from_a_dpo_export_are_the_same_pairs(tmp_path):
    """``gymflow export --format dpo`` records name the trajectories as ``chosen_id``/``rejected_id``."""
    from gymflow_trainer.tiny import build_tokenizer

    good, bad = synthetic(3, 1, force=lambda i: False), synthetic(3, 2, force=lambda i: True)
    for g, b in zip(good, bad):
        b["task"] = g["task"]
    data = write_jsonl(tmp_path / "trajs.jsonl", good + bad)
    prefs = [{"task": {"id": g["task"]["id"], "domain": "demo"}, "chosenId": g["id"], "rejectedId": b["id"]} for g, b in zip(good, bad)]
    dpo = [{"prompt": [], "chosen": [], "rejected": [], "task_id": g["task"]["id"], "env_id": "gymflow/x-v0", "chosen_id": g["id"], "rejected_id": b["id"], "margin": 1}
           for g, b in zip(good, bad)]
    tok = build_tokenizer(0)

    def pairs(records, name):
        cfg = from_dict(RmConfig, {"data": data, "pairs": write_jsonl(tmp_path / name, records), "objective": "preference", "output_dir": str(tmp_path / "o"),
                                   "model": {"tiny": dict(TINY)}, "max_length": 128})
        return rm.load_pairs(cfg, tok)

    assert pairs(dpo, "dpo.jsonl") == pairs(prefs, "prefs.jsonl")
    with pytest.raises(rm.DataError, match=r"dpo-bad.jsonl:1 \$.rejected_id: t-9 is not in"):
        pairs([{**dpo[0], "rejected_id": "t-9"}], "dpo-bad.jsonl")
    with pytest.raises(rm.DataError, match=r"neither.jsonl:1: expected string 'chosenId' and 'rejectedId' .*'chosen_id' and 'rejected_id'"):
        pairs([{"chosen": "x"}], "neither.jsonl")
