"""Teacher-forced proxy of held-out success for a trained policy (no environment, no ONNX).

For each exported expert trajectory (``gymflow export --format sft``) and each of its assistant turns,
greedy-generate from the true prefix (the ChatML prompt up to ``<|im_start|>assistant\\n``) with the
checkpoint and compare the parsed ``<tool_call>`` (name + arguments as JSON values) with the expert's.
An episode counts as solved when every turn matches; a turn matches when name and arguments are equal.

    .venv/bin/python trainer/scripts/proxy_eval.py CHECKPOINT_DIR HELDOUT_SFT.jsonl [--limit N] [--max-new 96]

Prints one JSON line: ``{"episodes":…, "solved":…, "episode_acc":…, "turns":…, "turn_acc":…, "seconds":…}``
and, with ``--show N``, the first N mismatches on stderr. This is an upper bound of closed-loop success
(a real episode feeds back the model's own calls); it is cheap, so it drives recipe search.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any, Optional

import torch

from gymflow_trainer.chat import IM_END, render
from gymflow_trainer.models import SYSTEM_PROMPT_ATTR

CALL = re.compile(r"<tool_call>\s*(\{.*\})\s*</tool_call>", re.S)


def parse_call(text: str) -> Optional[tuple[str, Any]]:
    """``(name, arguments)`` of the one ``<tool_call>`` in ``text``, or None when it cannot be read."""
    m = CALL.search(text)
    if not m:
        return None
    try:
        obj = json.loads(m.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    args = obj.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return obj["name"], args


def expert_call(msg: dict[str, Any]) -> tuple[str, Any]:
    calls = msg.get("tool_calls") or []
    if calls:
        fn = calls[0]["function"]
        args = fn.get("arguments", {})
        return fn["name"], json.loads(args) if isinstance(args, str) else args
    parsed = parse_call(msg["content"])
    assert parsed is not None, "expert message without a readable tool call"
    return parsed


@torch.no_grad()
def greedy(model: Any, tok: Any, prompt: str, max_new: int, eos: int) -> str:
    """Greedy continuation of ``prompt`` up to ``eos``, ``max_new`` tokens, or a closed ``</tool_call>``
    (nothing after it changes the parsed call)."""
    ids = torch.tensor([tok(prompt, add_special_tokens=False)["input_ids"]])
    out = model(input_ids=ids, use_cache=True)
    past = out.past_key_values
    nxt = int(out.logits[0, -1].argmax())
    gen: list[int] = []
    pos = ids.shape[1]
    while nxt != eos and len(gen) < max_new:
        gen.append(nxt)
        if len(gen) % 4 == 0 and "</tool_call>" in tok.decode(gen[-8:]):
            break
        out = model(input_ids=torch.tensor([[nxt]]), past_key_values=past, use_cache=True,
                    position_ids=torch.tensor([[pos]]))
        past = out.past_key_values
        pos += 1
        nxt = int(out.logits[0, -1].argmax())
    return tok.decode(gen)


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("data")
    p.add_argument("--limit", type=int, default=0, help="evaluate the first N episodes only")
    p.add_argument("--max-new", type=int, default=96, help="token budget of one turn")
    p.add_argument("--show", type=int, default=0, help="print the first N mismatches on stderr")
    p.add_argument("--threads", type=int, default=1, help="torch threads (decoding one token at a time gains little from more)")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(a.checkpoint)
    model = AutoModelForCausalLM.from_pretrained(a.checkpoint, dtype=torch.float32).eval()
    eos = tok.convert_tokens_to_ids(IM_END)
    # The prompt format the model was trained with: a model trained with `system_prompt: drop` never saw one.
    keep_system = getattr(model.config, SYSTEM_PROMPT_ATTR, None) != "drop"
    recs = [json.loads(line) for line in open(a.data, encoding="utf-8") if line.strip()]
    if a.limit:
        recs = recs[: a.limit]
    t0 = time.time()
    solved = turns = ok_turns = shown = 0
    for rec in recs:
        kept = [m for m in rec["messages"] if keep_system or m["role"] != "system"]
        msgs = [{"role": m["role"], "content": m["content"]} for m in kept]
        all_ok = True
        for i, m in enumerate(kept):
            if m["role"] != "assistant":
                continue
            prompt, _ = render(msgs[:i], add_generation_prompt=True)
            text = greedy(model, tok, prompt, a.max_new, eos)
            got = parse_call(text)
            want = expert_call(m)
            turns += 1
            if got == want:
                ok_turns += 1
            else:
                all_ok = False
                if shown < a.show:
                    shown += 1
                    print(f"[{rec.get('task_id')} turn {i}] want {want} got {text!r}", file=sys.stderr)
        solved += all_ok
    print(json.dumps({"episodes": len(recs), "solved": solved, "episode_acc": round(solved / max(len(recs), 1), 4),
                      "turns": turns, "turn_acc": round(ok_turns / max(turns, 1), 4), "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
