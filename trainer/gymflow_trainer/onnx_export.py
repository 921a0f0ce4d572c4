"""``python -m gymflow_trainer export-onnx``: a policy as an ONNX decoder with a KV cache (docs/trainer.md,
"ONNX export").

The output directory (written to a temporary sibling and renamed into place, so a failed export leaves
nothing half-written) holds:

- ``model.onnx`` — one float32 graph for prefill and decode. Inputs ``input_ids`` [batch, seq],
  ``attention_mask`` [batch, past+seq], ``position_ids`` [batch, seq] (int64) and, per layer i,
  ``past_key_values.{i}.key|value`` [batch, num_kv_heads, past, head_dim] (past may be 0); outputs
  ``logits`` [batch, seq, vocab] and ``present.{i}.key|value`` [batch, num_kv_heads, past+seq, head_dim]
  (the names of Hugging Face Optimum / transformers.js decoder exports);
- ``tokenizer.json``, ``tokenizer_config.json`` (+ ``chat_template.jinja``) as ``save_pretrained`` writes them;
- ``gymflow_policy.json`` — what a runtime needs to drive the graph (layers, heads, ids that end a turn, …),
  where the weights came from and the result of the onnxruntime-vs-torch check.

``kind: reward_model`` (:func:`export_reward_model`): a reward model trained by ``rm`` as a scorer graph, its
tokenizer and ``gymflow_reward_model.json`` (docs/reward.md, "Learned reward model").
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import time
import warnings
from typing import Any, Optional

import torch

from .chat import IM_END, render
from .config import ExportOnnxConfig, TinyModelConfig
from .errors import CheckpointError, ConfigError, TrainerError
from .events import EventWriter
from .rm import RM_META_FILE, STEP_INPUT_FORMAT, load_reward_model, pad, raw_scores

POLICY_FORMAT = "gymflow-onnx-policy"
POLICY_VERSION = 1
POLICY_FILE = "gymflow_policy.json"
MODEL_FILE = "model.onnx"
#: The largest max abs difference of logits between onnxruntime and torch that ``check`` accepts.
CHECK_TOLERANCE = 1e-3
SUPPORTED_MODEL_TYPES = ("llama", "qwen2")
WEIGHT_PATTERNS = ("model.safetensors", "model-*-of-*.safetensors", "pytorch_model.bin", "pytorch_model-*-of-*.bin")
ADAPTER_PATTERNS = ("adapter_model.safetensors", "adapter_model.bin")
#: What a LoRA run's ``model/`` directories hold instead of ``config.json``: the adapter's configuration.
ADAPTER_CONFIG = "adapter_config.json"
#: The manifest of a reward-model export (``kind: reward_model``).
REWARD_MODEL_FILE = "gymflow_reward_model.json"


class OnnxCheckError(TrainerError):
    """The exported graph's logits differ from torch's by more than :data:`CHECK_TOLERANCE` (exit status 1)."""

    type = "OnnxCheckError"


# ------------------------------------------------------------------------------------------ finding the model


def _files(d: str, patterns: tuple[str, ...]) -> list[str]:
    return sorted({f for p in patterns for f in glob.glob(os.path.join(d, p))})


def _is_model_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "config.json")) or os.path.isfile(os.path.join(d, ADAPTER_CONFIG))


def _newest_checkpoint(d: str) -> Optional[str]:
    found = []
    for c in glob.glob(os.path.join(d, "checkpoint-*")):
        m = re.fullmatch(r"checkpoint-(\d+)", os.path.basename(c))
        if m and os.path.isdir(os.path.join(c, "model")):
            found.append((int(m.group(1)), c))
    return max(found)[1] if found else None


def resolve_model_dir(checkpoint: str) -> str:
    """The ``save_pretrained`` directory behind ``checkpoint``: itself, ``<checkpoint>/model`` (a trainer
    checkpoint), or for a run's output directory its ``final/`` (else its newest ``checkpoint-N/model``)."""
    if _is_model_dir(checkpoint):
        return checkpoint
    if _is_model_dir(os.path.join(checkpoint, "model")):
        return os.path.join(checkpoint, "model")
    if _is_model_dir(os.path.join(checkpoint, "final")):
        return os.path.join(checkpoint, "final")
    newest = _newest_checkpoint(checkpoint)
    if newest and _is_model_dir(os.path.join(newest, "model")):
        return os.path.join(newest, "model")
    raise CheckpointError(f"checkpoint {checkpoint!r}: no model in it (looked for config.json or adapter_config.json in "
                          "it, in its model/ and final/ and in its newest checkpoint-N/model)")


