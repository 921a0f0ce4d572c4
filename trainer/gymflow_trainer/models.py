"""Loading the policy: the device, seeding, model directories, LoRA, compiled decoder layers, the attention
layout, and the prompt format a model carries (``SYSTEM_PROMPT_ATTR``) and its tokenizer's chat template.
"""

from __future__ import annotations

import contextlib
import os
import random
from typing import Any, Callable, Iterator, Optional

import torch

from . import distributed, head
from .attention import base_model, use_varlen
from .chat import template_for
from .config import LoraConfig, ModelConfig
from .errors import ConfigError


def device() -> torch.device:
    """CPU, the GPU, or under a multi-process launch on GPUs this rank's ``cuda:LOCAL_RANK``."""
    if not torch.cuda.is_available():
        return torch.device("cpu")
    w = distributed.world()
    return torch.device("cuda", w.local_rank) if w.enabled else torch.device("cuda")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


# What a tokenizer directory holds: one of these is enough for ``AutoTokenizer``.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")


def check_model_dirs(mcfg: ModelConfig) -> str:
    """Checks that ``model.path`` is a transformers model directory and that the tokenizer's directory
    (``model.tokenizer``, else ``model.path``) holds a tokenizer, before transformers is asked to load them:
    given a path that is not a directory, transformers takes it for a Hub repo id, and given a directory without
    a tokenizer it fails with advice about sentencepiece. Returns the tokenizer's directory.

    :raises ConfigError: naming the field, the path and what is missing."""
    assert mcfg.path is not None
    if not os.path.isdir(mcfg.path):
        raise ConfigError(f"$.model.path {mcfg.path!r}: not a directory (a model saved with save_pretrained)")
    if not os.path.isfile(os.path.join(mcfg.path, "config.json")):
        if os.path.isfile(os.path.join(mcfg.path, "adapter_config.json")):
            raise ConfigError(f"$.model.path {mcfg.path!r}: holds a LoRA adapter, not a whole model; point model.path at the "
                              "base model (adapter_config.json's base_model_name_or_path), or export a merged one")
        raise ConfigError(f"$.model.path {mcfg.path!r}: no config.json there, so it is not a transformers model directory")
    field, tok_dir = ("model.tokenizer", mcfg.tokenizer) if mcfg.tokenizer else ("model.path", mcfg.path)
    if not os.path.isdir(tok_dir):
        raise ConfigError(f"$.{field} {tok_dir!r}: not a directory (a tokenizer saved with save_pretrained)")
    if not any(os.path.isfile(os.path.join(tok_dir, f)) for f in TOKENIZER_FILES):
        hint = "; set model.tokenizer to the directory that has one" if field == "model.path" else ""
        raise ConfigError(f"$.{field} {tok_dir!r}: holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}){hint}")
    return tok_dir


