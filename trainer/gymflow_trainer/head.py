"""Log-probabilities of the trained tokens without the whole logits tensor (``logits_chunk``).

The LM head's output is positions × vocabulary, upcast to float32 for the softmax, and autograd keeps it (or its
softmax) until the backward pass: at a 152k-token vocabulary that is ~600 KB per trained position, 4.9 GB for
8k positions, more than the rest of a small model's activations. With ``logits_chunk: N`` the model runs with its
head bypassed (it returns the final hidden states at the kept positions), and the head is applied here to N
trained positions at a time under activation checkpointing: each chunk's logits exist only while its
log-probabilities are taken, and again in the backward pass, where they are recomputed (one more head matmul per
step) instead of kept.

The bypass swaps the head module's ``forward`` for the duration of one model call (:func:`bypassed`), so the
model is the same object the rest of the trainer sees: a checkpoint, an ONNX export or a reference copy is
untouched. A model that changes its logits after the head (Gemma 2's final soft-capping, Cohere's logit scale)
would be scored wrongly; :func:`check` runs both paths once on a short input and refuses such a model.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional

import torch
from torch.utils.checkpoint import checkpoint

from .attention import base_model
from .errors import ConfigError


def head_of(model: Any) -> torch.nn.Module:
    """The output embedding (LM head) module of ``model`` (under PEFT or DDP wrappers); :class:`ConfigError` when
    the model has none."""
    base = base_model(model)
    head = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    if not isinstance(head, torch.nn.Module):
        raise ConfigError(f"logits_chunk needs a model with an output embedding (LM head); {type(base).__name__} "
                          "has none; set logits_chunk: 0")
    return head


@contextlib.contextmanager
def bypassed(model: Any) -> Iterator[Callable[[torch.Tensor], torch.Tensor]]:
    """Within the block, ``model``'s head returns its input (the model's "logits" are its final hidden states);
    yields the head's own forward, to apply to those hidden states."""
    head = head_of(model)
    own, shadowed = head.forward, head.__dict__.get("forward")  # an instance's forward (hooks set one) or None
    head.forward = _identity  # type: ignore[method-assign]
    try:
        yield own
    finally:
        if shadowed is None:
            del head.forward  # the class's forward again
        else:
            head.forward = shadowed  # type: ignore[method-assign]


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


def logps_of(logits: torch.Tensor, targets: torch.Tensor, entropy: bool = False) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    """``(log softmax(logits)[targets], H)`` for logits ``[..., V]`` and target ids ``[...]``, in float32. ``H``, with
    ``entropy``: the distribution's entropy ``−Σ_v p_v log p_v`` at each position, without gradient (a
    diagnostic: a policy whose entropy collapses towards 0 has stopped exploring); else None."""
    lsm = torch.log_softmax(logits.float(), dim=-1)
    lp = lsm.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    if not entropy:
        return lp, None
    with torch.no_grad():
        return lp, -torch.linalg.vecdot(lsm.exp(), lsm)


def chunked_logps(head: Callable[[torch.Tensor], torch.Tensor], hidden: torch.Tensor, targets: torch.Tensor,
                  chunk: int, entropy: bool = False) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    """:func:`logps_of` of ``head(hidden)`` for hidden states ``[N, H]`` and target ids ``[N]``, ``chunk`` rows at
    a time, each chunk under activation checkpointing (its logits are recomputed in the backward pass, never
    kept). ``N <= chunk``: in one go, as without chunks (the backward pass would need that chunk's logits all the
    same, so recomputing them would save nothing)."""
    if hidden.size(0) <= chunk:
        return _logps(head, hidden, targets, entropy)
    parts = [checkpoint(_logps, head, hidden[i : i + chunk], targets[i : i + chunk], entropy, use_reentrant=False)
             for i in range(0, hidden.size(0), chunk)]
    return torch.cat([lp for lp, _ in parts]), torch.cat([h for _, h in parts]) if entropy else None


def _logps(head: Callable[[torch.Tensor], torch.Tensor], hidden: torch.Tensor, targets: torch.Tensor,
           entropy: bool) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    return logps_of(head(hidden), targets, entropy)


def check(model: Any) -> None:
    """Runs a short input through ``model`` with and without the bypass (no gradient, dropout off) and raises
    :class:`ConfigError` unless the head applied to the bypassed output gives the model's own logits."""
    head_of(model)
    dev = next(model.parameters()).device
    ids = (torch.arange(1, 7, device=dev) % base_model(model).config.vocab_size).unsqueeze(0)
    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            full = model(input_ids=ids, use_cache=False).logits.float()
            with bypassed(model) as head:
                hidden = model(input_ids=ids, use_cache=False).logits
                same = hidden.shape[:-1] == full.shape[:-1]
                if same:
                    same = torch.allclose(head(hidden).float(), full, rtol=1e-3, atol=1e-3 * float(full.abs().max()) + 1e-5)
    finally:
        model.train(training)
    if not same:
        raise ConfigError(f"logits_chunk: {type(base_model(model)).__name__} changes its logits after the output "
                          "embedding (soft-capping or scaling), which chunked log-probs would miss; set logits_chunk: 0")


__all__ = ["head_of", "bypassed", "logps_of", "chunked_logps", "check"]
