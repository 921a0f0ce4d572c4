"""Fitting steps into memory (memory.py): pieces cut to ``max_piece_tokens`` up front, and a step that runs out of
memory run again in smaller pieces, with the weights of a run that never ran out.

No accelerator here, so a memory limit is imposed on the tiny model (:class:`MemoryLimit`): a forward pass over more
input tokens than the limit fails the way CUDA does, with ``torch.OutOfMemoryError``. A training pass fails in its
backward, after the later layers' gradients were already added to ``.grad`` (as a real one can), so a step that
kept those partial gradients would not give the reference weights."""

import json
import os

import pytest
import torch

from conftest import TINY, conversation, run_cli, run_command, sft_record, write_jsonl
from gymflow_trainer import models, rm
from gymflow_trainer.errors import OutOfMemory
from gymflow_trainer.memory import PieceFit, is_out_of_memory, padded_size


class MemoryLimit:
    """Installs itself on every model the trainer loads; records each forward pass as (tokens, with gradient)."""

    def __init__(self, monkeypatch, tokens, module=models, loader="load_model"):
        self.tokens = tokens
        self.passes = []
        real = getattr(getattr(module, loader), "__wrapped__", getattr(module, loader))  # not an earlier limit's

        def load(*args, **kwargs):
            loaded = real(*args, **kwargs)  # the model, or (model, tokenizer) from load_reward_model
            model = loaded[0] if isinstance(loaded, tuple) else loaded
            # A function, not a bound method: a deep copy of the model (DPO's reference) shares it.
            model.get_input_embeddings().register_forward_hook(lambda module, args, output: self._hook(module, args, output))
            return loaded

        load.__wrapped__ = real
        monkeypatch.setattr(module, loader, load)

    def _hook(self, module, args, output):
        n = args[0].numel()
        self.passes.append((n, output.requires_grad))
        if self.tokens is None or n <= self.tokens:
            return

        def fail(grad):
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate 2.00 GiB ({n} tokens over a limit of {self.tokens})")

        if output.requires_grad:
            output.register_hook(fail)  # in the backward pass, once the layers above have their gradients
        else:
            fail(None)

    def training_passes(self):
        return [n for n, grad in self.passes if grad]


def final_weights(out):
    from safetensors.torch import load_file

    (ckpt,) = [d for d in os.listdir(out) if d.startswith("checkpoint-")]
    return load_file(os.path.join(out, ckpt, "trainable.safetensors"))


# CUDA's kernels add a piece's terms in another order than the whole batch's (they pick their reduction by shape):
# DPO's and the reward model's pieces were up to 1.3e-5 (4e-5 in other runs) from the whole on an H100.
ATOL = 1e-4 if torch.cuda.is_available() else 1e-5


def assert_same_weights(a, b, atol=ATOL):
    """Equal up to summation order. Adam moves a weight by ~lr whatever its gradient's size, so rounding noise in
    near-zero gradients (GRPO's first, on-policy step) shows as ~1e-5; an error in how pieces add up moves weights
    by a good part of lr (1e-2)."""
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=atol, msg=lambda m: f"{k}: {m}")


def sft_run(tmp_path, out, **kw):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(n_steps=2 + i % 3, reward=1.0) for i in range(8)])
    doc = {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
           "batch_size": 4, "epochs": 2, "keep_last": 1, **kw}
    return run_command("sft", doc).progress


def test_pieces_are_cut_in_order_to_the_limit():
    fit = PieceFit(padded_size([5, 1, 1, 5, 2]), 10, True)
    assert fit.cut([0, 1, 2, 3, 4]) == [[0, 1], [2, 3], [4]]
    assert PieceFit(padded_size([5, 1]), 3, True).cut([0, 1]) == [[0], [1]]  # a longer example runs alone
    assert PieceFit(padded_size([5, 1]), None, True).cut([0, 1]) == [[0, 1]]
    assert PieceFit(padded_size([2, 2], 2), 8, True).cut([0, 1]) == [[0, 1]]  # DPO: chosen and rejected


def test_running_out_before_any_forward_pass_has_nothing_to_cut():
    def body():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

    with pytest.raises(OutOfMemory, match=r"^step 3: ran out of memory outside the forward passes \(OutOfMemoryError: CUDA out of memory"):
        PieceFit(padded_size([4]), None, True).run("step 3", torch.nn.Linear(2, 2), body)


