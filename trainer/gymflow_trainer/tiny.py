"""Tiny models and tokenizers built locally (no model hub): for tests, CI and the CPU-only closed loop.

``build_tokenizer()`` makes a byte-level tokenizer (pure bytes, or a byte-level BPE trained on a small
built-in corpus) with the ChatML special tokens and :data:`gymflow_trainer.chat.CHAT_TEMPLATE`;
``build_model()`` a Llama- or Qwen2-style causal LM from a config; ``save_tiny(dir)`` writes both with
``save_pretrained`` so that ``AutoModelForCausalLM.from_pretrained(dir)`` and
``AutoTokenizer.from_pretrained(dir)`` load them.

    python -m gymflow_trainer.tiny OUT_DIR [--arch llama|qwen2] [--bpe-vocab-size N]
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Optional

from .chat import CHAT_TEMPLATE, IM_END, PAD, SPECIAL_TOKENS
from .config import TinyModelConfig

#: Text the BPE variant learns its merges from: the shapes of exported conversations.
CORPUS = [
    'You are an agent solving a task in the environment gymflow/echo-v0 (domain: demo) by calling tools, one call per turn.',
    '# Tools', '# Format', 'Think briefly, then call exactly one tool:',
    '<tool_call>\n{"name":"read_file","arguments":{"path":"README.md"}}\n</tool_call>',
    '<tool_call>\n{"name":"submit","arguments":{"answer":"42"}}\n</tool_call>',
    '{"type":"function","function":{"name":"search","description":"Search the index","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}}',
    'The result comes back as a tool message. The episode ends when you submit your answer.',
    'The quick brown fox jumps over the lazy dog. 0123456789 def main(): return None',
    'Error: unknown tool. Observation: file not found. Correct. Incorrect.',
]


def build_tokenizer(bpe_vocab_size: int = 0) -> Any:
    """A byte-level tokenizer with ``<|endoftext|>`` (pad), ``<|im_start|>``, ``<|im_end|>`` (eos).

    ``bpe_vocab_size=0``: the 256 byte symbols and no merges (every byte one token: deterministic, any text
    round-trips). Otherwise a byte-level BPE trained on :data:`CORPUS` up to that vocabulary size.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if bpe_vocab_size:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = byte_level
        trainer = trainers.BpeTrainer(vocab_size=bpe_vocab_size, special_tokens=SPECIAL_TOKENS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(CORPUS, trainer=trainer)
    else:
        alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
        vocab = {s: i for i, s in enumerate(SPECIAL_TOKENS)}
        vocab.update({ch: len(SPECIAL_TOKENS) + i for i, ch in enumerate(alphabet)})
        tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        tok.pre_tokenizer = byte_level
        tok.add_special_tokens(SPECIAL_TOKENS)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=IM_END, pad_token=PAD, unk_token=None, bos_token=None)
    hf.chat_template = CHAT_TEMPLATE
    hf.padding_side = "right"
    hf.model_max_length = 1 << 20
    return hf


def build_model(cfg: Optional[TinyModelConfig] = None, vocab_size: int = 259, pad_token_id: int = 0, eos_token_id: int = 2) -> Any:
    """A randomly initialised Llama- or Qwen2-style causal LM (``torch.manual_seed(cfg.seed)`` first, so the
    same config gives the same weights)."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    cfg = cfg or TinyModelConfig()
    common = dict(
        vocab_size=vocab_size,
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_hidden_layers,
        num_attention_heads=cfg.num_attention_heads,
        num_key_value_heads=cfg.num_key_value_heads,
        max_position_embeddings=cfg.max_position_embeddings,
        pad_token_id=pad_token_id,
        eos_token_id=eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    config = LlamaConfig(**common) if cfg.arch == "llama" else Qwen2Config(**common)
    torch.manual_seed(cfg.seed)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def build_tiny(cfg: Optional[TinyModelConfig] = None) -> tuple[Any, Any]:
    """Tokenizer and model that fit each other."""
    cfg = cfg or TinyModelConfig()
    tok = build_tokenizer(cfg.bpe_vocab_size)
    model = build_model(cfg, vocab_size=len(tok), pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    return tok, model


def save_tiny(out_dir: str, cfg: Optional[TinyModelConfig] = None) -> str:
    """Builds a tiny model + tokenizer and writes them with ``save_pretrained``; returns ``out_dir``."""
    tok, model = build_tiny(cfg)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m gymflow_trainer.tiny", description="Write a tiny model + tokenizer directory.")
    p.add_argument("out_dir")
    p.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    p.add_argument("--bpe-vocab-size", type=int, default=0)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden-size", type=int, default=64)
    a = p.parse_args(argv)
    cfg = TinyModelConfig(arch=a.arch, bpe_vocab_size=a.bpe_vocab_size, num_hidden_layers=a.layers, hidden_size=a.hidden_size,
                          intermediate_size=2 * a.hidden_size)
    cfg.validate("tiny")
    save_tiny(a.out_dir, cfg)
    print(json.dumps({"event": "done", "path": a.out_dir}))


if __name__ == "__main__":
    main()
