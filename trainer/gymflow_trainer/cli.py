"""Command line: ``python -m gymflow_trainer COMMAND --config FILE [--resume-from DIR|latest]``.

Commands: ``sft``, ``dpo``, ``rl``, ``rm`` (training; ``--resume-from`` applies to them), ``export-onnx`` and
``serve`` (an OpenAI-compatible server for a checkpoint, until SIGTERM/SIGINT; docs/trainer.md).

Tool commands, the one way the TypeScript activities call into Python besides those (activities/python.ts):

- ``check-config COMMAND --config FILE``: loads ``FILE`` as the configuration of ``COMMAND`` with the same
  loader (``config.load_config``), touching no model; ``done`` on success, exit 2 naming the field otherwise.
- ``tiny --config JSON_OR_FILE --out DIR [--name NAME] [--at PATH]``: builds a tiny model + tokenizer
  (``tiny.save_tiny``) from a ``TinyModelConfig``, given as a JSON object on the command line (its messages
  name the document ``NAME`` and the section ``PATH``, e.g. ``pipeline config`` and ``$.policy.init.tiny``)
  or as a file (a tiny config, or a command configuration whose ``model.tiny`` is used).
- ``probe [MODULE ...]``: imports each module (default: the trainer's libraries) and reports its version,
  or null when it does not import: ``{"event":"done","command":"probe","modules":{"accelerate":"1.15.0"}}``.

The tool commands load neither torch nor a model before they need one, so ``check-config`` answers in well
under a second.

Exit status: 0 done (for ``serve``: stopped by SIGTERM, SIGINT or its parent's exit); 2 configuration error;
3 data error; 4 checkpoint error; 5 training diverged; 6 out of memory; 7 stalled (watchdog.py); 143 SIGTERM; 130 SIGINT; 1 anything else. Every failure
prints an ``{"event":"error","type":…,"message":…}`` line on stdout first (the traceback goes to stderr).

Under ``torchrun`` / ``accelerate launch`` (``WORLD_SIZE > 1``) every process runs this; the process group is
joined after the configuration is validated and left on every exit path (``distributed.init``/``shutdown``).
A rank that gets SIGTERM exits 143 even when the signal lands while it is blocked in a collective (the
collective then fails as its peers leave; the pending SIGTERM decides the exit status).

Started by a gymflow worker (``GYMFLOW_LIFELINE=stdin``, standard input a pipe only the worker writes to), every
command stops with SIGTERM once that pipe reads end-of-file, i.e. once the worker is gone (lifeline.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback
from typing import Callable, Optional

from . import lifeline, tensorboard_log, watchdog
from .config import COMMANDS, load_config, load_tiny_config
from .errors import CheckpointError, ConfigError, DataError, OutOfMemory, Terminated, TrainerError, TrainingDiverged
from .events import EventWriter

EXIT_CODES = {ConfigError: 2, DataError: 3, CheckpointError: 4, TrainingDiverged: 5, OutOfMemory: 6}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"command line: {message}")


def _quiet_libraries() -> None:
    # Progress bars and warnings of transformers go to stderr anyway; silence the bars so stderr stays readable.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # pragma: no cover
        pass


_sigterm_seen = False


def _on_sigterm(signum: int, frame: object) -> None:
    global _sigterm_seen
    if _sigterm_seen:  # already unwinding: do not interrupt the clean-up
        return
    _sigterm_seen = True
    raise Terminated("terminated by SIGTERM")


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in TOOLS:
        return _run_tool(args[0], args[1:], EventWriter())
    from . import distributed  # torch: loaded for the training commands only (the tools stay quick)

    global _sigterm_seen
    _sigterm_seen = False
    events = EventWriter()
    main_thread = _main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    if main_thread:
        # Started by a worker: stop when it is gone (lifeline.py), through the handler just installed.
        lifeline.watch(lifeline.stop_self)
    try:
        return _main(args, events)
    finally:
        distributed.shutdown()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _main(argv: list[str], events: EventWriter) -> int:
    from . import distributed
    from .memory import is_out_of_memory, memory_report

    try:
        p = _Parser(prog="python -m gymflow_trainer", description="gymflow trainer")
        p.add_argument("command", choices=list(COMMANDS))
        p.add_argument("--config", required=True, help="JSON (.json) or YAML configuration file")
        p.add_argument("--resume-from", default=None, help="checkpoint directory, or 'latest' (newest in output_dir)")
        a = p.parse_args(argv)
        overrides = {"resume_from": a.resume_from} if a.resume_from else {}
        cfg = load_config(a.command, a.config, overrides)  # validated before any model loads
        _quiet_libraries()
        if distributed.from_env().enabled and a.command in ("export-onnx", "serve"):
            raise ConfigError(f"{a.command} runs as one process; start it without torchrun / accelerate launch")
        distributed.init()
        t0 = time.time()
        watchdog.start(getattr(cfg, "stall_timeout_s", 0), events)  # the training commands' configurations have it
        # The curves close (and flush) on the `done` or `error` event that every way out of here writes.
        curves = tensorboard_log.sink_for(cfg, a.command)
        if curves is not None:
            events.sinks.append(curves)
        try:
            result = _dispatch(a.command, cfg, events)
        finally:
            watchdog.stop()
        events.done(command=a.command, elapsed_s=round(time.time() - t0, 3), **result)
        return 0
    except TrainerError as e:
        events.error(e.type, str(e))
        traceback.print_exc(file=sys.stderr)
        return EXIT_CODES.get(type(e), 1)
    except Terminated as e:
        events.error("Terminated", str(e))
        return 143
    except KeyboardInterrupt:
        events.error("Interrupted", "interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 - the protocol promises an error event for every failure
        if _sigterm_seen:  # SIGTERM arrived while blocked in C++ (a collective); what followed is its consequence
            events.error("Terminated", f"terminated by SIGTERM ({type(e).__name__}: {e})")
            return 143
        oom = is_out_of_memory(e)  # outside the steps' passes (memory.py): loading the model, saving
        if oom:
            events.error(OutOfMemory.type, f"outside the training steps' passes: {type(e).__name__}: {e}{memory_report()}")
        else:
            events.error(type(e).__name__, str(e) or repr(e))
        traceback.print_exc(file=sys.stderr)
        return EXIT_CODES[OutOfMemory] if oom else 1


def _dispatch(command: str, cfg: object, events: EventWriter) -> dict:
    if command == "sft":
        from . import sft

        return sft.run(cfg, events)  # type: ignore[arg-type]
    if command == "dpo":
        from . import dpo

        return dpo.run(cfg, events)  # type: ignore[arg-type]
    if command == "rl":
        from . import rl

        return rl.run(cfg, events)  # type: ignore[arg-type]
    if command == "rm":
        from . import rm

        return rm.run(cfg, events)  # type: ignore[arg-type]
    if command == "export-onnx":
        from . import onnx_export

        return onnx_export.run(cfg, events)  # type: ignore[arg-type]
    if command == "serve":
        from . import serve

        return serve.run(cfg, events)  # type: ignore[arg-type]
    raise ConfigError(f"unknown command '{command}'")


# ---------------------------------------------------------------------------------------------------- tools


def _check_config(argv: list[str]) -> dict:
    p = _Parser(prog="python -m gymflow_trainer check-config", description="Check a training configuration.")
    p.add_argument("command", choices=list(COMMANDS))
    p.add_argument("--config", required=True, help="JSON (.json) or YAML configuration file")
    a = p.parse_args(argv)
    load_config(a.command, a.config)
    return {"checked": a.command, "config": a.config}


def _tiny(argv: list[str]) -> dict:
    p = _Parser(prog="python -m gymflow_trainer tiny", description="Build a tiny model + tokenizer directory.")
    p.add_argument("--config", required=True, help="a TinyModelConfig as a JSON object, or a JSON/YAML file holding "
                   "one (or a command configuration whose model.tiny is used)")
    p.add_argument("--out", required=True, help="the model directory to write")
    p.add_argument("--name", default=None, help="what messages call the document (default: the file's name)")
    p.add_argument("--at", default=None, help="the JSON path messages give the tiny section (default: where it is)")
    a = p.parse_args(argv)
    cfg = load_tiny_config(a.config, a.name, a.at)  # validated before torch and transformers load
    _quiet_libraries()
    from .tiny import save_tiny

    return {"path": save_tiny(a.out, cfg)}


#: What ``probe`` asks about by default: the libraries the trainer uses (trainer/requirements.txt).
PROBED_MODULES = ("torch", "transformers", "tokenizers", "peft", "accelerate", "safetensors", "yaml", "onnx",
                  "onnxscript", "onnxruntime", "tensorboard")


def _probe(argv: list[str]) -> dict:
    p = _Parser(prog="python -m gymflow_trainer probe", description="Report which libraries import, and their versions.")
    p.add_argument("modules", nargs="*", metavar="MODULE", help=f"module names (default: {' '.join(PROBED_MODULES)})")
    a = p.parse_args(argv)
    return {"modules": {name: _module_version(name) for name in a.modules or PROBED_MODULES}}


def _module_version(name: str) -> Optional[str]:
    """The module's ``__version__`` ("" when it has none) once it imports; None when importing it fails."""
    import importlib

    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken install fails with anything, and is "not there" all the same
        return None
    return str(getattr(module, "__version__", ""))


#: The tool commands (module docstring): each parses its arguments and returns the ``done`` event's fields.
TOOLS: dict[str, Callable[[list[str]], dict]] = {"check-config": _check_config, "tiny": _tiny, "probe": _probe}


def _run_tool(command: str, argv: list[str], events: EventWriter) -> int:
    """Runs a tool command with the training commands' protocol: ``done`` or ``error``, and their exit codes."""
    try:
        result = TOOLS[command](argv)
        events.done(command=command, **result)
        return 0
    except TrainerError as e:
        events.error(e.type, str(e))
        return EXIT_CODES.get(type(e), 1)
    except KeyboardInterrupt:
        events.error("Interrupted", "interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 - the protocol promises an error event for every failure
        events.error(type(e).__name__, str(e) or repr(e))
        traceback.print_exc(file=sys.stderr)
        return 1
