"""SFT throughput: gymflow_trainer's ``sft`` command side by side with TRL's ``SFTTrainer``.

Both train the same randomly initialised model (a Qwen2-style config written once with ``save_pretrained``,
loaded by each trainer from that directory), on the same token sequences, with the same optimiser settings,
sequence length, tokens per optimiser step, precision and number of steps. Each trainer runs in its own
process (a fresh CUDA context and allocator each). Measured after ``--warmup`` steps:

- tokens/s: non-padding tokens per second (every token of the packed rows; padding-free layouts have none);
- trained tokens/s: tokens with a label (the assistant tokens; the loss mask is the same for both);
- MFU (GPU): useful FLOPs per second / the GPU's dense bf16 peak (see ``flops_per_step``).

Data: ``--data FILE`` (an SFT export, ``gymflow export --format sft``) or, by default, synthetic tool-use
conversations in the same format. gymflow tokenises it (``data.load_sft``: the ChatML rendering, assistant-only
loss mask, over-long conversations chunked at step boundaries); TRL receives those very ``input_ids`` and
``labels`` as a pre-tokenised dataset, so the trained tokens are identical by construction.

Layout: both padding-free. TRL: ``packing=True`` (best-fit-decreasing into rows of ``--seq-len``; its collator
then flattens the ``--batch-size`` rows of a step into one row with per-example ``position_ids``). gymflow:
``packing: true`` (a micro-batch's examples concatenated into one row), with ``batch_size`` = the number of
examples whose mean length fills ``--batch-size × --seq-len`` tokens, so both take about the same number of tokens
per optimiser step (the measured means are reported). ``gymflow`` keeps the row's examples apart with
``packed_attention: varlen`` (its default), ``gymflow-mask`` with the dense block-diagonal mask;
``gymflow-compile`` adds ``compile: true``, ``gymflow-chunk`` ``logits_chunk: 1024`` (``--trainers`` picks which
run).

    .venv/bin/python bench/trainer-sft.py                     # CPU: tiny model, reduced size
    python3 bench/trainer-sft.py --size 0.5b --steps 40       # GPU (bf16 autocast on CUDA)

Prints a table and writes ``bench/results/trainer-sft.json`` (``--out`` to change). TRL comes from
``bench/requirements-trl.txt``'s wheels (``--wheels``, default ``.gymflow/wheels/trl``), installed with
``pip --no-index`` into a private directory (``--site``) when the running python lacks them.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REQUIREMENTS = os.path.join(HERE, "requirements-trl.txt")
DEFAULT_WHEELS = os.path.join(ROOT, ".gymflow", "wheels", "trl")
DEFAULT_SITE = os.path.join(ROOT, ".gymflow", "trl-site")
#: What ``--trainers`` can name: gymflow's ``sft`` with the settings that differ between its variants (``gymflow``
#: is the default configuration), and TRL.
TRAINERS: dict[str, Optional[dict[str, Any]]] = {
    "gymflow": {"packed_attention": "varlen"},
    "gymflow-compile": {"packed_attention": "varlen", "compile": True},
    "gymflow-mask": {"packed_attention": "mask"},
    "gymflow-chunk": {"packed_attention": "varlen", "logits_chunk": 1024},
    "trl": None,
}

#: Model shapes. ``0.5b`` is Qwen2.5-0.5B's architecture (494M parameters with its 151,936-row tied embedding);
#: the embedding is wider than the byte-level tokenizer (rows past it are never seen, as in Qwen's own padding).
SIZES: dict[str, dict[str, Any]] = {
    "tiny": dict(hidden_size=128, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=None),
    "small": dict(hidden_size=256, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, vocab_size=None),
    "0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, vocab_size=151936),
    "1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2, vocab_size=151936),
}

#: Dense bf16 tensor-core peak (TFLOP/s, no sparsity) by GPU name, first match wins.
PEAK_BF16_TFLOPS: list[tuple[str, float]] = [
    ("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H200", 989.0), ("H100", 989.0), ("H800", 989.0),
    ("A100", 312.0), ("L40S", 362.0), ("A10G", 70.0), ("L4", 121.0),
]

SYSTEM = (
    "You are an agent solving a task in the environment gymflow/tool-use-v0 (domain: tool-use) by calling tools, "
    "one call per turn.\n\n# Tools\n\n"
    '{"type":"function","function":{"name":"lookup","description":"","parameters":{"type":"object"}}}\n'
    '{"type":"function","function":{"name":"submit","description":"","parameters":{"type":"object"}}}\n\n'
    "# Format\n\nThink briefly, then call exactly one tool:\n<tool_call>\n"
    '{"name":"<tool name>","arguments":{...}}\n</tool_call>\n'
    "The result comes back as a tool message. The episode ends when you submit your answer."
)
ENTITIES = ["Velmora", "Ostrakan", "Quillby", "Marrowgate", "Tessaly", "Norwick", "Brisa", "Caldon", "Ethervale"]
ATTRIBUTES = ["population", "area", "founded", "elevation", "mayor", "river", "twin city"]


def synthetic_records(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` tool-use conversations in the SFT export's shape (system, user, then assistant tool calls and tool
    results, ending with a submit), 2–12 lookups each, so lengths vary over a few hundred to a few thousand
    bytes."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ent = rng.sample(ENTITIES, 2)
        attr = rng.choice(ATTRIBUTES)
        msgs: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM, "train": False},
            {"role": "user", "content": f"Which has the larger {attr}: {ent[0]} or {ent[1]}? Answer with the name.", "train": False},
        ]
        steps = rng.randint(2, 12)
        for i in range(steps):
            e = rng.choice(ent + ENTITIES)
            a = rng.choice(ATTRIBUTES)
            thought = rng.choice(["Look it up.", f"I need the {a} of {e} first.", "Check the other one as well, to compare."])
            call = json.dumps({"name": "lookup", "arguments": {"attribute": a, "entity": e}}, separators=(",", ":"))
            msgs.append({"role": "assistant", "content": f"{thought}\n\n<tool_call>\n{call}\n</tool_call>", "train": True,
                         "step_index": i, "step_reward": round(rng.random(), 2)})
            msgs.append({"role": "tool", "content": f"{e} (city) — {a}: {rng.randint(1000, 9_999_999)}" + " (source: atlas)" * rng.randint(0, 20),
                         "train": False})
        call = json.dumps({"name": "submit", "arguments": {"answer": ent[0]}}, separators=(",", ":"))
        msgs.append({"role": "assistant", "content": f"<tool_call>\n{call}\n</tool_call>", "train": True, "step_index": steps, "step_reward": 1.0})
        out.append({"messages": msgs, "reward": 1.0})
    return out


# --------------------------------------------------------------------------------------------------- TRL install


def _pins() -> list[tuple[str, str]]:
    pins = []
    with open(REQUIREMENTS, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, version = line.partition("==")
                pins.append((name.strip(), version.strip()))
    return pins


def ensure_trl(wheels: str, site: str) -> None:
    """Makes ``import trl`` work with the pinned versions: puts ``site`` first on ``sys.path`` and, for every pin of
    requirements-trl.txt the running python lacks at that version, installs the wheel from ``wheels`` into ``site``
    (``pip --no-index --no-deps``: nothing is fetched and the environment's own packages are left as they are).
    Must run before transformers is imported (a pinned transformers in ``site`` then wins)."""
    if os.path.isdir(site):
        sys.path.insert(0, site)
    missing = []
    for name, version in _pins():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            have = None
        if have != version:
            missing.append(f"{name}=={version}")
    if not missing:
        return
    if not os.path.isdir(wheels):
        raise SystemExit(f"trainer-sft: {', '.join(missing)} not installed and the wheel directory {wheels} does not exist; "
                         f"fill it with: pip download --no-deps --only-binary=:all: --python-version "
                         f"{sys.version_info.major}.{sys.version_info.minor} -d {wheels} -r {os.path.relpath(REQUIREMENTS)}")
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--upgrade",
           "--find-links", wheels, "--target", site, *missing]
    print(f"installing {' '.join(missing)} from {wheels} into {site}", file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"trainer-sft: could not install {', '.join(missing)} from {wheels} (pip exit {r.returncode}):\n"
                         f"{r.stderr.strip()[-2000:]}\nthe directory must hold a wheel of each pin of {REQUIREMENTS} for "
                         f"python {sys.version_info.major}.{sys.version_info.minor} (see bench/trainer.md)")
    if site not in sys.path:
        sys.path.insert(0, site)
    importlib.invalidate_caches()


# --------------------------------------------------------------------------------------------------- model, data


def write_model(out_dir: str, size: str, seed: int) -> dict[str, Any]:
    """A Qwen2-style model of ``SIZES[size]`` and the byte-level ChatML tokenizer, written with save_pretrained."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    from gymflow_trainer.tiny import build_tokenizer

    tok = build_tokenizer()
    shape = dict(SIZES[size])
    vocab = shape.pop("vocab_size") or len(tok)
    config = Qwen2Config(vocab_size=vocab, max_position_embeddings=32768, tie_word_embeddings=True, rope_theta=1e6,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None, **shape)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return {"size": size, "params": sum(p.numel() for p in model.parameters()), "vocab_size": vocab,
            "tokenizer_size": len(tok), **shape}


def flops_per_step(params_matmul: int, layers: int, attn_width: int, seg_lens: list[int]) -> float:
    """Useful training FLOPs of one step over segments (examples) of lengths ``seg_lens``:

        6 · N · Σ n_i  +  12 · n_layers · d_attn · Σ n_i²

    ``N``: parameters that take part in a matmul (all of them with tied embeddings: the input lookup is free and
    the tied matrix is counted once, as the LM head). The second term is attention's QKᵀ and AV (forward
    2·2·n²·d per layer, ×3 for forward + backward), inside each example only (the work a block-diagonal
    mask asks for, not the masked-out part of a dense kernel), not halved for causality: PaLM's convention
    (Chowdhery et al. 2022, appendix B)."""
    tokens = sum(seg_lens)
    return 6.0 * params_matmul * tokens + 12.0 * layers * attn_width * sum(n * n for n in seg_lens)


def peak_tflops(name: str, override: Optional[float]) -> Optional[float]:
    if override:
        return override
    for key, value in PEAK_BF16_TFLOPS:
        if key.lower() in name.lower():
            return value
    return None


# --------------------------------------------------------------------------------------------------- children


def _device_facts() -> dict[str, Any]:
    import torch

    if torch.cuda.is_available():
        return {"device": "cuda", "gpu": torch.cuda.get_device_name(0)}
    return {"device": "cpu", "gpu": None, "threads": torch.get_num_threads()}


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def child_gymflow(spec: dict[str, Any], name: str) -> dict[str, Any]:
    """Runs ``python -m gymflow_trainer sft`` (the real command, its own process) and timestamps its progress
    events as they arrive (one per optimiser step; the trainer reads the loss and grad norm back before
    printing, so on CUDA each event follows the step's completion)."""
    cfg = {
        "data": spec["data"], "output_dir": os.path.join(spec["work"], f"{name}-run"), "seed": spec["seed"],
        "epochs": spec["gymflow_epochs"], "max_steps": spec["steps"], "batch_size": spec["gymflow_batch_size"], "grad_accum": 1,
        "max_length": spec["seq_len"], "log_every": 1, "save_every": 0, "keep_last": 1, "bf16": spec["bf16"],
        "packing": True, **(TRAINERS[name] or {}), "mask_observations": True, "overlong": "chunk",
        "model": {"path": spec["model_dir"], "dtype": "float32"},
        "optim": {"lr": spec["lr"], "warmup_steps": 0, "scheduler": "constant", "max_grad_norm": 1.0, "weight_decay": 0.0},
    }
    cfg_file = os.path.join(spec["work"], f"{name}-sft.json")
    with open(cfg_file, "w", encoding="utf-8") as fh:
        json.dump(cfg, fh)
    # the pinned packages installed for the bench (transformers included) apply to the trainer's process too
    path = [os.path.join(ROOT, "trainer"), *([spec["site"]] if os.path.isdir(spec["site"]) else []), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(x for x in path if x))
    proc = subprocess.Popen([sys.executable, "-m", "gymflow_trainer", "sft", "--config", cfg_file], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=spec["work"])
    stamps: list[float] = []
    steps: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        t = time.perf_counter()
        ev = json.loads(line)
        if ev["event"] == "progress":
            stamps.append(t)
            steps.append(ev)
        elif ev["event"] == "start":
            start = ev
        elif ev["event"] == "error":
            proc.kill()
            raise SystemExit(f"gymflow sft failed: {ev}")
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0:
        raise SystemExit(f"gymflow sft exited {proc.returncode}:\n{err[-3000:]}")
    return {"stamps": stamps, "tokens": [s["tokens"] for s in steps], "trained": [s["trained_tokens"] for s in steps],
            "loss": [s["loss"] for s in steps], "device": start.get("device")}


def child_trl(spec: dict[str, Any]) -> dict[str, Any]:
    """TRL's SFTTrainer on the pre-tokenised examples, timed by a callback at each step's end (after a CUDA sync).
    The collator is wrapped to record what each step trains on: the batches are collated in step order (no
    dataloader workers), so the k-th collated batch is the k-th step's."""
    import torch
    import trl
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

    with open(spec["examples"], encoding="utf-8") as fh:
        rows = json.load(fh)
    ds = Dataset.from_dict({"input_ids": [r[0] for r in rows], "labels": [r[1] for r in rows]})
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    torch.manual_seed(spec["seed"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    args = trl.SFTConfig(
        output_dir=os.path.join(spec["work"], "trl-run"), max_steps=spec["steps"], per_device_train_batch_size=spec["batch_size"],
        gradient_accumulation_steps=1, learning_rate=spec["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        adam_beta1=0.9, adam_beta2=0.999, max_grad_norm=1.0, bf16=spec["bf16"], max_length=spec["seq_len"], packing=True,
        packing_strategy="bfd", logging_steps=max(spec["steps"], 1), save_strategy="no", report_to="none", seed=spec["seed"],
        dataloader_num_workers=0, disable_tqdm=True, use_cpu=not torch.cuda.is_available(),
    )
    stamps: list[float] = []
    batches: list[dict[str, Any]] = []

    class Stamp(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            _sync()
            stamps.append(time.perf_counter())

    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok, callbacks=[Stamp()])
    inner = trainer.data_collator

    def counting(examples: list[dict[str, Any]]) -> Any:
        out = inner(examples)
        pos = out["position_ids"][0].tolist() if "position_ids" in out else None
        lens = [len(e["input_ids"]) for e in examples]
        if pos is not None:  # padding-free: segments restart at position 0
            starts = [i for i, p in enumerate(pos) if p == 0] + [len(pos)]
            lens = [b - a for a, b in zip(starts, starts[1:])]
        batches.append({"tokens": int(out["input_ids"].numel() if pos is not None else out["attention_mask"].sum()),
                        "trained": int((out["labels"] != -100).sum()), "segments": lens})
        return out

    trainer.data_collator = counting
    losses: list[float] = []

    class Loss(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Optional[dict[str, Any]] = None, **kw: Any) -> None:
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))

    trainer.add_callback(Loss())
    _sync()
    trainer.train()
    # accelerate's loader collates one batch ahead; only the first len(stamps) batches were trained on
    used = batches[: len(stamps)]
    return {"stamps": stamps, "tokens": [b["tokens"] for b in used], "trained": [b["trained"] for b in used],
            "segments": [b["segments"] for b in used], "loss_mean": losses[-1] if losses else None, "trl": trl.__version__,
            "device": str(trainer.args.device)}


# --------------------------------------------------------------------------------------------------- parent


def summarise(name: str, res: dict[str, Any], warmup: int, seg_lens: list[list[int]], model: dict[str, Any],
              peak: Optional[float]) -> dict[str, Any]:
    stamps, tokens, trained = res["stamps"], res["tokens"], res["trained"]
    if len(stamps) <= warmup + 1:
        raise SystemExit(f"{name}: only {len(stamps)} steps recorded, need more than warmup + 1 = {warmup + 1}")
    seconds = stamps[-1] - stamps[warmup]
    window = slice(warmup + 1, len(stamps))
    tok_n, tr_n = sum(tokens[window]), sum(trained[window])
    flops = sum(flops_per_step(model["params"], model["num_hidden_layers"], model["hidden_size"], s) for s in seg_lens[window])
    row = {
        "trainer": name, "steps_timed": len(stamps) - warmup - 1, "seconds": seconds,
        "tokens_per_s": tok_n / seconds, "trained_tokens_per_s": tr_n / seconds,
        "tokens_per_step": tok_n / (len(stamps) - warmup - 1), "step_ms": 1000 * seconds / (len(stamps) - warmup - 1),
        "model_tflops_per_s": flops / seconds / 1e12,
        "mfu": (flops / seconds / 1e12) / peak if peak else None,
    }
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=sorted(SIZES), default=None, help="model shape (default: 0.5b on CUDA, tiny on CPU)")
    p.add_argument("--data", help="SFT export JSONL (default: synthetic tool-use conversations)")
    p.add_argument("--records", type=int, default=None, help="synthetic conversations (default 2000 GPU / 200 CPU)")
    p.add_argument("--seq-len", type=int, default=None, help="max_length / packed row length (default 2048 GPU / 512 CPU)")
    p.add_argument("--batch-size", type=int, default=None, help="TRL rows per step (default 4 GPU / 2 CPU)")
    p.add_argument("--steps", type=int, default=None, help="optimiser steps (default 40 GPU / 12 CPU)")
    p.add_argument("--warmup", type=int, default=None, help="steps left out of the timing (default 5 GPU / 3 CPU)")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads for both (default: torch's)")
    p.add_argument("--peak-tflops", type=float, default=None, help="bf16 dense peak for MFU (default: from the GPU name)")
    p.add_argument("--trainers", default="gymflow,trl", help=f"comma-separated, from {', '.join(TRAINERS)} (default gymflow,trl)")
    p.add_argument("--wheels", default=DEFAULT_WHEELS, help="directory holding the wheels of bench/requirements-trl.txt")
    p.add_argument("--site", default=DEFAULT_SITE, help="where those wheels are installed when missing")
    p.add_argument("--out", default=os.path.join(HERE, "results", "trainer-sft.json"))
    p.add_argument("--keep", action="store_true", help="keep the work directory (model, data, runs)")
    p.add_argument("--child", choices=list(TRAINERS), help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    a = p.parse_args()
    trainers = [t.strip() for t in a.trainers.split(",") if t.strip()]
    unknown = [t for t in trainers if t not in TRAINERS]
    if unknown or not trainers:
        p.error(f"--trainers: {', '.join(unknown) or 'none given'}: choose from {', '.join(TRAINERS)}")

    ensure_trl(a.wheels, a.site)  # also for gymflow alone: both trainers run on the pinned transformers
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    if a.child:
        with open(a.spec, encoding="utf-8") as fh:
            spec = json.load(fh)
        if spec.get("threads"):
            import torch

            torch.set_num_threads(spec["threads"])
        res = child_trl(spec) if a.child == "trl" else child_gymflow(spec, a.child)
        with open(os.path.join(spec["work"], f"result-{a.child}.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh)
        return

    import torch

    cuda = torch.cuda.is_available()
    size = a.size or ("0.5b" if cuda else "tiny")
    seq_len = a.seq_len or (2048 if cuda else 512)
    batch = a.batch_size or (4 if cuda else 2)
    steps = a.steps or (40 if cuda else 12)
    warmup = a.warmup if a.warmup is not None else (5 if cuda else 3)
    gpu = torch.cuda.get_device_name(0) if cuda else None
    peak = peak_tflops(gpu, a.peak_tflops) if gpu else None
    work = tempfile.mkdtemp(prefix="gymflow-bench-sft-")
    try:
        from transformers import AutoTokenizer

        from gymflow_trainer.data import load_sft

        model_dir = os.path.join(work, "model")
        model = write_model(model_dir, size, a.seed)
        data = a.data
        if not data:
            data = os.path.join(work, "sft.jsonl")
            with open(data, "w", encoding="utf-8") as fh:
                for rec in synthetic_records(a.records or (2000 if cuda else 200), a.seed):
                    fh.write(json.dumps(rec) + "\n")
        tok = AutoTokenizer.from_pretrained(model_dir)
        examples = load_sft(data, tok, seq_len, mask_observations=True, overlong="chunk", chunk_overlap=0, warn=lambda m: None)
        mean_len = sum(len(e.input_ids) for e in examples) / len(examples)
        # gymflow packs a micro-batch's examples into one row: as many as fill TRL's rows of a step on average
        g_batch = max(1, round(batch * seq_len / mean_len))
        per_epoch = max(1, len(examples) // g_batch)
        spec = {"work": work, "data": os.path.abspath(data), "model_dir": model_dir, "seed": a.seed, "steps": steps, "seq_len": seq_len,
                "batch_size": batch, "gymflow_batch_size": g_batch, "gymflow_epochs": math.ceil(steps / per_epoch) + 1,
                "lr": a.lr, "bf16": cuda, "threads": a.threads, "site": os.path.abspath(a.site)}
        # TRL gets gymflow's own token sequences and labels (the first token of each is never a label in either)
        with open(os.path.join(work, "examples.json"), "w", encoding="utf-8") as fh:
            json.dump([[e.input_ids, e.labels] for e in examples], fh)
        spec["examples"] = os.path.join(work, "examples.json")
        spec_file = os.path.join(work, "spec.json")
        with open(spec_file, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)

        results: dict[str, dict[str, Any]] = {}
        loads: dict[str, list[float]] = {}
        failed: dict[str, str] = {}  # a trainer that fails is reported; the others still run
        for name in trainers:
            loads[name] = [round(x, 2) for x in os.getloadavg()]
            cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--spec", spec_file, "--wheels", a.wheels, "--site", a.site]
            print(f"running {name} ({size}, {steps} steps) ...", file=sys.stderr)
            r = subprocess.run(cmd, text=True, capture_output=True)
            if r.returncode != 0:
                failed[name] = f"exit {r.returncode}: {r.stdout[-2000:]}{r.stderr[-4000:]}"
                print(f"{name} run failed ({failed[name]})", file=sys.stderr)
                continue
            with open(os.path.join(work, f"result-{name}.json"), encoding="utf-8") as fh:
                results[name] = json.load(fh)
        # gymflow's schedule is a pure function of (seed, examples, config): its per-step segments, for FLOPs
        from gymflow_trainer.config import SftConfig
        from gymflow_trainer.sft import build_schedule

        sched_cfg = SftConfig(data=data, output_dir=work, seed=a.seed, epochs=spec["gymflow_epochs"], max_steps=steps,
                              batch_size=g_batch, grad_accum=1, max_length=seq_len, packing=True)
        schedule = build_schedule(examples, sched_cfg)
        g_segments = [[len(examples[i].input_ids) for mb in micro for i in mb] for _, micro in schedule]

        rows = []
        for name, res in results.items():
            if name == "trl":
                rows.append(summarise(name, res, warmup, res["segments"], model, peak))
                rows[-1]["loss_mean"] = res["loss_mean"]
            else:
                rows.append(summarise(name, res, warmup, g_segments, model, peak))
                rows[-1]["loss_first"], rows[-1]["loss_last"] = res["loss"][0], res["loss"][-1]
            rows[-1]["loadavg_before"] = loads[name]
        by_name = {row["trainer"]: row for row in rows}
        ratios = {f"{name}/trl": by_name[name]["tokens_per_s"] / by_name["trl"]["tokens_per_s"]
                  for name in by_name if name != "trl" and "trl" in by_name}
        ratio = ratios.get("gymflow/trl")

        print()
        print(f"SFT throughput, {size} ({model['params'] / 1e6:.1f}M params), seq_len {seq_len}, "
              f"{'bf16 autocast on ' + str(gpu) if cuda else 'fp32 on CPU'}, {steps} steps ({warmup} warm-up)")
        head = f"{'trainer':<16} {'tokens/s':>10} {'trained tok/s':>14} {'tokens/step':>12} {'step ms':>9} {'TFLOP/s':>8} {'MFU':>6}  load"
        print(head)
        print("-" * len(head))
        for row in rows:
            mfu = f"{100 * row['mfu']:.1f}%" if row["mfu"] is not None else "n/a"
            print(f"{row['trainer']:<16} {row['tokens_per_s']:>10.0f} {row['trained_tokens_per_s']:>14.0f} {row['tokens_per_step']:>12.0f} "
                  f"{row['step_ms']:>9.1f} {row['model_tflops_per_s']:>8.3f} {mfu:>6}  {row['loadavg_before']}")
        print()
        for key, value in ratios.items():
            print(f"{key.replace('/', ' / ')} tokens/s: {value:.2f}x (target on GPU: >= 1.3x)")
        for name, why in failed.items():
            print(f"{name} FAILED, {why[-600:]}")

        try:
            trl_version = importlib.metadata.version("trl")
        except importlib.metadata.PackageNotFoundError:
            trl_version = None
        report = {
            "bench": "trainer-sft", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "loadavg": [round(x, 2) for x in os.getloadavg()],
            "torch": torch.__version__, "transformers": importlib.metadata.version("transformers"), "trl": trl_version,
            "device": "cuda" if cuda else "cpu", "gpu": gpu, "peak_bf16_tflops": peak, "torch_threads": a.threads or torch.get_num_threads(),
            "label": f"{'GPU' if cuda else 'CPU'}/{size}", "model": model, "seq_len": seq_len, "trl_batch_rows": batch,
            "gymflow_batch_examples": g_batch, "steps": steps, "warmup": warmup, "lr": a.lr, "bf16": cuda,
            "data": a.data or f"synthetic ({a.records or (2000 if cuda else 200)} conversations)", "examples": len(examples),
            "mean_example_tokens": mean_len, "results": rows, "gymflow_over_trl": ratio, "ratios": ratios, "target_ratio": 1.3,
            "failed": failed,
        }
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
        print(f"\nwrote {os.path.relpath(a.out)}")
        if failed:
            raise SystemExit(f"failed: {', '.join(failed)}")
    finally:
        if a.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