def adapter_base_section(model_dir: str, adapter_cfg: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(source, model section)``: where the base model of the LoRA adapter in ``model_dir`` comes from, as a
    trainer configuration's ``model`` section. The adapter's ``base_model_name_or_path`` when it is a directory
    (``{"path": it}``), else the section the run was configured with, read from the trainer checkpoint's
    ``trainer_state.pt`` (``model.path``, or ``model.tiny``: tiny models are a pure function of their config and
    seed); ``source`` is that directory or that file."""
    base = adapter_cfg.get("base_model_name_or_path")
    if base and os.path.isdir(base):
        return base, {"path": base}
    state_file = os.path.join(os.path.dirname(os.path.abspath(model_dir)), "trainer_state.pt")
    if not os.path.isfile(state_file):
        raise CheckpointError(f"{model_dir}: LoRA adapter whose base model is unknown (base_model_name_or_path "
                              f"{base!r} is not a directory and there is no {state_file})")
    try:
        state = torch.load(state_file, map_location="cpu", weights_only=False)
    except Exception as e:  # noqa: BLE001 - a damaged file is a checkpoint error
        raise CheckpointError(f"{state_file}: cannot be read ({e})") from e
    return state_file, (state.get("config") or {}).get("model") or {}


def _lora_base(model_dir: str, adapter_cfg: dict[str, Any], tok: Any) -> Any:
    """The causal LM a policy's LoRA adapter was trained on (:func:`adapter_base_section`)."""
    from transformers import AutoModelForCausalLM

    from .tiny import build_model

    source, mcfg = adapter_base_section(model_dir, adapter_cfg)
    if mcfg.get("path") and os.path.isdir(mcfg["path"]):
        return AutoModelForCausalLM.from_pretrained(mcfg["path"], dtype=torch.float32)
    if mcfg.get("tiny"):
        known = set(TinyModelConfig.__dataclass_fields__)
        tcfg = TinyModelConfig(**{k: v for k, v in mcfg["tiny"].items() if k in known})
        # The saved tokenizer fixes vocabulary and special ids; the BPE need not be trained again.
        return build_model(tcfg, vocab_size=len(tok), pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    raise CheckpointError(f"{source}: its configuration names no usable base model (model.path {mcfg.get('path')!r})")


def cast_parameters(model: Any, dtype: torch.dtype) -> Any:
    """Casts the floating-point parameters of ``model`` to ``dtype`` and leaves its buffers alone:
    ``model.to(torch.bfloat16)`` would also round the rotary ``inv_freq`` buffer (which ``from_pretrained(dtype=…)``
    keeps in float32), shifting every position's angles."""
    for p in model.parameters():
        if p.is_floating_point() and p.dtype != dtype:
            p.data = p.data.to(dtype)
    return model


def _refuse_reward_model(model_dir: str) -> None:
    """A reward model (``*ForSequenceClassification``) loads as a causal LM without complaint: its backbone with a
    fresh, untrained LM head. Such a "policy" would only emit noise, so it is refused."""
    try:
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as fh:
            archs = json.load(fh).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        return  # no config.json (a LoRA adapter) or an unreadable one: the load reports it
    if archs and all(str(a).endswith("ForSequenceClassification") for a in archs):
        raise CheckpointError(f"{model_dir}: a reward model (architectures {archs}), not a policy; export it with "
                              "kind: reward_model")


def load_policy(checkpoint: str, dtype: torch.dtype = torch.float32, device: Optional[torch.device] = None,
                attn_implementation: Optional[str] = "eager",
                model_types: Optional[tuple[str, ...]] = SUPPORTED_MODEL_TYPES) -> tuple[Any, Any, str, list[str]]:
    """Model (eval, LoRA merged), tokenizer, the resolved model directory and the weight files its
    ``sha256_of_weights`` covers.

    The defaults are what the ONNX export needs: float32 on the CPU with eager attention, Llama/Qwen2 only.
    ``serve`` asks for its dtype and device and keeps transformers' default attention (SDPA):
    ``attn_implementation=None``; ``model_types=None`` accepts any causal LM. A LoRA adapter is merged in
    float32, then the merged weights are cast to ``dtype``.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = resolve_model_dir(checkpoint)
    _refuse_reward_model(model_dir)
    adapter_cfg_file = os.path.join(model_dir, ADAPTER_CONFIG)
    lora = os.path.isfile(adapter_cfg_file)
    weights = _files(model_dir, ADAPTER_PATTERNS if lora else WEIGHT_PATTERNS)
    if not weights:
        raise CheckpointError(f"{model_dir}: no weights (expected one of {', '.join(ADAPTER_PATTERNS if lora else WEIGHT_PATTERNS)})")
    try:
        tok = AutoTokenizer.from_pretrained(model_dir)
    except Exception as e:  # noqa: BLE001
        raise CheckpointError(f"{model_dir}: cannot load the tokenizer ({e})") from e
    try:
        if lora:
            from peft import PeftModel

            with open(adapter_cfg_file, encoding="utf-8") as fh:
                base = _lora_base(model_dir, json.load(fh), tok)
            model = PeftModel.from_pretrained(base, model_dir).merge_and_unload()
        else:
            model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
    except TrainerError:
        raise
    except Exception as e:  # noqa: BLE001 - unreadable or mismatched weights
        raise CheckpointError(f"{model_dir}: cannot load the model ({type(e).__name__}: {e})") from e
    model = cast_parameters(model, dtype).eval()
    if device is not None:
        model = model.to(device)
    # Eager attention for the export: the traced graph then always applies the explicit mask (SDPA's "is it
    # causal?" shortcut would be frozen into the trace for the sample's shapes).
    if attn_implementation is not None:
        if hasattr(model, "set_attn_implementation"):
            model.set_attn_implementation(attn_implementation)
        else:  # pragma: no cover - older transformers
            model.config._attn_implementation = attn_implementation
    if model_types is not None and model.config.model_type not in model_types:
        raise CheckpointError(f"{model_dir}: model_type {model.config.model_type!r} is not supported "
                              f"(supported: {', '.join(model_types)})")
    return model, tok, model_dir, weights


# ---------------------------------------------------------------------------------------------------- export


def _dims(cfg: Any) -> tuple[int, int, int]:
    heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    return cfg.num_hidden_layers, getattr(cfg, "num_key_value_heads", None) or heads, head_dim


def io_names(num_layers: int) -> tuple[list[str], list[str]]:
    """Input and output names of the decoder graph, in order."""
    past = [f"past_key_values.{i}.{kv}" for i in range(num_layers) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(num_layers) for kv in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids", *past], ["logits", *present]


class DecoderWithPast(torch.nn.Module):
    """The causal LM with the KV cache as explicit tensors: ``(input_ids, attention_mask, position_ids,
    *past) -> (logits, *present)``, past/present interleaved key, value per layer."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        self.num_layers = model.config.num_hidden_layers

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor, *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
        from transformers import DynamicCache

        cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(self.num_layers)])
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=cache, use_cache=True, return_dict=True)
        present: list[torch.Tensor] = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def export_decoder(model: Any, path: str, opset: int, exporter: str = "torchscript") -> None:
    """Writes the decoder-with-past graph of ``model`` to ``path``.

    The default is the TorchScript exporter (``dynamo=False``): it traces the wrapper with a sample of
    batch 2, seq 3, past 5 and marks batch/seq/past dynamic. For a tiny model (hidden 128, 4 layers) it
    takes ~0.6 s against ~7 s for the dynamo exporter (``torch.export`` + onnxscript), both graphs give
    the same logits (< 1e-6 from torch) with past 0 and past > 0, and the export runs once per test and per
    training round — so the fast one. ``exporter="dynamo"`` is kept for when torch drops TorchScript.
    The trace is exact for every shape because (eager attention, explicit ``position_ids``) no Python
    branch of the model depends on the sample's sizes or values.
    """
    L, H, D = _dims(model.config)
    wrapper = DecoderWithPast(model).eval()
    B, S, P = 2, 3, 5
    ids = torch.randint(0, model.config.vocab_size, (B, S))
    att = torch.ones(B, P + S, dtype=torch.long)
    pos = torch.arange(P, P + S).expand(B, S).contiguous()
    past = tuple(torch.zeros(B, H, P, D) for _ in range(2 * L))
    in_names, out_names = io_names(L)
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer's warnings are about branches that are right for every shape here: the cache's
        # "empty?" test (past 0 and past > 0 both give past length = past's dim 2), the mask's padding
        # (attention_mask is always past+seq long) and aten::index (its indices are never negative).
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", message=".*aten::index.*")
        if exporter == "dynamo":
            from torch.export import Dim

            b, s, p = Dim("batch"), Dim("seq"), Dim("past")
            shapes = {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: Dim.AUTO}, "position_ids": {0: b, 1: s},
                      "past": tuple({0: b, 2: p} for _ in range(2 * L))}
            torch.onnx.export(wrapper, (ids, att, pos, *past), path, input_names=in_names, output_names=out_names,
                              dynamic_shapes=shapes, opset_version=opset, dynamo=True, external_data=False)
        else:
            axes: dict[str, dict[int, str]] = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                                               "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
            axes.update({n: {0: "batch", 2: "past"} for n in in_names[3:]})
            axes.update({n: {0: "batch", 2: "total"} for n in out_names[1:]})
            torch.onnx.export(wrapper, (ids, att, pos, *past), path, input_names=in_names, output_names=out_names,
                              dynamic_axes=axes, opset_version=opset, dynamo=False, do_constant_folding=True)


