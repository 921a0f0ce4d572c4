"""gymflow's Python trainer: SFT, DPO and policy-gradient updates for tool-using agents.

``python -m gymflow_trainer {sft,dpo,rl} --config FILE`` (docs/trainer.md).
"""

__version__ = "0.1.0"
