"""The stall watchdog (watchdog.py) on real trainer processes whose training stops making progress after step 2,
as one does on a GPU that stopped answering. The hang is put in by a small launcher script around the CLI."""

import json
import os
import subprocess
import sys

from conftest import TINY, sft_record, write_jsonl

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAUNCHER = """
import ctypes, sys, time
from gymflow_trainer import cli, optim, watchdog

watchdog.BACKSTOP_S = 1.0
real = optim.optimizer_step


def optimizer_step(*args, **kwargs):
    out = real(*args, **kwargs)
    if args[-1] == 2:  # the step number
        {hang}
    return out


optim.optimizer_step = optimizer_step
sys.exit(cli.main(sys.argv[1:]))
"""


def run_stalled(tmp_path, hang, **cfg):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(n_steps=2, reward=1.0) for _ in range(4)])
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "out"), "model": {"tiny": dict(TINY)}, "batch_size": 1,
                                  "save_every": 1, "keep_last": 5, **cfg}))
    launcher = tmp_path / "hang.py"
    launcher.write_text(LAUNCHER.replace("{hang}", hang))
    env = {**os.environ, "PYTHONPATH": TRAINER_DIR}
    env.pop("GYMFLOW_LIFELINE", None)
    p = subprocess.run([sys.executable, str(launcher), "sft", "--config", str(config)], capture_output=True, text=True, env=env, timeout=300)
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    return p, events


def test_a_training_stuck_after_a_step_ends_with_exit_7_and_every_stack(tmp_path):
    p, events = run_stalled(tmp_path, "time.sleep(3600)", stall_timeout_s=2)
    assert p.returncode == 7, p.stderr[-2000:]
    assert events[-1] == {"event": "error", "type": "Stalled", "message": events[-1]["message"]}
    assert events[-1]["message"].startswith("no progress for 2 s since optimizer step 2 (stall_timeout_s): the training is stuck")
    assert "gymflow watchdog: no progress for 2 s" in p.stderr
    assert 'in optimizer_step' in p.stderr  # the main thread's stack shows where it is stuck
    assert [e["step"] for e in events if e["event"] == "checkpoint"] == [1]


def test_when_the_stuck_thread_holds_the_gil_faulthandler_ends_the_process(tmp_path):
    """A C call that keeps the GIL (ctypes.PyDLL does not release it): the watchdog's Python thread cannot run,
    so faulthandler's own thread dumps the stacks and exits 1, BACKSTOP_S after the deadline."""
    p, events = run_stalled(tmp_path, "ctypes.PyDLL(None).sleep(3600)", stall_timeout_s=2)
    assert p.returncode == 1, p.stderr[-2000:]
    assert "Timeout (0:00:03)!" in p.stderr and "in optimizer_step" in p.stderr
    assert not any(e["event"] == "error" for e in events)


def test_a_training_that_keeps_stepping_is_left_alone(tmp_path):
    p, events = run_stalled(tmp_path, "time.sleep(1)", stall_timeout_s=3, epochs=2)
    assert p.returncode == 0, p.stderr[-2000:]
    assert events[-1]["event"] == "done" and events[-1]["step"] == 8
