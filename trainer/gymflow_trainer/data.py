"""Dataset loaders for the formats ``gymflow export`` writes (src/hub/export/schemas.ts, docs/datasets.md).

All field names the trainer reads are in :data:`FIELDS`; aligning with the exporter is a one-line change
there. Tokenisation renders the conversation with the chat template (``chat.render``), tokenises the
whole text once (so the ids equal ``tokenizer(apply_chat_template(messages))``, what a rollout sees), and
maps each token to the message it starts in through the tokenizer's offsets: a token is trained when it
starts inside a trained span (an assistant message's content + ``<|im_end|>``).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional, Sequence

from .chat import ROLES, render
from .errors import DataError

IGNORE = -100

#: Every dataset field the trainer reads, by meaning → the exporter's name.
FIELDS: dict[str, str] = {
    # SFT record
    "messages": "messages",
    "reward": "reward",
    "trajectory_id": "trajectory_id",
    # message
    "role": "role",
    "content": "content",
    "train": "train",
    "step_index": "step_index",
    "step_reward": "step_reward",
    # DPO record
    "prompt": "prompt",
    "chosen": "chosen",
    "rejected": "rejected",
    # RL record
    "task_id": "task_id",
    "group": "group",
    "completion": "completion",
    "advantage": "advantage",
    "logprobs": "logprobs",
    "tokens": "tokens",
    "step_rewards": "step_rewards",
}


def f(name: str) -> str:
    return FIELDS[name]


def iter_jsonl(path: str, what: str = "dataset") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file; an unreadable file, a line
    that is not JSON or not an object is a :class:`DataError` naming the file (as ``what``) and the line."""
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise DataError(f"{path}: cannot read the {what} ({e.strerror})") from e
    n = 0
    with fh:
        try:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(f"{path}:{n}: not valid JSON ({e.msg})") from e
                if not isinstance(rec, dict):
                    raise DataError(f"{path}:{n}: expected a JSON object")
                yield n, rec
        except UnicodeDecodeError as e:  # raised by reading the next block, so the line is approximate
            raise DataError(f"{path}:{n + 1}: not valid UTF-8 ({e.reason} at a byte near this line); convert the file to UTF-8") from e


def read_jsonl(path: str, what: str = "dataset") -> list[dict[str, Any]]:
    """Reads JSON Lines (see :func:`iter_jsonl`); each record gets its line number as ``__line__``; an empty
    file is a :class:`DataError`."""
    out = [{**rec, "__line__": n} for n, rec in iter_jsonl(path, what)]
    if not out:
        raise DataError(f"{path}: no records")
    return out


