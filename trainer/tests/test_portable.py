"""Model directories the trainer writes load the same in transformers 4 as in transformers 5
(gymflow_trainer/portable.py). Transformers 4.57 is installed by scripts/setup.sh into .venv/compat/transformers4
and is run here in a subprocess, with that directory first on PYTHONPATH, as an inference server that pins it
would load the model."""

import json
import os
import subprocess
import sys

import pytest
import torch

from gymflow_trainer import chat, checkpoints, models, tiny
from gymflow_trainer.config import TinyModelConfig
from gymflow_trainer.portable import make_portable, portable_config

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSFORMERS4 = os.path.join(os.path.dirname(TRAINER_DIR), ".venv", "compat", "transformers4")

SAMPLE = 'launched: 1989 <tool_call>{"name":"lookup","arguments":{"id":"x7"}}</tool_call><|im_end|>'
CONVERSATION = [{"role": "system", "content": "Tools: lookup."}, {"role": "user", "content": "When?"},
                {"role": "assistant", "content": '<tool_call>{"name":"lookup","arguments":{}}</tool_call>'},
                {"role": "tool", "content": "launched: 1989"}, {"role": "assistant", "content": "1989"}]

# What transformers 4 makes of a model directory: its version, the tokenizer's class and ids for SAMPLE, the chat
# template's rendering of CONVERSATION (and of the prompt for its last turn), the rope theta it uses and the
# model's logits for SAMPLE.
LOAD = """
import json, sys, torch, transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
d, sample, conversation = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"version": transformers.__version__}
try:
    tok = AutoTokenizer.from_pretrained(d)
    out["tokenizer"] = type(tok).__name__
    out["ids"] = tok(sample)["input_ids"]
    out["chat"] = tok.apply_chat_template(conversation, tokenize=False)
    out["prompt"] = tok.apply_chat_template(conversation[:-1], tokenize=False, add_generation_prompt=True)
except Exception as e:
    out["tokenizer_error"] = f"{type(e).__name__}: {e}"
out["rope_theta"] = AutoConfig.from_pretrained(d).rope_theta
model = AutoModelForCausalLM.from_pretrained(d).eval()
with torch.no_grad():
    out["logits"] = model(torch.tensor([out.get("ids") or [5, 6, 7]])).logits[0].tolist()
print(json.dumps(out))
"""


