"""JSON-lines progress protocol on stdout (docs/trainer.md, "Events").

Every line is one JSON object with an ``event`` key: ``start``, ``progress``, ``checkpoint``, ``done``,
``error``. Nothing else is printed to stdout (libraries' chatter goes to stderr), so the TypeScript train
activity can turn each line into a heartbeat.

Under ``torchrun`` / ``accelerate launch`` only rank 0 writes events (one stream per job, not one per GPU);
another rank's ``error`` goes to stderr with its rank, where the launcher's log shows it.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Callable, TextIO

#: Receives every event rank 0 writes, with its fields as given (a NaN still a NaN): tensorboard_log.py.
Sink = Callable[[str, dict[str, Any]], None]


def _clean(v: Any) -> Any:
    # JSON has no NaN/Infinity; a diverged loss is reported as null rather than producing invalid JSON.
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _launcher_rank() -> int:
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


class EventWriter:
    """Writes one JSON object per line and flushes at once (the reader may be waiting on it)."""

    def __init__(self, stream: TextIO | None = None, rank: int | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        # The launcher's RANK: known before the process group is joined, so even a start-up error is reported once.
        self.rank = rank if rank is not None else _launcher_rank()
        self.sinks: list[Sink] = []

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps(_clean({"event": event, **fields}), separators=(",", ":"), allow_nan=False)
        if self.rank != 0:
            if event == "error":
                sys.stderr.write(f"[rank {self.rank}] {line}\n")
                sys.stderr.flush()
            return
        self.stream.write(line + "\n")
        self.stream.flush()
        for sink in self.sinks:
            sink(event, fields)

    def progress(self, **fields: Any) -> None:
        self.emit("progress", **fields)

    def checkpoint(self, path: str, step: int, **fields: Any) -> None:
        self.emit("checkpoint", path=path, step=step, **fields)

    def done(self, **fields: Any) -> None:
        self.emit("done", **fields)

    def error(self, type: str, message: str) -> None:  # noqa: A002 - the protocol's field name
        self.emit("error", type=type, message=message)
