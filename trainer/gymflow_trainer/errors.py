"""Typed errors of the trainer. Each has a stable ``type`` that the ``error`` event carries."""

from __future__ import annotations


class TrainerError(Exception):
    """Base class; ``type`` is the stable name the ``{"event":"error"}`` line carries."""

    type = "TrainerError"


class ConfigError(TrainerError):
    """The configuration file is missing, unreadable, or holds an unknown key or a bad value.

    No retry can fix it (the TypeScript train activity maps it to a non-retryable failure).
    """

    type = "ConfigError"


class DataError(TrainerError):
    """A dataset file or record does not have the fields or values the command needs."""

    type = "DataError"


class CheckpointError(TrainerError):
    """A checkpoint to resume from is missing, incomplete, or does not match the configuration."""

    type = "CheckpointError"


class TrainingDiverged(TrainerError):
    """Too many optimizer steps in a row had a gradient norm that is not finite (``optim.max_skipped_steps``).
    Each was skipped, so the weights are those before the first of them. A retry would replay the same batches
    from the last checkpoint and diverge again, so the activity does not retry: the configuration (learning
    rate, clipping, precision) or the data has to change."""

    type = "TrainingDiverged"


class OutOfMemory(TrainerError):
    """A forward or backward pass ran out of memory and could not be cut smaller (memory.py): one sequence does
    not fit, ``on_out_of_memory`` is ``fail``, or several processes train. A retry would replay the same batches,
    so the activity does not retry: ``max_length``, ``max_piece_tokens``, the batch size or the model's memory
    settings have to change."""

    type = "OutOfMemory"


class Terminated(BaseException):
    """SIGTERM arrived (cli.py's handler raises it in the main thread). For the training commands it means the
    activity was cancelled: the CLI reports it and exits 143, the last checkpoint stands. ``serve`` catches it:
    for a server SIGTERM is the normal way to stop (exit 0).

    A ``BaseException``, like ``KeyboardInterrupt``: library code's ``except Exception`` (an optional import, a
    request handler) must not swallow it — the handler ignores a second SIGTERM, so a swallowed first one would
    leave the process running until SIGKILL."""