def in_transformers4(model_dir):
    assert os.path.isdir(os.path.join(TRANSFORMERS4, "transformers")), (
        f"{TRANSFORMERS4} is missing: run `npm run setup` (scripts/setup.sh installs transformers 4 there)")
    env = dict(os.environ, PYTHONPATH=TRANSFORMERS4)
    p = subprocess.run([sys.executable, "-c", LOAD, model_dir, SAMPLE, json.dumps(CONVERSATION)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


def qwen_like(rope_theta=1_000_000.0):
    """A tiny Qwen2 with Qwen2.5's rope theta and a digit-splitting BPE, as a fine-tuned Qwen2.5 would be saved."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = tiny.build_tokenizer(bpe_vocab_size=320, split_digits=True)
    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                      rope_theta=rope_theta, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    return tok, Qwen2ForCausalLM(cfg).eval()


def logits_v5(model, tok):
    with torch.no_grad():
        return model(torch.tensor([tok(SAMPLE)["input_ids"]])).logits[0]


def test_a_final_model_loads_in_transformers_4_as_in_5(tmp_path):
    tok, model = qwen_like()
    final = checkpoints.save_final(str(tmp_path), model, tok)
    got = in_transformers4(final)
    assert got["version"].startswith("4.")
    assert got["tokenizer"] == "PreTrainedTokenizerFast"
    assert got["ids"] == tok(SAMPLE)["input_ids"]
    assert got["chat"] == chat.render(CONVERSATION)[0]  # the trainer's ChatML, as vLLM would render it
    assert got["rope_theta"] == 1_000_000.0
    torch.testing.assert_close(torch.tensor(got["logits"]), logits_v5(model, tok), atol=1e-5, rtol=1e-4)
    # And transformers 5 reads it back as it wrote it.
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    assert AutoConfig.from_pretrained(final).rope_parameters == model.config.rope_parameters
    assert AutoTokenizer.from_pretrained(final)(SAMPLE)["input_ids"] == tok(SAMPLE)["input_ids"]
    torch.testing.assert_close(logits_v5(AutoModelForCausalLM.from_pretrained(final).eval(), tok), logits_v5(model, tok))


def test_without_it_transformers_4_refuses_the_tokenizer_and_silently_misreads_the_rope(tmp_path):
    """What make_portable prevents: the same save, left as transformers 5 writes it."""
    tok, model = qwen_like()
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    got = in_transformers4(str(tmp_path))
    assert "TokenizersBackend does not exist" in got["tokenizer_error"]
    assert got["rope_theta"] == 10_000.0  # transformers 4's default, not the model's 1,000,000


def test_save_tiny_and_checkpoints_are_portable(tmp_path):
    d = tiny.save_tiny(str(tmp_path / "tiny"), TinyModelConfig(hidden_size=32, intermediate_size=64))
    got = in_transformers4(d)
    assert got["tokenizer"] == "PreTrainedTokenizerFast" and got["rope_theta"] == 10_000.0
    tok, model = qwen_like()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    ck = checkpoints.save_checkpoint(str(tmp_path / "out"), 3, model, tok, opt, sched, {}, keep_last=2)
    with open(os.path.join(ck, "model", "config.json")) as fh:
        assert json.load(fh)["rope_theta"] == 1_000_000.0
    with open(os.path.join(ck, "model", "tokenizer_config.json")) as fh:
        assert json.load(fh)["tokenizer_class"] == "PreTrainedTokenizerFast"


def test_portable_config_derives_the_transformers_4_keys():
    cfg = {"rope_parameters": {"rope_theta": 1e6, "rope_type": "default"}}
    assert portable_config(cfg) == ["rope_theta"]
    assert cfg == {"rope_parameters": {"rope_theta": 1e6, "rope_type": "default"}, "rope_theta": 1e6}
    assert portable_config(cfg) == []  # idempotent
    yarn = {"rope_parameters": {"rope_theta": 1e6, "rope_type": "yarn", "factor": 4.0,
                                "original_max_position_embeddings": 32768, "partial_rotary_factor": 0.5}}
    assert portable_config(yarn) == ["rope_theta", "rope_scaling", "partial_rotary_factor"]
    assert yarn["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert yarn["partial_rotary_factor"] == 0.5
    # What is there already stays; per-layer-type parameters have no transformers 4 form and are left alone.
    kept = {"rope_theta": 5e5, "rope_parameters": {"rope_theta": 1e6, "rope_type": "default"}}
    assert portable_config(kept) == [] and kept["rope_theta"] == 5e5
    per_layer = {"rope_parameters": {"full_attention": {"rope_theta": 1e6, "rope_type": "default"},
                                     "sliding_attention": {"rope_theta": 1e4, "rope_type": "default"}}}
    assert portable_config(per_layer) == [] and "rope_theta" not in per_layer
    assert portable_config({"model_type": "gpt2"}) == []


def test_make_portable_reports_what_it_changed_and_is_idempotent(tmp_path):
    tok, model = qwen_like()
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    assert make_portable(str(tmp_path)) == ["config.json: rope_theta", "tokenizer_config.json: tokenizer_class"]
    assert make_portable(str(tmp_path)) == []
    assert make_portable(str(tmp_path / "missing")) == []


#: A base model's own template, in the manner of Qwen2.5's: a default system message when there is none, tool
#: results as user turns.
BASE_TEMPLATE = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "{% for m in messages %}{% if m['role'] == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m['content'] }}\n</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.mark.parametrize("mode", ["keep", "drop"])
def test_the_saved_chat_template_renders_what_the_model_was_trained_on(tmp_path, mode):
    """A server renders prompts from the saved tokenizer: they must be the trainer's ChatML (chat.render), without
    the system message for a model trained with system_prompt: drop, whatever template the base model had."""
    from transformers import AutoTokenizer

    tok, model = qwen_like()
    tok.chat_template = BASE_TEMPLATE
    models.system_prompt_mode(model.config, mode)  # what a training run stamps on its model
    final = checkpoints.save_final(str(tmp_path), model, tok)
    trained = [m for m in CONVERSATION if mode == "keep" or m["role"] != "system"]
    want = chat.render(trained[:-1], add_generation_prompt=True)[0]
    assert AutoTokenizer.from_pretrained(final).apply_chat_template(CONVERSATION[:-1], tokenize=False, add_generation_prompt=True) == want
    if mode == "drop":  # and the same under transformers 4
        assert in_transformers4(final)["prompt"] == want
