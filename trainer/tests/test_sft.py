"""SFT trainer: each switch has an observable effect; resume after SIGKILL continues exactly."""

import itertools
import json
import os
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from conftest import TINY, run_command, sft_record, write_jsonl
from gymflow_trainer import sft
from gymflow_trainer.config import from_dict, SftConfig
from gymflow_trainer.data import IGNORE, load_sft
from gymflow_trainer.errors import ConfigError

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))




def make_cfg(tmp_path, data, **kw):
    doc = {"data": data, "output_dir": str(tmp_path / kw.pop("out", "out")), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2}}
    doc.update(kw)
    cfg = from_dict(SftConfig, doc)
    cfg.validate()
    return cfg


def dataset(tmp_path, n=4):
    recs = [sft_record(n_steps=2 + i % 2, reward=i / n, rewards=(0.25 + i / 10, 1.0)) for i in range(n)]
    return write_jsonl(tmp_path / "sft.jsonl", recs)


def test_masked_tokens_get_zero_gradient(tokenizer, tmp_path):
    ex = load_sft(dataset(tmp_path, 1), tokenizer, 4096)[0]
    batch = sft.collate([ex], tokenizer.pad_token_id, torch.device("cpu"))
    logits = torch.randn(1, len(ex.input_ids), len(tokenizer), requires_grad=True)
    fake = lambda **_: SimpleNamespace(logits=logits)  # noqa: E731
    ce, w = sft.token_losses(fake, batch)
    (ce * w).sum().backward()
    g = logits.grad[0].abs().sum(-1)  # position t predicts label t+1
    next_labels = torch.tensor(ex.labels[1:] + [IGNORE])
    assert torch.all(g[next_labels == IGNORE] == 0)
    assert torch.all(g[next_labels != IGNORE] > 0)


def test_step_weighted_loss_is_reward_weighted_ce(tokenizer, tmp_path):
    path = dataset(tmp_path, 1)
    plain = load_sft(path, tokenizer, 4096)[0]
    weighted = load_sft(path, tokenizer, 4096, step_weighted=True)[0]
    torch.manual_seed(0)
    logits = torch.randn(1, len(plain.input_ids), len(tokenizer))
    fake = lambda **_: SimpleNamespace(logits=logits)  # noqa: E731
    dev = torch.device("cpu")
    ce, w = sft.token_losses(fake, sft.collate([plain], 0, dev))
    ce2, w2 = sft.token_losses(fake, sft.collate([weighted], 0, dev))
    # rewards 0.25 and 1.0 → mean 0.625 → weights 0.4 and 1.6 on the two assistant messages
    assert sorted({round(x, 6) for x in w2[w2 > 0].tolist()}) == [0.4, 1.6]
    assert torch.equal(ce, ce2)
    expected = (ce * w2).sum()
    assert not torch.isclose(expected, (ce * w).sum())
    assert torch.isclose((ce2 * w2).sum(), expected)


