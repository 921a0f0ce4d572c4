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