# ----------------------------------------------------------------------------------------------------- check


def ort_session(onnx_path: str, threads: int = 1) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])


def ort_step(sess: Any, input_ids: Any, attention_mask: Any, position_ids: Any, past: Optional[list[Any]], kv_shape: tuple[int, int]) -> tuple[Any, list[Any]]:
    """One onnxruntime call: ``past=None`` is an empty cache (prefill). Returns ``(logits, present)``."""
    import numpy as np

    names = [i.name for i in sess.get_inputs()]
    feed = {"input_ids": np.asarray(input_ids, np.int64), "attention_mask": np.asarray(attention_mask, np.int64),
            "position_ids": np.asarray(position_ids, np.int64)}
    B = feed["input_ids"].shape[0]
    for j, n in enumerate(names[3:]):
        feed[n] = past[j] if past is not None else np.zeros((B, kv_shape[0], 0, kv_shape[1]), np.float32)
    out = sess.run(None, feed)
    return out[0], out[1:]


def check_policy(model: Any, tok: Any, onnx_path: str, decode_steps: int = 2) -> dict[str, Any]:
    """Prefill a short ChatML prompt (batch 2, the second row left-padded) through onnxruntime, then
    ``decode_steps`` single-token steps with the KV cache; compares every real position's logits with the
    torch model's full forward over the same tokens. Returns ``max_abs_diff`` and the timings."""
    import numpy as np

    _, H, D = _dims(model.config)
    text, _ = render([{"role": "user", "content": "Echo hi."}], add_generation_prompt=True)
    toks = tok.encode(text, add_special_tokens=False)[-16:]
    T = len(toks)
    prefill = T - decode_steps
    pad_left = 2
    ids = np.array([toks, [tok.pad_token_id or 0] * pad_left + toks[:-pad_left]], np.int64)
    att = np.ones_like(ids)
    att[1, :pad_left] = 0
    pos = np.clip(np.cumsum(att, -1) - 1, 0, None)
    with torch.no_grad():
        ref = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(att),
                    position_ids=torch.from_numpy(pos)).logits.numpy()
    sess = ort_session(onnx_path)
    got = np.zeros_like(ref)
    t0 = time.perf_counter()
    logits, present = ort_step(sess, ids[:, :prefill], att[:, :prefill], pos[:, :prefill], None, (H, D))
    prefill_s = time.perf_counter() - t0
    got[:, :prefill] = logits
    t0 = time.perf_counter()
    for t in range(prefill, T):
        logits, present = ort_step(sess, ids[:, t:t + 1], att[:, :t + 1], pos[:, t:t + 1], present, (H, D))
        got[:, t] = logits[:, 0]
    decode_s = (time.perf_counter() - t0) / max(1, T - prefill)
    mask = att.astype(bool)
    diff = float(np.abs(got - ref)[mask].max())
    return {"max_abs_diff": diff, "prefill_tokens": prefill, "decode_steps": T - prefill,
            "prefill_ms": round(prefill_s * 1000, 3), "decode_ms_per_step": round(decode_s * 1000, 3)}