def test_training_reduces_loss_and_writes_loadable_final(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = make_cfg(tmp_path, dataset(tmp_path), epochs=4, batch_size=2)
    result, lines = run_command("sft", cfg)
    prog = [e for e in lines if e["event"] == "progress"]
    assert prog[-1]["loss"] < prog[0]["loss"]
    assert all(set(e) >= {"step", "loss", "lr", "tokens_per_s"} for e in prog)
    assert lines[0]["event"] == "start" and any(e["event"] == "checkpoint" for e in lines)
    AutoModelForCausalLM.from_pretrained(result["path"])
    AutoTokenizer.from_pretrained(result["path"])


def test_gradient_accumulation_matches_one_big_batch(tmp_path):
    data = dataset(tmp_path)
    a, _ = run_command("sft", make_cfg(tmp_path, data, out="a", batch_size=2, grad_accum=1, max_steps=1))
    b, _ = run_command("sft", make_cfg(tmp_path, data, out="b", batch_size=1, grad_accum=2, max_steps=1))
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def test_lora_trains_only_the_adapter(tmp_path):
    from gymflow_trainer.models import load_model_and_tokenizer

    cfg = make_cfg(tmp_path, dataset(tmp_path), lora={"r": 4, "alpha": 8}, max_steps=2)
    model, _ = load_model_and_tokenizer(cfg.model, cfg.lora)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    result, lines = run_command("sft", cfg)
    assert lines[0]["trainable_params"] == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert os.path.isfile(os.path.join(result["checkpoint"], "model", "adapter_config.json"))
    assert os.path.isfile(os.path.join(result["path"], "config.json"))  # final = merged full model


def test_gradient_checkpointing_gives_the_same_loss(tmp_path):
    data = dataset(tmp_path)
    a, _ = run_command("sft", make_cfg(tmp_path, data, out="a", max_steps=2))
    cfg = make_cfg(tmp_path, data, out="b", max_steps=2)
    cfg.model.gradient_checkpointing = True
    from gymflow_trainer.models import load_model_and_tokenizer

    m, _ = load_model_and_tokenizer(cfg.model, None)
    assert getattr(m, "is_activation_checkpointing", None) or m.is_gradient_checkpointing
    b, _ = run_command("sft", cfg)
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def test_curriculum_schedule_widens(tmp_path, tokenizer):
    cfg = make_cfg(tmp_path, dataset(tmp_path), curriculum=True, curriculum_start=0.5, epochs=3)
    exs = load_sft(cfg.data, tokenizer, cfg.max_length)
    sched = sft.build_schedule(exs, cfg)
    per_epoch = {}
    for epoch, micro in sched:
        per_epoch.setdefault(epoch, []).extend(i for mb in micro for i in mb)
    assert [len(per_epoch[e]) for e in range(3)] == [2, 3, 4]
    assert per_epoch[0] == per_epoch[2][:2]  # easiest first, every epoch


def test_bf16_switch_runs(tmp_path):
    result, _ = run_command("sft", make_cfg(tmp_path, dataset(tmp_path), bf16=True, max_steps=1))
    assert result["loss"] == result["loss"]  # finite


def _cli(cfg_path, *extra):
    env = dict(os.environ, PYTHONPATH=TRAINER_DIR, OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "gymflow_trainer", "sft", "--config", cfg_path, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def _events(proc):
    out, _ = proc.communicate(timeout=300)
    return [json.loads(x) for x in out.splitlines() if x.strip()]


def test_sigkill_then_resume_reaches_the_same_final_loss(tmp_path):
    data = dataset(tmp_path, 6)
    common = {"data": data, "model": {"tiny": dict(TINY)}, "optim": {"lr": 5e-3, "scheduler": "cosine", "warmup_steps": 2},
              "epochs": 3, "batch_size": 2, "save_every": 2, "keep_last": 10, "lora": {"r": 4, "alpha": 8, "dropout": 0.1}}
    full_cfg = tmp_path / "full.json"
    full_cfg.write_text(json.dumps({**common, "output_dir": str(tmp_path / "full")}))
    killed_cfg = tmp_path / "killed.json"
    killed_cfg.write_text(json.dumps({**common, "output_dir": str(tmp_path / "killed")}))

    full = _events(_cli(str(full_cfg)))
    assert full[-1]["event"] == "done"

    proc = _cli(str(killed_cfg))
    ckpt = None
    for line in proc.stdout:
        ev = json.loads(line)
        if ev["event"] == "checkpoint":
            ckpt = ev
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and ckpt is not None and ckpt["step"] == 2

    resumed = _events(_cli(str(killed_cfg), "--resume-from", "latest"))
    start = resumed[0]
    assert start["event"] == "start" and start["start_step"] >= 2
    assert resumed[-1]["event"] == "done"
    full_prog = {e["step"]: e["loss"] for e in full if e["event"] == "progress"}
    res_prog = {e["step"]: e["loss"] for e in resumed if e["event"] == "progress"}
    assert min(res_prog) == start["start_step"] + 1  # nothing skipped, nothing repeated
    for step, loss in res_prog.items():
        assert loss == pytest.approx(full_prog[step], abs=1e-6, rel=1e-6)
    assert resumed[-1]["loss"] == pytest.approx(full[-1]["loss"], abs=1e-6, rel=1e-6)


def test_resume_on_other_data_is_refused(tmp_path):
    from gymflow_trainer.errors import CheckpointError

    cfg = make_cfg(tmp_path, dataset(tmp_path), max_steps=1)
    result, _ = run_command("sft", cfg)
    other = write_jsonl(tmp_path / "other.jsonl", [sft_record(reward=0.3)])
    cfg2 = make_cfg(tmp_path, other, max_steps=1, resume_from=result["checkpoint"])
    with pytest.raises(CheckpointError, match="different dataset"):
        run_command("sft", cfg2)


def test_packing_gives_the_padded_loss_without_padding(tmp_path, tokenizer):
    data = dataset(tmp_path)
    exs = load_sft(data, tokenizer, 4096)
    packed = sft.collate_packed(exs[:3], 0, torch.device("cpu"))
    padded = sft.collate(exs[:3], 0, torch.device("cpu"))
    assert packed["input_ids"].numel() == sum(len(e.input_ids) for e in exs[:3]) < padded["input_ids"].numel()
    a, _ = run_command("sft", make_cfg(tmp_path, data, out="a", batch_size=3, max_steps=2))
    b, _ = run_command("sft", make_cfg(tmp_path, data, out="b", batch_size=3, max_steps=2, packing=True))
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def padded_size(pieces, lengths):
    return sum(len(p) * max(lengths[i] for i in p) for p in pieces)


def test_length_pieces_cut_a_micro_batch_where_padding_is_least():
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        n = int(torch.randint(1, 9, (1,), generator=g))
        lengths = [int(x) for x in torch.randint(20, 400, (n,), generator=g)]
        batch = list(range(n))
        for k in (1, 2, 3):
            pieces = sft.length_pieces(batch, lengths, k)
            assert sorted(i for p in pieces for i in p) == batch and 1 <= len(pieces) <= k
            flat = [lengths[i] for p in pieces for i in p]
            assert flat == sorted(flat)  # contiguous runs of the length order
            # The least padded size over every way to cut the sorted batch into <= k runs (brute force).
            srt = sorted(lengths)
            best = min(sum((b - a) * srt[b - 1] for a, b in zip((0, *cuts), (*cuts, n)))
                       for m in range(k) for cuts in itertools.combinations(range(1, n), m))
            assert padded_size(pieces, lengths) == best
    assert sft.length_pieces([0, 1, 2, 3], [50, 50, 50, 50], 3) == [[0, 1, 2, 3]]  # no gain: one piece
    assert sft.length_pieces([3, 1], [9, 300, 7, 10], 2) == [[3], [1]]


def test_length_pieces_keep_the_step_loss_and_cut_padding(tmp_path, tokenizer, monkeypatch):
    data = write_jsonl(tmp_path / "sft.jsonl", [sft_record(n_steps=1 + 3 * (i % 3)) for i in range(6)])
    shapes: list[tuple[int, int]] = []  # (rows, padded length) of every batch the trainer collates
    collate = sft.collate

    def recording(exs, *rest):
        shapes.append((len(exs), max(len(e.input_ids) for e in exs)))
        return collate(exs, *rest)

    monkeypatch.setattr(sft, "collate", recording)
    a, _ = run_command("sft", make_cfg(tmp_path, data, out="a", batch_size=6, epochs=2))
    whole, shapes[:] = list(shapes), []
    b, _ = run_command("sft", make_cfg(tmp_path, data, out="b", batch_size=6, epochs=2, length_pieces=3))
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    assert len(whole) == 2 and len(shapes) > 2  # each step ran in pieces ...
    assert sum(n * t for n, t in shapes) < sum(n * t for n, t in whole)  # ... with less padding
    with pytest.raises(ConfigError, match=r"\$\.length_pieces must be >= 1"):
        make_cfg(tmp_path, data, length_pieces=0)


def test_chunked_training_runs_on_more_shorter_examples(tmp_path):
    data = dataset(tmp_path)
    _, lines = run_command("sft", make_cfg(tmp_path, data, out="chunk", max_length=160, chunk_overlap=16, max_steps=2))
    assert lines[0]["examples"] > 4
    assert all(e["tokens"] <= 160 for e in lines if e["event"] == "progress")


def test_sigterm_prints_an_error_event_and_exits_143(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"data": dataset(tmp_path), "output_dir": str(tmp_path / "o"), "model": {"tiny": dict(TINY)},
                               "epochs": 50, "save_every": 1}))
    proc = _cli(str(cfg))
    for line in proc.stdout:
        if json.loads(line)["event"] == "checkpoint":
            proc.send_signal(signal.SIGTERM)
            break
    rest = [json.loads(x) for x in proc.stdout.read().splitlines() if x.strip()]
    proc.wait(timeout=60)
    assert proc.returncode == 143 and rest[-1]["event"] == "error" and rest[-1]["type"] == "Terminated"


