"""Tiny model + tokenizer: saved with save_pretrained, loaded with the Auto classes; the chat template."""

import os

import pytest

from gymflow_trainer.chat import CHAT_TEMPLATE, render
from gymflow_trainer.config import TinyModelConfig
from gymflow_trainer.tiny import save_tiny

MSGS = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "Say héllo"},
    {"role": "assistant", "content": 'ok\n\n<tool_call>\n{"name":"echo","arguments":{"text":"héllo"}}\n</tool_call>'},
    {"role": "tool", "content": "héllo"},
]


@pytest.mark.parametrize("arch,bpe", [("llama", 0), ("qwen2", 400)])
def test_save_and_load_with_auto_classes(tmp_path, arch, bpe):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = save_tiny(str(tmp_path / arch), TinyModelConfig(arch=arch, bpe_vocab_size=bpe, hidden_size=32, intermediate_size=64))
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModelForCausalLM.from_pretrained(d)
    assert model.config.model_type == arch
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    text = tok.apply_chat_template(MSGS, tokenize=False, add_generation_prompt=True)
    assert text == render(MSGS, add_generation_prompt=True)[0]
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text  # byte-level: any text round-trips
    out = model(input_ids=torch.tensor([ids]))
    assert out.logits.shape == (1, len(ids), len(tok))
    assert os.path.isfile(os.path.join(d, "tokenizer.json"))


def test_template_exact_text():
    # The TypeScript side must render byte-identical prompts: this is the contract (docs/trainer.md).
    text, _ = render(MSGS[:3], add_generation_prompt=False)
    assert text == (
        "<|im_start|>system\nYou are an agent.<|im_end|>\n"
        "<|im_start|>user\nSay héllo<|im_end|>\n"
        '<|im_start|>assistant\nok\n\n<tool_call>\n{"name":"echo","arguments":{"text":"héllo"}}\n</tool_call><|im_end|>\n'
    )
    assert render([], add_generation_prompt=True)[0] == "<|im_start|>assistant\n"


def test_docs_show_the_template():
    doc = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "trainer.md")
    assert CHAT_TEMPLATE in open(doc, encoding="utf-8").read()


def test_trained_spans_are_assistant_content_and_end_token():
    text, segs = render(MSGS)
    trained = "".join(text[s.start : s.end] for s in segs if s.trained)
    assert trained == MSGS[2]["content"] + "<|im_end|>"


def test_tiny_command_writes_a_model_directory(tmp_path, capsys):
    from gymflow_trainer.tiny import main

    main([str(tmp_path / "m"), "--arch", "qwen2", "--hidden-size", "32"])
    assert '"event": "done"' in capsys.readouterr().out
    assert os.path.isfile(tmp_path / "m" / "config.json") and os.path.isfile(tmp_path / "m" / "tokenizer.json")
