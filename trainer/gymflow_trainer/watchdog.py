"""The stall watchdog: a training that stops making progress ends, with every thread's stack on stderr, instead of
holding its GPU until the activity's start-to-close timeout, hours later (docs/trainer.md, "Stalled training").

What stalls a training without ending it: a GPU that stopped answering (an Xid error leaves the process blocked
in a CUDA call for good), a data read from a hung network filesystem, a collective whose peer is stuck where
NCCL's own watchdog does not look. The worker keeps heartbeating while the process lives, so Temporal sees
nothing wrong either.

The training commands call :func:`beat` after every optimizer step and every checkpoint they write
(optim.py, checkpoints.py). The watchdog arms at the first beat, so loading the model and the first step are not timed, and
fires when no beat came for ``stall_timeout_s`` (TrainLoopConfig; 0 turns it off):

- a Python thread writes an ``error`` event of type ``Stalled`` that names the last beat, dumps every thread's
  stack to stderr (``faulthandler``) and ends the process with exit status 7 (``os._exit``: the main thread is
  stuck, so nothing else would unwind);
- when that thread cannot run, because the stuck main thread holds the GIL in a call that never returns,
  ``faulthandler``'s own C thread dumps the stacks :data:`BACKSTOP_S` later and exits with status 1.

The train activity retries a stalled training (``TRAINER_STALLED``); the retry resumes from the last checkpoint.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
import traceback
from typing import Optional, TextIO

from .events import EventWriter

#: The exit status of a stalled training.
EXIT_STALLED = 7
#: Seconds after the Python thread's deadline at which faulthandler's C thread ends the process instead.
BACKSTOP_S = 60.0


class Watchdog:
    """Ends the process when :meth:`beat` was not called for ``timeout_s`` seconds (see the module comment)."""

    def __init__(self, timeout_s: float, events: EventWriter) -> None:
        self.timeout_s = timeout_s
        self.events = events
        self._cond = threading.Condition()
        self._last: Optional[tuple[float, str]] = None
        self._stopped = False
        self._thread: Optional[threading.Thread] = None
        self._armed_at = float("-inf")

    def beat(self, what: str) -> None:
        """Progress: ``what`` (e.g. "optimizer step 12") just completed."""
        with self._cond:
            if self._stopped:
                return
            self._last = (time.monotonic(), what)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="gymflow-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        # Re-arming restarts faulthandler's thread; once a second is plenty against a deadline BACKSTOP_S later.
        now = time.monotonic()
        if now - self._armed_at < 1.0:
            return
        self._armed_at = now
        stream = _stderr_with_fd()
        if stream is not None:
            faulthandler.dump_traceback_later(self.timeout_s + BACKSTOP_S, exit=True, file=stream)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        faulthandler.cancel_dump_traceback_later()

    def _watch(self) -> None:
        with self._cond:
            while True:
                if self._stopped or self._last is None:
                    return
                since, what = self._last
                left = since + self.timeout_s - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        self._fire(what)

    def _fire(self, what: str) -> None:
        self.events.error("Stalled", f"no progress for {self.timeout_s:g} s since {what} (stall_timeout_s): the training is stuck, e.g. "
                                     f"on a GPU that stopped answering, a hung collective or a data read; every thread's stack is on stderr")
        try:
            sys.stderr.write(f"gymflow watchdog: no progress for {self.timeout_s:g} s since {what}; stacks of every thread:\n")
            sys.stderr.flush()
            stream = _stderr_with_fd()
            if stream is not None:
                faulthandler.dump_traceback(file=stream, all_threads=True)
            else:
                for ident, frame in sys._current_frames().items():
                    sys.stderr.write(f"Thread {ident:#x}:\n{''.join(traceback.format_stack(frame))}")
                sys.stderr.flush()
        finally:
            os._exit(EXIT_STALLED)


def _stderr_with_fd() -> Optional[TextIO]:
    """stderr, or the process's original one when it was replaced by a stream without a file descriptor (a test's
    capture): faulthandler writes to the descriptor, from a thread of its own. None when neither has one."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None and stream.fileno() >= 0:
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return None


_current: Optional[Watchdog] = None


def start(timeout_s: float, events: EventWriter) -> None:
    """Watches this process's training from its first :func:`beat` on (``timeout_s`` 0: not at all)."""
    global _current
    stop()
    if timeout_s > 0:
        _current = Watchdog(timeout_s, events)


def beat(what: str) -> None:
    """Records progress for the running watchdog; nothing when none was started (tests, ``export-onnx``)."""
    if _current is not None:
        _current.beat(what)


def stop() -> None:
    """Stops the running watchdog, if any (the command ended)."""
    global _current
    if _current is not None:
        _current.stop()
        _current = None


__all__ = ["Watchdog", "start", "beat", "stop", "EXIT_STALLED", "BACKSTOP_S"]