def test_what_counts_as_running_out_of_memory():
    with pytest.raises(RuntimeError) as refused:  # a real refusal of the CPU allocator
        torch.empty(2**62, dtype=torch.uint8)
    assert is_out_of_memory(refused.value)
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB"))
    assert not is_out_of_memory(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))


def test_a_step_that_runs_out_of_memory_is_run_again_in_pieces_with_the_same_weights(tmp_path, monkeypatch, capfd):
    reference = MemoryLimit(monkeypatch, None)
    ref = sft_run(tmp_path, "ref")
    full = max(reference.training_passes())

    limit = MemoryLimit(monkeypatch, full - 1)  # the largest micro-batch of 4 no longer fits; 2 of them do
    prog = sft_run(tmp_path, "split")
    assert_same_weights(final_weights(str(tmp_path / "split")), final_weights(str(tmp_path / "ref")))
    assert [p["loss"] for p in prog] == pytest.approx([p["loss"] for p in ref], abs=1e-6)
    passes = limit.training_passes()
    failed = next(i for i, n in enumerate(passes) if n > full - 1)
    assert all(n <= full - 1 for n in passes[failed + 1 :])  # once lowered, the limit holds for the rest of the run
    step = next(p["step"] for p in prog if "oom_retries" in p)  # the step that failed, run again
    assert prog[-1]["oom_retries"] == 1 and prog[-1]["max_piece_tokens"] == full // 2
    assert f"step {step}: a forward pass of 4 sequences ({full:,} tokens with padding) ran out of memory" in capfd.readouterr().err


def test_max_piece_tokens_cuts_pieces_up_front_without_changing_the_weights(tmp_path, monkeypatch):
    reference = MemoryLimit(monkeypatch, None)
    ref = sft_run(tmp_path, "ref")
    cap = max(reference.training_passes()) // 2
    limit = MemoryLimit(monkeypatch, cap)  # would fail any piece above the cap: none is
    prog = sft_run(tmp_path, "cut", max_piece_tokens=cap)
    assert max(limit.training_passes()) <= cap and len(limit.training_passes()) > len(reference.training_passes())
    assert_same_weights(final_weights(str(tmp_path / "cut")), final_weights(str(tmp_path / "ref")))
    assert "oom_retries" not in prog[-1] and [p["loss"] for p in prog] == pytest.approx([p["loss"] for p in ref], abs=1e-6)


def cli_sft(tmp_path, capsys, **kw):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(n_steps=2, reward=1.0) for _ in range(4)])
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"data": data, "output_dir": str(tmp_path / "out"), "model": {"tiny": dict(TINY)}, "batch_size": 2, **kw}))
    code, events, _ = run_cli(capsys, "sft", "--config", str(cfg))
    return code, events[-1]


def test_one_sequence_that_does_not_fit_stops_the_run_with_exit_6(tmp_path, monkeypatch, capsys):
    MemoryLimit(monkeypatch, 16)
    code, error = cli_sft(tmp_path, capsys)
    assert code == 6 and error["event"] == "error" and error["type"] == "OutOfMemory"
    assert error["message"].startswith("step 1: one sequence of ")
    assert "does not fit in memory (OutOfMemoryError: CUDA out of memory." in error["message"] and "lower max_length" in error["message"]
    assert not os.path.exists(tmp_path / "out" / "checkpoint-1")


def test_on_out_of_memory_fail_stops_at_once(tmp_path, monkeypatch, capsys):
    limit = MemoryLimit(monkeypatch, 16)
    code, error = cli_sft(tmp_path, capsys, on_out_of_memory="fail")
    assert code == 6 and error["type"] == "OutOfMemory" and len(limit.passes) == 1
    assert error["message"].startswith("step 1: a forward pass of 2 sequences (") and "(on_out_of_memory: fail). Set max_piece_tokens below" in error["message"]


def test_running_out_of_memory_outside_a_step_is_exit_6(tmp_path, monkeypatch, capsys):
    """Loading the model, here: no step to cut, and no retry would help."""
    def load(*args, **kwargs):
        torch.empty(2**62, dtype=torch.uint8)

    monkeypatch.setattr(models, "load_model", load)
    code, error = cli_sft(tmp_path, capsys)
    assert code == 6 and error["type"] == "OutOfMemory" and "DefaultCPUAllocator: can't allocate memory" in error["message"]


