"""The start every training command shares (:func:`prepare_run`): output directory, seeds, device, data
fingerprint, the checkpoint to resume from, tokenizer, data, then the model.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, NamedTuple, Optional

import torch

from . import checkpoints, distributed, models


class Run(NamedTuple):
    """What :func:`prepare_run` gives a training command."""

    device: torch.device
    digest: str
    resume: Optional[str]
    model: Any
    tokenizer: Any
    data: Any


def prepare_run(cfg: Any, load_data: Callable[[Any, bool], Any]) -> Run:
    """The start every training command shares: create the output directory, seed every RNG, pick the
    device, fingerprint the data file (checkpoints refuse a resume on other data), resolve ``resume_from``
    (``latest`` → newest checkpoint), load the tokenizer and the model's config, then the data with
    ``load_data(tokenizer, keep_system)`` (``keep_system``: the run's :func:`models.system_prompt_mode` is "keep"), and
    only then the model's weights: a mistake in the data is reported before a large model spends minutes
    loading."""
    from .data import file_digest

    os.makedirs(cfg.output_dir, exist_ok=True)
    if distributed.is_main():
        checkpoints.remove_stale_staging(cfg.output_dir)
    models.seed_everything(cfg.seed)
    dev = models.device()
    digest = file_digest(cfg.data)
    resume = checkpoints.resolve_resume(cfg.resume_from, cfg.output_dir)
    if resume is None:
        checkpoints.refuse_other_run(cfg.output_dir)
    distributed.check_same(resume, "the checkpoint to resume from")  # every rank loads the same one
    tok, config, built = models.load_tokenizer_and_config(cfg.model)
    data = load_data(tok, models.system_prompt_mode(config, cfg.system_prompt) == "keep")
    model = models.load_model(cfg.model, cfg.lora, config, built)
    context = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    max_length = getattr(cfg, "max_length", None)
    if isinstance(context, int) and isinstance(max_length, int) and max_length > context and distributed.is_main():
        # Positions past the context were never trained; the ONNX export and `serve` keep the model's context.
        sys.stderr.write(f"warning: max_length {max_length} is more than the model's context ({context} positions, "
                         "config.max_position_embeddings); longer rows train positions the model will not serve\n")
    return Run(dev, digest, resume, model, tok, data)
