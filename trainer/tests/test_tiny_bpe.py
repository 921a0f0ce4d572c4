"""Byte-level BPE trained on exported datasets (``TinyModelConfig.bpe_corpus``): special tokens, determinism,
compression, round-trips, and the config checks."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from conftest import TOOL_CALL, msg, sft_record, write_jsonl
from gymflow_trainer.chat import render
from gymflow_trainer.config import TinyModelConfig, load_config
from gymflow_trainer.errors import ConfigError, DataError
from gymflow_trainer.tiny import build_tiny, build_tokenizer, corpus_texts, main

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
SYSTEM = "You are an agent. Tools: lookup (entity, attribute), calculator (expression), submit (answer)."
ENTITIES = [("Corvane Stargazer", "price", "1280.00"), ("Marrowgate", "population", "34100"), ("Nadia Orrin", "born", "1852")]


def records() -> list[dict]:
    out = []
    for name, attr, value in ENTITIES * 3:
        msgs = [msg("system", SYSTEM), msg("user", f"What is the {attr} of {name}? Answer with a number.")]
        msgs.append(msg("assistant", TOOL_CALL % ("lookup", json.dumps({"entity": name, "attribute": attr})), step_index=0))
        msgs.append(msg("tool", f"{name} — {attr}: {value}", train=False, step_index=0))
        msgs.append(msg("assistant", TOOL_CALL % ("submit", json.dumps({"answer": value})), step_index=1))
        rec = sft_record()
        rec["messages"] = msgs
        out.append(rec)
    return out


@pytest.fixture()
def corpus(tmp_path):
    return write_jsonl(tmp_path / "sft.jsonl", records())


def fingerprint(tok) -> str:
    return hashlib.sha256(tok.backend_tokenizer.to_str().encode()).hexdigest()


def test_special_tokens_keep_their_ids(corpus):
    tok = build_tokenizer(400, [corpus])
    assert [tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")] == [0, 1, 2]
    assert tok.pad_token_id == 0 and tok.eos_token_id == 2
    ids = tok("<|im_start|>assistant\nhi<|im_end|>\n", add_special_tokens=False)["input_ids"]
    assert ids[0] == 1 and 2 in ids


def test_learns_the_corpus_and_compresses_it(corpus):
    text, _ = render([{"role": m["role"], "content": m["content"]} for m in records()[0]["messages"]])
    plain = build_tokenizer(0)
    bpe = build_tokenizer(400, [corpus])
    builtin = build_tokenizer(400)
    n_bytes = len(plain(text, add_special_tokens=False)["input_ids"])
    n_bpe = len(bpe(text, add_special_tokens=False)["input_ids"])
    assert n_bpe * 2.5 < n_bytes, (n_bpe, n_bytes)
    assert n_bpe < len(builtin(text, add_special_tokens=False)["input_ids"])  # the corpus is what was learnt
    # role names of ChatML headers are learnt (they are counted once per message)
    assert bpe.convert_ids_to_tokens(bpe("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]) == ["<|im_start|>", "assistant", "Ċ"]
    # any text still round-trips: every byte keeps a symbol
    other = "Ünïcode ✓ 0123 \t tabs and <|im_end|> inside"
    assert bpe.decode(bpe(other, add_special_tokens=False)["input_ids"]) == other


def test_same_inputs_same_tokenizer_across_processes(corpus):
    here = fingerprint(build_tokenizer(400, [corpus], split_digits=True))
    code = ("import hashlib,sys; from gymflow_trainer.tiny import build_tokenizer; "
            f"t = build_tokenizer(400, [{corpus!r}], split_digits=True); "
            "print(hashlib.sha256(t.backend_tokenizer.to_str().encode()).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.strip() == here
    assert fingerprint(build_tokenizer(400, [corpus])) != here  # split_digits changes the tokenizer


def test_split_digits_makes_single_digit_tokens(corpus):
    tok = build_tokenizer(400, [corpus], split_digits=True)
    pieces = tok.convert_ids_to_tokens(tok("price: 1280.00", add_special_tokens=False)["input_ids"])
    assert [p for p in pieces if any(c.isdigit() for c in p)] == ["1", "2", "8", "0", "0", "0"]
    merged = build_tokenizer(400, [corpus])
    assert any(len(p.strip("Ġ")) > 1 and p.strip("Ġ").isdigit()
               for p in merged.convert_ids_to_tokens(merged("1280 34100 1852", add_special_tokens=False)["input_ids"]))


def test_split_numbers_makes_a_number_the_same_tokens_after_a_space_and_after_punctuation(corpus):
    tok = build_tokenizer(400, [corpus], split_numbers=True)

    def digits(t, text):
        return [p for p in t.convert_ids_to_tokens(t(text, add_special_tokens=False)["input_ids"]) if any(c.isdigit() for c in p)]

    after_space, after_paren = digits(tok, "founded: 1852"), digits(tok, '{"expression":"abs(1852 - 3)"}')[:-1]
    assert after_space == after_paren and not any(p.startswith("Ġ") for p in after_space)
    gpt2 = build_tokenizer(400, [corpus])
    # GPT-2's rule joins the space to the number (other tokens after a space); split_numbers keeps it apart
    def pieces(t, text):
        return [p for p, _ in t.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text)]
    assert pieces(gpt2, ": 1852") == [":", "Ġ1852"]
    assert pieces(tok, ": 1852") == [":", "Ġ", "1852"]
    # multi-digit tokens remain (unlike split_digits), and any text still round-trips
    assert any(len(p) > 1 for p in digits(tok, "1280 34100 1852 1852 1852"))
    text = "price: 1280.00 (x1) 3/4"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text


def test_number_chunk_cuts_every_number_into_the_same_short_pieces(corpus):
    tok = build_tokenizer(400, [corpus], number_chunk=2)

    def pieces(text):
        return [p for p, _ in tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text) if any(c.isdigit() for c in p)]

    # pieces of at most 2 digits from the left, the same after a space and after punctuation
    assert pieces("population: 34100") == ["34", "10", "0"]
    assert pieces('{"answer":"34100"}') == ["34", "10", "0"]
    assert pieces("Result: 1280.00") == ["12", "80", "00"]
    assert pieces("Result: 41725") == ["41", "72", "5"]
    # no token holds more than 2 digits, however often the corpus repeats a number
    ids = tok("34100 34100 1852 1280.00", add_special_tokens=False)["input_ids"]
    assert max(sum(c.isdigit() for c in p) for p in tok.convert_ids_to_tokens(ids)) <= 2
    text = "price: 1280.00 (x1) 3/4 123456789"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text


def test_corpus_texts_reads_every_export_format():
    texts = list(corpus_texts([os.path.join(FIXTURES, f) for f in ("sft.jsonl", "dpo.jsonl", "rl.jsonl")]))
    assert "system" in texts and "assistant" in texts and "tool" in texts
    assert any("<tool_call>" in t for t in texts)
    # rl records: prompt + group[].completion; dpo: prompt + chosen + rejected
    rl = [json.loads(line) for line in open(os.path.join(FIXTURES, "rl.jsonl"))]
    completion = rl[0]["group"][0]["completion"][0]["content"]
    assert completion in texts


def test_bad_corpus_is_an_error_naming_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\nnot json\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: not valid JSON"):
        list(corpus_texts([str(bad)]))


def test_config_checks(tmp_path, corpus):
    with pytest.raises(ConfigError, match=r"bpe_corpus needs bpe_vocab_size"):
        TinyModelConfig(bpe_corpus=[corpus]).validate("$.model.tiny")
    with pytest.raises(ConfigError, match=r"\$.model.tiny.bpe_corpus\[0\]: '/nope.jsonl' is not a file"):
        TinyModelConfig(bpe_vocab_size=400, bpe_corpus=["/nope.jsonl"]).validate("$.model.tiny")
    with pytest.raises(ConfigError, match=r"\$.model.tiny.bpe_number_chunk must be 0 \(off\) or a number of digits >= 1, got -1"):
        TinyModelConfig(bpe_number_chunk=-1).validate("$.model.tiny")
    with pytest.raises(ConfigError, match=r"bpe_number_chunk cannot be combined with bpe_split_digits or bpe_split_numbers"):
        TinyModelConfig(bpe_number_chunk=2, bpe_split_numbers=True).validate("$.model.tiny")
    cfg_file = tmp_path / "sft.json"
    cfg_file.write_text(json.dumps({"data": corpus, "output_dir": str(tmp_path / "out"),
                                    "model": {"tiny": {"bpe_vocab_size": 400, "bpe_corpus": [corpus], "bpe_split_digits": True}}}))
    cfg = load_config("sft", str(cfg_file))
    assert cfg.model.tiny.bpe_corpus == [corpus] and cfg.model.tiny.bpe_split_digits is True
    tok, model = build_tiny(cfg.model.tiny)
    assert model.config.vocab_size == len(tok) <= 400


def test_tiny_command_builds_the_initial_model_of_an_sft_config(tmp_path, corpus, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tiny = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
            "num_key_value_heads": 2, "bpe_vocab_size": 400, "bpe_corpus": [corpus]}
    cfg_file = tmp_path / "sft.yaml"
    cfg_file.write_text(json.dumps({"data": corpus, "output_dir": "x", "model": {"tiny": tiny}}))  # JSON is YAML
    out = str(tmp_path / "m")
    main([out, "--config", str(cfg_file)])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {"event": "done", "path": out}
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.config.num_hidden_layers == 1 and model.config.hidden_size == 32
    assert fingerprint(tok) == fingerprint(build_tokenizer(400, [corpus]))
    no_tiny = tmp_path / "path.json"
    no_tiny.write_text(json.dumps({"model": {"path": "/somewhere"}}))
    with pytest.raises(ConfigError, match=r"path.json: \$.model has no 'tiny' section"):
        main([str(tmp_path / "n"), "--config", str(no_tiny)])


def test_a_model_born_without_the_system_prompt_learns_its_bpe_without_it(tmp_path):
    system = "Zyxwvut qrstuv zyxwvut qrstuv " * 20  # a text only the system message carries
    recs = [{"messages": [msg("system", system), msg("user", f"Question {i}"), msg("assistant", TOOL_CALL)]} for i in range(20)]
    path = write_jsonl(tmp_path / "c.jsonl", recs)
    assert not any("Zyxwvut" in t for t in corpus_texts([path], system=False))
    keep, _ = build_tiny(TinyModelConfig(bpe_vocab_size=400, bpe_corpus=[path]))
    drop, _ = build_tiny(TinyModelConfig(bpe_vocab_size=400, bpe_corpus=[path], system_prompt="drop"))
    assert len(keep.encode("Zyxwvut qrstuv", add_special_tokens=False)) < len(drop.encode("Zyxwvut qrstuv", add_special_tokens=False))
