"""export-onnx (kind: policy): the directory contract, onnxruntime logits = torch logits with a KV cache (prefill,
decode, left padding, GQA), greedy generation through onnxruntime = ``model.generate``, LoRA checkpoints merged,
configuration and checkpoint errors with their exit statuses."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import TINY, run_cli, run_command, sft_record, write_jsonl
from gymflow_trainer import onnx_export
from gymflow_trainer.config import SftConfig, TinyModelConfig, from_dict
from gymflow_trainer.tiny import save_tiny

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICY_KEYS = {"format", "version", "model_type", "num_layers", "num_kv_heads", "head_dim", "vocab_size",
               "max_position_embeddings", "eos_token_ids", "pad_token_id", "chat_template", "system_prompt", "source", "check"}


def tiny_dir(root, arch="llama", bpe=0, **kw):
    cfg = TinyModelConfig(**{**TINY, "arch": arch, "bpe_vocab_size": bpe, **kw})
    return save_tiny(str(root / f"tiny-{arch}-{bpe}"), cfg)


def write_cfg(root, name="export.json", **doc):
    p = root / name
    p.write_text(json.dumps(doc))
    return str(p)


def export(root, checkpoint, out="onnx", **kw):
    """In-process export (the CLI's dispatch without its argument parsing); returns the done fields."""
    return run_command("export-onnx", {"checkpoint": checkpoint, "output_dir": str(root / out), **kw}).result


def load_torch(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(model_dir)


def kv_shape(meta):
    return meta["num_kv_heads"], meta["head_dim"]


def ort_incremental(sess, meta, ids, att, splits):
    """Runs ``ids`` through onnxruntime in chunks ending at ``splits`` (the first one a prefill with an empty
    cache), carrying the present tensors as the next past; returns the logits of every position."""
    pos = np.clip(np.cumsum(att, -1) - 1, 0, None)
    chunks, past, start = [], None, 0
    for end in [*splits, ids.shape[1]]:
        logits, past = onnx_export.ort_step(sess, ids[:, start:end], att[:, :end], pos[:, start:end], past, kv_shape(meta))
        for p in past:
            assert p.shape == (ids.shape[0], meta["num_kv_heads"], end, meta["head_dim"])
        chunks.append(logits)
        start = end
    return np.concatenate(chunks, axis=1)


# ----------------------------------------------------------------------------------------------- the layout


@pytest.fixture(scope="module")
def llama_export(tmp_path_factory):
    """A real ``python -m gymflow_trainer export-onnx`` run on a tiny GQA Llama (4 heads, 2 kv heads)."""
    root = tmp_path_factory.mktemp("llama")
    ck = tiny_dir(root)
    cfg = write_cfg(root, checkpoint=ck, output_dir=str(root / "onnx"))
    env = {**os.environ, "PYTHONPATH": TRAINER_DIR}
    p = subprocess.run([sys.executable, "-m", "gymflow_trainer", "export-onnx", "--config", cfg], capture_output=True, text=True,
                       env=env, timeout=300)
    return ck, str(root / "onnx"), p


def test_cli_writes_the_policy_directory(llama_export):
    ck, out, p = llama_export
    assert p.returncode == 0, p.stderr[-3000:]
    events = [json.loads(x) for x in p.stdout.strip().splitlines()]
    assert [e["event"] for e in events][0] == "start" and events[-1]["event"] == "done"
    assert events[-1]["command"] == "export-onnx" and events[-1]["path"] == out
    assert {"model.onnx", "tokenizer.json", "tokenizer_config.json", "gymflow_policy.json"} <= set(os.listdir(out))
    meta = json.load(open(os.path.join(out, "gymflow_policy.json")))
    assert set(meta) == POLICY_KEYS
    model, tok = load_torch(ck)
    assert meta["format"] == "gymflow-onnx-policy" and meta["version"] == 1 and meta["chat_template"] == "chatml"
    assert (meta["model_type"], meta["num_layers"], meta["num_kv_heads"], meta["head_dim"]) == ("llama", 2, 2, 8)
    assert meta["vocab_size"] == model.config.vocab_size == len(tok)
    assert meta["max_position_embeddings"] == 2048
    assert tok.convert_tokens_to_ids("<|im_end|>") in meta["eos_token_ids"]
    assert meta["pad_token_id"] == tok.convert_tokens_to_ids("<|endoftext|>")
    assert meta["source"]["checkpoint"] == os.path.abspath(ck)
    import hashlib

    assert meta["source"]["sha256_of_weights"] == hashlib.sha256(open(os.path.join(ck, "model.safetensors"), "rb").read()).hexdigest()
    assert 0 <= meta["check"]["max_abs_diff"] <= 1e-3
    assert events[-1]["max_abs_diff"] == meta["check"]["max_abs_diff"]
    # the exported tokenizer is the checkpoint's
    from transformers import AutoTokenizer

    text = "<|im_start|>user\nhi<|im_end|>\n"
    assert AutoTokenizer.from_pretrained(out).encode(text, add_special_tokens=False) == tok.encode(text, add_special_tokens=False)


def test_graph_inputs_and_outputs_follow_the_contract(llama_export):
    _, out, _ = llama_export
    sess = onnx_export.ort_session(os.path.join(out, "model.onnx"))
    ins = {i.name: (i.type, i.shape) for i in sess.get_inputs()}
    outs = {o.name: (o.type, o.shape) for o in sess.get_outputs()}
    assert list(ins)[:3] == ["input_ids", "attention_mask", "position_ids"]
    assert all(ins[n][0] == "tensor(int64)" for n in ("input_ids", "attention_mask", "position_ids"))
    assert list(ins)[3:] == [f"past_key_values.{i}.{kv}" for i in range(2) for kv in ("key", "value")]
    assert list(outs) == ["logits"] + [f"present.{i}.{kv}" for i in range(2) for kv in ("key", "value")]
    assert ins["past_key_values.0.key"][0] == "tensor(float)" and ins["past_key_values.0.key"][1][1:4:2] == [2, 8]
    assert outs["logits"][0] == "tensor(float)"


# ---------------------------------------------------------------------------------- numerics vs torch


@pytest.mark.parametrize("arch,bpe", [("llama", 0), ("qwen2", 400)])
def test_ort_prefill_and_decode_equal_torch(tmp_path, arch, bpe):
    ck = tiny_dir(tmp_path, arch, bpe, num_attention_heads=4, num_key_value_heads=1)  # GQA 4:1
    out = export(tmp_path, ck, check=False)["path"]
    meta = json.load(open(os.path.join(out, "gymflow_policy.json")))
    assert meta["model_type"] == arch and meta["num_kv_heads"] == 1 and meta["check"]["max_abs_diff"] is None
    model, _ = load_torch(ck)
    sess = onnx_export.ort_session(os.path.join(out, "model.onnx"))
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, meta["vocab_size"], (3, 12), generator=g).numpy()
    att = np.ones_like(ids)
    att[1, :3] = 0  # left padding
    att[2, :1] = 0
    pos = np.clip(np.cumsum(att, -1) - 1, 0, None)
    with torch.no_grad():
        ref = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(att), position_ids=torch.from_numpy(pos)).logits.numpy()
    real = att.astype(bool)
    for splits in ([7, 8, 9], [1], [5, 10]):  # prefill 7 then 3 single-token decodes; prefill 1 then 11 at once; chunks
        got = ort_incremental(sess, meta, ids, att, splits)
        assert got.shape == ref.shape
        assert np.abs(got - ref)[real].max() < 1e-4, splits


