"""The lifeline: a process a gymflow worker starts stops when that worker is gone, however the worker ended.

The worker (``runTrainer`` in src/runtime/trainer-process.ts) starts each trainer command and policy server
with ``GYMFLOW_LIFELINE=stdin`` in its environment and its standard input a pipe. Only the worker holds the
pipe's write end, and it never writes to it. When the worker exits, even by ``kill -9``, the kernel closes that
end, and a read of the pipe returns end-of-file. Every process that inherited the pipe sees this.

This includes the ranks of a multi-GPU job. ``torchrun`` and ``accelerate launch`` pass their standard input on
to the ranks they start. They also start each rank in a session of its own, so a signal to the worker's process
group would never reach the ranks.

- Trainer commands (cli.py) watch the pipe from a daemon thread (:func:`watch`). At end-of-file they send
  themselves SIGTERM, which is the usual clean stop: exit 143 with the last complete checkpoint kept, or for
  ``serve``, the socket closed. A process still alive :data:`GRACE_S` later gets SIGKILL, for example a rank
  stuck in a collective that never returns to Python.
- A command that knows nothing of the lifeline (``vllm serve``, ``python -m sglang.launch_server``) runs under
  ``python -m gymflow_trainer.lifeline -- COMMAND [ARG...]`` (:func:`main`). This supervisor watches the pipe
  for the command and stops it, and what it started, the same way.

Without the lifeline, a worker's death left its trainer running until the trainer next wrote to its stdout
pipe. With ``log_every`` set high that could take minutes, and it could run into the retry on the same GPU.
A server such as vLLM never writes to stdout, so it ran until someone killed it, holding the GPU and the port.

Outside a worker (the variable unset) nothing is watched, so a trainer started from a terminal behaves as before.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

from .events import EventWriter

#: The environment variable that asks for the lifeline; its one value is ``stdin``.
LIFELINE_ENV = "GYMFLOW_LIFELINE"
#: Seconds between the SIGTERM that end-of-file sends and the SIGKILL that follows if the process is still alive.
GRACE_S = 30.0


def _say(message: str) -> None:
    # stderr may be a pipe to the worker that just died: a failed write must not stop the stop.
    try:
        os.write(2, f"gymflow lifeline: {message}\n".encode())
    except OSError:
        pass


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _wait_for_eof(fd: int) -> bool:
    """Blocks until ``fd`` reads end-of-file (True), or until reading it fails (False: not a verdict on the
    process at the other end)."""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return False
        if not chunk:
            return True


def watch(on_lost: Callable[[], None], fd: int = 0) -> Optional[threading.Thread]:
    """Calls ``on_lost`` from a daemon thread once ``fd`` (standard input) reads end-of-file. Does so only when
    ``GYMFLOW_LIFELINE=stdin`` is set and ``fd`` is a pipe or socket: a terminal or ``/dev/null`` says nothing
    about a parent. Returns the thread, or None when nothing is watched."""
    value = os.environ.get(LIFELINE_ENV)
    if value is None or value == "":
        return None
    if value != "stdin":
        _say(f"{LIFELINE_ENV}={value!r} is not understood (the one value is 'stdin'); not watching")
        return None
    if not _is_pipe(fd):
        _say(f"{LIFELINE_ENV}=stdin, but standard input is not a pipe; not watching")
        return None

    def run() -> None:
        if _wait_for_eof(fd):
            on_lost()

    thread = threading.Thread(target=run, name="gymflow-lifeline", daemon=True)
    thread.start()
    return thread


def stop_self(grace_s: float = GRACE_S) -> None:
    """The trainer commands' ``on_lost``: SIGTERM to this process (cli.py's handler raises ``Terminated`` in
    the main thread), then SIGKILL if it is still alive ``grace_s`` seconds later."""
    _say(f"the process that started this one (pid {os.getppid()} now) is gone: stopping with SIGTERM")
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    _say(f"still running {grace_s:g} s after SIGTERM: SIGKILL")
    os.kill(os.getpid(), signal.SIGKILL)


def _error(message: str) -> None:
    """The trainer's ``error`` event on stdout, which the worker reads as the reason for the exit status."""
    EventWriter().error("ConfigError", message)


def main(argv: Optional[list[str]] = None, grace_s: float = GRACE_S) -> int:
    """``python -m gymflow_trainer.lifeline [--grace SECONDS] -- COMMAND [ARG...]``: runs COMMAND and exits with
    its status (128 + N when signal N ended it). When the lifeline reads end-of-file it sends SIGTERM to
    COMMAND, or to the supervisor's whole process group when the supervisor leads one (as under the worker:
    servers such as vLLM start processes of their own), then SIGKILL after the grace period.

    Signals meant for COMMAND go to the process group, as the worker sends them. The supervisor itself
    ignores SIGTERM and SIGINT and waits for COMMAND to exit. COMMAND gets ``/dev/null`` as its standard input
    and the environment without ``GYMFLOW_LIFELINE``.

    A COMMAND that cannot be started exits 2 (a configuration error), with an ``error`` event that names it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--grace"] and len(args) >= 2:
        try:
            grace_s = float(args[1])
        except ValueError:
            grace_s = -1.0
        if not grace_s >= 0:
            _error(f"gymflow_trainer.lifeline: --grace must be a number of seconds >= 0, got {args[1]!r}")
            return 2
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        _error("gymflow_trainer.lifeline: no command given (usage: python -m gymflow_trainer.lifeline [--grace SECONDS] -- COMMAND [ARG...])")
        return 2
    env = {k: v for k, v in os.environ.items() if k != LIFELINE_ENV}
    try:
        child = subprocess.Popen(args, stdin=subprocess.DEVNULL, env=env)
    except OSError as e:
        code = errno.errorcode.get(e.errno or 0, "")
        _error(f"cannot start {args[0]!r}: {e.strerror or e}{f' ({code})' if code else ''}")
        return 2

    # The worker signals the whole group, so COMMAND has the signal too; the supervisor outlives it and
    # reports its status. (A Python handler, unlike SIG_IGN, is not inherited by what COMMAND executes.)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: None)
    leads_group = os.getpgrp() == os.getpid()

    def send(sig: int) -> None:
        try:
            if leads_group:
                os.killpg(os.getpgrp(), sig)
            else:
                child.send_signal(sig)
        except ProcessLookupError:
            pass

    def lost() -> None:
        _say(f"the process that started this one is gone: SIGTERM to {args[0]} (pid {child.pid})")
        send(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if child.poll() is None:
            _say(f"{args[0]} still running {grace_s:g} s after SIGTERM: SIGKILL")
        # Also what COMMAND left behind in the group, the supervisor included (it has nothing left to report to).
        send(signal.SIGKILL)

    watch(lost)
    status = child.wait()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    raise SystemExit(main())