# -------------------------------------------------------------------------------------------------- metadata


def sha256_of_files(paths: list[str]) -> str:
    """sha256 over the bytes of ``paths`` in order (the weight shards, or the LoRA adapter's weights)."""
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _as_ids(v: Any) -> list[int]:
    if v is None:
        return []
    return [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]


def eos_token_ids(model: Any, tok: Any) -> list[int]:
    """Ids that end a turn: ``<|im_end|>`` (ChatML), the tokenizer's eos and the model/generation config's."""
    ids: list[int] = []
    im_end = tok.convert_tokens_to_ids(IM_END)
    if isinstance(im_end, int) and im_end != tok.unk_token_id and im_end >= 0:
        ids.append(im_end)
    ids += _as_ids(tok.eos_token_id) + _as_ids(model.config.eos_token_id)
    gen = getattr(model, "generation_config", None)
    ids += _as_ids(getattr(gen, "eos_token_id", None))
    return sorted(set(ids))


def policy_metadata(model: Any, tok: Any, checkpoint: str, weights: list[str], max_abs_diff: Optional[float]) -> dict[str, Any]:
    cfg = model.config
    L, H, D = _dims(cfg)
    eos = eos_token_ids(model, tok)
    pad = tok.pad_token_id if tok.pad_token_id is not None else (eos[0] if eos else 0)
    return {
        "format": POLICY_FORMAT,
        "version": POLICY_VERSION,
        "model_type": cfg.model_type,
        "num_layers": L,
        "num_kv_heads": H,
        "head_dim": D,
        "vocab_size": int(cfg.vocab_size),
        "max_position_embeddings": int(cfg.max_position_embeddings),
        "eos_token_ids": eos,
        "pad_token_id": int(pad),
        "chat_template": "chatml",
        # The prompt format the model was trained with (models.SYSTEM_PROMPT_ATTR; "keep" when unrecorded).
        "system_prompt": getattr(cfg, "gymflow_system_prompt", None) or "keep",
        "source": {"checkpoint": os.path.abspath(checkpoint), "sha256_of_weights": sha256_of_files(weights)},
        "check": {"max_abs_diff": max_abs_diff},
    }


