"""The learned step-level reward model (``python -m gymflow_trainer rm``); its ONNX export is
``onnx_export.export_reward_model`` (``export-onnx`` with ``kind: reward_model``).

A tiny (or given) Llama/Qwen2 backbone with a scalar head (``AutoModelForSequenceClassification``,
``num_labels=1``) reads one *step input* — the text :func:`render_step` builds from a trajectory and a step
position — and returns a raw score ``r`` at the last attended token. The step score is ``σ(r)`` ∈ (0, 1).

Objectives (docs/reward.md, "Learned reward model"):

- ``regression``: labelled steps, MSE between ``σ(r)`` and the label ``y`` ∈ [0, 1]
  (:func:`regression_loss`). Labels come from the trajectories' step ``reward.score`` blocks
  (``gymflow reward score``) or from human labels (``{"trajectoryId","stepIndex","score"}``, the file
  ``gymflow reward calibrate`` reads; ``label_range`` maps their scale onto [0, 1]).
- ``preference``: pairs ``{"chosenId","rejectedId"}`` (``gymflow reward preferences``) over the
  trajectories of ``data``; a trajectory's value is the sum, mean or last of its steps' raw scores and the
  Bradley–Terry loss ``−log σ(R_c − R_r)`` is minimised (:func:`bradley_terry_loss`).

The step input is shared with TypeScript (``src/reward/learned/step-input.ts``): both sides must produce the
same text and token ids, which a test checks on real trajectories.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional, Sequence

from .chat import render
from .data import iter_jsonl
from .errors import DataError

#: Identifies the step rendering below; the ONNX directory records it (``input``) so a TS scorer refuses a
#: model trained on another rendering.
STEP_INPUT_FORMAT = "gymflow-step-v1"
#: The file (in ``final/`` and every checkpoint's ``model/``) that carries what scoring needs besides weights.
RM_META_FILE = "gymflow_rm.json"

# ------------------------------------------------------------------------------------------ step rendering

# JavaScript's String.prototype.trim() whitespace: WhiteSpace (incl. every Zs) and LineTerminator. Python's
# str.strip() uses another set (it strips \x1c-\x1f, keeps \ufeff), so the set is spelled out.
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_trim(s: str) -> str:
    """``s.trim()`` as JavaScript does it."""
    return s.strip(_JS_WS)


def js_number(x: Any) -> str:
    """A number as JavaScript's ``JSON.stringify`` writes it (shortest round-trip digits, ECMAScript
    Number::toString layout: ``1`` not ``1.0``, ``1e-7``, ``1e+21``, ``100000000000000000000``)."""
    if isinstance(x, int):
        if abs(x) < 2**53:
            return str(x)
        x = float(x)  # JSON.parse would have made it a double
    if not math.isfinite(x):
        raise ValueError(f"non-finite number {x} cannot be represented in JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, t.digits)).rstrip("0") or "0"
    exp = int(t.exponent) + len(t.digits) - len(digits)  # value = digits × 10^exp
    k = len(digits)
    n = exp + k  # value = 0.digits × 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _js_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    # Well-formed JSON.stringify escapes lone surrogates; Python keeps them raw (and could not encode them).
    return _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group(0)), out)


def canonical_json(value: Any) -> str:
    """``canonicalJson`` of ``src/core/canonical.ts``: keys sorted (by UTF-16 code units, as JS sorts) at
    every depth, no whitespace, numbers and strings as ``JSON.stringify`` writes them."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_js_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError(f"canonical_json: unsupported value of type {type(value).__name__}")


def tool_call_text(tool: str, params: dict[str, Any]) -> str:
    """``toolCallText`` of ``src/core/chat/prompt.ts``."""
    return f'<tool_call>\n{{"name":{_js_string(tool)},"arguments":{canonical_json(params)}}}\n</tool_call>'


