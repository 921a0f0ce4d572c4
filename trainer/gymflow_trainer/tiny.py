"""Tiny models and tokenizers built locally (no model hub): for tests, CI and the CPU-only closed loop.

``build_tokenizer()`` makes a byte-level tokenizer (pure bytes, or a byte-level BPE trained on a small
built-in corpus or on exported datasets) with the ChatML special tokens and
:data:`gymflow_trainer.chat.CHAT_TEMPLATE`;
``build_model()`` a Llama- or Qwen2-style causal LM from a config; ``save_tiny(dir)`` writes both with
``save_pretrained`` so that ``AutoModelForCausalLM.from_pretrained(dir)`` and
``AutoTokenizer.from_pretrained(dir)`` load them.

    python -m gymflow_trainer.tiny OUT_DIR [--arch llama|qwen2] [--bpe-vocab-size N] [--bpe-corpus FILE ...]
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Iterator, Optional, Sequence

from .chat import CHAT_TEMPLATE, IM_END, PAD, SPECIAL_TOKENS
from .portable import make_portable
from .models import SYSTEM_PROMPT_ATTR, save_tokenizer
from .data import iter_jsonl
from .config import TinyModelConfig, load_tiny_config

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


def corpus_texts(paths: Sequence[str], system: bool = True) -> Iterator[str]:
    """The message contents of exported records (``gymflow export`` JSONL: sft ``messages``, dpo ``prompt`` /
    ``chosen`` / ``rejected``, rl ``prompt`` / ``group[].completion``), each preceded by its role name (so that
    ChatML headers get merges too), in file and record order."""
    for path in paths:
        for _, rec in iter_jsonl(path, "BPE corpus"):
            yield from _contents(rec, system)


def _contents(node: Any, system: bool = True) -> Iterator[str]:
    """The ``role`` and ``content`` of every message (a mapping with both as strings) inside ``node``, depth
    first: role names are counted as often as ChatML headers occur. ``system=False`` skips system messages
    (a model that never sees them should not spend its vocabulary on them)."""
    if isinstance(node, dict):
        if isinstance(node.get("role"), str) and isinstance(node.get("content"), str):
            if system or node["role"] != "system":
                yield node["role"]
                yield node["content"]
            return
        for v in node.values():
            yield from _contents(v, system)
    elif isinstance(node, list):
        for v in node:
            yield from _contents(v, system)


def build_tokenizer(bpe_vocab_size: int = 0, corpus: Sequence[str] = (), split_digits: bool = False,
                    split_spaces: bool = False, corpus_system: bool = True, split_numbers: bool = False,
                    number_chunk: int = 0) -> Any:
    """A byte-level tokenizer with ``<|endoftext|>`` (pad, id 0), ``<|im_start|>`` (1), ``<|im_end|>`` (2, eos).

    ``bpe_vocab_size=0``: the 256 byte symbols and no merges (every byte one token: deterministic, any text
    round-trips). Otherwise a byte-level BPE up to that vocabulary size, trained on the message contents of
    the exported JSONL files ``corpus`` (see :func:`corpus_texts`) or, without them, on :data:`CORPUS`.
    Every byte keeps a symbol, so any text still round-trips. Pre-tokenisation is GPT-2's (words carry their
    leading space); ``split_digits`` first cuts numbers into single digits (no multi-digit tokens) and
    ``split_numbers`` first makes every digit run a piece of its own without the space before it (``" 1989"``
    and ``"(1989"`` share the token ``1989``), ``number_chunk`` N first cuts every digit run into pieces of
    at most N digits from the left (``41725`` -> ``41``, ``72``, ``5`` with 2), and
    ``split_spaces`` first isolates every space (no word carries one: ``" Velmora"`` and ``'"Velmora'`` share
    the token ``Velmora``). The same inputs give the same tokenizer (the BPE trainer is deterministic for a
    given text sequence).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    first = []
    if split_spaces:
        first.append(pre_tokenizers.Split(" ", behavior="isolated"))
    if split_digits:
        first.append(pre_tokenizers.Digits(individual_digits=True))
    elif split_numbers:
        first.append(pre_tokenizers.Split(Regex("[0-9]+"), behavior="isolated"))
    elif number_chunk:
        first.append(pre_tokenizers.Split(Regex(f"[0-9]{{1,{number_chunk}}}"), behavior="isolated"))
    if first:
        byte_level = pre_tokenizers.Sequence([*first, byte_level])
    if bpe_vocab_size:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = byte_level
        trainer = trainers.BpeTrainer(vocab_size=bpe_vocab_size, special_tokens=SPECIAL_TOKENS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(corpus_texts(corpus, corpus_system) if corpus else CORPUS, trainer=trainer)
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
    if cfg.system_prompt is not None:
        setattr(config, SYSTEM_PROMPT_ATTR, cfg.system_prompt)
    torch.manual_seed(cfg.seed)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def build_tiny(cfg: Optional[TinyModelConfig] = None) -> tuple[Any, Any]:
    """Tokenizer and model that fit each other."""
    cfg = cfg or TinyModelConfig()
    # A model born without the system prompt learns its BPE from the messages it will see.
    tok = build_tokenizer(cfg.bpe_vocab_size, cfg.bpe_corpus, cfg.bpe_split_digits, cfg.bpe_split_spaces,
                          corpus_system=cfg.system_prompt != "drop", split_numbers=cfg.bpe_split_numbers,
                          number_chunk=cfg.bpe_number_chunk)
    model = build_model(cfg, vocab_size=len(tok), pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    return tok, model


def save_tiny(out_dir: str, cfg: Optional[TinyModelConfig] = None) -> str:
    """Builds a tiny model + tokenizer and writes them with ``save_pretrained``; returns ``out_dir``."""
    tok, model = build_tiny(cfg)
    model.save_pretrained(out_dir)
    save_tokenizer(tok, model, out_dir)
    make_portable(out_dir)
    return out_dir


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m gymflow_trainer.tiny", description="Write a tiny model + tokenizer directory.")
    p.add_argument("out_dir")
    p.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    p.add_argument("--bpe-vocab-size", type=int, default=0)
    p.add_argument("--bpe-corpus", nargs="*", default=[], metavar="FILE", help="exported JSONL files the BPE learns from")
    p.add_argument("--bpe-split-digits", action="store_true", help="numbers become single-digit tokens")
    p.add_argument("--bpe-split-spaces", action="store_true", help="every space is a token of its own")
    p.add_argument("--bpe-split-numbers", action="store_true", help="every digit run is a piece of its own, without its space")
    p.add_argument("--bpe-number-chunk", type=int, default=0, metavar="N", help="digit runs are cut into pieces of at most N digits")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden-size", type=int, default=64)
    p.add_argument("--config", metavar="FILE", help="a JSON/YAML tiny-model config, or a command config whose model.tiny "
                   "is used (e.g. an sft config: the untrained model of that recipe); the other options are then ignored")
    a = p.parse_args(argv)
    if a.config:
        cfg = load_tiny_config(a.config)
    else:
        cfg = TinyModelConfig(arch=a.arch, bpe_vocab_size=a.bpe_vocab_size, bpe_corpus=list(a.bpe_corpus),
                              bpe_split_digits=a.bpe_split_digits, bpe_split_spaces=a.bpe_split_spaces,
                              bpe_split_numbers=a.bpe_split_numbers, bpe_number_chunk=a.bpe_number_chunk, num_hidden_layers=a.layers, hidden_size=a.hidden_size,
                              intermediate_size=2 * a.hidden_size)
        cfg.validate("tiny")
    save_tiny(a.out_dir, cfg)
    print(json.dumps({"event": "done", "path": a.out_dir}))


if __name__ == "__main__":
    main()
