"""Loaders: chat-template tokenisation, loss masks, step weights, chunking, curriculum."""

import json

import pytest

from conftest import conversation, msg, sft_record, write_jsonl
from gymflow_trainer.chat import render
from gymflow_trainer.data import (IGNORE, FIELDS, chunk_example, curriculum_order, curriculum_pool, load_dpo, load_rl, load_sft,
                                  tokenize_messages)
from gymflow_trainer.errors import DataError


def trained_text(tok, ex):
    return tok.decode([t for t in ex.labels if t != IGNORE])


def test_ids_equal_tokenizing_the_rendered_template(tokenizer, bpe_tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [sft_record()])
    for tok in (tokenizer, bpe_tokenizer):
        ex = load_sft(path, tok, 4096)[0]
        plain = [{"role": m["role"], "content": m["content"]} for m in conversation()]
        assert ex.input_ids == tok(tok.apply_chat_template(plain, tokenize=False), add_special_tokens=False)["input_ids"]


def test_only_assistant_tokens_are_trained(tokenizer, bpe_tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [sft_record()])
    msgs = conversation()
    want = "".join(m["content"] + "<|im_end|>" for m in msgs if m["role"] == "assistant")
    for tok in (tokenizer, bpe_tokenizer):
        ex = load_sft(path, tok, 4096)[0]
        assert trained_text(tok, ex) == want
        assert all(w == 1.0 for w, l in zip(ex.weights, ex.labels) if l != IGNORE)
        assert all(w == 0.0 for w, l in zip(ex.weights, ex.labels) if l == IGNORE)


def test_train_false_assistant_message_is_masked(tokenizer, tmp_path):
    rec = sft_record()
    rec["messages"][2]["train"] = False  # first assistant step was an invalid action
    ex = load_sft(write_jsonl(tmp_path / "d.jsonl", [rec]), tokenizer, 4096)[0]
    assert trained_text(tokenizer, ex) == rec["messages"][4]["content"] + "<|im_end|>"


def test_mask_observations_off_trains_every_message_but_train_false(tokenizer, tmp_path):
    rec = sft_record()
    rec["messages"][2]["train"] = False
    ex = load_sft(write_jsonl(tmp_path / "d.jsonl", [rec]), tokenizer, 4096, mask_observations=False)[0]
    text = trained_text(tokenizer, ex)
    assert "You are an agent" in text and "observation 0: hi" in text and "Echo the word hi." in text
    assert rec["messages"][2]["content"] not in text  # the invalid action stays masked
    assert "<|im_start|>" not in text  # headers are never trained


def test_step_weighted_weights_are_reward_over_mean(tokenizer, tmp_path):
    # step rewards 0.5 and 1.0 → mean 0.75 → weights 0.5/0.75 = 2/3 and 1.0/0.75 = 4/3
    ex = load_sft(write_jsonl(tmp_path / "d.jsonl", [sft_record(rewards=(0.5, 1.0))]), tokenizer, 4096, step_weighted=True)[0]
    ws = sorted({round(w, 6) for w, l in zip(ex.weights, ex.labels) if l != IGNORE})
    assert ws == [round(2 / 3, 6), round(4 / 3, 6)]


def test_step_weighted_without_step_rewards_is_a_clear_error(tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [sft_record(rewards=())])
    with pytest.raises(DataError, match="no step rewards.*step_weighted: false"):
        load_sft(path, tokenizer, 4096, step_weighted=True)


def test_bad_record_names_file_and_line(tokenizer, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"messages":[{"role":"user","content":"x"}]}\n{"messages":"nope"}\n')
    with pytest.raises(DataError, match=r"d\.jsonl:2: \$\.messages"):
        load_sft(str(p), tokenizer, 4096)
    p.write_text("{not json}\n")
    with pytest.raises(DataError, match=r"d\.jsonl:1: not valid JSON"):
        load_sft(str(p), tokenizer, 4096)


def test_bad_message_fields_and_numbers_are_named(tokenizer, tmp_path):
    p = tmp_path / "d.jsonl"
    user = {"role": "user", "content": "x"}
    for msg, match in [
        ({"role": "bot", "content": "y"}, r"d\.jsonl:1: \$\.messages\[1\]\.role: unknown role 'bot'"),
        # a truthy string: the message would have been trained on
        ({"role": "assistant", "content": "y", "train": "false"}, r"\$\.messages\[1\]\.train: expected true or false, got 'false'"),
        ({"role": "assistant", "content": "y", "step_reward": "high"}, r"\$\.messages\[1\]\.step_reward: expected a finite number, got 'high'"),
    ]:
        p.write_text(json.dumps({"messages": [user, msg]}) + "\n")
        with pytest.raises(DataError, match=match):
            load_sft(str(p), tokenizer, 4096)
    p.write_text(json.dumps({"messages": [user, {"role": "assistant", "content": "y"}], "reward": float("nan")}) + "\n")
    with pytest.raises(DataError, match=r"d\.jsonl:1: \$\.reward: expected a finite number, got nan"):
        load_sft(str(p), tokenizer, 4096)
    p.write_bytes(b'{"messages": [{"role": "user", "content": "caf\xe9"}]}\n')
    with pytest.raises(DataError, match=r"d\.jsonl:1: not valid UTF-8"):
        load_sft(str(p), tokenizer, 4096)


