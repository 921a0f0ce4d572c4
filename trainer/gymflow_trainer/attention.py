"""Variable-length attention for packed rows (``packing: true``, ``packed_attention: varlen``).

A packed row holds several examples back to back. With a dense block-diagonal mask, attention costs
``(Σ nᵢ)²`` per layer whatever the examples' lengths, the mask itself is ``T × T``, and a masked ``sdpa`` call
cannot use the flash kernel. Here each example attends to itself only, from the row's cumulative example
boundaries (``cu_seq_lens``): on CUDA in half precision one call of PyTorch's own flash kernel over the whole
row (``aten::_flash_attention_forward`` with ``cum_seq_q``/``cum_seq_k``, the same kernel ``sdpa`` uses, with
its autograd backward and native grouped-query heads), so the cost is ``Σ nᵢ²`` and no mask exists;
elsewhere (CPU, float32) one causal ``sdpa`` call per example, which computes exactly the block-diagonal
result. A layer with a sliding window keeps it (flash's left window; a windowed mask per example).

The function is registered with transformers' ``AttentionInterface`` under :data:`NAME`, and the model's
attention implementation is switched to it for the run (:func:`use_varlen`). The boundaries travel as the
model call's ``cu_seq_lens_q``/``max_length_q`` keyword arguments, which transformers hands to every
attention call unchanged, recomputations under gradient checkpointing included. A call without them (a
padded batch) is plain ``sdpa``. transformers 5 builds no mask for an implementation it does not know, so such
a call is causal only: right for right-padded batches (the padding comes after every real token), the only
other layout the training commands use (``batching.pad_batch``, ``sft.collate``).

A model whose attention does not go through ``AttentionInterface`` (custom remote code) would silently attend
across the examples of a row: :func:`use_varlen` runs one tiny packed forward and refuses such a model. The
check counts calls only during that probe, so the function reads no changing global afterwards (``torch.compile``
would recompile on one).
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from .errors import ConfigError

#: The attention implementation's name in transformers' registry.
NAME = "gymflow_varlen"
#: Attention options of some models (Gemma 2's logit soft-capping, gpt-oss's sinks) that the varlen path does not
#: apply: a model that sets one is refused (at the check forward of :func:`use_varlen`) rather than trained on
#: another attention. ``sliding_window`` is applied.
UNSUPPORTED = ("softcap", "s_aux")

_registered = False
_probing = False  # True only during use_varlen's probe forward
_probe_calls = 0


def _half_dtype(q: torch.Tensor) -> Optional[torch.dtype]:
    """The dtype the flash kernel runs in for ``q``, or None when it cannot run (CPU, float32 outside autocast)."""
    if not q.is_cuda:
        return None
    if q.dtype in (torch.float16, torch.bfloat16):
        return q.dtype
    if torch.is_autocast_enabled("cuda"):
        dt = torch.get_autocast_dtype("cuda")
        return dt if dt in (torch.float16, torch.bfloat16) else None
    return None


def varlen_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     attention_mask: Optional[torch.Tensor], scaling: Optional[float] = None, dropout: float = 0.0,
                     **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' attention-function signature: ``query [1, H, T, D]``, ``key``/``value [1, H_kv, T, D]``;
    returns ``([1, T, H, D], None)``. Without ``cu_seq_lens_q`` in ``kwargs``: transformers' ``sdpa``."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    cu = kwargs.pop("cu_seq_lens_q", None)
    max_len = kwargs.pop("max_length_q", None)
    for k in ("cu_seq_lens_k", "max_length_k"):
        kwargs.pop(k, None)
    if cu is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    for name in UNSUPPORTED:
        if kwargs.get(name) is not None:
            raise ConfigError(f"packed_attention: varlen does not apply {name}, which {type(module).__name__} uses; "
                              "set packed_attention: mask")
    window = kwargs.get("sliding_window")  # a key attends to the `window` positions up to and including its query
    if _probing:
        global _probe_calls
        _probe_calls += 1
    if query.size(0) != 1:
        raise ValueError(f"varlen attention takes one packed row, got a batch of {query.size(0)}")
    half = _half_dtype(query)
    if half is not None:
        q, k, v = (x[0].transpose(0, 1).to(half).contiguous() for x in (query, key, value))  # [T, H, D]
        sides = {"window_size_left": window - 1, "window_size_right": 0} if window else {}
        out = torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, int(max_len), int(max_len), dropout, True, False,
                                                      scale=scaling, **sides)[0]
        return out.unsqueeze(0), None
    bounds = cu.tolist()
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        mask = None
        if window and b - a > window:
            i = torch.arange(b - a, device=query.device)
            mask = ((i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - window))[None, None]
        parts.append(sdpa_attention_forward(module, query[:, :, a:b], key[:, :, a:b], value[:, :, a:b], mask, dropout=dropout,
                                            scaling=scaling, is_causal=mask is None)[0])
    return torch.cat(parts, dim=1), None


def register() -> None:
    """Adds :func:`varlen_attention` to transformers' ``AttentionInterface`` (once per process)."""
    global _registered
    if _registered:
        return
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, varlen_attention)
    _registered = True


def base_model(model: Any) -> Any:
    """The transformers model under a PEFT or DDP wrapper."""
    inner = getattr(model, "module", model)
    return inner.get_base_model() if hasattr(inner, "get_base_model") else inner


def use_varlen(model: Any) -> None:
    """Registers :func:`varlen_attention` and makes it the model's attention implementation, then checks with one
    forward over a packed row of two 2-token examples that the model's attention calls it; :class:`ConfigError`
    when it does not. The choice is not saved with the model (transformers keeps it out of ``config.json``): a
    saved checkpoint loads as usual."""
    global _probing, _probe_calls
    register()
    base = base_model(model)
    if hasattr(base, "set_attn_implementation"):
        base.set_attn_implementation(NAME)
    else:  # transformers 4
        base.config._attn_implementation = NAME
    dev = next(model.parameters()).device
    _probing, _probe_calls = True, 0
    try:
        with torch.no_grad():
            model(input_ids=torch.zeros(1, 4, dtype=torch.long, device=dev),
                  position_ids=torch.tensor([[0, 1, 0, 1]], device=dev), **boundaries([2, 2], dev))
    finally:
        _probing = False
    if _probe_calls == 0:
        raise ConfigError(f"packed_attention: varlen needs a model whose attention runs through transformers' "
                          f"AttentionInterface, and this one's ({type(base).__name__}) does not; set packed_attention: mask")


def boundaries(lengths: list[int], dev: torch.device) -> dict[str, Any]:
    """The model call's keyword arguments for a packed row of examples of ``lengths``."""
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32, device=dev)
    longest = max(lengths)
    return {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu, "max_length_q": longest, "max_length_k": longest}


__all__ = ["NAME", "varlen_attention", "register", "use_varlen", "boundaries", "base_model"]
