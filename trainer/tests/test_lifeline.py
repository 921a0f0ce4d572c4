"""The lifeline (gymflow_trainer/lifeline.py): a process started with ``GYMFLOW_LIFELINE=stdin`` and a pipe as its
standard input stops once the pipe's writer, the worker, is gone. This holds for the trainer commands, for the
ranks ``torchrun`` starts in sessions of their own, and for any command run under ``python -m
gymflow_trainer.lifeline``. Closing the write end here is what the kernel does when the worker dies, whether
it exits normally or gets ``kill -9``."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import TINY, sft_record, write_jsonl
from gymflow_trainer import lifeline

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCHRUN = os.path.join(os.path.dirname(sys.executable), "torchrun")
# On the CPU even on a GPU host: two torchrun ranks on one GPU are refused by design.
ENV = dict(os.environ, PYTHONPATH=TRAINER_DIR, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="")
for _k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", lifeline.LIFELINE_ENV):
    ENV.pop(_k, None)
LIFELINE = dict(ENV, **{lifeline.LIFELINE_ENV: "stdin"})


def alive(pid):
    """Whether ``pid`` runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(what, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return time.time()
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def with_marker(marker):
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if marker.encode() in fh.read() and alive(int(name)):
                    found.append(int(name))
        except OSError:
            pass
    return found


@pytest.fixture
def env_var(monkeypatch):
    def set_to(value):
        if value is None:
            monkeypatch.delenv(lifeline.LIFELINE_ENV, raising=False)
        else:
            monkeypatch.setenv(lifeline.LIFELINE_ENV, value)

    return set_to


def test_watch_fires_on_end_of_file_of_a_pipe_and_only_when_asked(env_var, capfd):
    r, w = os.pipe()
    try:
        fired = threading.Event()
        env_var(None)
        assert lifeline.watch(fired.set, fd=r) is None  # not started by a worker: nothing to watch
        env_var("stdin")
        thread = lifeline.watch(fired.set, fd=r)
        assert thread is not None and thread.daemon
        os.write(w, b"noise")  # data is not the end
        assert not fired.wait(0.3)
        os.close(w)
        w = None
        assert fired.wait(5)
        thread.join(5)
        assert not thread.is_alive()
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


def test_watch_refuses_what_says_nothing_about_a_parent(env_var, capfd, tmp_path):
    env_var("stdin")
    with open(tmp_path / "f", "w") as fh:  # a regular file reads end-of-file at once, parent or not
        assert lifeline.watch(lambda: pytest.fail("fired"), fd=fh.fileno()) is None
    assert "standard input is not a pipe; not watching" in capfd.readouterr().err
    env_var("stdout")
    r, w = os.pipe()
    try:
        assert lifeline.watch(lambda: pytest.fail("fired"), fd=r) is None
    finally:
        os.close(r)
        os.close(w)
    assert "GYMFLOW_LIFELINE='stdout' is not understood (the one value is 'stdin')" in capfd.readouterr().err


def sft_config(tmp_path, marker):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record() for _ in range(4)])
    # Trains for hours and writes nothing on stdout after its start: only the lifeline can stop it.
    cfg = tmp_path / f"{marker}.json"
    cfg.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)},
                               "epochs": 100000, "log_every": 10 ** 9, "save_every": 10 ** 9}))
    return cfg


def start(cmd, env, tmp_path, name):
    out = open(tmp_path / f"{name}.out", "w+")
    err = open(tmp_path / f"{name}.err", "w+")
    # Its stdout and stderr are files, not pipes, so no broken pipe can stop it either.
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err, env=env, start_new_session=True)
    return proc, out, err


def events_in(fh):
    fh.seek(0)
    return [json.loads(x) for x in fh.read().splitlines() if x.startswith("{")]


def test_a_trainer_command_stops_when_the_lifeline_is_cut(tmp_path):
    cfg = sft_config(tmp_path, "lifeline-sft")
    proc, out, err = start([sys.executable, "-m", "gymflow_trainer", "sft", "--config", str(cfg)], LIFELINE, tmp_path, "sft")
    try:
        wait_until("the trainer's start event", lambda: any(e["event"] == "start" for e in events_in(out)), 60)
        time.sleep(1)
        assert proc.poll() is None
        proc.stdin.close()  # what the kernel does when the worker dies
        rc = proc.wait(timeout=25)  # before the lifeline's SIGKILL, 30 s on
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The usual SIGTERM stop: exit 143 with an error event saying so.
    assert rc == 143, err.read()
    assert events_in(out)[-1] == {"event": "error", "type": "Terminated", "message": "terminated by SIGTERM"}
    err.seek(0)
    assert "the process that started this one" in err.read()