# ------------------------------------------------------------------------------------------------------- run


def export_policy(cfg: ExportOnnxConfig, events: EventWriter) -> dict[str, Any]:
    """Loads, exports, checks and writes the policy directory; returns the ``done`` event's fields."""
    t0 = time.time()
    model, tok, model_dir, weights = load_policy(cfg.checkpoint)
    L, H, D = _dims(model.config)
    events.emit("start", command="export-onnx", kind="policy", checkpoint=model_dir, output_dir=cfg.output_dir,
                model_type=model.config.model_type, num_layers=L, num_kv_heads=H, head_dim=D, exporter=cfg.exporter)
    out = os.path.abspath(cfg.output_dir)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(out)}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        t = time.time()
        export_decoder(model, os.path.join(tmp, MODEL_FILE), cfg.opset, cfg.exporter)
        export_s = time.time() - t
        events.progress(phase="exported", export_s=round(export_s, 3), onnx_bytes=os.path.getsize(os.path.join(tmp, MODEL_FILE)))
        check: Optional[dict[str, Any]] = None
        if cfg.check:
            check = check_policy(model, tok, os.path.join(tmp, MODEL_FILE))
            events.progress(phase="checked", **check)
            if not check["max_abs_diff"] <= CHECK_TOLERANCE:
                raise OnnxCheckError(f"{cfg.checkpoint}: onnxruntime logits differ from torch by {check['max_abs_diff']:.3g} "
                                     f"(> {CHECK_TOLERANCE:g}); nothing written to {cfg.output_dir}")
        tok.save_pretrained(tmp)
        meta = policy_metadata(model, tok, model_dir, weights, check["max_abs_diff"] if check else None)
        with open(os.path.join(tmp, POLICY_FILE), "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=2)
            fh.write("\n")
        if os.path.exists(out):
            shutil.rmtree(out)  # config validation allowed only an earlier export here
        os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"kind": "policy", "path": out, "model": os.path.join(out, MODEL_FILE), "export_s": round(export_s, 3),
            "max_abs_diff": meta["check"]["max_abs_diff"], "total_s": round(time.time() - t0, 3)}


