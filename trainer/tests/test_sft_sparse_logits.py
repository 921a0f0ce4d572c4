"""``sft.token_losses`` computes logits only where a token is trained (``logits_to_keep``); the losses and the
gradient must be those of the full computation."""

import torch
import torch.nn.functional as F

from conftest import TINY, sft_record, write_jsonl
from gymflow_trainer import sft
from gymflow_trainer.config import TinyModelConfig
from gymflow_trainer.data import IGNORE, load_sft
from gymflow_trainer.tiny import build_tiny


def full_losses(model, batch):
    kw = {"position_ids": batch["position_ids"]} if "position_ids" in batch else {}
    logits = model(input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask"), use_cache=False, **kw).logits
    labels = batch["labels"][:, 1:]
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels.reshape(-1), reduction="none",
                           ignore_index=IGNORE).view(labels.shape)


def test_sparse_logits_give_the_full_loss_and_gradient(tmp_path):
    tok, model = build_tiny(TinyModelConfig(**TINY))
    recs = [sft_record(n_steps=2 + i % 2, instruction="Echo the word hi" + "!" * i) for i in range(3)]
    exs = load_sft(write_jsonl(tmp_path / "d.jsonl", recs), tok, 4096)
    for collate in (sft.collate, sft.collate_packed):
        batch = collate(exs, tok.pad_token_id, torch.device("cpu"))
        trained = batch["labels"][:, 1:] != IGNORE
        assert 0 < int(trained.any(0).sum()) < trained.size(1)  # the sparse path is the one taken
        ce, w = sft.token_losses(model, batch)
        ref = full_losses(model, batch)
        assert torch.allclose(ce * (w > 0), ref * (w > 0), atol=1e-5)
        assert torch.all(ce[~trained] == 0)
        model.zero_grad()
        (ce * w).sum().backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        (ref * w).sum().backward()
        for g, r in zip(got, [p.grad for p in model.parameters()]):
            # float32 sums in another order: ~1e-6 relative apart on gradients of magnitude ~5
            torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-5)


def test_rl_and_dpo_log_probs_take_logits_only_where_trained():
    """``batching.trained_logps`` (RL, DPO, SFT): rows of different lengths whose trained tails sit at different
    positions; the log-probs, the gradient and the hidden states are those of the full computation."""
    from types import SimpleNamespace

    from gymflow_trainer import batching

    tok, model = build_tiny(TinyModelConfig(**TINY))
    g = torch.Generator().manual_seed(0)
    seqs = []
    for n, tail in ((40, 5), (23, 9), (31, 1)):
        ids = torch.randint(3, 200, (n,), generator=g).tolist()
        seqs.append(SimpleNamespace(input_ids=ids, labels=[IGNORE] * (n - tail) + ids[n - tail :]))
    batch = batching.pad_batch(seqs, tok.pad_token_id, torch.device("cpu"))
    logp, mask, out, _ = batching.trained_logps(model, batch, hidden=True)
    assert int(mask.sum()) == 15 and 0 < int(mask.any(0).sum()) < mask.size(1)  # the sparse path is the one taken
    full = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], output_hidden_states=True)
    labels = batch["labels"][:, 1:]
    ref = torch.log_softmax(full.logits[:, :-1].float(), -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1) * mask
    assert torch.allclose(logp, ref, atol=1e-5)
    assert torch.all(logp[mask == 0] == 0)
    assert torch.allclose(out.hidden_states[-1], full.hidden_states[-1], atol=1e-6)
    model.zero_grad()
    logp.sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref.sum().backward()
    for a, b in zip(got, [p.grad for p in model.parameters()]):
        assert torch.allclose(a, b, atol=1e-5)