def file_digest(path: str) -> str:
    """``sha256:<hex>`` of a dataset file (checkpoints record it: resuming on other data is an error)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        raise DataError(f"{path}: cannot read the dataset ({e.strerror})") from e
    return "sha256:" + h.hexdigest()


def _messages(rec: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    msgs = rec.get(f(key))
    if not isinstance(msgs, list) or not msgs:
        raise DataError(f"{where}: ${'.' + f(key)}: expected a non-empty list of messages")
    for i, m in enumerate(msgs):
        at = f"{where}: $.{f(key)}[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get(f("role")), str) or not isinstance(m.get(f("content")), str):
            raise DataError(f"{at}: expected an object with string '{f('role')}' and '{f('content')}'")
        if m[f("role")] not in ROLES:
            raise DataError(f"{at}.{f('role')}: unknown role {m[f('role')]!r} (known: {', '.join(ROLES)})")
        # `"train": "false"` is a truthy string: the message would be trained on.
        if f("train") in m and not isinstance(m[f("train")], bool):
            raise DataError(f"{at}.{f('train')}: expected true or false, got {m[f('train')]!r}")
        number(m, "step_reward", at, required=False)
    return msgs


def number(rec: dict[str, Any], key: str, where: str, required: bool, default: float = 0.0) -> float:
    """The finite number at field ``key`` of a record; ``default`` when it is absent or null and not
    ``required``. A string, a boolean or NaN (which Python's ``json`` reads) is a :class:`DataError` naming the
    field: a NaN reward would silently turn whole steps into skipped ones."""
    v = rec.get(f(key))
    if v is None:
        if required:
            raise DataError(f"{where}.{f(key)}: missing; expected a number")
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise DataError(f"{where}.{f(key)}: expected a finite number, got {v!r}")
    return float(v)


def _plain(msgs: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"role": m[f("role")], "content": m[f("content")]} for m in msgs]


# ------------------------------------------------------------------------------------------------ tokenising


@dataclass
class Tokenized:
    """One tokenised conversation: ids, labels (``-100`` = not trained), per-token loss weights, and the
    token positions where each step (assistant message) begins — the places it may be cut."""

    input_ids: list[int]
    labels: list[int]
    weights: list[float]
    step_starts: list[int] = field(default_factory=list)


def tokenize_messages(
    tokenizer: Any,
    messages: Sequence[dict[str, Any]],
    trained: Sequence[bool],
    weights: Optional[Sequence[float]] = None,
    add_generation_prompt: bool = False,
    system: bool = True,
) -> Tokenized:
    """Tokenises ``messages`` (role/content dicts) with per-message ``trained`` flags and loss weights.
    ``system=False`` leaves system messages out (the model's prompt format says so, see
    :func:`gymflow_trainer.models.system_prompt_mode`)."""
    if not system:
        keep = [i for i, m in enumerate(messages) if m["role"] != "system"]
        messages = [messages[i] for i in keep]
        trained = [trained[i] for i in keep]
        weights = None if weights is None else [weights[i] for i in keep]
    text, segs = render(messages, add_generation_prompt=add_generation_prompt, trained=trained)
    enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ids: list[int] = enc["input_ids"]
    starts = [s.start for s in segs]
    labels: list[int] = []
    ws: list[float] = []
    step_starts: list[int] = []
    last_msg = -2
    for tid, (a, _b) in zip(ids, enc["offset_mapping"]):
        seg = segs[max(0, bisect.bisect_right(starts, a) - 1)]
        if seg.message != last_msg:
            last_msg = seg.message
            if 0 <= seg.message < len(messages) and messages[seg.message]["role"] == "assistant":
                step_starts.append(len(labels))
        if seg.trained:
            labels.append(tid)
            ws.append(1.0 if weights is None else float(weights[seg.message]))
        else:
            labels.append(IGNORE)
            ws.append(0.0)
    return Tokenized(ids, labels, ws, step_starts)


# ------------------------------------------------------------------------------------------------------- SFT


@dataclass
class SftExample:
    """A trainable sequence (a whole conversation or one chunk of it)."""

    input_ids: list[int]
    labels: list[int]
    weights: list[float]
    reward: float
    source: int  # record index
    chunk: int = 0

    @property
    def num_trained(self) -> int:
        return sum(1 for x in self.labels if x != IGNORE)


def step_weights(records: list[dict[str, Any]], path: str) -> tuple[float, int]:
    """Mean ``step_reward`` over trained assistant messages; raises when the data has none."""
    vals: list[float] = []
    missing = 0
    for rec in records:
        for m in rec.get(f("messages")) or []:
            if m.get(f("role")) == "assistant" and m.get(f("train"), True):
                v = m.get(f("step_reward"))
                if v is None:
                    missing += 1
                else:
                    vals.append(float(v))
    if not vals:
        raise DataError(
            f"{path}: step_weighted is on but the data carries no step rewards (every assistant message's "
            f"'{f('step_reward')}' is null or absent): score the trajectories with the process reward model before "
            "exporting, or set step_weighted: false"
        )
    mean = sum(vals) / len(vals)
    if mean <= 0:
        raise DataError(f"{path}: step_weighted needs a positive mean step reward (got {mean:.4g})")
    return mean, missing


def load_sft(
    path: str,
    tokenizer: Any,
    max_length: int,
    mask_observations: bool = True,
    step_weighted: bool = False,
    overlong: str = "chunk",
    chunk_overlap: int = 0,
    warn: Any = None,
    system: bool = True,
) -> list[SftExample]:
    """SFT records → examples.

    Loss mask: assistant messages with ``train != false`` are trained; system, user and tool messages and
    ``train: false`` assistant messages are not. ``mask_observations=False`` also trains the system, user and
    tool messages (``train: false`` assistant messages stay masked). ``step_weighted``: each trained message's tokens weigh
    ``max(step_reward, 0) / mean(step_reward)`` (messages without a step reward weigh 1).
    Over-long conversations: see :func:`chunk_example`.
    """
    records = read_jsonl(path)
    mean = 1.0
    if step_weighted:
        mean, missing = step_weights(records, path)
        if missing and warn:
            warn(f"{path}: {missing} trained assistant messages have no step_reward; they weigh 1")
    out: list[SftExample] = []
    for ri, rec in enumerate(records):
        where = f"{path}:{rec['__line__']}"
        msgs = _messages(rec, "messages", where)
        trained = []
        weights = []
        for m in msgs:
            is_asst = m[f("role")] == "assistant"
            # assistant: the exporter's `train` flag (false = an invalid action kept as context only);
            # other roles: the exporter always writes train=false (the policy did not produce them), so
            # the switch alone decides.
            trained.append(bool(m.get(f("train"), True)) if is_asst else not mask_observations)
            w = 1.0
            if step_weighted and is_asst and m.get(f("step_reward")) is not None:
                w = max(float(m[f("step_reward")]), 0.0) / mean
            weights.append(w)
        tk = tokenize_messages(tokenizer, _plain(msgs), trained, weights, system=system)
        reward = number(rec, "reward", f"{where}: $", required=False)
        if len(tk.input_ids) <= max_length:
            out.append(SftExample(tk.input_ids, tk.labels, tk.weights, reward, ri))
            continue
        if overlong == "error":
            raise DataError(f"{where}: {len(tk.input_ids)} tokens, more than max_length {max_length} (overlong: error)")
        if overlong == "truncate":
            out.append(SftExample(tk.input_ids[:max_length], tk.labels[:max_length], tk.weights[:max_length], reward, ri))
            continue
        for ci, (ids, labels, ws) in enumerate(chunk_example(tk, max_length, chunk_overlap)):
            out.append(SftExample(ids, labels, ws, reward, ri, ci))
    return out


def chunk_example(tk: Tokenized, max_length: int, overlap: int) -> list[tuple[list[int], list[int], list[float]]]:
    """Cuts a long conversation at step boundaries (the start of an assistant message's header).

    Each chunk after the first begins with ``overlap`` tokens of the preceding text as context; their labels
    are ``-100`` (they were trained in the previous chunk or are observations). Greedy: a chunk takes as
    many whole steps as fit in ``max_length``; a single step longer than that is cut at ``max_length``
    (its tail is lost — raise ``max_length``).
    """
    n = len(tk.input_ids)
    cuts = sorted(set([0] + [s for s in tk.step_starts if 0 < s < n] + [n]))
    chunks = []
    start = 0
    while start < n:
        ctx = 0 if start == 0 else min(overlap, start)
        budget = max_length - ctx
        # furthest boundary that fits; at least one boundary ahead (else cut mid-step)
        end = start
        for c in cuts:
            if c > start and c - start <= budget:
                end = c
        if end == start:
            end = min(start + budget, n)
            nxt = next((c for c in cuts if c > start), n)
            next_start = nxt  # skip the rest of an over-long step
        else:
            next_start = end
        s0 = start - ctx
        ids = tk.input_ids[s0:end]
        labels = [IGNORE] * ctx + tk.labels[start:end]
        ws = [0.0] * ctx + tk.weights[start:end]
        chunks.append((ids, labels, ws))
        start = next_start
    return [c for c in chunks if any(x != IGNORE for x in c[1])]


def curriculum_order(examples: Sequence[SftExample]) -> list[int]:
    """Indices from easiest to hardest: by the mean of the length rank (short first) and the reward rank
    (high first); ties by index."""
    n = len(examples)
    by_len = sorted(range(n), key=lambda i: (len(examples[i].input_ids), i))
    by_rew = sorted(range(n), key=lambda i: (-examples[i].reward, i))
    rank = [0.0] * n
    for r, i in enumerate(by_len):
        rank[i] += r
    for r, i in enumerate(by_rew):
        rank[i] += r
    return sorted(range(n), key=lambda i: (rank[i], i))


def curriculum_pool(n: int, epoch: int, epochs: int, start: float) -> int:
    """How many of the easiest examples epoch ``epoch`` (0-based) uses: ``start`` of them in the first
    epoch, widening linearly to all in the last."""
    frac = 1.0 if epochs <= 1 else start + (1.0 - start) * epoch / (epochs - 1)
    return max(1, min(n, math.ceil(frac * n)))


# ------------------------------------------------------------------------------------------------------- DPO


@dataclass
class DpoExample:
    chosen: Tokenized
    rejected: Tokenized


def load_dpo(path: str, tokenizer: Any, max_length: int, system: bool = True) -> list[DpoExample]:
    """DPO records (``prompt``, ``chosen``, ``rejected`` message lists) → tokenised prompt+continuation pairs.

    Only the continuation's assistant messages are trained (``train`` is honoured when present); a
    sequence longer than ``max_length`` loses its tail (exported pairs are short; an error is raised when
    nothing trained is left).
    """
    out = []
    identical = 0
    for rec in read_jsonl(path):
        where = f"{path}:{rec['__line__']}"
        prompt = _messages(rec, "prompt", where)
        pair = []
        for key in ("chosen", "rejected"):
            cont = _messages(rec, key, where)
            msgs = prompt + cont
            trained = [False] * len(prompt) + [m[f("role")] == "assistant" and bool(m.get(f("train"), True)) for m in cont]
            tk = tokenize_messages(tokenizer, _plain(msgs), trained, system=system)
            if len(tk.input_ids) > max_length:
                tk = Tokenized(tk.input_ids[:max_length], tk.labels[:max_length], tk.weights[:max_length])
            if all(x == IGNORE for x in tk.labels):
                raise DataError(f"{where}: the {key} continuation has no trained tokens within max_length {max_length}")
            pair.append(tk)
        if pair[0].input_ids == pair[1].input_ids:
            identical += 1
        out.append(DpoExample(pair[0], pair[1]))
    if identical:
        # Such a pair's loss has no gradient: it teaches nothing, and a dataset of them trains nothing at all.
        warn_stderr(f"{path}: {identical} of {len(out)} pairs have the same chosen and rejected continuation; they teach nothing")
    return out


# -------------------------------------------------------------------------------------------------------- RL


@dataclass
class RlSample:
    tokens: Tokenized
    reward: float
    advantage: float
    group: str
    #: Log-probs of the trained tokens under the policy that sampled them (the rollout's own, aligned with
    #: ``tokens.input_ids[1:]``; 0 where not trained), or None when the trainer recomputes them.
    old_logp: Optional[list[float]] = None
    #: The trajectory (group member) it comes from: several step samples share one member.
    member: str = ""
    #: Cut at ``max_length``: the conversation's end (conversation samples), or the prompt's start or the
    #: completion's end (step samples: the trainer then scores the tokens in another context than the policy's).
    cut: bool = False
    #: The step of the member it is (``tokens[step]``; 0 for a conversation sample): a member's step samples in
    #: this order are its episode, over which PPO's GAE runs one recursion.
    step: int = 0
    #: The step's process reward (``step_rewards[step]``: the reward model's score in [0, 1]); None when the step is
    #: not scored, and for a conversation sample. Read only when ``step_reward_coef`` > 0 (``load_rl_steps``).
    step_reward: Optional[float] = None


def load_rl(path: str, tokenizer: Any, max_length: int, system: bool = True) -> list[RlSample]:
    """RL records (one group of trajectories per task) → samples: prompt + completion, trained on the
    completion's assistant messages with ``train != false``; ``group`` is the record's task id."""
    out = []
    for gi, rec in enumerate(read_jsonl(path)):
        where = f"{path}:{rec['__line__']}"
        prompt = _messages(rec, "prompt", where)
        members = rec.get(f("group"))
        if not isinstance(members, list) or not members:
            raise DataError(f"{where}: $.{f('group')}: expected a non-empty list")
        gid = f"{rec.get(f('task_id'), gi)}#{gi}"
        for mi, mem in enumerate(members):
            cont = _messages(mem, "completion", f"{where} $.{f('group')}[{mi}]")
            trained = [False] * len(prompt) + [m[f("role")] == "assistant" and bool(m.get(f("train"), True)) for m in cont]
            tk = tokenize_messages(tokenizer, _plain(prompt + cont), trained, system=system)
            cut = len(tk.input_ids) > max_length
            if cut:
                tk = Tokenized(tk.input_ids[:max_length], tk.labels[:max_length], tk.weights[:max_length])
            at = f"{where}: $.{f('group')}[{mi}]"
            out.append(RlSample(tk, number(mem, "reward", at, required=True), number(mem, "advantage", at, required=False), gid, None, f"{gid}/{mi}",
                                cut))
    return out


def rollout_tokens_complete(path: str) -> bool:
    """True when every member of every RL record carries, for each of its steps, the token ids the policy saw
    and sampled (``tokens[i].prompt``/``.completion``) and the log-probs of the sampled ids (``logprobs[i]``)."""
    for rec in read_jsonl(path):
        members = rec.get(f("group"))
        if not isinstance(members, list) or not members:
            return False
        for mem in members:
            toks, lps = mem.get(f("tokens")), mem.get(f("logprobs"))
            if not isinstance(toks, list) or not isinstance(lps, list) or not toks or len(toks) != len(lps):
                return False
            sampled = 0
            for t, lp in zip(toks, lps):
                if t is None and lp is None:
                    continue  # a step where the policy sampled nothing (e.g. its context was full)
                if not isinstance(t, dict) or not isinstance(t.get("prompt"), list) or not isinstance(t.get("completion"), list):
                    return False
                if not isinstance(lp, list) or len(lp) != len(t["completion"]):
                    return False
                sampled += 1
            if sampled == 0:
                return False
    return True


def load_rl_steps(path: str, max_length: int, step_rewards: bool = False) -> list[RlSample]:
    """RL records → one sample per *step* from the rollout's own token ids: ``tokens[i].prompt +
    tokens[i].completion``, trained on the completion, with the rollout's ``logprobs[i]`` as the old log-probs.

    This is the exact form of the policy gradient for multi-turn episodes: the trainer scores precisely the ids
    the policy sampled (no re-tokenisation of the rendered text, which can differ from a sampled sequence) and
    the importance ratio starts from the behaviour policy's own log-probs. Every step of a member shares the
    member's reward and advantage; steps whose action could not be parsed are trained too (they are what the
    policy did); steps without tokens (the policy sampled nothing, e.g. its context was full) are skipped. A prompt longer than ``max_length - len(completion)`` keeps its last tokens; a completion
    longer than ``max_length`` keeps its first ``max_length - 1`` tokens.

    ``step_rewards``: read each step's process reward (``step_rewards[i]``, a number in [0, 1] or null) into
    ``RlSample.step_reward``; data in which no step carries one is a :class:`DataError`. Otherwise the field is
    not read.
    """
    out = []
    for gi, rec in enumerate(read_jsonl(path)):
        where = f"{path}:{rec['__line__']}"
        members = rec.get(f("group"))
        if not isinstance(members, list) or not members:
            raise DataError(f"{where}: $.{f('group')}: expected a non-empty list")
        gid = f"{rec.get(f('task_id'), gi)}#{gi}"
        for mi, mem in enumerate(members):
            toks, lps = mem.get(f("tokens")), mem.get(f("logprobs"))
            here = f"{where} $.{f('group')}[{mi}]"
            if not isinstance(toks, list) or not isinstance(lps, list) or len(toks) != len(lps):
                raise DataError(f"{here}: rollout tokens requested but '{f('tokens')}'/'{f('logprobs')}' are missing or of different lengths "
                                "(collect with a policy that records token ids and log-probs, e.g. local:DIR, or set samples: conversation)")
            scores = read_step_rewards(mem, len(toks), here) if step_rewards else [None] * len(toks)
            for si, (t, lp) in enumerate(zip(toks, lps)):
                if t is None and lp is None:
                    continue  # nothing was sampled at this step: nothing to train
                if not isinstance(t, dict) or not isinstance(t.get("prompt"), list) or not isinstance(t.get("completion"), list) or not isinstance(lp, list):
                    raise DataError(f"{here}.{f('tokens')}[{si}]: expected prompt and completion token ids with their log-probs")
                prompt, comp = [int(x) for x in t["prompt"]], [int(x) for x in t["completion"]]
                if not prompt:
                    raise DataError(f"{here}.{f('tokens')}[{si}].prompt: empty (a completion needs a prompt to be scored)")
                if len(lp) != len(comp) or not comp:
                    raise DataError(f"{here}.{f('logprobs')}[{si}]: {len(lp)} log-probs for {len(comp)} completion tokens")
                cut = len(prompt) + len(comp) > max_length
                comp, lp = comp[: max_length - 1], [float(x) for x in lp[: max_length - 1]]
                prompt = prompt[-(max_length - len(comp)):] if len(prompt) + len(comp) > max_length else prompt
                ids = prompt + comp
                labels = [IGNORE] * len(prompt) + comp
                old = [0.0] * (len(prompt) - 1) + lp
                tk = Tokenized(ids, labels, [1.0] * len(ids))
                out.append(RlSample(tk, number(mem, "reward", here, required=True), number(mem, "advantage", here, required=False), gid, old,
                                    f"{gid}/{mi}", cut, si, scores[si]))
    if step_rewards and out and all(x.step_reward is None for x in out):
        raise DataError(f"{path}: no step carries a process reward ('{f('step_rewards')}' is null or absent for every member): score the "
                        "trajectories (gymflow reward score, or the pipeline's reward stage) before the export")
    return out


def read_step_rewards(mem: dict[str, Any], steps: int, where: str) -> list[Optional[float]]:
    """A member's ``step_rewards`` (one number in [0, 1] or null per step, as the ``rl`` export writes them; the whole
    field null or absent when no step is scored), as a list of ``steps`` entries."""
    raw = mem.get(f("step_rewards"))
    if raw is None:
        return [None] * steps
    if not isinstance(raw, list) or len(raw) != steps:
        got = f"{len(raw)} entries" if isinstance(raw, list) else f"a {type(raw).__name__}"
        raise DataError(f"{where}.{f('step_rewards')}: expected a list of {steps} numbers or nulls (one per step, as '{f('tokens')}'), got {got}")
    for k, v in enumerate(raw):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1):
            raise DataError(f"{where}.{f('step_rewards')}[{k}]: expected a process reward in [0, 1] or null, got {str(v)[:40]!r}")
    return [None if v is None else float(v) for v in raw]


def warn_stderr(msg: str) -> None:
    print(f"gymflow_trainer: warning: {msg}", file=sys.stderr)
