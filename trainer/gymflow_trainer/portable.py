"""Model directories that load the same in transformers 4 (>= 4.56) as in transformers 5, which writes them.

The trainer saves with transformers 5, while inference servers often pin transformers 4 (vLLM and SGLang
releases do, for a while after each transformers major release). Two things that transformers 5 writes
are read wrong by transformers 4:

- ``config.json`` holds the rotary embedding only as ``rope_parameters`` (``{"rope_theta": 1000000.0,
  "rope_type": "default"}``). Transformers 4 reads top-level ``rope_theta`` and ``rope_scaling``. Without
  them it uses its default theta, 10,000, **silently**. A fine-tuned Qwen2.5 (theta 10^6) would then be served
  with the wrong positions and generate nonsense, and nothing would say why.
- ``tokenizer_config.json`` names the class ``TokenizersBackend``, which transformers 4 does not have, so it
  refuses to load the tokenizer.

:func:`make_portable` adds the top-level keys, taken from ``rope_parameters``, and names the tokenizer class
``PreTrainedTokenizerFast``, which both versions load as the same fast tokenizer. Transformers 5 still reads
``rope_parameters`` first, so it loads the directory exactly as before. ``tests/test_portable.py`` checks this
with real transformers 4.57, which ``scripts/setup.sh`` installs beside the venv.

Configurations whose ``rope_parameters`` are per layer type (``{"full_attention": {...}, "sliding_attention":
{...}}``, as in Gemma 3) have no transformers 4 form to derive, and are left as they are.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

#: The tokenizer class name transformers 5 writes, which transformers 4 cannot resolve.
V5_TOKENIZER_CLASS = "TokenizersBackend"
#: The name both versions resolve to the same fast tokenizer.
PORTABLE_TOKENIZER_CLASS = "PreTrainedTokenizerFast"


def portable_config(cfg: dict[str, Any]) -> list[str]:
    """Adds to a ``config.json`` dict, in place, the transformers 4 keys that its ``rope_parameters`` imply:
    ``rope_theta``, ``rope_scaling`` (for a rope type other than ``default``) and ``partial_rotary_factor``.
    A key already present is kept. Returns the names of the keys added."""
    rope = cfg.get("rope_parameters")
    if not isinstance(rope, dict) or "rope_theta" not in rope or any(isinstance(v, dict) for v in rope.values()):
        return []
    added = []
    if "rope_theta" not in cfg:
        cfg["rope_theta"] = rope["rope_theta"]
        added.append("rope_theta")
    if rope.get("rope_type", "default") != "default" and cfg.get("rope_scaling") is None:
        cfg["rope_scaling"] = {k: v for k, v in rope.items() if k not in ("rope_theta", "partial_rotary_factor")}
        added.append("rope_scaling")
    if "partial_rotary_factor" in rope and "partial_rotary_factor" not in cfg:
        cfg["partial_rotary_factor"] = rope["partial_rotary_factor"]
        added.append("partial_rotary_factor")
    return added


def _rewrite(path: str, edit: Callable[[dict[str, Any]], list[str]]) -> list[str]:
    """Applies ``edit`` (dict -> names changed) to the JSON file at ``path`` when it exists; writes it back
    atomically when something changed."""
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict):
        return []
    changed = edit(doc)
    if changed:
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    return [f"{os.path.basename(path)}: {name}" for name in changed]


def _portable_tokenizer_config(doc: dict[str, Any]) -> list[str]:
    if doc.get("tokenizer_class") != V5_TOKENIZER_CLASS:
        return []
    doc["tokenizer_class"] = PORTABLE_TOKENIZER_CLASS
    return ["tokenizer_class"]


def make_portable(model_dir: str) -> list[str]:
    """Makes a ``save_pretrained`` directory (model, tokenizer, or both) load the same in transformers 4 as
    in 5 (see the module documentation). Idempotent. Returns what it changed, e.g. ``["config.json:
    rope_theta", "tokenizer_config.json: tokenizer_class"]``."""
    return (_rewrite(os.path.join(model_dir, "config.json"), portable_config)
            + _rewrite(os.path.join(model_dir, "tokenizer_config.json"), _portable_tokenizer_config))
