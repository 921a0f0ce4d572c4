"""Resume from a mid-run checkpoint continues exactly, for dpo and rl (sft: the SIGKILL test in test_sft.py)."""

import os

import pytest

from conftest import Capture, TINY
from gymflow_trainer import dpo, rl
from gymflow_trainer.config import DpoConfig, RlConfig, from_dict
from gymflow_trainer.events import EventWriter
from test_dpo import pairs_file
from test_rl import rl_file




CASES = {
    "dpo": (DpoConfig, dpo, pairs_file, {"batch_size": 1, "epochs": 2, "lora": {"r": 4, "alpha": 8, "dropout": 0.1}}),
    "rl-grpo": (RlConfig, rl, rl_file, {"batch_size": 2, "epochs": 2, "ppo_epochs": 2, "loss": {"algorithm": "grpo", "kl_beta": 0.05}}),
    "rl-ppo": (RlConfig, rl, rl_file, {"batch_size": 2, "epochs": 2, "ppo_epochs": 2, "loss": {"algorithm": "ppo"}}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_resume_matches_uninterrupted(tmp_path, case):
    cls, mod, data_fn, extra = CASES[case]
    data = data_fn(tmp_path)

    def go(out, **kw):
        doc = {"data": data, "output_dir": str(tmp_path / out), "model": {"tiny": dict(TINY)}, "optim": {"lr": 1e-2, "scheduler": "linear"},
               "save_every": 2, "keep_last": 10, **extra, **kw}
        cfg = from_dict(cls, doc)
        cfg.validate()
        cap = Capture()
        res = mod.run(cfg, EventWriter(cap))
        return res, {e["step"]: e["loss"] for e in cap.lines if e["event"] == "progress"}, cap.lines[0]

    full, full_losses, _ = go("a")
    ck = os.path.join(str(tmp_path / "a"), "checkpoint-2")
    assert os.path.isdir(ck)
    resumed, res_losses, start = go("b", resume_from=ck)
    assert start["start_step"] == 2 and min(res_losses) == 3
    for step, loss in res_losses.items():
        assert loss == pytest.approx(full_losses[step], rel=1e-6, abs=1e-6)
    assert resumed["loss"] == pytest.approx(full["loss"], rel=1e-6, abs=1e-6)