def pretrained(field: str, where: str, load: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``load(*args, **kwargs)`` (a ``from_pretrained``), with what transformers raises for files it cannot use
    (a broken config.json, weights that do not fit the config, an unknown architecture) as a ConfigError naming
    ``$.field`` and ``where``, on one line."""
    from .memory import is_out_of_memory

    try:
        return load(*args, **kwargs)
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        if is_out_of_memory(e):  # the files are fine, the device is too small: OutOfMemory's exit, not a config error
            raise
        raise ConfigError(f"$.{field} {where!r}: cannot be loaded: {_one_line(e)}") from e


def _one_line(e: BaseException) -> str:
    text = " ".join(line.strip() for line in str(e).splitlines() if line.strip()) or type(e).__name__
    return text if len(text) <= 400 else text[:400] + "…"


def add_lora(model: Any, lora: LoraConfig, task_type: str) -> Any:
    """``model`` wrapped with a LoRA adapter; target modules that match nothing are a ConfigError that lists the
    names of the model's linear layers (what ``lora.target_modules`` may name)."""
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model

    try:
        return get_peft_model(model, PeftLoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                                    target_modules=list(lora.target_modules), task_type=task_type))
    except ValueError as e:
        linear = sorted({name.rsplit(".", 1)[-1] for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
        raise ConfigError(f"$.lora.target_modules {list(lora.target_modules)}: {_one_line(e)} "
                          f"(the model's linear layers are named: {', '.join(linear)})") from e


def load_model_and_tokenizer(mcfg: ModelConfig, lora: Optional[LoraConfig]) -> tuple[Any, Any]:
    """The policy (optionally wrapped with a LoRA adapter) and its tokenizer."""
    tok, config, built = load_tokenizer_and_config(mcfg)
    return load_model(mcfg, lora, config, built), tok


def load_tokenizer_and_config(mcfg: ModelConfig) -> tuple[Any, Any, Any]:
    """``(tokenizer, model config, model or None)``: what the data needs (the tokenizer, and the prompt format the
    config records), without the weights, which may take minutes to load; :func:`load_model` loads them. A tiny
    model is built whole here (it takes a moment)."""
    from transformers import AutoConfig, AutoTokenizer

    from .tiny import build_tiny

    if mcfg.tiny is not None:
        tok, model = build_tiny(mcfg.tiny)
        config = model.config
    else:
        tok_dir = check_model_dirs(mcfg)
        tok = pretrained("model.tokenizer" if mcfg.tokenizer else "model.path", tok_dir, AutoTokenizer.from_pretrained, tok_dir)
        config = pretrained("model.path", mcfg.path, AutoConfig.from_pretrained, mcfg.path)
        model = None
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok, config, model


def load_model(mcfg: ModelConfig, lora: Optional[LoraConfig], config: Any, built: Any = None) -> Any:
    """The policy of :func:`load_tokenizer_and_config` (``built``, or its weights loaded from ``model.path`` with
    ``config``, which keeps what was set on it), optionally wrapped with a LoRA adapter."""
    from transformers import AutoModelForCausalLM

    model = built
    if model is None:
        dtype = torch.bfloat16 if mcfg.dtype == "bfloat16" else torch.float32
        model = pretrained("model.path", mcfg.path, AutoModelForCausalLM.from_pretrained, mcfg.path, config=config, dtype=dtype)
    model.config.use_cache = False
    if lora is not None:
        model = add_lora(model, lora, "CAUSAL_LM")
    if mcfg.gradient_checkpointing:
        # transformers 5 renamed it (the old name warns); the non-reentrant variant works with frozen inputs (LoRA)
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:  # transformers 4
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model


def compile_layers(model: Any) -> int:
    """``torch.compile`` (dynamic shapes) on each decoder layer of the model (``get_decoder().layers``, every
    causal LM transformers ships); the layers share one compiled graph. Returns how many were compiled;
    :class:`ConfigError` for a model without such layers."""
    base = base_model(model)
    decoder = base.get_decoder() if hasattr(base, "get_decoder") else None
    layers = getattr(decoder, "layers", None)
    if not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0:
        raise ConfigError(f"compile: found no decoder layers (get_decoder().layers) in {type(base).__name__}")
    for layer in layers:
        layer.compile(dynamic=True)
    return len(layers)


def prepare_layout(model: Any, cfg: Any) -> None:
    """Before any forward (and before a reference model is copied, so that the copy runs the same layout):
    switches the model to varlen attention when ``cfg.packed`` says so. Compiling (``cfg.compile``,
    :func:`compile_layers`) comes later, just before training: reference log-probs and a reference copy stay
    eager. With ``cfg.logits_chunk``, checks that the model's logits are its head's output (:func:`head.check`)."""
    if cfg.packed == "varlen":
        use_varlen(model)
    if cfg.logits_chunk:
        head.check(model)


@contextlib.contextmanager
def policy_only(model: Any) -> Iterator[Any]:
    """The model without an attached value head (``v_head``, PPO) for ``save_pretrained``: the saved policy
    loads with ``from_pretrained`` without unexpected keys. The head stays in ``trainable.safetensors``."""
    head = model._modules.pop("v_head", None)
    try:
        yield model
    finally:
        if head is not None:
            model._modules["v_head"] = head


#: The model-config attribute that records the model's prompt format: "keep" (the system message, with the tool
#: list, starts every prompt) or "drop" (no system message). ``save_pretrained`` writes it into ``config.json``,
#: ``export-onnx`` copies it into ``gymflow_policy.json``, and the TypeScript ``local:`` policy renders prompts
#: accordingly — so rollouts always see what the model was trained on.
SYSTEM_PROMPT_ATTR = "gymflow_system_prompt"


def save_tokenizer(tokenizer: Any, model: Any, directory: str) -> None:
    """Saves the tokenizer with the chat template of the prompts ``model`` was trained on (``chat.template_for``
    its prompt format), in place of whatever template a base model came with, such as Qwen's, which renders tool
    results as ``<tool_response>`` user turns and adds a default system message. A server that renders prompts
    from the tokenizer, such as vLLM or SGLang, then gives the model exactly what training gave it."""
    tokenizer.chat_template = template_for(getattr(getattr(model, "config", None), SYSTEM_PROMPT_ATTR, None))
    tokenizer.save_pretrained(directory)


def system_prompt_mode(config: Any, requested: Optional[str]) -> str:
    """The prompt format of a run: the configured ``system_prompt``, else the one the model was trained with
    (recorded in its config), else "keep". Stamps it on the model's config so every checkpoint carries it; a
    request that contradicts what the loaded model was trained with is refused (rollouts would differ)."""
    recorded = getattr(config, SYSTEM_PROMPT_ATTR, None)
    if requested is not None and recorded is not None and requested != recorded:
        raise ConfigError(f"system_prompt: '{requested}' contradicts the model, which was trained with system_prompt '{recorded}' "
                          "(its config.json); leave system_prompt unset to follow the model")
    mode = requested or recorded or "keep"
    if config is not None:
        setattr(config, SYSTEM_PROMPT_ATTR, mode)
    return mode