def trainable(ckpt):
    from safetensors.torch import load_file

    return load_file(os.path.join(ckpt, "trainable.safetensors"))


def test_a_step_with_a_nonfinite_gradient_is_skipped_and_training_goes_on(tmp_path, monkeypatch, capfd):
    """Steps 2 and 3 meet a NaN loss (as a batch with an impossible token gives): they update nothing, and the
    run goes on from the weights of step 1."""
    calls = itertools.count()
    real = sft.token_losses

    def sometimes_nan(model, batch, bf16=False, logits_chunk=0):
        ce, w = real(model, batch, bf16, logits_chunk)
        return (ce * float("nan"), w) if next(calls) in (1, 2) else (ce, w)  # one micro-batch per step

    monkeypatch.setattr(sft, "token_losses", sometimes_nan)
    cfg = make_cfg(tmp_path, dataset(tmp_path), epochs=2, batch_size=2, save_every=1, keep_last=10)
    result, lines = run_command("sft", cfg)
    prog = {e["step"]: e for e in lines if e["event"] == "progress"}
    assert [prog[s]["grad_norm"] for s in (2, 3)] == [None, None]  # NaN is written as null
    assert "skipped_steps" not in prog[1] and prog[2]["skipped_steps"] == 1 and prog[4]["skipped_steps"] == 2
    out = cfg.output_dir
    one, three, four = (trainable(os.path.join(out, f"checkpoint-{s}")) for s in (1, 3, 4))
    for k in one:
        assert torch.equal(one[k], three[k]), k  # the skipped steps changed nothing
        assert torch.isfinite(four[k]).all()
    assert any(not torch.equal(one[k], four[k]) for k in one)  # step 4 trained again
    assert result["step"] == 4 and "step 2: gradient norm is not finite" in capfd.readouterr().err


