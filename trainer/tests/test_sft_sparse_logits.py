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
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], **kw).logits
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
            assert torch.allclose(g, r, atol=1e-5)