# ------------------------------------------------------------------------------------- kind: reward_model


def _load_reward_model(checkpoint_dir: str) -> tuple[Any, Any, dict[str, Any]]:
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    d = resolve_model_dir(checkpoint_dir)
    meta: dict[str, Any] = {}
    mp = os.path.join(d, RM_META_FILE)
    if os.path.isfile(mp):
        with open(mp, encoding="utf-8") as fh:
            meta = json.load(fh)
    if meta.get("input", STEP_INPUT_FORMAT) != STEP_INPUT_FORMAT:
        raise CheckpointError(f"{mp}: input {meta.get('input')!r} is not {STEP_INPUT_FORMAT!r}")
    if os.path.isfile(os.path.join(d, "config.json")):
        conf = AutoConfig.from_pretrained(d)
        archs = conf.architectures or []
        if not any(a.endswith("ForSequenceClassification") for a in archs) or conf.num_labels != 1:
            raise CheckpointError(f"{checkpoint_dir}: not a reward model (architectures {archs}, num_labels {conf.num_labels}); "
                                  "train one with `python -m gymflow_trainer rm`")
        model = AutoModelForSequenceClassification.from_pretrained(d, dtype=torch.float32, attn_implementation="eager")
    else:
        model = _merged_reward_adapter(checkpoint_dir, d)
    model.config.use_cache = False
    tok = AutoTokenizer.from_pretrained(d)
    return model.eval(), tok, {**meta, "dir": d}


def _merged_reward_adapter(checkpoint_dir: str, d: str) -> Any:
    """The reward model of a LoRA step checkpoint's ``model/`` (the adapter and the trained head): the base the
    run started from (:func:`adapter_base_section`; a tiny backbone is rebuilt) with the adapter merged, in
    float32 with eager attention."""
    from peft import PeftModel

    from .config import ModelConfig, from_dict

    with open(os.path.join(d, ADAPTER_CONFIG), encoding="utf-8") as fh:
        adapter = json.load(fh)
    if adapter.get("task_type") != "SEQ_CLS":
        raise CheckpointError(f"{checkpoint_dir}: not a reward model (a LoRA adapter for task {adapter.get('task_type')!r}); "
                              "train one with `python -m gymflow_trainer rm`")
    source, section = adapter_base_section(d, adapter)
    try:
        mcfg = from_dict(ModelConfig, section, source, "$.config.model")
        mcfg.validate("$.config.model")
        mcfg.gradient_checkpointing = False
        base, _ = load_reward_model(mcfg)
        model = PeftModel.from_pretrained(base, d).merge_and_unload()
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - a base that is gone, or weights that do not fit it
        raise CheckpointError(f"{d}: cannot rebuild the reward model from its adapter and the base model in {source} "
                              f"({type(e).__name__}: {e})") from e
    model = cast_parameters(model, torch.float32)
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    else:  # pragma: no cover - older transformers
        model.config._attn_implementation = "eager"
    return model