def test_torchrun_ranks_stop_when_the_lifeline_is_cut_even_after_the_launcher_was_killed(tmp_path):
    """torchrun starts each rank in a session of its own: a SIGKILL to the launcher's group leaves the ranks
    running (and holding the GPU). The lifeline reaches them all the same."""
    marker = "lifeline-ranks"
    cfg = sft_config(tmp_path, marker)
    cmd = [TORCHRUN, "--standalone", "--nproc_per_node", "2", "-m", "gymflow_trainer", "sft", "--config", str(cfg)]
    proc, out, err = start(cmd, LIFELINE, tmp_path, "ranks")
    try:
        wait_until("the job's start event", lambda: any(e["event"] == "start" for e in events_in(out)), 90)
        ranks = [p for p in with_marker(marker) if p != proc.pid]
        assert len(ranks) == 2, ranks
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher's group: the ranks are not in it
        proc.wait(timeout=10)
        time.sleep(1)
        assert all(alive(p) for p in ranks), "the ranks left torchrun's group, so its SIGKILL does not reach them"
        proc.stdin.close()
        wait_until("the ranks to stop", lambda: not any(alive(p) for p in ranks), 30)
    finally:
        for p in with_marker(marker):
            os.kill(p, signal.SIGKILL)


SERVER = """
import signal, subprocess, sys, time
ignore = len(sys.argv) > 1 and sys.argv[1] == "ignore"
if ignore:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # {marker}-grandchild"])
print("ready", kid.pid, flush=True)
time.sleep(600)
"""


def supervised(tmp_path, marker, *args, grace=None):
    script = tmp_path / f"{marker}.py"
    script.write_text(SERVER.replace("{marker}", marker))
    cmd = [sys.executable, "-m", "gymflow_trainer.lifeline", *(["--grace", str(grace)] if grace is not None else []),
           "--", sys.executable, str(script), *args]
    return start(cmd, LIFELINE, tmp_path, marker)


@pytest.mark.parametrize("ignores_sigterm", [False, True])
def test_the_supervisor_stops_a_command_and_what_it_started_when_the_lifeline_is_cut(tmp_path, ignores_sigterm):
    marker = f"lifeline-server-{int(ignores_sigterm)}"
    proc, out, err = supervised(tmp_path, marker, *(["ignore"] if ignores_sigterm else []), grace=1)
    try:
        wait_until("the server to be ready", lambda: "ready" in (out.seek(0) or out.read()), 30)
        tree = with_marker(marker)
        assert len(tree) == 3, tree  # the supervisor, the server, the server's child
        assert alive(proc.pid)
        proc.stdin.close()
        wait_until("the supervised tree to stop", lambda: with_marker(marker) == [], 15)
        proc.wait(timeout=5)
    finally:
        for p in with_marker(marker):
            os.kill(p, signal.SIGKILL)
    err.seek(0)
    log = err.read()
    assert "the process that started this one is gone: SIGTERM to" in log
    assert ("still running 1 s after SIGTERM: SIGKILL" in log) == ignores_sigterm


def test_the_supervisor_passes_the_command_status_and_output_on(tmp_path):
    def run(*args):
        r, w = os.pipe()  # a lifeline held open for the whole run, as the worker holds it
        try:
            return subprocess.run([sys.executable, "-m", "gymflow_trainer.lifeline", *args], stdin=r,
                                  capture_output=True, text=True, env=LIFELINE, timeout=30)
        finally:
            os.close(r)
            os.close(w)

    r = run("--", sys.executable, "-c", "import os, sys; print('out', os.environ.get('GYMFLOW_LIFELINE')); sys.exit(7)")
    assert (r.returncode, r.stdout) == (7, "out None\n")  # the command does not watch a lifeline of its own
    r = run(sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert r.returncode == 128 + signal.SIGTERM
    r = run("--", "/nonexistent/vllm", "serve")
    assert r.returncode == 2
    assert json.loads(r.stdout) == {"event": "error", "type": "ConfigError",
                                    "message": "cannot start '/nonexistent/vllm': No such file or directory (ENOENT)"}
    r = run("--grace", "soon", "--", "true")
    assert r.returncode == 2 and "--grace must be a number of seconds >= 0, got 'soon'" in r.stdout
    r = run("--")
    assert r.returncode == 2 and "no command given" in r.stdout


def test_the_supervisor_outlives_a_signal_to_its_group_and_reports_the_command_status(tmp_path):
    """The worker stops a server with SIGTERM to the process group: the command gets it and exits, and the
    supervisor, which ignores it, reports how the command ended."""
    marker = "lifeline-group-term"
    proc, out, err = supervised(tmp_path, marker)
    try:
        wait_until("the server to be ready", lambda: "ready" in (out.seek(0) or out.read()), 30)
        os.killpg(proc.pid, signal.SIGTERM)
        rc = proc.wait(timeout=15)
    finally:
        for p in with_marker(marker):
            os.kill(p, signal.SIGKILL)
    assert rc == 128 + signal.SIGTERM
