"""``packed_attention: varlen`` (gymflow_trainer/attention.py): a packed row whose examples attend to themselves
only, from their boundaries, must give the dense block-diagonal mask's losses and gradients. On the CPU this is
the per-example path; the CUDA flash path is checked on a GPU by ``bench/trainer-gpu-check.py``."""

import json
import os

import pytest
import torch

from conftest import TINY, run_command, sft_record, write_jsonl
from gymflow_trainer import attention, models, sft
from gymflow_trainer.config import TinyModelConfig
from gymflow_trainer.data import load_sft
from gymflow_trainer.errors import ConfigError
from gymflow_trainer.tiny import build_tiny
from test_sft import dataset, make_cfg

CPU = torch.device("cpu")


def examples(tmp_path, tok, n=4):
    recs = [sft_record(n_steps=2 + i % 3, instruction="Echo the word hi" + "!" * (5 * i)) for i in range(n)]
    return load_sft(write_jsonl(tmp_path / "d.jsonl", recs), tok, 4096)


def loss_and_grads(model, batch):
    model.zero_grad()
    ce, w = sft.token_losses(model, batch)
    loss = (ce * w).sum()
    loss.backward()
    return ce.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("checkpointing", [False, True])
def test_varlen_rows_give_the_masked_losses_and_gradients(tmp_path, checkpointing):
    tok, model = build_tiny(TinyModelConfig(**TINY))
    model.train()
    exs = examples(tmp_path, tok)
    assert len({len(e.input_ids) for e in exs}) == len(exs)  # examples of different lengths
    ce_mask, g_mask = loss_and_grads(model, sft.collate_packed(exs, tok.pad_token_id, CPU))
    if checkpointing:  # the layers' forwards run again in the backward: the boundaries must reach them too
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    attention.use_varlen(model)
    ce_var, g_var = loss_and_grads(model, sft.collate_packed(exs, tok.pad_token_id, CPU, varlen=True))
    assert torch.allclose(ce_var, ce_mask, atol=1e-5)
    for a, b in zip(g_var, g_mask):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_a_row_mixing_its_examples_would_differ(tmp_path):
    """The check above can fail: the same row with one boundary left out (two examples seen as one) gives other
    losses."""
    tok, model = build_tiny(TinyModelConfig(**TINY))
    attention.use_varlen(model)
    exs = examples(tmp_path, tok, n=2)
    right = sft.collate_packed(exs, tok.pad_token_id, CPU, varlen=True)
    merged = dict(right, **attention.boundaries([len(exs[0].input_ids) + len(exs[1].input_ids)], CPU))
    with torch.no_grad():
        a, _ = sft.token_losses(model, right)
        b, _ = sft.token_losses(model, merged)
    n0 = len(exs[0].input_ids)
    assert torch.allclose(a[:, : n0 - 1], b[:, : n0 - 1], atol=1e-6)  # the first example sees the same tokens
    assert not torch.allclose(a[:, n0:], b[:, n0:], atol=1e-3)  # the second now attends into the first


def test_a_padded_batch_through_the_switched_model_is_plain_attention(tmp_path):
    """With the switch on, a right-padded batch (no boundaries) runs transformers' sdpa, causal, without a mask:
    real tokens never see the padding after them, so their losses are those of the unswitched model."""
    tok, model = build_tiny(TinyModelConfig(**TINY))
    batch = sft.collate(examples(tmp_path, tok), tok.pad_token_id, CPU)
    assert (batch["attention_mask"] == 0).any()
    with torch.no_grad():
        ref, w = sft.token_losses(model, batch)
        attention.use_varlen(model)
        got, _ = sft.token_losses(model, batch)
    assert torch.allclose(got * (w > 0), ref * (w > 0), atol=1e-5)