@pytest.mark.parametrize("arch,bpe", [("llama", 400), ("qwen2", 0)])
def test_greedy_generation_through_ort_equals_generate(tmp_path, arch, bpe):
    ck = tiny_dir(tmp_path, arch, bpe, seed=3)
    out = export(tmp_path, ck)["path"]
    meta = json.load(open(os.path.join(out, "gymflow_policy.json")))
    model, tok = load_torch(ck)
    from gymflow_trainer.chat import render

    prompt = tok.encode(render([{"role": "user", "content": "Echo hi."}], add_generation_prompt=True)[0], add_special_tokens=False)
    n = 20
    with torch.no_grad():
        want = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long), do_sample=False,
                              max_new_tokens=n, min_new_tokens=n, pad_token_id=meta["pad_token_id"])[0, len(prompt):].tolist()
    sess = onnx_export.ort_session(os.path.join(out, "model.onnx"))
    seq, past, got = list(prompt), None, []
    step_ids = np.array([prompt])
    suppress = meta["eos_token_ids"]  # min_new_tokens masks the eos ids the same way
    while len(got) < n:
        T = len(seq)
        start = T - step_ids.shape[1]
        logits, past = onnx_export.ort_step(sess, step_ids, np.ones((1, T)), np.arange(start, T)[None], past, kv_shape(meta))
        last = logits[0, -1].copy()
        last[suppress] = -np.inf
        nxt = int(last.argmax())
        got.append(nxt)
        seq.append(nxt)
        step_ids = np.array([[nxt]])
    assert got == want


# ------------------------------------------------------------------------------------- trainer checkpoints


