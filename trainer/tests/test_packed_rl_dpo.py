"""RL and DPO with ``packing: true``: the samples (a pair's two sequences) run as one packed row and their
per-token results come back in the padded layout, so every loss and update is the padded run's. The same for
``logits_chunk`` (the LM head on a few positions at a time), with and without packing."""

import pytest
import torch

from conftest import TINY, assert_same_losses, run_command
from gymflow_trainer import batching, models, rl
from gymflow_trainer.config import RlConfig, TinyModelConfig, from_dict
from gymflow_trainer.data import load_rl
from gymflow_trainer.tiny import build_tiny
from test_dpo import run as run_dpo
from test_rl import make as make_rl
from test_rl import rl_file


def run_rl(tmp_path, out, **kw):
    return run_command("rl", make_rl(tmp_path, out, **kw)).progress


@pytest.mark.parametrize("packed", ["varlen", "mask"])
def test_packed_rl_log_probs_and_values_are_the_padded_ones(tmp_path, packed):
    tok, model = build_tiny(TinyModelConfig(**TINY))
    model.v_head = torch.nn.Linear(model.config.hidden_size, 1)
    if packed == "varlen":
        models.prepare_layout(model, from_dict(RlConfig, {"data": "x", "output_dir": "y", "packing": True}))
    samples = load_rl(rl_file(tmp_path), tok, 4096)
    assert len({len(s.tokens.input_ids) for s in samples}) > 1  # rows of different lengths: padding in the padded layout
    with torch.no_grad():
        padded = rl.token_logps(model, samples, tok.pad_token_id, values=True)
        got = rl.token_logps(model, samples, tok.pad_token_id, values=True, packed=packed)
    for a, b in zip(got, padded):
        assert a.shape == b.shape
    lp, mask, v = got
    assert torch.equal(mask, padded[1])
    assert torch.allclose(lp, padded[0], atol=1e-5)
    assert torch.allclose(v * mask, padded[2] * mask, atol=1e-5)  # the values where they are used


#: What must not change a run's losses: packing, the LM head in chunks (``logits_chunk``, 4 of the runs' trained
#: positions at a time; ``test_logits_chunk.py``), and both.
LAYOUTS = [{"packing": True}, {"logits_chunk": 4}, {"packing": True, "logits_chunk": 4}]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("algorithm", ["grpo", "ppo"])
def test_rl_trains_as_padded_with_the_whole_head(tmp_path, algorithm, layout):
    kw = {"loss": {"algorithm": algorithm, "kl_beta": 0.01}, "epochs": 2, "ppo_epochs": 2}
    padded = run_rl(tmp_path, "padded", **kw)
    other = run_rl(tmp_path, "other", **layout, **kw)
    assert_same_losses(other, padded)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("reference", ["precompute", "model"])
def test_dpo_trains_as_padded_with_the_whole_head(tmp_path, reference, layout):
    _, padded = run_dpo(tmp_path, "padded", reference=reference, epochs=2)
    _, other = run_dpo(tmp_path, "other", reference=reference, epochs=2, **layout)
    assert_same_losses(other, padded)


def test_compiled_dpo_trains_as_eager(tmp_path):
    """The reference copy is made before the layers are compiled, and stays the initial policy."""
    from torch._dynamo.utils import counters

    _, eager = run_dpo(tmp_path, "eager", reference="model", epochs=2, packing=True)
    counters.clear()
    _, compiled = run_dpo(tmp_path, "compiled", reference="model", epochs=2, packing=True, compile=True)
    assert counters["stats"]["unique_graphs"] >= 1
    assert_same_losses(compiled, eager)


def test_unpack_rows_puts_each_sequence_back_in_its_row():
    x = torch.arange(1.0, 10.0)[None]  # a packed row of 3 + 4 + 3 tokens: 9 predicting positions
    out = batching.unpack_rows(x, [3, 4, 3])
    assert out.tolist() == [[1, 2, 0], [4, 5, 6], [8, 9, 0]]  # positions 3 and 7 predict across a boundary