def test_dpo_pairs_without_a_difference_are_counted_on_stderr(tokenizer, tmp_path, capsys):
    prompt = [{"role": "user", "content": "x"}]
    same, other = [{"role": "assistant", "content": "y"}], [{"role": "assistant", "content": "z"}]
    p = write_jsonl(tmp_path / "p.jsonl", [{"prompt": prompt, "chosen": same, "rejected": same}, {"prompt": prompt, "chosen": same, "rejected": other}])
    assert len(load_dpo(p, tokenizer, 4096)) == 2
    assert "p.jsonl: 1 of 2 pairs have the same chosen and rejected continuation; they teach nothing" in capsys.readouterr().err


def test_an_rl_member_needs_a_finite_reward(tokenizer, tmp_path):
    p = tmp_path / "g.jsonl"
    conv = [{"role": "user", "content": "x"}]
    member = {"completion": [{"role": "assistant", "content": "y"}]}
    for extra, match in [({}, r"g\.jsonl:1: \$\.group\[0\]\.reward: missing"), ({"reward": None}, r"reward: missing"),
                         ({"reward": "good"}, r"reward: expected a finite number, got 'good'"), ({"reward": float("nan")}, r"got nan"),
                         ({"reward": 1.0, "advantage": "x"}, r"\$\.group\[0\]\.advantage: expected a finite number")]:
        p.write_text(json.dumps({"task_id": "t", "prompt": conv, "group": [{**member, **extra}]}) + "\n")
        with pytest.raises(DataError, match=match):
            load_rl(str(p), tokenizer, 4096)


def test_chunking_cuts_at_step_boundaries_with_untrained_overlap(tokenizer):
    msgs = conversation(n_steps=6)
    plain = [{"role": m["role"], "content": m["content"]} for m in msgs]
    trained = [m["role"] == "assistant" for m in msgs]
    tk = tokenize_messages(tokenizer, plain, trained)
    max_len, overlap = 260, 16
    assert len(tk.input_ids) > 2 * max_len
    chunks = chunk_example(tk, max_len, overlap)
    assert len(chunks) >= 3
    trained_total = []
    for i, (ids, labels, _w) in enumerate(chunks):
        assert len(ids) <= max_len
        if i > 0:
            assert all(x == IGNORE for x in labels[:overlap])  # context is never trained
        trained_total += [x for x in labels if x != IGNORE]
    # every trained token of the conversation is trained exactly once across chunks
    assert trained_total == [x for x in tk.labels if x != IGNORE]
    # each chunk after the first starts (after its overlap) at an assistant header
    for ids, _l, _w in chunks[1:]:
        assert tokenizer.decode(ids[overlap:]).startswith("<|im_start|>assistant\n")


def test_load_sft_overlong_modes(tokenizer, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [sft_record(n_steps=6)])
    assert all(len(e.input_ids) <= 300 for e in load_sft(path, tokenizer, 300, chunk_overlap=8))
    assert len(load_sft(path, tokenizer, 300, overlong="truncate")) == 1
    with pytest.raises(DataError, match="more than max_length 300"):
        load_sft(path, tokenizer, 300, overlong="error")


def test_curriculum_order_and_pool(tokenizer, tmp_path):
    recs = [sft_record(n_steps=4, reward=0.0), sft_record(n_steps=2, reward=1.0), sft_record(n_steps=3, reward=0.5)]
    exs = load_sft(write_jsonl(tmp_path / "d.jsonl", recs), tokenizer, 4096)
    # short + high reward first: #1 (2 steps, 1.0), then #2 (3 steps, 0.5), then #0 (4 steps, 0.0)
    assert curriculum_order(exs) == [1, 2, 0]
    # start 0.5 over 3 epochs: ceil(0.5·3)=2, ceil(0.75·3)=3, 3
    assert [curriculum_pool(3, e, 3, 0.5) for e in range(3)] == [2, 3, 3]


def test_dpo_and_rl_loaders(tokenizer, tmp_path):
    conv = conversation()
    plain = lambda ms: [{"role": m["role"], "content": m["content"]} for m in ms]  # noqa: E731
    dpo = {"prompt": plain(conv[:2]), "chosen": plain(conv[2:]), "rejected": [{"role": "assistant", "content": "<tool_call>\n{}\n</tool_call>"}]}
    ex = load_dpo(write_jsonl(tmp_path / "p.jsonl", [dpo]), tokenizer, 4096)[0]
    assert trained_text(tokenizer, ex.rejected) == "<tool_call>\n{}\n</tool_call><|im_end|>"
    assert "Echo the word" not in trained_text(tokenizer, ex.chosen)
    rl = {"task_id": "t1", "prompt": conv[:2], "group": [{"completion": conv[2:], "reward": 1.0, "advantage": 1.0},
                                                        {"completion": conv[2:3], "reward": 0.0, "advantage": -1.0}]}
    samples = load_rl(write_jsonl(tmp_path / "r.jsonl", [rl]), tokenizer, 4096)
    assert [s.reward for s in samples] == [1.0, 0.0] and samples[0].group == samples[1].group
    assert not any(s.cut for s in samples)
    short = load_rl(write_jsonl(tmp_path / "r.jsonl", [rl]), tokenizer, len(samples[1].tokens.input_ids))
    assert [s.cut for s in short] == [True, False] and len(short[0].tokens.input_ids) == len(samples[1].tokens.input_ids)


def test_field_names_are_one_mapping():
    assert FIELDS["messages"] == "messages" and FIELDS["step_reward"] == "step_reward" and FIELDS["train"] == "train"
    assert render([msg("user", "x")])[0] == "<|im_start|>user\nx<|im_end|>\n"