def test_lora_checkpoint_is_merged_and_run_dir_resolves_to_final(tmp_path):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(n_steps=2) for _ in range(2)])
    doc = {"data": data, "output_dir": str(tmp_path / "run"), "model": {"tiny": dict(TINY)}, "optim": {"lr": 5e-2},
           "lora": {"r": 4, "alpha": 8}, "max_steps": 2, "save_every": 1, "keep_last": 5}
    cfg = from_dict(SftConfig, doc)
    cfg.validate()
    result = run_command("sft", cfg).result
    ck = os.path.join(str(tmp_path / "run"), "checkpoint-2")
    assert os.path.isfile(os.path.join(ck, "model", "adapter_config.json"))

    merged, tok = load_torch(result["path"])  # final/ = the merged model at step 2
    from gymflow_trainer.models import load_model_and_tokenizer

    base, _ = load_model_and_tokenizer(cfg.model, None)
    ids = torch.tensor([tok.encode("<|im_start|>user\nEcho hi.<|im_end|>\n", add_special_tokens=False)])
    with torch.no_grad():
        want = merged(input_ids=ids).logits.numpy()
        base_logits = base.eval()(input_ids=ids).logits.numpy()
    assert np.abs(want - base_logits).max() > 1e-3  # the adapter changed the model: a merge is observable

    for source, name in ((ck, "from-checkpoint"), (os.path.join(ck, "model"), "from-model-dir"), (str(tmp_path / "run"), "from-run")):
        done = export(tmp_path, source, out=name)
        meta = json.load(open(os.path.join(done["path"], "gymflow_policy.json")))
        sess = onnx_export.ort_session(done["model"])
        att = np.ones(ids.shape, np.int64)
        got = ort_incremental(sess, meta, ids.numpy(), att, [ids.shape[1] - 2, ids.shape[1] - 1])
        assert np.abs(got - want).max() < 1e-4, name
    assert meta["source"]["checkpoint"] == os.path.abspath(result["path"])  # the run dir → its final/


# ---------------------------------------------------------------------------------------------- errors


def test_config_errors_exit_2_and_name_the_field(tmp_path, capsys):
    ck = tiny_dir(tmp_path)
    cases = [
        ({"checkpoint": str(tmp_path / "nope"), "output_dir": str(tmp_path / "o")}, "checkpoint"),
        ({"output_dir": str(tmp_path / "o")}, "checkpoint"),
        ({"checkpoint": ck}, "output_dir"),
        ({"checkpoint": ck, "output_dir": str(tmp_path / "o"), "bogus": 1}, "bogus"),
        ({"checkpoint": ck, "output_dir": str(tmp_path / "o"), "kind": "critic"}, "kind"),
        ({"checkpoint": ck, "output_dir": str(tmp_path / "o"), "opset": 9}, "opset"),
        ({"checkpoint": ck, "output_dir": str(tmp_path / "o"), "check": "yes"}, "check"),
        ({"checkpoint": ck, "output_dir": ck}, "output_dir"),  # not empty and not an earlier export: never deleted
    ]
    for doc, field in cases:
        rc, events, _ = run_cli(capsys, "export-onnx", "--config", write_cfg(tmp_path, **doc))
        assert rc == 2, doc
        assert events[-1]["event"] == "error" and events[-1]["type"] == "ConfigError"
        assert field in events[-1]["message"] and "export.json" in events[-1]["message"], events[-1]["message"]
    assert os.path.isfile(os.path.join(ck, "model.safetensors"))


def test_checkpoint_without_weights_exits_4(tmp_path, capsys):
    ck = tiny_dir(tmp_path)
    os.remove(os.path.join(ck, "model.safetensors"))
    rc, events, _ = run_cli(capsys, "export-onnx", "--config", write_cfg(tmp_path, checkpoint=ck, output_dir=str(tmp_path / "o")))
    assert rc == 4 and events[-1]["type"] == "CheckpointError" and "no weights" in events[-1]["message"]
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, events, _ = run_cli(capsys, "export-onnx", "--config", write_cfg(tmp_path, checkpoint=str(empty), output_dir=str(tmp_path / "o")))
    assert rc == 4 and "no model" in events[-1]["message"]
    assert not os.path.exists(tmp_path / "o")


def test_failed_check_writes_nothing_and_reexport_replaces(tmp_path, capsys, monkeypatch):
    ck = tiny_dir(tmp_path)
    out = tmp_path / "o"
    rc, events, _ = run_cli(capsys, "export-onnx", "--config", write_cfg(tmp_path, checkpoint=ck, output_dir=str(out)))
    assert rc == 0
    first = json.load(open(out / "gymflow_policy.json"))
    monkeypatch.setattr(onnx_export, "CHECK_TOLERANCE", -1.0)  # any difference, even 0, now fails the check
    rc, events, _ = run_cli(capsys, "export-onnx", "--config", write_cfg(tmp_path, checkpoint=ck, output_dir=str(out)))
    assert rc == 1 and events[-1]["type"] == "OnnxCheckError" and "differ from torch" in events[-1]["message"]
    assert json.load(open(out / "gymflow_policy.json")) == first  # the earlier export stands
    assert [p for p in os.listdir(tmp_path) if ".tmp-" in p] == []


def test_dynamo_exporter_gives_the_same_graph_contract(tmp_path):
    ck = tiny_dir(tmp_path, "qwen2")
    done = export(tmp_path, ck, exporter="dynamo")
    assert done["max_abs_diff"] <= 1e-3
    sess = onnx_export.ort_session(done["model"])
    assert [o.name for o in sess.get_outputs()][:2] == ["logits", "present.0.key"]
    shutil.rmtree(done["path"])
