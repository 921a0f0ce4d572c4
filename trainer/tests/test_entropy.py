"""The policy's entropy at the trained tokens (``batching.trained_logps(..., entropy=True)``), reported by RL as the
``entropy`` metric: the model's own, with the head whole or in chunks, without gradient, and a token mean over
the step however the step is cut into pieces."""

import math

import pytest
import torch

from conftest import TINY
from gymflow_trainer import batching
from gymflow_trainer.config import TinyModelConfig
from gymflow_trainer.tiny import build_tiny
from test_logits_chunk import CHUNK, rows
from test_packed_rl_dpo import run_rl


@pytest.mark.parametrize("chunk", [0, CHUNK])
@pytest.mark.parametrize("layout", [None, "varlen"])
def test_entropy_is_the_models_at_the_trained_positions(chunk, layout):
    tok, model = build_tiny(TinyModelConfig(**TINY))
    if layout == "varlen":
        from gymflow_trainer.attention import use_varlen

        use_varlen(model)
    batch = batching.layout_batch(rows(tok), tok.pad_token_id, torch.device("cpu"), layout)
    r = batching.trained_logps(model, batch, entropy=True, logits_chunk=chunk)
    logits = model(**{k: batch[k] for k in ("input_ids", *batching.MODEL_KEYS) if k in batch}).logits[:, :-1].float()
    p = torch.softmax(logits, -1)
    ref = -(p * torch.log_softmax(logits, -1)).sum(-1) * r.mask
    assert int(r.mask.sum()) == 15
    assert torch.allclose(r.entropy, ref, atol=1e-5)
    assert torch.all(r.entropy[r.mask == 0] == 0) and not r.entropy.requires_grad
    assert batching.trained_logps(model, batch, logits_chunk=chunk).entropy is None  # only when asked


def test_a_uniform_head_has_the_entropy_log_vocabulary():
    tok, model = build_tiny(TinyModelConfig(**TINY))
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()  # every logit 0: the uniform distribution
    batch = batching.pad_batch(rows(tok), tok.pad_token_id, torch.device("cpu"))
    for chunk in (0, CHUNK):
        r = batching.trained_logps(model, batch, entropy=True, logits_chunk=chunk)
        assert torch.allclose(r.entropy[r.mask == 1], torch.full((15,), math.log(model.config.vocab_size)), atol=1e-5)


def test_rl_reports_the_token_mean_entropy_of_each_step_however_it_is_cut(tmp_path):
    kw = {"loss": {"algorithm": "grpo"}, "epochs": 3}
    whole = run_rl(tmp_path, "whole", **kw)
    cut = run_rl(tmp_path, "cut", max_piece_tokens=1, **kw)  # one sequence per piece
    chunked = run_rl(tmp_path, "chunked", logits_chunk=CHUNK, **kw)
    vocab = build_tiny(TinyModelConfig(**TINY))[1].config.vocab_size
    assert len(whole) == len(cut) == len(chunked) == 3
    for a, b, c in zip(whole, cut, chunked):
        assert 0 < a["entropy"] <= math.log(vocab)
        assert b["entropy"] == pytest.approx(a["entropy"], rel=1e-5) and c["entropy"] == pytest.approx(a["entropy"], rel=1e-5)
    assert abs(whole[-1]["entropy"] - whole[0]["entropy"]) > 1e-3  # it follows the policy as it trains
