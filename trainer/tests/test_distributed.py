"""Data parallelism under ``torchrun`` (CPU, gloo, 2 processes): the same configuration trains the same weights
as one process, only rank 0 writes events and checkpoints, ``--resume-from latest`` continues exactly, and a
rank that dies takes the job down without a hang."""

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from conftest import TINY, sft_record, write_jsonl
from gymflow_trainer import cli, distributed
from test_dpo import pairs_file
from test_rl import episode_file, rl_file
from test_rm import synthetic

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCHRUN = os.path.join(os.path.dirname(sys.executable), "torchrun")
# On the CPU even on a GPU host: two ranks on one GPU are refused by design, and gloo is what these tests cover.
ENV = dict(os.environ, PYTHONPATH=TRAINER_DIR, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="")
for _k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
    ENV.pop(_k, None)

# torch installs torchrun beside python: its absence is a broken environment, not a reason to skip.
assert os.path.exists(TORCHRUN), f"{TORCHRUN} is missing: reinstall torch into the trainer's environment"


def _cmd(command, cfg, procs, *extra):
    head = [sys.executable] if procs == 1 else [TORCHRUN, "--standalone", "--nproc_per_node", str(procs)]
    return head + ["-m", "gymflow_trainer", command, "--config", str(cfg), *extra]


def launch(command, cfg, procs, *extra, timeout=120):
    if procs == 1 and not torch.cuda.is_available():  # the reference: the same CLI, in this process (saves an interpreter start)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = cli.main([command, "--config", str(cfg), *extra])
        assert rc == 0, buf.getvalue()[-2000:]
        return [json.loads(x) for x in buf.getvalue().splitlines() if x.startswith("{")]
    p = subprocess.run(_cmd(command, cfg, procs, *extra), capture_output=True, text=True, env=ENV, timeout=timeout)
    events = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    assert p.returncode == 0, p.stderr[-3000:]
    return events


def write_cfg(tmp_path, name, doc):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def weights(ckpt):
    return load_file(os.path.join(ckpt, "trainable.safetensors"))


def assert_same_weights(a, b, atol=1e-5):
    wa, wb = weights(a), weights(b)
    assert set(wa) == set(wb)
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], atol=atol, rtol=1e-4, msg=lambda m: f"{k}: {m}")


def assert_one_stream(events, total):
    """One start and one done event, checkpoints once per step saved: rank 1 wrote nothing on stdout."""
    kinds = [e["event"] for e in events]
    assert kinds.count("start") == 1 and kinds.count("done") == 1 and kinds[-1] == "done"
    assert events[0]["processes"] == 2
    steps = [e["step"] for e in events if e["event"] == "checkpoint"]
    assert steps == sorted(set(steps)) and steps[-1] == total


def no_leftovers(out):
    return [n for n in os.listdir(out) if n.startswith(".")] == []


def test_shard_covers_each_step_once_and_splits_at_micro_batch_boundaries():
    micro = [[5, 1, 4], [0, 2, 3], [6]]
    parts = [distributed.shard(micro, r, 3) for r in range(3)]
    assert [i for p in parts for _, idx in p for i in idx] == [5, 1, 4, 0, 2, 3, 6]
    assert parts == [[(0, [5, 1])], [(0, [4]), (1, [0])], [(1, [2, 3]), (2, [6])]]
    assert distributed.shard(micro, 0, 1) == list(enumerate(micro))
    assert distributed.shard([[7]], 0, 2) == [] and distributed.shard([[7]], 1, 2) == [(0, [7])]  # rank 0 idle (it trains a stand-in with weight 0)


