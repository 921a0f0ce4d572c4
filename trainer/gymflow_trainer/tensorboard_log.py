"""Training curves for TensorBoard (``tensorboard_dir``; docs/trainer.md, "TensorBoard").

A sink of the event stream (events.py): every ``progress`` event's numbers become scalars named
``<command>/<field>`` at the event's optimizer ``step`` (``sft/loss``, ``rl/entropy``, ``dpo/reward_margin``),
and the ``done`` event's numbers ``<command>/done/<field>`` at the last step. What the stdout protocol carries
and what TensorBoard shows are therefore the same numbers.

A run that resumes from a checkpoint at step S writes into the same directory with ``purge_step`` S + 1, so
TensorBoard hides what an interrupted attempt had logged past its checkpoint instead of drawing two curves
for steps S + 1 on; a run that starts from scratch (S = 0) hides everything an earlier run logged there.

Curves are a convenience: a write that fails (a full disk, a directory that cannot be created) is reported on
stderr once and logging stops, but training goes on.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, Optional

from .errors import ConfigError

#: Progress fields that are not curves: the step is the x axis, the total a constant.
_NOT_SCALARS = frozenset({"step", "total_steps"})
#: Seconds between flushes to disk: a killed process loses at most this much of its curves.
FLUSH_SECS = 10


def check_available(where: str) -> None:
    """Raises ConfigError naming ``where`` when the ``tensorboard`` package is not installed."""
    if importlib.util.find_spec("tensorboard") is None:
        raise ConfigError(f"{where}.tensorboard_dir is set, but the tensorboard package is not installed (pip install tensorboard)")


def _scalars(fields: dict[str, Any], prefix: str, top: bool = True) -> list[tuple[str, float]]:
    """The numbers among ``fields`` as (tag, value), nested dicts flattened with ``/``; booleans are not numbers,
    and a diverged (NaN) value stays NaN."""
    out: list[tuple[str, float]] = []
    for key, value in fields.items():
        if top and key in _NOT_SCALARS:
            continue
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            out.append((f"{prefix}/{key}", float(value)))
        elif isinstance(value, dict):
            out.extend(_scalars(value, f"{prefix}/{key}", top=False))
    return out


class TensorBoardSink:
    """Writes the training events of one command into ``log_dir`` (see the module documentation)."""

    def __init__(self, log_dir: str, command: str) -> None:
        self.log_dir = log_dir
        self.command = command
        self._writer: Any = None
        self._last_step = 0
        #: Closed (after `done`, an error, or a failed write): later events are ignored.
        self._closed = False

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        if self._closed:
            return
        try:
            self._handle(event, fields)
        except Exception as e:  # noqa: BLE001 - curves must never stop a training
            sys.stderr.write(f"warning: TensorBoard logging to {self.log_dir} stopped ({type(e).__name__}: {e}); training goes on\n")
            self.close()

    def _handle(self, event: str, fields: dict[str, Any]) -> None:
        if event == "start":
            start = fields.get("start_step")
            self._last_step = start if isinstance(start, int) and not isinstance(start, bool) else 0
            self._open(self._last_step + 1)
        elif event == "progress":
            step = fields.get("step")
            if not isinstance(step, int) or isinstance(step, bool):
                return  # not an optimizer step (export-onnx's phases)
            self._last_step = step
            self._add(_scalars(fields, self.command), step)
        elif event == "done":
            self._add(_scalars(fields, f"{self.command}/done"), self._last_step)
            self.close()
        elif event == "error":
            self.close()

    def _open(self, purge_step: int) -> None:
        from torch.utils.tensorboard import SummaryWriter

        if self._writer is not None:
            self._writer.close()
        self._writer = SummaryWriter(log_dir=self.log_dir, purge_step=purge_step, flush_secs=FLUSH_SECS)

    def _add(self, scalars: list[tuple[str, float]], step: int) -> None:
        if self._writer is None:
            self._open(step)
        for tag, value in scalars:
            self._writer.add_scalar(tag, value, step)

    def close(self) -> None:
        """Flushes and closes the event file (a no-op once closed)."""
        self._closed = True
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


def sink_for(cfg: object, command: str) -> Optional[TensorBoardSink]:
    """The sink a command's configuration asks for (its ``tensorboard_dir``), or None."""
    log_dir = getattr(cfg, "tensorboard_dir", None)
    return TensorBoardSink(log_dir, command) if log_dir else None