class OwnAttention(torch.nn.Module):
    """Stands for a model with its own attention code (remote code): the examples' boundaries never reach an
    AttentionInterface function."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.config = inner.config

    def forward(self, input_ids, position_ids=None, **kwargs):
        return self.inner(input_ids=input_ids, position_ids=position_ids)


def test_a_model_whose_attention_ignores_the_switch_is_refused():
    _, model = build_tiny(TinyModelConfig(**TINY))
    with pytest.raises(ConfigError, match="OwnAttention.*set packed_attention: mask"):
        attention.use_varlen(OwnAttention(model))
    attention.use_varlen(model)  # the same model, called directly, passes the check


def test_sft_with_varlen_packing_trains_as_padded_and_saves_a_plain_model(tmp_path, tokenizer):
    data = dataset(tmp_path)
    padded, _ = run_command("sft", make_cfg(tmp_path, data, out="padded", batch_size=3, max_steps=2))
    varlen, _ = run_command("sft", make_cfg(tmp_path, data, out="varlen", batch_size=3, max_steps=2, packing=True))
    mask, _ = run_command("sft", make_cfg(tmp_path, data, out="mask", batch_size=3, max_steps=2, packing=True, packed_attention="mask"))
    assert varlen["loss"] == pytest.approx(padded["loss"], rel=1e-5)
    assert mask["loss"] == pytest.approx(padded["loss"], rel=1e-5)
    with open(os.path.join(varlen["path"], "config.json"), encoding="utf-8") as fh:
        assert attention.NAME not in json.dumps(json.load(fh))


def test_compiled_layers_train_as_eager_ones(tmp_path):
    data = dataset(tmp_path)
    model = {"tiny": dict(TINY)}
    from torch._dynamo.utils import counters

    eager, _ = run_command("sft", make_cfg(tmp_path, data, out="eager", batch_size=3, max_steps=2, packing=True, model=model))
    counters.clear()
    compiled, _ = run_command("sft", make_cfg(tmp_path, data, out="compiled", batch_size=3, max_steps=2, packing=True, model=model,
                               compile=True))
    assert counters["stats"]["unique_graphs"] >= 1  # the layers did run compiled
    assert compiled["loss"] == pytest.approx(eager["loss"], rel=1e-4)


def test_compile_refuses_gradient_checkpointing(tmp_path):
    with pytest.raises(ConfigError, match=r"\$\.compile does not combine with \$\.model\.gradient_checkpointing"):
        make_cfg(tmp_path, "d.jsonl", compile=True, model={"tiny": dict(TINY), "gradient_checkpointing": True})


def test_compile_needs_decoder_layers():
    _, model = build_tiny(TinyModelConfig(**TINY))
    assert models.compile_layers(model) == TINY["num_hidden_layers"]
    with pytest.raises(ConfigError, match="compile: found no decoder layers"):
        models.compile_layers(OwnAttention(model))


def test_sliding_window_layers_keep_their_window_packed():
    """A model with sliding-window layers (Qwen2 here, window 6): packed rows, either way, give each example the
    losses it has alone, where transformers applies the window itself."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from gymflow_trainer.data import IGNORE, SftExample

    def qwen2(window):
        torch.manual_seed(0)
        return Qwen2ForCausalLM(Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                            num_attention_heads=4, num_key_value_heads=2, use_sliding_window=window,
                                            sliding_window=6, max_window_layers=0, attn_implementation="sdpa"))

    model = qwen2(True)
    assert model.model.layers[0].self_attn.sliding_window == 6
    g = torch.Generator().manual_seed(0)
    exs = []
    for n in (17, 4, 25):
        ids = torch.randint(0, 64, (n,), generator=g).tolist()
        exs.append(SftExample(input_ids=ids, labels=[IGNORE] + ids[1:], weights=[0.0] + [1.0] * (n - 1), reward=1.0, source=0))
    with torch.no_grad():
        alone = torch.cat([sft.token_losses(model, sft.collate([e], 0, CPU))[0][0] for e in exs])
        plain = qwen2(False)  # the same weights without the window: the window does matter for these examples
        assert all(torch.equal(a, b) for a, b in zip(plain.parameters(), model.parameters()))
        unwindowed = torch.cat([sft.token_losses(plain, sft.collate([e], 0, CPU))[0][0] for e in exs])
        assert not torch.allclose(alone, unwindowed, atol=1e-3)
        masked, _ = sft.token_losses(model, sft.collate_packed(exs, 0, CPU))
        attention.use_varlen(model)
        varlen, _ = sft.token_losses(model, sft.collate_packed(exs, 0, CPU, varlen=True))

    def per_example(x):  # drop the position that predicts across each boundary
        starts = [0, 17, 21]
        return torch.cat([x[0, s : s + len(e.input_ids) - 1] for s, e in zip(starts, exs)])

    assert torch.allclose(per_example(masked), alone, atol=1e-5)
    assert torch.allclose(per_example(varlen), alone, atol=1e-5)


def test_attention_options_varlen_does_not_apply_are_refused():
    class SoftCapped(torch.nn.Module):  # stands for Gemma 2's attention, which passes softcap
        pass

    q = torch.zeros(1, 2, 4, 8)
    with pytest.raises(ConfigError, match="does not apply softcap, which SoftCapped uses; set packed_attention: mask"):
        attention.varlen_attention(SoftCapped(), q, q, q, None, softcap=50.0, **attention.boundaries([2, 2], CPU))
