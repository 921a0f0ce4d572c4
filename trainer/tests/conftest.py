import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOOL_CALL = '<tool_call>\n{"name":"%s","arguments":%s}\n</tool_call>'


def msg(role, content, train=None, step_index=None, step_reward=None):
    """A message as the exporter writes it (TrainMessage: every field present, null where n/a)."""
    return {
        "role": role,
        "content": content,
        "tool_calls": None,
        "thought": None,
        "name": None,
        "tool_call_id": None,
        "train": (role == "assistant") if train is None else train,
        "step_index": step_index,
        "step_reward": step_reward,
        "env_reward": None,
    }


def conversation(n_steps=2, rewards=(0.5, 1.0), instruction="Echo the word hi.", thought="I will call echo."):
    msgs = [msg("system", "You are an agent. Tools: echo, submit."), msg("user", instruction)]
    for i in range(n_steps):
        tool = "submit" if i == n_steps - 1 else "echo"
        msgs.append(msg("assistant", f"{thought}\n\n" + TOOL_CALL % (tool, '{"text":"hi"}'), step_index=i,
                        step_reward=rewards[i % len(rewards)] if rewards else None))
        if i < n_steps - 1:
            msgs.append(msg("tool", f"observation {i}: hi", train=False, step_index=i))
    return msgs


def sft_record(**kw):
    reward = kw.pop("reward", 1.0)
    return {"messages": conversation(**kw), "tools": "[]", "trajectory_id": "t", "task_id": "task", "env_id": "gymflow/echo-v0",
            "domain": "demo", "agent": "scripted", "success": True, "reward": reward, "num_steps": 2, "outcome_reason": "submitted"}


def write_jsonl(path, records):
    with open(path, "w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return str(path)


@pytest.fixture(scope="session")
def tokenizer():
    from gymflow_trainer.tiny import build_tokenizer

    return build_tokenizer(0)


@pytest.fixture(scope="session")
def bpe_tokenizer():
    from gymflow_trainer.tiny import build_tokenizer

    return build_tokenizer(400)


TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}


class Capture:
    """A stdout stand-in for EventWriter that keeps the JSON events it is given."""

    def __init__(self):
        self.lines = []

    def write(self, s):
        self.lines += [json.loads(x) for x in s.splitlines() if x.strip()]

    def flush(self):
        pass


def assert_same_losses(got, expected):
    """Two runs' ``progress`` events: as many (more than one), with the same loss at every step."""
    assert len(got) == len(expected) > 1
    for a, b in zip(got, expected):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4, abs=1e-6)