def test_sft_two_processes_train_the_single_process_weights_and_resume_exactly(tmp_path):
    # 5 examples, 2 x 2 per step: step 1 splits into whole micro-batches, step 2 (1 example) leaves rank 1 idle;
    # LoRA with dropout 0 (the RNG stream is shared, dropout masks would differ between layouts).
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(reward=0.2 * i + 0.1, instruction="Echo " + "hi " * (i + 1)) for i in range(5)])
    base = {"data": data, "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2, "scheduler": "cosine", "warmup_steps": 1},
            "batch_size": 2, "grad_accum": 2, "epochs": 2, "save_every": 1, "keep_last": 10, "step_weighted": True,
            "lora": {"r": 4, "alpha": 8, "dropout": 0.0}}
    one = launch("sft", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    cfg2 = write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")})
    two = launch("sft", cfg2, 2)
    assert_one_stream(two, 4)
    assert no_leftovers(tmp_path / "two")
    for s in (1, 2, 3, 4):
        assert_same_weights(tmp_path / "one" / f"checkpoint-{s}", tmp_path / "two" / f"checkpoint-{s}")
    loss1 = {e["step"]: e["loss"] for e in one if e["event"] == "progress"}
    loss2 = {e["step"]: e["loss"] for e in two if e["event"] == "progress"}
    assert loss2 == pytest.approx(loss1, rel=1e-5)
    assert os.path.isfile(tmp_path / "two" / "final" / "config.json")

    # Resume under 2 processes from the step-2 checkpoint of the 2-process run: the same weights at the end.
    for d in ("checkpoint-3", "checkpoint-4", "final"):
        shutil.move(str(tmp_path / "two" / d), str(tmp_path / f"full-{d}"))
    resumed = launch("sft", cfg2, 2, "--resume-from", "latest")
    assert resumed[0]["start_step"] == 2 and resumed[0]["resumed_from"].endswith("checkpoint-2")
    assert min(e["step"] for e in resumed if e["event"] == "progress") == 3
    assert_same_weights(tmp_path / "full-checkpoint-4", tmp_path / "two" / "checkpoint-4", atol=1e-6)


def test_rl_ppo_with_kl_two_processes_match_one(tmp_path):
    # 4 samples (the uniform group is dropped) in one micro-batch of 4 split 2 + 2: the old-log-prob cache, the
    # value head, GAE whitening over the rollout batch and the KL reference are per rank; two PPO epochs. The two
    # ranks take the LM head in chunks (`logits_chunk`), outside DDP's forward: its gradient is still all-reduced.
    base = {"data": rl_file(tmp_path), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 4, "ppo_epochs": 2,
            "loss": {"algorithm": "ppo", "kl_beta": 0.05}, "max_steps": 2}
    launch("rl", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("rl", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two"), "logits_chunk": 4}), 2)
    assert_one_stream(two, 2)
    assert "v_head.weight" in weights(tmp_path / "two" / "checkpoint-2")
    assert_same_weights(tmp_path / "one" / "checkpoint-2", tmp_path / "two" / "checkpoint-2")


def test_rl_ppo_step_samples_split_across_ranks_match_one(tmp_path):
    # A member's three step samples fall in two rollout batches, each split 1 + 1 over the ranks, with γ, λ < 1: each
    # rank computes the old values of its members' later steps itself before the updates (PPO's GAE runs over the
    # member's steps as one episode), so the ranks together train what one process does. The steps' process rewards
    # shape the returns (step_reward_coef), wherever a step's values are computed.
    base = {"data": episode_file(tmp_path, scored=True), "samples": "steps", "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
            "batch_size": 2, "ppo_epochs": 2, "loss": {"algorithm": "ppo"}, "gamma": 0.9, "lam": 0.9, "step_reward_coef": 0.5, "max_steps": 4}
    one = launch("rl", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("rl", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")}), 2)
    assert_one_stream(two, 4)
    assert sum(e["bootstrap_samples"] for e in two if e["event"] == "progress") > 0
    assert_same_weights(tmp_path / "one" / "checkpoint-4", tmp_path / "two" / "checkpoint-4")


def test_rl_ppo_step_samples_with_an_idle_rank_match_one(tmp_path):
    # One step sample per optimizer step over two ranks: one rank is idle every step and trains a stand-in with
    # weight 0. The stand-in needs no values of its member's later steps: the pre-pass counts what one process does.
    base = {"data": episode_file(tmp_path), "samples": "steps", "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 1,
            "loss": {"algorithm": "ppo"}, "gamma": 0.9, "lam": 0.9, "max_steps": 4}
    one = launch("rl", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("rl", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")}), 2)
    assert_one_stream(two, 4)
    assert_same_weights(tmp_path / "one" / "checkpoint-4", tmp_path / "two" / "checkpoint-4")
    counts = [[e["bootstrap_samples"] for e in run if e["event"] == "progress"] for run in (one, two)]
    assert counts[0] == counts[1] and sum(counts[0]) > 0


def test_rl_grpo_uneven_split_matches_one(tmp_path):
    # A micro-batch of 3 split 1 + 2: sequence-mean aggregation rescaled per piece (rl.piece_share).
    base = {"data": rl_file(tmp_path), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 3,
            "loss": {"algorithm": "grpo"}, "max_steps": 1}
    one = launch("rl", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("rl", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")}), 2)
    assert two[-1]["loss"] == pytest.approx(one[-1]["loss"], rel=1e-5, abs=1e-6)
    assert_same_weights(tmp_path / "one" / "checkpoint-1", tmp_path / "two" / "checkpoint-1")


def test_dpo_two_processes_match_one(tmp_path):
    base = {"data": pairs_file(tmp_path, n=5), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 3,
            "reference": "precompute"}
    launch("dpo", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("dpo", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")}), 2)
    assert_one_stream(two, 2)
    assert_same_weights(tmp_path / "one" / "checkpoint-2", tmp_path / "two" / "checkpoint-2")


def test_rm_with_lora_two_processes_match_one(tmp_path):
    # The scorer forwards through DDP around peft's wrapper; a micro-batch of 3 is split 1 + 2.
    base = {"data": write_jsonl(tmp_path / "steps.jsonl", synthetic(3, 0)), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
            "batch_size": 3, "max_length": 128, "lora": {"r": 4, "alpha": 8}, "max_steps": 2}
    one = launch("rm", write_cfg(tmp_path, "one", {**base, "output_dir": str(tmp_path / "one")}), 1)
    two = launch("rm", write_cfg(tmp_path, "two", {**base, "output_dir": str(tmp_path / "two")}), 2)
    assert_one_stream(two, 2)
    assert two[-1]["loss"] == pytest.approx(one[-1]["loss"], rel=1e-5, abs=1e-6)
    assert_same_weights(tmp_path / "one" / "checkpoint-2", tmp_path / "two" / "checkpoint-2")


def _rank_pid(launcher_pid, rank, deadline):
    """The pid of the worker with RANK=rank among the launcher's children."""
    while time.time() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                if ppid != launcher_pid:
                    continue
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    env = dict(kv.split(b"=", 1) for kv in fh.read().split(b"\0") if b"=" in kv)
            except (OSError, ValueError, IndexError):
                continue
            if env.get(b"RANK") == str(rank).encode():
                return int(pid)
        time.sleep(0.1)
    raise AssertionError(f"no worker with RANK={rank}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_dying_rank_fails_the_job_without_a_hang(tmp_path, sig):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record() for _ in range(4)])
    cfg = write_cfg(tmp_path, "c", {"data": data, "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)},
                                     "epochs": 500, "save_every": 5})
    proc = subprocess.Popen(_cmd("sft", cfg, 2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        for line in proc.stdout:
            if line.startswith("{") and json.loads(line)["event"] == "progress":
                break
        victim = _rank_pid(proc.pid, 1, time.time() + 30)
        t0 = time.time()
        os.kill(victim, sig)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode not in (0, None)
    assert time.time() - t0 < 60
    if sig == signal.SIGTERM:
        assert "exitcode  : 143" in err  # the rank itself exited cleanly (torchrun's failure report)