def step_messages(trajectory: dict[str, Any], position: int) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The messages of the step input of ``trajectory["steps"][position]``: ``(head, tail)``.

    head: the ``user`` message with the task instruction. tail: for every step ``j ≤ position`` an
    ``assistant`` message (the trimmed thought, a blank line, the tool call — exactly as exports render it)
    and a ``tool`` message with the step's observation (the step's own result included: it shows what the
    call did). No system prompt: the tool list needs the environment registry, and the model learns the tools
    from the calls it sees.
    """
    steps = trajectory["steps"]
    head = [{"role": "user", "content": trajectory["task"]["instruction"]}]
    tail: list[dict[str, str]] = []
    for s in steps[: position + 1]:
        thought = js_trim(s.get("thought") or "")
        call = tool_call_text(s["action"]["tool"], s["action"]["params"])
        tail.append({"role": "assistant", "content": f"{thought}\n\n{call}" if thought else call})
        tail.append({"role": "tool", "content": s["observation"]})
    return head, tail


def render_step(trajectory: dict[str, Any], position: int) -> tuple[str, list[str]]:
    """The step input's text: ``(head, tail messages)``, each rendered as ChatML (``chat.render``); the full
    text is ``head + "".join(tail)``."""
    head, tail = step_messages(trajectory, position)
    return render(head)[0], [render([m])[0] for m in tail]


def truncate_ids(head: Sequence[int], tail: Sequence[int], max_length: int) -> list[int]:
    """Left truncation that keeps the instruction: ``head + tail`` when it fits; otherwise the first
    ``h = min(len(head), max_length // 2)`` head tokens and the last ``max_length − h`` tail tokens."""
    if len(head) + len(tail) <= max_length:
        return [*head, *tail]
    h = min(len(head), max_length // 2)
    return [*head[:h], *tail[len(tail) - (max_length - h):]]


def encode_step(tokenizer: Any, trajectory: dict[str, Any], position: int, max_length: int) -> list[int]:
    """Token ids of a step input: the head and every tail message encoded on their own (no special tokens
    added — the text carries them), concatenated and truncated with :func:`truncate_ids`. Every message
    begins with ``<|im_start|>``, a special token the tokenizer splits on, so this equals encoding the whole
    text; encoding per message lets a scorer encode each message of a trajectory once."""
    head, tail = render_step(trajectory, position)
    enc = lambda t: tokenizer.encode(t, add_special_tokens=False)  # noqa: E731
    return truncate_ids(enc(head), [i for m in tail for i in enc(m)], max_length)


def encode_trajectory(tokenizer: Any, trajectory: dict[str, Any], max_length: int) -> list[list[int]]:
    """:func:`encode_step` of every step of a trajectory, encoding each message once."""
    n = len(trajectory["steps"])
    if n == 0:
        return []
    head, tail = render_step(trajectory, n - 1)
    enc = lambda t: tokenizer.encode(t, add_special_tokens=False)  # noqa: E731
    h = enc(head)
    ids: list[int] = []
    out = []
    for p in range(n):
        ids += enc(tail[2 * p]) + enc(tail[2 * p + 1])
        out.append(truncate_ids(h, ids, max_length))
    return out


# -------------------------------------------------------------------------------------------------- losses


def regression_loss(raw: Any, target: Any) -> tuple[Any, dict[str, float]]:
    """Mean squared error of the step score: ``mean_i (σ(r_i) − y_i)²`` with ``y_i`` ∈ [0, 1].

    Metrics: ``mse`` and ``accuracy`` (share of ``[σ(r) > ½] = [y > ½]``)."""
    import torch

    pred = torch.sigmoid(raw)
    loss = ((pred - target) ** 2).mean()
    acc = ((pred > 0.5) == (target > 0.5)).float().mean()
    return loss, {"mse": float(loss.detach()), "accuracy": float(acc)}


def bradley_terry_loss(chosen: Any, rejected: Any) -> tuple[Any, dict[str, float]]:
    """Bradley–Terry (Bradley & Terry 1952; the reward-model loss of Ouyang et al. 2022, InstructGPT):
    ``mean −log σ(R_c − R_r)`` over pairs, ``R`` the trajectory values. Metrics: ``accuracy`` (share with
    ``R_c > R_r``) and ``margin`` (mean ``R_c − R_r``)."""
    import torch

    d = chosen - rejected
    loss = -torch.nn.functional.logsigmoid(d).mean()
    return loss, {"accuracy": float((d > 0).float().mean()), "margin": float(d.detach().mean())}


def aggregate(raw: Any, how: str) -> Any:
    """A trajectory's value from its steps' raw scores ``[n]``: ``sum``, ``mean`` or ``last``."""
    if how == "sum":
        return raw.sum()
    if how == "mean":
        return raw.mean()
    return raw[-1]


# --------------------------------------------------------------------------------------------------- model


def raw_scores(model: Any, input_ids: Any, attention_mask: Any) -> Any:
    """Raw scores ``[B]``: the head on the hidden state of each row's last attended token (rows are
    right-padded). Does not depend on the padding token id, unlike ``*ForSequenceClassification.forward``."""
    import torch

    if hasattr(model, "get_base_model"):  # a LoRA-wrapped scorer: its layers are adapted in place
        model = model.get_base_model()
    hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
    last = (positions * attention_mask).argmax(-1)
    picked = hidden[torch.arange(input_ids.shape[0], device=input_ids.device), last]
    return model.score(picked).squeeze(-1).float()


def load_reward_model(mcfg: Any, lora: Any = None) -> tuple[Any, Any]:
    """The scorer and its tokenizer: from ``tiny`` (the tiny backbone's weights + a fresh head) or ``path``
    (a reward-model checkpoint, or any causal-LM directory whose backbone gets a fresh head). With ``lora`` the
    backbone gets a LoRA adapter and the head is trained whole (peft's ``SEQ_CLS`` task keeps ``score`` in
    ``modules_to_save``)."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from .models import add_lora, check_model_dirs, pretrained
    from .tiny import build_tiny

    if mcfg.tiny is not None:
        tok, causal = build_tiny(mcfg.tiny)
        cfg = causal.config
        cfg.num_labels = 1
        torch.manual_seed(mcfg.tiny.seed + 1)
        model = AutoModelForSequenceClassification.from_config(cfg, dtype=torch.float32)
        model.base_model.load_state_dict(causal.base_model.state_dict())
    else:
        tok_dir = check_model_dirs(mcfg)
        tok = pretrained("model.tokenizer" if mcfg.tokenizer else "model.path", tok_dir, AutoTokenizer.from_pretrained, tok_dir)
        cfg = pretrained("model.path", mcfg.path, AutoConfig.from_pretrained, mcfg.path, num_labels=1)
        dtype = torch.bfloat16 if mcfg.dtype == "bfloat16" else torch.float32
        model = pretrained("model.path", mcfg.path, AutoModelForSequenceClassification.from_pretrained, mcfg.path, config=cfg, dtype=dtype)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    model.config.pad_token_id = tok.pad_token_id
    model.config.use_cache = False
    if lora is not None:
        model = add_lora(model, lora, "SEQ_CLS")
    if mcfg.gradient_checkpointing:
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:  # transformers 4
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model, tok


def pad(rows: Sequence[Sequence[int]], pad_id: int, dev: Any) -> tuple[Any, Any]:
    """Right-padded ``input_ids`` and ``attention_mask`` ``[B, L]`` on ``dev``."""
    import torch

    L = max(len(r) for r in rows)
    ids = torch.full((len(rows), L), pad_id, dtype=torch.long)
    att = torch.zeros((len(rows), L), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
        att[i, : len(r)] = 1
    return ids.to(dev), att.to(dev)


def score_steps(model: Any, tokenizer: Any, rows: Sequence[Sequence[int]], batch_size: int = 16) -> list[float]:
    """Step scores ``σ(r)`` of tokenised step inputs (eval mode, no gradients)."""
    import torch

    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    out: list[float] = []
    with torch.no_grad():
        for i in range(0, len(rows), batch_size):
            ids, att = pad(rows[i : i + batch_size], tokenizer.pad_token_id, dev)
            out += torch.sigmoid(raw_scores(model, ids, att)).tolist()
    model.train(was)
    return out


# ---------------------------------------------------------------------------------------------------- data


@dataclass
class StepExample:
    """One labelled step input."""

    input_ids: list[int]
    target: float
    trajectory: str
    step_index: int


@dataclass
class PairExample:
    """One preference pair: the step inputs of every step of the chosen and of the rejected trajectory."""

    chosen: list[list[int]]
    rejected: list[list[int]]
    task: str


def _read_jsonl(path: str, what: str) -> list[tuple[int, dict[str, Any]]]:
    out = list(iter_jsonl(path, what))
    if not out:
        raise DataError(f"{path}: no records")
    return out


def read_trajectories(path: str) -> list[tuple[int, dict[str, Any]]]:
    """Trajectories JSONL, checked for the fields the step input reads (``file:line $.path: problem``)."""
    recs = _read_jsonl(path, "trajectories")
    for n, t in recs:
        where = f"{path}:{n}"
        if not isinstance(t.get("id"), str):
            raise DataError(f"{where} $.id: expected a string")
        task = t.get("task")
        if not isinstance(task, dict) or not isinstance(task.get("instruction"), str):
            raise DataError(f"{where} $.task.instruction: expected a string")
        steps = t.get("steps")
        if not isinstance(steps, list):
            raise DataError(f"{where} $.steps: expected a list")
        for i, s in enumerate(steps):
            a = s.get("action") if isinstance(s, dict) else None
            if not isinstance(a, dict) or not isinstance(a.get("tool"), str) or not isinstance(a.get("params"), dict):
                raise DataError(f"{where} $.steps[{i}].action: expected {{tool: string, params: object}}")
            if not isinstance(s.get("observation"), str):
                raise DataError(f"{where} $.steps[{i}].observation: expected a string")
            if not isinstance(s.get("index"), int):
                raise DataError(f"{where} $.steps[{i}].index: expected an integer")
    return recs


def load_step_labels(cfg: Any, tokenizer: Any) -> list[StepExample]:
    """Labelled steps: from ``cfg.labels`` (human labels) when given, else every step's ``reward.score``."""
    trajs = read_trajectories(cfg.data)
    out: list[StepExample] = []
    if cfg.labels is None:
        for n, t in trajs:
            rows = encode_trajectory(tokenizer, t, cfg.max_length)
            for p, s in enumerate(t["steps"]):
                r = s.get("reward")
                if not isinstance(r, dict) or not isinstance(r.get("score"), (int, float)):
                    raise DataError(f"{cfg.data}:{n} $.steps[{p}].reward.score: missing — score the trajectories with "
                                    "`gymflow reward score` first, or give human labels in 'labels'")
                y = float(r["score"])
                if not 0.0 <= y <= 1.0:
                    raise DataError(f"{cfg.data}:{n} $.steps[{p}].reward.score: {y} is outside [0, 1]")
                out.append(StepExample(rows[p], y, t["id"], s["index"]))
        return out
    by_id = {t["id"]: t for _, t in trajs}
    lo, hi = (cfg.label_range or [0.0, 1.0])
    for n, lab in _read_jsonl(cfg.labels, "labels"):
        where = f"{cfg.labels}:{n}"
        tid = lab.get("trajectoryId", lab.get("trajectory_id"))
        idx = lab.get("stepIndex", lab.get("step_index"))
        score = lab.get("score")
        if not isinstance(tid, str):
            raise DataError(f"{where} $.trajectoryId: expected a string")
        if idx is None:
            continue  # a trajectory-level label: nothing to learn for a step scorer
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise DataError(f"{where} $.stepIndex: expected an integer")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise DataError(f"{where} $.score: expected a finite number")
        t = by_id.get(tid)
        if t is None:
            raise DataError(f"{where} $.trajectoryId: {tid} is not in {cfg.data}")
        pos = next((p for p, s in enumerate(t["steps"]) if s["index"] == idx), None)
        if pos is None:
            raise DataError(f"{where} $.stepIndex: trajectory {tid} has no step {idx}")
        y = (float(score) - lo) / (hi - lo)
        if not -1e-9 <= y <= 1 + 1e-9:
            raise DataError(f"{where} $.score: {score} is outside label_range [{lo}, {hi}]")
        out.append(StepExample(encode_step(tokenizer, t, pos, cfg.max_length), min(1.0, max(0.0, y)), tid, idx))
    if not out:
        raise DataError(f"{cfg.labels}: no step labels (every label lacks stepIndex)")
    return out


#: The keys of a pair's trajectory ids: ``gymflow reward preferences``'s pairs, ``gymflow export --format dpo``'s records.
PAIR_KEYS = (("chosenId", "rejectedId"), ("chosen_id", "rejected_id"))


def load_pairs(cfg: Any, tokenizer: Any) -> list[PairExample]:
    """Preference pairs over the trajectories of ``cfg.data``: the pairs ``gymflow reward preferences`` writes
    (``{"chosenId","rejectedId","task"}``) or the records of ``gymflow export --format dpo`` (``chosen_id``,
    ``rejected_id``), the kind read from each record's keys."""
    by_id = {t["id"]: t for _, t in read_trajectories(cfg.data)}
    encoded: dict[str, list[list[int]]] = {}

    def steps_of(tid: str, where: str, key: str) -> list[list[int]]:
        if tid not in encoded:
            t = by_id.get(tid)
            if t is None:
                raise DataError(f"{where} $.{key}: {tid} is not in {cfg.data}")
            if not t["steps"]:
                raise DataError(f"{where} $.{key}: trajectory {tid} has no steps to score")
            encoded[tid] = encode_trajectory(tokenizer, t, cfg.max_length)
        return encoded[tid]

    out = []
    for n, rec in _read_jsonl(cfg.pairs, "preference pairs"):
        where = f"{cfg.pairs}:{n}"
        ck, rk = next((keys for keys in PAIR_KEYS if keys[0] in rec), PAIR_KEYS[0])
        c, r = rec.get(ck), rec.get(rk)
        if not isinstance(c, str) or not isinstance(r, str):
            raise DataError(f"{where}: expected string '{ck}' and '{rk}' (the pairs `gymflow reward preferences` writes, "
                            "or the records of `gymflow export --format dpo`: 'chosen_id' and 'rejected_id')")
        chosen, rejected = steps_of(c, where, ck), steps_of(r, where, rk)
        task = rec.get("task") if isinstance(rec.get("task"), dict) else by_id[c].get("task") or {}
        out.append(PairExample(chosen, rejected, f"{task.get('domain')}/{task.get('id', c)}"))
    return out


def split_heldout(keys: Sequence[str], fraction: float, seed: int) -> set[str]:
    """The held-out groups (trajectory ids or tasks): ``ceil(fraction · #groups)`` of them, chosen by a
    seeded hash so the split does not depend on the file order. Empty when ``fraction`` is 0."""
    groups = sorted(set(keys), key=lambda k: hashlib.sha256(f"{seed}:{k}".encode()).hexdigest())
    if fraction <= 0 or len(groups) < 2:
        return set()
    return set(groups[: min(len(groups) - 1, math.ceil(fraction * len(groups)))])


def _data_digest(cfg: Any) -> str:
    from .data import file_digest

    parts = [file_digest(cfg.data)] + [file_digest(p) for p in (cfg.labels, cfg.pairs) if p]
    return parts[0] if len(parts) == 1 else "sha256:" + hashlib.sha256("+".join(parts).encode()).hexdigest()


# ------------------------------------------------------------------------------------------------ training


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def evaluate_steps(model: Any, tokenizer: Any, examples: Sequence[StepExample]) -> dict[str, Any]:
    """``mse``, ``accuracy`` (both sides of ½ agree) and Pearson ``correlation`` of step scores vs labels."""
    if not examples:
        return {}
    pred = score_steps(model, tokenizer, [e.input_ids for e in examples])
    ys = [e.target for e in examples]
    return {
        "n": len(examples),
        "mse": sum((p - y) ** 2 for p, y in zip(pred, ys)) / len(ys),
        "accuracy": sum((p > 0.5) == (y > 0.5) for p, y in zip(pred, ys)) / len(ys),
        "correlation": _pearson(pred, ys),
    }


def evaluate_pairs(model: Any, tokenizer: Any, pairs: Sequence[PairExample], how: str) -> dict[str, Any]:
    """Pairwise ``accuracy``: share of pairs whose chosen trajectory gets the larger value."""
    import torch

    if not pairs:
        return {}
    right = 0
    for p in pairs:
        rc = torch.logit(torch.tensor(score_steps(model, tokenizer, p.chosen), dtype=torch.float64))
        rr = torch.logit(torch.tensor(score_steps(model, tokenizer, p.rejected), dtype=torch.float64))
        right += int(aggregate(rc, how) > aggregate(rr, how))
    return {"n": len(pairs), "accuracy": right / len(pairs)}


def _save_meta(path: str, cfg: Any) -> None:
    meta = {"format": "gymflow-reward-model", "version": 1, "input": STEP_INPUT_FORMAT, "max_length": cfg.max_length,
            "objective": cfg.objective, "pair_aggregate": cfg.pair_aggregate, "score": "sigmoid"}
    with open(os.path.join(path, RM_META_FILE), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2)


def run(cfg: Any, events: Any) -> dict[str, Any]:
    """Trains the step scorer (see the module documentation); returns what goes in the ``done`` event."""
    import torch

    from . import batching, checkpoints, distributed, memory, models, optim

    os.makedirs(cfg.output_dir, exist_ok=True)
    if distributed.is_main():
        checkpoints.remove_stale_staging(cfg.output_dir)
    models.seed_everything(cfg.seed)
    dev = models.device()
    digest = _data_digest(cfg)
    resume = checkpoints.resolve_resume(cfg.resume_from, cfg.output_dir)
    distributed.check_same(resume, "the checkpoint to resume from")
    model, tok = load_reward_model(cfg.model, cfg.lora)

    preference = cfg.objective == "preference"
    items: list[Any] = load_pairs(cfg, tok) if preference else load_step_labels(cfg, tok)
    keys = [x.task if preference else x.trajectory for x in items]
    held = split_heldout(keys, cfg.eval_fraction, cfg.seed)
    train = [x for x, k in zip(items, keys) if k not in held]
    heldout = [x for x, k in zip(items, keys) if k in held]
    steps = batching.batch_schedule(len(train), cfg)
    model.to(dev)
    model.train()
    opt, sched, start, resumed = checkpoints.start_training(model, cfg.optim, len(steps), resume, digest, cfg.model.path)
    # Under torchrun: training forwards through DDP, each rank on its share of a step (as in sft/dpo). DDP has to
    # see the forward, and raw_scores does not go through model.forward, hence the small module around it.
    class _Scorer(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return raw_scores(self.m, input_ids, attention_mask)

    fwd = distributed.wrap(_Scorer(model))
    events.emit("start", command="rm", objective=cfg.objective, examples=len(train), heldout=len(heldout), total_steps=len(steps),
                start_step=start, **resumed.fields(), device=str(dev), processes=distributed.world().size,
                trainable_params=sum(p.numel() for p in model.parameters() if p.requires_grad))

    def micro_loss(idx: list[int]) -> tuple[Any, dict[str, float]]:
        with batching.autocast_ctx(cfg.bf16):
            if not preference:
                ids, att = pad([train[i].input_ids for i in idx], tok.pad_token_id, dev)
                target = torch.tensor([train[i].target for i in idx], dtype=torch.float32, device=dev)
                return regression_loss(fwd(ids, att), target)
            rows, spans = [], []
            for i in idx:
                for side in (train[i].chosen, train[i].rejected):
                    spans.append((len(rows), len(rows) + len(side)))
                    rows.extend(side)
            ids, att = pad(rows, tok.pad_token_id, dev)
            raw = fwd(ids, att)
            vals = torch.stack([aggregate(raw[a:b], cfg.pair_aggregate) for a, b in spans])
            return bradley_terry_loss(vals[0::2], vals[1::2])

    extra = {**checkpoints.config_extra(cfg, digest), "total_steps": len(steps)}
    loss_val = float("nan")
    skipped = optim.SkippedSteps(cfg.optim.max_skipped_steps)
    if preference:  # a pair's rows are the steps of both sides, padded to the longest step of the piece
        def rows(i: int) -> list[list[int]]:
            return [*train[i].chosen, *train[i].rejected]

        fit = memory.fit_for(cfg, lambda idx: sum(len(rows(i)) for i in idx) * max((len(r) for i in idx for r in rows(i)), default=0))
    else:
        fit = memory.fit_for(cfg, memory.padded_size([len(e.input_ids) for e in train]))
    for step in range(start, len(steps)):
        epoch, micro = steps[step]
        t0 = time.perf_counter()
        n = sum(len(mb) for mb in micro)
        done_steps = step + 1
        total, agg = fit.run(f"step {done_steps}", model, lambda: optim.example_mean_passes(fit, fwd, micro, micro_loss))
        (total,) = distributed.all_reduce_sum([total])
        agg = distributed.sum_dict(agg)
        grad_norm, lr = optim.optimizer_step(model, opt, sched, cfg.optim.max_grad_norm, skipped, done_steps)
        loss_val = total
        if done_steps % cfg.log_every == 0 or done_steps == len(steps):
            events.progress(step=done_steps, total_steps=len(steps), epoch=epoch, loss=loss_val, lr=lr, grad_norm=grad_norm,
                            examples_per_s=n / max(time.perf_counter() - t0, 1e-9), **agg, **skipped.fields(), **fit.fields())
        if cfg.save_every and done_steps % cfg.save_every == 0 and done_steps < len(steps):
            path = checkpoints.save_checkpoint(cfg.output_dir, done_steps, model, tok, opt, sched, extra, cfg.keep_last)
            if distributed.is_main():
                _save_meta(os.path.join(path, "model"), cfg)
            events.checkpoint(path, done_steps)
    path = checkpoints.save_checkpoint(cfg.output_dir, len(steps), model, tok, opt, sched, extra, cfg.keep_last)
    if distributed.is_main():
        _save_meta(os.path.join(path, "model"), cfg)
    events.checkpoint(path, len(steps))
    final = checkpoints.save_final(cfg.output_dir, model, tok, opt if cfg.optim.carry_state else None)
    if distributed.is_main():
        _save_meta(final, cfg)
    result: dict[str, Any] = {"step": len(steps), "loss": loss_val, "path": final, "checkpoint": path}
    if heldout and distributed.is_main():  # only rank 0 reports (its done event)
        ev = evaluate_pairs(model, tok, heldout, cfg.pair_aggregate) if preference else evaluate_steps(model, tok, heldout)
        result["eval"] = ev
    return result