def test_a_run_whose_gradients_stay_nonfinite_stops_with_exit_5(tmp_path, capsys):
    """An absurd learning rate: step 1 sends the weights to 1e30, every later gradient is NaN. After
    max_skipped_steps skipped steps in a row the run stops, and no checkpoint holds NaN weights."""
    from gymflow_trainer import cli

    cfg = tmp_path / "c.json"
    out = tmp_path / "out"
    cfg.write_text(json.dumps({"data": dataset(tmp_path), "output_dir": str(out), "model": {"tiny": dict(TINY)}, "epochs": 5,
                               "batch_size": 1, "save_every": 1, "keep_last": 10, "optim": {"lr": 1e30, "max_skipped_steps": 2}}))
    assert cli.main(["sft", "--config", str(cfg)]) == 5
    events = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert events[-1]["event"] == "error" and events[-1]["type"] == "TrainingDiverged"
    assert events[-1]["message"].startswith("steps 2-4: the gradient norm was NaN or infinite 3 times in a row (optim.max_skipped_steps: 2)")
    assert [e["step"] for e in events if e["event"] == "checkpoint"] == [1, 2, 3]
    for s in (1, 2, 3):
        assert all(torch.isfinite(t).all() for t in trainable(str(out / f"checkpoint-{s}")).values())