def _reward_weights_digest(d: str) -> str:
    h = hashlib.sha256()
    for name in sorted(os.listdir(d)):
        if name.endswith((".safetensors", ".bin")):
            with open(os.path.join(d, name), "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return "sha256:" + h.hexdigest()


def export_reward_model(checkpoint_dir: str, output_dir: str, opset: int, check: bool) -> dict[str, Any]:
    """Writes the reward-model directory of the ONNX contract (docs/reward.md, "Learned reward model"):
    ``model.onnx`` (inputs ``input_ids``, ``attention_mask`` int64 ``[batch, seq]``, right-padded; outputs
    ``scores`` = σ(r) and ``logits`` = r, float32 ``[batch]``), the tokenizer files and
    ``gymflow_reward_model.json``. With ``check`` onnxruntime runs a padded batch of two sample inputs and the
    export fails (:class:`CheckpointError`) when any output differs from torch by more than 1e-4.

    ``checkpoint_dir``: a reward model's ``final/``, a step checkpoint, or a run's ``output_dir`` (its
    ``final/``, else its newest checkpoint). The directory is built beside ``output_dir`` and renamed into
    place; an existing ``output_dir`` must be empty or an earlier reward-model export (it is replaced).
    Returns what goes in the ``done`` event."""
    out = os.path.abspath(output_dir)
    if os.path.exists(out) and (not os.path.isdir(out) or (os.listdir(out) and not os.path.isfile(os.path.join(out, REWARD_MODEL_FILE)))):
        raise ConfigError(f"output_dir {output_dir!r} exists and is not empty nor an earlier reward-model export (no {REWARD_MODEL_FILE})")
    t0 = time.time()
    model, tok, meta = _load_reward_model(checkpoint_dir)
    max_length = int(meta.get("max_length", 1024))

    class Scorer(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any) -> tuple[Any, Any]:
            r = raw_scores(self.m, input_ids, attention_mask)
            return torch.sigmoid(r), r

    scorer = Scorer(model).eval()
    sample = [tok.encode('<|im_start|>user\nScore this step.<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name":"search","arguments":{"query":"x"}}\n</tool_call><|im_end|>\n', add_special_tokens=False),
              tok.encode("<|im_start|>user\nhi<|im_end|>\n", add_special_tokens=False)]
    ids, att = pad(sample, tok.pad_token_id, torch.device("cpu"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        onnx_path = os.path.join(tmp, "model.onnx")
        with torch.no_grad(), warnings.catch_warnings():
            # The TorchScript exporter's deprecation notice and tracer notes (the traced mask branch is the one
            # every input takes: attention_mask always spans the whole sequence) would only clutter stderr.
            warnings.simplefilter("ignore")
            torch.onnx.export(scorer, (ids, att), onnx_path, input_names=["input_ids", "attention_mask"], output_names=["scores", "logits"],
                              dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                            "scores": {0: "batch"}, "logits": {0: "batch"}},
                              opset_version=opset, dynamo=False)
        max_diff = None
        if check:
            import numpy as np
            import onnxruntime as ort

            sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            got = sess.run(["scores", "logits"], {"input_ids": ids.numpy(), "attention_mask": att.numpy()})
            with torch.no_grad():
                want = [t.numpy() for t in scorer(ids, att)]
            max_diff = float(max(np.abs(g - w).max() for g, w in zip(got, want)))
            if not max_diff <= 1e-4:
                raise CheckpointError(f"{checkpoint_dir}: the ONNX graph's outputs differ from torch by {max_diff:.3g} (> 1e-4); "
                                      f"nothing written to {output_dir}")
        tok.save_pretrained(tmp)
        info = {
            "format": "gymflow-onnx-reward-model",
            "version": 1,
            "input": STEP_INPUT_FORMAT,
            "max_length": max_length,
            "model_type": model.config.model_type,
            "pad_token_id": tok.pad_token_id,
            "outputs": {"scores": "sigmoid(logits): the step score in (0, 1)", "logits": "raw head output r"},
            "objective": meta.get("objective"),
            "pair_aggregate": meta.get("pair_aggregate"),
            "opset": opset,
            "source": {"checkpoint": os.path.abspath(checkpoint_dir), "sha256_of_weights": _reward_weights_digest(meta["dir"])},
            "check": {"max_abs_diff": max_diff},
        }
        with open(os.path.join(tmp, REWARD_MODEL_FILE), "w", encoding="utf-8") as fh:
            json.dump(info, fh, indent=2)
            fh.write("\n")
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"kind": "reward_model", "path": out, "model": os.path.join(out, "model.onnx"), "max_length": max_length, "opset": opset,
            "max_abs_diff": max_diff, "total_s": round(time.time() - t0, 3)}


def run(cfg: ExportOnnxConfig, events: EventWriter) -> dict[str, Any]:
    """The ``export-onnx`` command: dispatches on ``cfg.kind``."""
    if cfg.kind == "reward_model":
        events.emit("start", command="export-onnx", kind="reward_model", checkpoint=cfg.checkpoint, output_dir=cfg.output_dir)
        return {"kind": "reward_model", **export_reward_model(cfg.checkpoint, cfg.output_dir, cfg.opset, cfg.check)}
    return export_policy(cfg, events)
