import json
import os
import sys
from typing import NamedTuple

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


class Run(NamedTuple):
    """What a command run by :func:`run_command` gave: its result (the ``done`` event's fields) and its events."""

    result: dict
    events: list

    @property
    def start(self):
        """The first event, the command's own start report (samples, resumed_from, optimizer_from, …)."""
        return self.events[0]

    @property
    def progress(self):
        return [e for e in self.events if e["event"] == "progress"]

    @property
    def losses(self):
        """``{step: loss}`` of the ``progress`` events."""
        return {e["step"]: e["loss"] for e in self.progress}


def run_command(command, config):
    """Runs trainer command ``command`` (``sft``, ``dpo``, ``rl``, ``rm``, ``export-onnx``) in this process, as the CLI
    does once it has read its configuration: ``config`` is a configuration document (a dict, built and validated as
    the command's configuration, like ``check-config`` does) or a configuration already built, run as it is.

    Example: ``run_command("sft", {"data": data, "output_dir": out, "model": {"tiny": TINY}}).losses``
    """
    from gymflow_trainer import cli
    from gymflow_trainer.config import COMMANDS, from_dict
    from gymflow_trainer.events import EventWriter

    if isinstance(config, dict):
        config = from_dict(COMMANDS[command], config)
        config.validate()
    cap = Capture()
    return Run(cli._dispatch(command, config, EventWriter(cap)), cap.lines)


def run_cli(capsys, *argv):
    """Runs ``python -m gymflow_trainer ARGV…`` in this process (``cli.main``: parsing, exit codes, error events);
    returns its exit code, the events it printed on stdout and what it wrote on stderr."""
    from gymflow_trainer import cli

    capsys.readouterr()  # what came before is not this command's
    rc = cli.main(list(argv))
    captured = capsys.readouterr()
    return rc, [json.loads(x) for x in captured.out.splitlines() if x.strip()], captured.err