def rl_data(tmp_path):
    conv = conversation()
    good = '<tool_call>\n{"name":"submit","arguments":{"answer":"hi"}}\n</tool_call>'
    member = lambda texts, reward: {"completion": [{"role": "assistant", "content": t, "train": True} for t in texts], "reward": reward}  # noqa: E731
    recs = [{"task_id": f"t{k}", "prompt": conv[:2], "group": [member([good] * (1 + k), 1.0), member(["no idea"], 0.0), member([good, "hm"], 0.5)]}
            for k in range(3)]
    return write_jsonl(tmp_path / "rl.jsonl", recs)


@pytest.mark.parametrize("algorithm", ["grpo", "ppo"])
def test_rl_steps_run_again_in_pieces_keep_their_weights(tmp_path, monkeypatch, algorithm):
    """The rollout batch's log-probs and values (no gradient) and the training passes are cut alike."""
    def run(out, limit):
        memory = MemoryLimit(monkeypatch, limit)
        return memory, run_command("rl", {"data": rl_data(tmp_path), "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)},
                                          "optim": {"lr": 1e-2}, "batch_size": 9, "ppo_epochs": 2, "keep_last": 1,
                                          "loss": {"algorithm": algorithm}}).progress

    reference, _ = run("ref", None)
    full = max(n for n, _ in reference.passes)
    limited, prog = run("split", full // 3)
    assert any(not grad and n > full // 3 for n, grad in limited.passes)  # the rollout batch's pass failed first
    assert prog[-1]["oom_retries"] >= 1
    assert_same_weights(final_weights(str(tmp_path / "split")), final_weights(str(tmp_path / "ref")), atol=1e-4)


def test_dpo_counts_chosen_and_rejected_and_keeps_its_weights(tmp_path, monkeypatch):
    conv = conversation()
    recs = [{"prompt": conv[:2], "chosen": [{"role": "assistant", "content": "answer " * (1 + i)}],
             "rejected": [{"role": "assistant", "content": "no"}]} for i in range(4)]
    data = write_jsonl(tmp_path / "dpo.jsonl", recs)

    def run(out, limit, **kw):
        memory = MemoryLimit(monkeypatch, limit)
        run_command("dpo", {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2},
                            "batch_size": 4, "epochs": 2, "keep_last": 1, "reference": "model", **kw})
        return memory

    reference = run("ref", None)
    full = max(n for n, grad in reference.passes if grad)
    limited = run("cut", full // 2, max_piece_tokens=full // 2)
    assert max(n for n, grad in limited.passes if grad) <= full // 2  # 2 × rows × longest of chosen and rejected
    assert_same_weights(final_weights(str(tmp_path / "cut")), final_weights(str(tmp_path / "ref")))


def test_reward_model_pairs_count_the_steps_of_both_sides(tmp_path, monkeypatch):
    """A preference pair's rows are every step of its chosen and its rejected trajectory."""
    def trajectory(tid, task, n):
        steps = [{"index": i, "action": {"tool": "search", "params": {"q": "x" * (4 + 8 * i)}}, "observation": "Found it",
                  "startedAt": "2026-01-01T00:00:00.000Z", "durationMs": 0} for i in range(n)]
        return {"id": tid, "task": {"id": task, "domain": "demo", "instruction": "Find the item."}, "steps": steps}

    trajs = [t for k in range(4) for t in (trajectory(f"g{k}", f"t{k}", 1 + k % 2), trajectory(f"b{k}", f"t{k}", 3))]
    pairs = [{"task": {"id": f"t{k}", "domain": "demo"}, "chosenId": f"g{k}", "rejectedId": f"b{k}", "chosenScore": 1, "rejectedScore": 0,
              "margin": 1} for k in range(4)]
    data, pf = write_jsonl(tmp_path / "trajs.jsonl", trajs), write_jsonl(tmp_path / "pairs.jsonl", pairs)

    def run(out, **kw):
        memory = MemoryLimit(monkeypatch, None, rm, "load_reward_model")
        run_command("rm", {"data": data, "pairs": pf, "objective": "preference", "output_dir": str(tmp_path / out),
                           "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}, "batch_size": 4, "epochs": 2, "keep_last": 1,
                           "max_length": 128, "eval_fraction": 0.0, **kw})
        return memory.training_passes()

    whole = run("ref")
    cap = max(whole) // 2
    cut = run("cut", max_piece_tokens=cap)
    assert max(cut) <= cap and len(cut) > len(whole)
    assert_same_weights(final_weights(str(tmp_path / "cut")), final_weights(str(tmp_path / "ref")))
