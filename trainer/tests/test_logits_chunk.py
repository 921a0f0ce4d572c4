"""``logits_chunk``: the LM head runs on a few trained positions at a time under activation checkpointing. The
log-probs, the gradient and every training run must be those of the whole head; no logits tensor over all the
trained positions may be kept for the backward pass; the model must come out of each call unchanged; a model
that changes its logits after the head is refused. RL and DPO runs with chunks: ``test_packed_rl_dpo.py``."""

from types import SimpleNamespace

import pytest
import torch

from conftest import TINY, run_command
from gymflow_trainer import batching, head, models
from gymflow_trainer.config import SftConfig, TinyModelConfig, from_dict
from gymflow_trainer.data import IGNORE
from gymflow_trainer.errors import ConfigError
from gymflow_trainer.tiny import build_tiny
from test_sft import dataset, make_cfg

CHUNK = 4  # smaller than the 15 trained positions below, and not a divisor of them: a short last chunk


def rows(tok):
    """Three rows of different lengths whose trained tails sit at different positions (15 trained tokens)."""
    g = torch.Generator().manual_seed(0)
    seqs = []
    for n, tail in ((40, 5), (23, 9), (31, 1)):
        ids = torch.randint(3, 200, (n,), generator=g).tolist()
        seqs.append(SimpleNamespace(input_ids=ids, labels=[IGNORE] * (n - tail) + ids[n - tail :]))
    return seqs


def grads_of(model, loss):
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("layout", ["padded", "varlen", "mask"])
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("chunk", [CHUNK, 64])  # 64: every trained position in one chunk
def test_chunked_log_probs_and_gradient_are_the_whole_heads(layout, tied, chunk):
    tok, model = build_tiny(TinyModelConfig(**TINY))  # tiny models tie the head to the input embedding
    if not tied:
        model.get_output_embeddings().weight = torch.nn.Parameter(model.get_input_embeddings().weight.detach() * 0.5)
    assert (model.get_output_embeddings().weight is model.get_input_embeddings().weight) == tied
    if layout == "varlen":
        models.prepare_layout(model, from_dict(SftConfig, {"data": "x", "output_dir": "y", "packing": True}))
    batch = batching.layout_batch(rows(tok), tok.pad_token_id, torch.device("cpu"), None if layout == "padded" else layout)
    whole = batching.trained_logps(model, batch, hidden=True)
    chunked = batching.trained_logps(model, batch, hidden=True, logits_chunk=chunk)
    assert int(whole[1].sum()) == 15
    assert torch.equal(chunked[1], whole[1])
    assert torch.allclose(chunked[0], whole[0], atol=1e-5)
    assert torch.all(chunked[0][chunked[1] == 0] == 0)
    assert torch.allclose(chunked[2].hidden_states[-1], whole[2].hidden_states[-1], atol=1e-6)  # the value head's input
    weights = torch.rand(whole[0].shape, generator=torch.Generator().manual_seed(1))  # a gradient other than ones
    for a, b in zip(grads_of(model, (chunked[0] * weights).sum()), grads_of(model, (whole[0] * weights).sum())):
        assert torch.allclose(a, b, atol=1e-5)


def vocab_wide(saved, vocab):
    """Elements of the tensors autograd saved for the backward pass whose last dimension is the vocabulary."""
    return sum(t.numel() for t in saved if t.dim() > 0 and t.size(-1) == vocab)


def test_no_logits_over_all_trained_positions_are_kept_for_backward():
    tok, model = build_tiny(TinyModelConfig(**TINY))
    vocab = model.config.vocab_size
    assert vocab not in (TINY["hidden_size"], TINY["intermediate_size"])  # the last dimension tells logits apart
    batch = batching.pad_batch(rows(tok), tok.pad_token_id, torch.device("cpu"))
    for chunk, most in ((0, None), (CHUNK, 0)):
        saved = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            batching.trained_logps(model, batch, logits_chunk=chunk)
        if most is None:  # the whole head: log-softmax of at least every trained position is kept
            assert vocab_wide(saved, vocab) >= 15 * vocab
        else:  # chunked: only the hidden states are kept; each chunk's logits are recomputed in backward
            assert vocab_wide(saved, vocab) == most


def test_the_head_is_restored_after_each_call_even_one_that_fails():
    tok, model = build_tiny(TinyModelConfig(**TINY))
    lm_head = model.get_output_embeddings()
    batch = batching.pad_batch(rows(tok), tok.pad_token_id, torch.device("cpu"))
    batching.trained_logps(model, batch, logits_chunk=CHUNK)
    assert "forward" not in vars(lm_head)
    bad = dict(batch, input_ids=batch["input_ids"][:, :0])  # an empty row: the model raises inside the bypass
    with pytest.raises(Exception):
        batching.trained_logps(model, bad, logits_chunk=CHUNK)
    assert "forward" not in vars(lm_head)
    x = torch.randn(2, TINY["hidden_size"])
    assert model(input_ids=batch["input_ids"]).logits.size(-1) == model.config.vocab_size
    own = lambda h: torch.zeros(h.size(0), 7)  # a forward set on the instance (as hooks do) comes back as it was
    lm_head.forward = own
    with head.bypassed(model) as applied:
        assert applied is own and lm_head(x) is x
    assert lm_head.forward is own


def test_a_model_that_changes_its_logits_after_the_head_is_refused():
    from transformers import Gemma2Config, Gemma2ForCausalLM

    cfg = Gemma2Config(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=8, final_logit_softcapping=0.5)
    model = Gemma2ForCausalLM(cfg)
    with pytest.raises(ConfigError, match="logits_chunk: Gemma2ForCausalLM changes its logits.*set logits_chunk: 0"):
        models.prepare_layout(model, SimpleNamespace(packed=None, logits_chunk=8))
    cfg.final_logit_softcapping = None
    models.prepare_layout(Gemma2ForCausalLM(cfg), SimpleNamespace(packed=None, logits_chunk=8))  # no cap: accepted
    assert model.training  # the check's eval() is undone


def test_a_negative_chunk_is_refused():
    with pytest.raises(ConfigError, match=r"\$\.logits_chunk must be >= 0"):
        from_dict(SftConfig, {"data": "x", "output_dir": "y", "logits_chunk": -1}).validate()


def test_sft_with_lora_and_checkpointing_trains_as_without_chunks(tmp_path):
    data = dataset(tmp_path)
    for i, kw in enumerate(({}, {"lora": {"r": 4, "alpha": 8}}, {"packing": True})):
        a, _ = run_command("sft", make_cfg(tmp_path, data, out=f"a{i}", batch_size=3, max_steps=2, **kw))
        b, _ = run_command("sft", make_cfg(tmp_path, data, out=f"b{i}", batch_size=3, max_steps=2, logits_chunk=CHUNK, **kw))
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-5)
    cfg = make_cfg(tmp_path, data, out="c", batch_size=3, max_steps=2, logits_chunk=CHUNK)
    cfg.model.gradient_checkpointing = True
    c, _ = run_command("sft", cfg)
    assert c["loss"] == pytest.approx(a["loss"], rel=1e-5)
