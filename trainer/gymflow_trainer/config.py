"""Configuration: one dataclass per command, loaded from JSON or YAML and validated before any model loads.

Unknown keys are errors that name the key, its path in the document and the file
(``sft.yaml: unknown key 'lr_rate' at $.optim (known: ...)``). Types are checked against the dataclass
annotations (``int``, ``float``, ``bool``, ``str``, ``Literal``, ``Optional``, lists and nested
dataclasses); each dataclass's ``validate()`` then checks ranges and combinations.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from .errors import ConfigError

# ----------------------------------------------------------------------------------------------- shared parts


@dataclass
class TinyModelConfig:
    """A tiny Llama- or Qwen2-style model built from a config (no download). See ``gymflow_trainer.tiny``."""

    arch: Literal["llama", "qwen2"] = "llama"
    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 2048
    #: Byte-level BPE vocabulary size (special tokens and the 256 byte symbols included); 0 = pure bytes
    #: (no merges). The merges are learnt from ``bpe_corpus`` when given, else from a small built-in corpus.
    bpe_vocab_size: int = 0
    #: JSONL files of exported records (``gymflow export``: sft, dpo or rl) whose message contents train the
    #: BPE, e.g. the SFT data itself (relative paths: from the working directory). Needs ``bpe_vocab_size``.
    bpe_corpus: list[str] = field(default_factory=list)
    #: BPE pre-tokenisation splits numbers into single digits (as Llama and Qwen2 do), so a number the model
    #: copies from an observation is a run of the ten digit tokens, whatever the number.
    bpe_split_digits: bool = False
    #: BPE pre-tokenisation makes every run of digits a pre-token of its own, without the space before it, so
    #: ``1989`` is the same token(s) in ``launched: 1989`` and in ``abs(1989 - 1947)`` (GPT-2's rule gives
    #: `` 1989`` and ``1989``, two unrelated tokens). Digits still merge into multi-digit tokens.
    bpe_split_numbers: bool = False
    #: BPE pre-tokenisation cuts every run of digits into pieces of at most this many digits, from the left
    #: (``41725`` -> ``41 72 5`` with 2), each without the space before it as with ``bpe_split_numbers``; 0 = off.
    #: With 2 and a corpus of a few hundred numbers every piece is in the vocabulary, so any number, seen in
    #: training or not, is a short run of the same pieces; ``bpe_split_numbers`` instead lets a number the
    #: corpus repeats become one token, and cuts a number it never saw into pieces it rarely saw. On the
    #: demo's recipe it did not beat ``bpe_split_numbers`` (docs/trainer.md, "Learning on tool-use").
    bpe_number_chunk: int = 0
    #: BPE pre-tokenisation makes every space a token of its own instead of the prefix of the next word, so a
    #: word is the same token after a space (``the population``) and after punctuation (``"population"``):
    #: copying a name from a question or an observation into a JSON argument is then an exact copy.
    bpe_split_spaces: bool = False
    #: The prompt format the model is born with (recorded in its config.json; see ``system_prompt`` of the
    #: training commands): "keep" the system message in every prompt or "drop" it; null = not decided yet
    #: (the first training run's ``system_prompt`` decides, "keep" by default).
    system_prompt: Optional[Literal["keep", "drop"]] = None
    seed: int = 0

    def validate(self, where: str) -> None:
        _positive(self, where, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "max_position_embeddings")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(f"{where}.hidden_size ({self.hidden_size}) must be divisible by num_attention_heads ({self.num_attention_heads})")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ConfigError(f"{where}.num_attention_heads must be divisible by num_key_value_heads")
        if self.bpe_vocab_size and self.bpe_vocab_size < 300:
            raise ConfigError(f"{where}.bpe_vocab_size must be 0 (bytes only) or at least 300")
        if self.bpe_number_chunk < 0:
            raise ConfigError(f"{where}.bpe_number_chunk must be 0 (off) or a number of digits >= 1, got {self.bpe_number_chunk}")
        if self.bpe_number_chunk and (self.bpe_split_digits or self.bpe_split_numbers):
            raise ConfigError(f"{where}.bpe_number_chunk cannot be combined with bpe_split_digits or bpe_split_numbers: each decides how numbers are cut")
        if self.bpe_corpus and not self.bpe_vocab_size:
            raise ConfigError(f"{where}.bpe_corpus needs bpe_vocab_size (> 0): with 0 the tokenizer is pure bytes and learns nothing")
        for i, path in enumerate(self.bpe_corpus):
            if not os.path.isfile(path):
                raise ConfigError(f"{where}.bpe_corpus[{i}]: {path!r} is not a file")


@dataclass
class ModelConfig:
    """Where the policy comes from: ``path`` (a save_pretrained directory) or ``tiny`` (built from a config)."""

    path: Optional[str] = None
    tiny: Optional[TinyModelConfig] = None
    #: Tokenizer directory; defaults to ``path``.
    tokenizer: Optional[str] = None
    dtype: Literal["float32", "bfloat16"] = "float32"
    gradient_checkpointing: bool = False

    def validate(self, where: str) -> None:
        if (self.path is None) == (self.tiny is None):
            raise ConfigError(f"{where}: give exactly one of 'path' (a model directory) or 'tiny' (a tiny model config)")
        if self.tiny is not None:
            self.tiny.validate(f"{where}.tiny")


@dataclass
class LoraConfig:
    """LoRA through peft. ``target_modules`` default: the attention and MLP projections of Llama/Qwen2."""

    r: int = 8
    alpha: int = 16
    dropout: float = 0.0
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])

    def validate(self, where: str) -> None:
        _positive(self, where, "r", "alpha")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"{where}.dropout must be in [0, 1)")
        if not self.target_modules:
            raise ConfigError(f"{where}.target_modules must not be empty")


@dataclass
class OptimConfig:
    """AdamW with a warm-up then a constant, linear or cosine schedule; gradients clipped to ``max_grad_norm``."""

    lr: float = 1e-4
    weight_decay: float = 0.0
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    #: AdamW's ε, added to √v before it divides: a weight whose gradients stay well below ε moves by about
    #: lr·g/ε instead of lr (docs/trainer.md, "RL that learns": an RL step's zero-sum noise and AdamW's ε).
    eps: float = 1e-8
    warmup_steps: int = 0
    scheduler: Literal["constant", "linear", "cosine"] = "constant"
    max_grad_norm: float = 1.0
    #: Optimizer steps in a row whose gradient norm may be NaN or infinite. Each such step is skipped (no update),
    #: and one more stops the run with ``TrainingDiverged`` (exit 5).
    max_skipped_steps: int = 5
    #: Carry AdamW's moments from run to run: the final model directory gets ``optimizer_state.pt`` (the
    #: per-parameter state, keyed by name), and a run whose ``model.path`` holds one starts from it instead of
    #: from zero moments. For a loop that trains each iteration from the last one's model (the pipeline's RL
    #: phases): a fresh AdamW's first step moves every weight by ~lr whatever its gradient's size.
    carry_state: bool = False

    def validate(self, where: str, lora: Optional[LoraConfig] = None) -> None:
        if self.carry_state and lora is not None:
            raise ConfigError(f"{where}.carry_state does not combine with lora: the adapter is merged into the saved model, "
                              "and the next run trains a new one, so there is no state to carry")
        if self.lr <= 0:
            raise ConfigError(f"{where}.lr must be > 0")
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise ConfigError(f"{where}.eps must be a finite number > 0, got {self.eps}")
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise ConfigError(f"{where}.betas must be two numbers in [0, 1)")
        if self.warmup_steps < 0 or self.weight_decay < 0 or self.max_grad_norm < 0 or self.max_skipped_steps < 0:
            raise ConfigError(f"{where}: warmup_steps, weight_decay, max_grad_norm and max_skipped_steps must be >= 0")


@dataclass
class TrainLoopConfig:
    """What every training command shares: data, output, batching, schedule, checkpoints."""

    #: Dataset file (JSONL, as ``gymflow export`` writes it).
    data: str = ""
    output_dir: str = ""
    seed: int = 0
    epochs: int = 1
    #: Stop after this many optimizer steps (across epochs); null = run all epochs.
    max_steps: Optional[int] = None
    #: Sequences per micro-batch.
    batch_size: int = 1
    #: Micro-batches per optimizer step.
    grad_accum: int = 1
    #: Longest sequence in tokens (longer ones are chunked or truncated, see the command).
    max_length: int = 1024
    log_every: int = 1
    #: Save a checkpoint every N optimizer steps (0 = only at the end).
    save_every: int = 0
    #: Keep the last N step checkpoints (the final one is always kept).
    keep_last: int = 2
    #: A checkpoint directory to continue from (``--resume-from`` overrides it).
    resume_from: Optional[str] = None
    bf16: bool = False
    #: The prompt format: "keep" the system message (tool list and format instructions) in every prompt, or
    #: "drop" it (a small model trained from scratch learns the tools from the demonstrations, and prompts are
    #: several times shorter). null = what the model was trained with (its config.json), else "keep". It is
    #: recorded in every saved model, and the exported ONNX policy renders prompts the same way.
    system_prompt: Optional[Literal["keep", "drop"]] = None
    #: Most tokens one forward pass may take: rows × longest row, padding included (a packed row: its length;
    #: DPO: chosen and rejected). A longer piece runs as several, one after another, with the same loss and
    #: gradient. null: no limit up front.
    max_piece_tokens: Optional[int] = None
    #: A forward or backward pass that runs out of memory: "split" runs the step again with pieces cut to half
    #: of the rows that failed (one process only; the limit stays lowered), "fail" stops with exit 6 at once.
    on_out_of_memory: Literal["split", "fail"] = "split"
    #: End the run (exit 7, every thread's stack on stderr) when no optimizer step or checkpoint completed for this
    #: many seconds after the first step: a GPU that stopped answering, a hung collective or data read
    #: (watchdog.py). 0: never.
    stall_timeout_s: float = 3600.0
    #: A directory for TensorBoard: every progress event's numbers as curves (``<command>/loss``, …) at its
    #: optimizer step (tensorboard_log.py). null: none.
    tensorboard_dir: Optional[str] = None

    def validate_loop(self, where: str) -> None:
        for k in ("data", "output_dir"):
            if not getattr(self, k):
                raise ConfigError(f"{where}.{k} is required")
        _positive(self, where, "epochs", "batch_size", "grad_accum", "max_length", "log_every", "keep_last")
        if self.max_steps is not None and self.max_steps <= 0:
            raise ConfigError(f"{where}.max_steps must be > 0 or null")
        if self.save_every < 0:
            raise ConfigError(f"{where}.save_every must be >= 0")
        if self.stall_timeout_s < 0:
            raise ConfigError(f"{where}.stall_timeout_s must be >= 0 (0: no watchdog), got {self.stall_timeout_s}")
        if self.max_piece_tokens is not None and self.max_piece_tokens <= 0:
            raise ConfigError(f"{where}.max_piece_tokens must be > 0 or null, got {self.max_piece_tokens}")
        if self.tensorboard_dir is not None:
            if not self.tensorboard_dir:
                raise ConfigError(f"{where}.tensorboard_dir must be a directory or null, got an empty string")
            from .tensorboard_log import check_available

            check_available(where)


# --------------------------------------------------------------------------------------------------- commands


@dataclass
class CausalLoopConfig(TrainLoopConfig):
    """What the commands that train a causal LM on token sequences (sft, dpo, rl) share: how a batch is laid
    out and run."""

    #: Padding-free batches: a micro-batch's sequences concatenated into one row with per-sequence position ids
    #: (no compute on padding), kept apart as ``packed_attention`` says.
    packing: bool = False
    #: How a packed row keeps its sequences apart. "varlen": each attends to itself only, from the sequences'
    #: boundaries (on CUDA in bf16/fp16 one flash-attention call over the row, cost Σ nᵢ²; elsewhere one causal
    #: attention call per sequence); needs a model whose attention runs through transformers'
    #: AttentionInterface (every model transformers ships) and no soft-capping or attention sinks. "mask": a
    #: dense block-diagonal T × T mask, built by transformers from the position ids, with sdpa (cost (Σ nᵢ)², no
    #: flash kernel).
    packed_attention: Literal["varlen", "mask"] = "varlen"
    #: torch.compile each decoder layer (dynamic shapes: one compiled graph whatever the batch's length).
    #: Fuses the layers' elementwise work and cuts the per-operation launch cost, which dominates an eager step
    #: of a small model on a fast GPU; costs a compilation (seconds on a GPU host) at the first steps, and needs
    #: a working torch.compile (Triton on GPUs, a C++ compiler on CPUs). Not with ``model.gradient_checkpointing``
    #: (torch.compile runs checkpointed layers eagerly).
    compile: bool = False
    #: Apply the LM head to this many trained positions at a time, each chunk's logits recomputed in the backward
    #: pass instead of kept: the logits' memory (positions × vocabulary × 4 bytes, ~600 KB a position at a 152k
    #: vocabulary) becomes one chunk's, for one more head matmul per step. 0: the head runs on every trained
    #: position at once. Refused at start for a model that changes its logits after the head (soft-capping).
    logits_chunk: int = 0

    def validate_causal(self, where: str, model: ModelConfig) -> None:
        self.validate_loop(where)
        if self.logits_chunk < 0:
            raise ConfigError(f"{where}.logits_chunk must be >= 0 (0: off), got {self.logits_chunk}")
        if self.compile and model.gradient_checkpointing:
            raise ConfigError(f"{where}.compile does not combine with {where}.model.gradient_checkpointing: torch.compile "
                              "runs checkpointed layers eagerly; choose one")

    @property
    def packed(self) -> Optional[str]:
        """The packed layout's attention ("varlen" or "mask"), or None for padded batches."""
        return self.packed_attention if self.packing else None


@dataclass
class SftConfig(CausalLoopConfig):
    """``python -m gymflow_trainer sft``: supervised fine-tuning on exported conversations."""

    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    lora: Optional[LoraConfig] = None
    #: Mask system/user/tool tokens out of the loss (only assistant tokens are trained). Off: every
    #: token is trained (still never the padding; ``train: false`` messages stay masked).
    mask_observations: bool = True
    #: Weight each assistant message's tokens by step_reward / mean step_reward (of the dataset).
    step_weighted: bool = False
    #: Over-long conversations: "chunk" at step boundaries (with ``chunk_overlap`` context tokens that are
    #: not trained on), "truncate" (keep the first max_length tokens) or "error".
    overlong: Literal["chunk", "truncate", "error"] = "chunk"
    chunk_overlap: int = 0
    #: Curriculum: order examples short / high-reward first and widen the pool over epochs, from
    #: ``curriculum_start`` of the data in epoch 1 to all of it in the last epoch.
    curriculum: bool = False
    curriculum_start: float = 0.5
    #: Cut each micro-batch into at most this many pieces of similar lengths, run one after another (padded
    #: layout only). The step's examples and its gradient are unchanged; the padding shrinks. 1: off.
    length_pieces: int = 1

    def validate(self, where: str = "$") -> None:
        self.validate_causal(where, self.model)
        self.model.validate(f"{where}.model")
        self.optim.validate(f"{where}.optim", self.lora)
        if self.lora is not None:
            self.lora.validate(f"{where}.lora")
        if self.chunk_overlap < 0 or self.chunk_overlap >= self.max_length:
            raise ConfigError(f"{where}.chunk_overlap must be in [0, max_length)")
        if not 0 < self.curriculum_start <= 1:
            raise ConfigError(f"{where}.curriculum_start must be in (0, 1]")
        if self.length_pieces < 1:
            raise ConfigError(f"{where}.length_pieces must be >= 1 (1: micro-batches are not cut), got {self.length_pieces}")


@dataclass
class DpoConfig(CausalLoopConfig):
    """``python -m gymflow_trainer dpo``: direct preference optimisation (sigmoid or IPO)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    lora: Optional[LoraConfig] = None
    beta: float = 0.1
    loss_type: Literal["sigmoid", "ipo"] = "sigmoid"
    #: "model": a frozen copy of the initial policy (with LoRA: the adapter disabled) scores each batch;
    #: "precompute": one pass before training stores the reference log-probs (no second model in memory).
    reference: Literal["model", "precompute"] = "precompute"

    def validate(self, where: str = "$") -> None:
        self.validate_causal(where, self.model)
        self.model.validate(f"{where}.model")
        self.optim.validate(f"{where}.optim", self.lora)
        if self.lora is not None:
            self.lora.validate(f"{where}.lora")
        if self.beta <= 0:
            raise ConfigError(f"{where}.beta must be > 0")


@dataclass
class PolicyLossConfig:
    """Which policy-gradient objective ``losses.policy_loss`` computes (docs/trainer.md, "Losses")."""

    algorithm: Literal["grpo", "dr_grpo", "dapo", "gspo", "sapo", "ppo"] = "grpo"
    #: Symmetric clip range of grpo, dr_grpo and ppo (and sapo's clip_frac metric). dapo and gspo have their own
    #: defaults (0.2 / 0.28 and 3e-4 / 4e-4, their papers'); set eps_low / eps_high to change theirs.
    eps: float = 0.2
    #: Asymmetric clip range; null: the algorithm's default above, else ``eps``.
    eps_low: Optional[float] = None
    eps_high: Optional[float] = None
    tau_pos: float = 1.0
    tau_neg: float = 1.05
    #: null = the algorithm's own default (grpo/sapo/gspo: seq-mean-token-mean; dapo/ppo: token-mean;
    #: dr_grpo: seq-mean-token-sum-norm).
    aggregation: Optional[Literal["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"]] = None
    #: The constant C of seq-mean-token-sum-norm (Dr. GRPO: the generation budget in tokens).
    norm_constant: float = 1024.0
    #: Weight of the k3 KL to the reference (0 = off).
    kl_beta: float = 0.0

    def validate(self, where: str) -> None:
        for k in ("eps", "eps_low", "eps_high"):
            v = getattr(self, k)
            if v is not None and not 0 <= v < 1:
                raise ConfigError(f"{where}.{k} must be in [0, 1)")
        if self.tau_pos <= 0 or self.tau_neg <= 0:
            raise ConfigError(f"{where}.tau_pos and tau_neg must be > 0")
        if self.norm_constant <= 0:
            raise ConfigError(f"{where}.norm_constant must be > 0")
        if self.kl_beta < 0:
            raise ConfigError(f"{where}.kl_beta must be >= 0")


@dataclass
class RolloutCorrectionConfig:
    """Importance weights for the gap between the rollout's log-probs and the trainer's (docs/trainer.md,
    "Rollout correction"): ``losses.rollout_weights``. Needs the rollout's log-probs (step samples)."""

    #: "off": the ratio is taken against the rollout's log-probs (the behaviour policy). "token" / "sequence":
    #: against the trainer's own log-probs before the update, each token's (or each sample's) loss weighted by
    #: ρ = π_trainer / π_rollout, truncated or masked by ``cap``.
    level: Literal["off", "token", "sequence"] = "off"
    #: "truncate": weight min(ρ, cap) (TIS). "mask": weight 1 where 1/cap <= ρ <= cap, else 0 (MIS).
    mode: Literal["truncate", "mask"] = "truncate"
    cap: float = 2.0

    def validate(self, where: str) -> None:
        if not self.cap > 1:
            raise ConfigError(f"{where}.cap must be > 1, got {self.cap}")


@dataclass
class RlConfig(CausalLoopConfig):
    """``python -m gymflow_trainer rl``: policy-gradient update from grouped trajectories (exported ``rl``)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    lora: Optional[LoraConfig] = None
    loss: PolicyLossConfig = field(default_factory=PolicyLossConfig)
    #: Advantages: "group" recomputes (R − mean)/(std + eps) per group (no std for dr_grpo); "dataset"
    #: uses the exporter's ``advantage`` field.
    advantages: Literal["group", "dataset"] = "group"
    #: DAPO dynamic sampling: drop groups whose rewards are all equal.
    drop_uniform_groups: bool = False
    #: Never split a group between optimiser steps: each step takes whole shuffled groups while they fit in
    #: ``batch_size × grad_accum`` samples. A group's advantages sum to zero, so on-policy the gradient of what its
    #: members share (the tokens before their first difference, and every token those contexts did not sample)
    #: cancels inside the step; a step holding part of a group pushes all of them up or down by chance
    #: (docs/trainer.md, "RL that learns"). False: samples are shuffled one by one.
    whole_groups: bool = False
    #: What a training sample is. "steps": one per step, from the rollout's own token ids (prompt + sampled
    #: completion), with the rollout's log-probs as the old log-probs (exact importance ratios); "conversation":
    #: one per member, the rendered conversation re-tokenised, old log-probs recomputed; "auto": steps when
    #: every member carries token ids and log-probs for every step, else conversation.
    samples: Literal["auto", "steps", "conversation"] = "auto"
    #: Optimisation epochs over each batch of rollouts (PPO-style reuse; 1 = on-policy).
    ppo_epochs: int = 1
    #: With ``loss.kl_beta`` > 0: a model directory (same tokenizer) whose log-probs are the KL reference, instead
    #: of this run's initial policy. In a loop that trains each iteration from the last one's model, the SFT
    #: policy: the KL then holds the whole RL phase near it, where each run's own start would let the drift of
    #: every iteration add up (docs/trainer.md, "RL that learns").
    kl_reference: Optional[str] = None
    #: PPO (``loss.algorithm: ppo``) only: GAE discount and λ, value-loss weight and clip (null = unclipped),
    #: and whitening of the token advantages over each rollout batch.
    gamma: float = 1.0
    lam: float = 0.95
    vf_coef: float = 0.5
    vf_clip: Optional[float] = 0.2
    whiten_advantages: bool = True
    #: Step samples only: weight β of the steps' process rewards (``step_rewards``, scores s_k in [0, 1]). PPO: step
    #: k adds β·(s_k − 1) on its last trained token, besides the outcome reward after the last step. The GRPO
    #: family: step k's advantage adds β·Σ_{j≥k} of its member's group-normalised scores (process supervision).
    #: docs/trainer.md, "Step rewards". 0 = off: the member's reward alone, and ``step_rewards`` is not read.
    step_reward_coef: float = 0.0
    #: Importance weights between the rollout engine's log-probs and the trainer's (off by default).
    rollout_correction: RolloutCorrectionConfig = field(default_factory=RolloutCorrectionConfig)

    def validate(self, where: str = "$") -> None:
        self.validate_causal(where, self.model)
        self.model.validate(f"{where}.model")
        self.optim.validate(f"{where}.optim", self.lora)
        self.loss.validate(f"{where}.loss")
        self.rollout_correction.validate(f"{where}.rollout_correction")
        if self.rollout_correction.level != "off" and self.samples == "conversation":
            raise ConfigError(f"{where}.rollout_correction.level: '{self.rollout_correction.level}' needs the rollout's log-probs, "
                              "but samples is 'conversation' (set samples: steps or auto)")
        if self.lora is not None:
            self.lora.validate(f"{where}.lora")
        _positive(self, where, "ppo_epochs")
        if self.kl_reference is not None and self.loss.kl_beta <= 0:
            raise ConfigError(f"{where}.kl_reference: a KL reference needs loss.kl_beta > 0 (it is {self.loss.kl_beta})")
        if not (0 <= self.gamma <= 1 and 0 <= self.lam <= 1):
            raise ConfigError(f"{where}: gamma and lam must be in [0, 1]")
        if self.vf_coef < 0 or (self.vf_clip is not None and self.vf_clip <= 0):
            raise ConfigError(f"{where}: vf_coef must be >= 0 and vf_clip > 0 or null")
        if not (math.isfinite(self.step_reward_coef) and self.step_reward_coef >= 0):
            raise ConfigError(f"{where}.step_reward_coef must be a finite number >= 0, got {self.step_reward_coef}")
        if self.step_reward_coef > 0 and self.samples == "conversation":
            raise ConfigError(f"{where}.step_reward_coef: step rewards go on each step's own sample, but samples is 'conversation' "
                              "(set samples: steps or auto)")
        if self.loss.algorithm == "dr_grpo" and self.advantages == "dataset":
            # The exported advantage is (R − mean)/std: Dr. GRPO's point is to leave the std out.
            raise ConfigError(f"{where}.advantages: 'dataset' gives std-normalised advantages, which dr_grpo does without; "
                              "use advantages: group (computed from the rewards, without the std)")


@dataclass
class ExportOnnxConfig:
    """``python -m gymflow_trainer export-onnx``: a policy or reward model as an ONNX directory
    (docs/trainer.md, "ONNX export" describes the directory it writes)."""

    kind: Literal["policy", "reward_model"] = "policy"
    #: A model directory: ``save_pretrained`` output (a run's ``final/``, ``python -m gymflow_trainer.tiny``),
    #: a trainer checkpoint (``checkpoint-N/`` or its ``model/``; a LoRA adapter is merged first) or a run's
    #: ``output_dir`` (its ``final/``, else its newest checkpoint).
    checkpoint: str = ""
    output_dir: str = ""
    opset: int = 18
    #: Run onnxruntime on a sample (prefill, then decode steps with the KV cache) and compare the logits with
    #: torch; a max abs difference above 1e-3 fails the export.
    check: bool = True
    #: Policy only: ``torchscript`` (``torch.onnx.export(dynamo=False)``: about 1 s for a tiny model) or
    #: ``dynamo`` (``torch.export`` + onnxscript: slower to export, the path torch keeps developing).
    exporter: Literal["torchscript", "dynamo"] = "torchscript"

    def validate(self, where: str = "$") -> None:
        for k in ("checkpoint", "output_dir"):
            if not getattr(self, k):
                raise ConfigError(f"{where}.{k} is required")
        if not os.path.isdir(self.checkpoint):
            raise ConfigError(f"{where}.checkpoint: {self.checkpoint!r} is not a directory")
        if not 14 <= self.opset <= 20:
            raise ConfigError(f"{where}.opset must be in [14, 20] (got {self.opset})")
        if self.exporter == "dynamo" and self.opset < 18:
            raise ConfigError(f"{where}.opset must be >= 18 with exporter 'dynamo' (got {self.opset})")
        if os.path.exists(self.output_dir):
            marker = "gymflow_policy.json" if self.kind == "policy" else "gymflow_reward_model.json"
            if not os.path.isdir(self.output_dir):
                raise ConfigError(f"{where}.output_dir: {self.output_dir!r} exists and is not a directory")
            if os.listdir(self.output_dir) and not os.path.isfile(os.path.join(self.output_dir, marker)):
                raise ConfigError(f"{where}.output_dir: {self.output_dir!r} is not empty and holds no {marker} "
                                  "(only an earlier export of the same kind is replaced)")


@dataclass
class ServeConfig:
    """``python -m gymflow_trainer serve``: an OpenAI-compatible chat-completions server for one checkpoint,
    until SIGTERM/SIGINT (docs/trainer.md, "Serving a checkpoint")."""

    #: A model directory, resolved as ``export-onnx`` resolves its ``checkpoint`` (a ``save_pretrained``
    #: directory, a trainer checkpoint, or a run's ``output_dir``; a LoRA adapter is merged).
    checkpoint: str = ""
    host: str = "127.0.0.1"
    #: 0 = any free port (the ``serving`` event names the one bound).
    port: int = 8000
    #: The ``model`` requests must name, and what ``GET /v1/models`` lists.
    served_model_name: str = "policy"
    #: ``auto``: bfloat16 on a CUDA GPU that supports it, else float32.
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    #: The process that started the server (the rollout worker). When the server's parent is no longer this
    #: process (it died, the server was re-parented), the server stops: no orphan holds the GPU and the port.
    parent_pid: Optional[int] = None

    def validate(self, where: str = "$") -> None:
        if not self.checkpoint:
            raise ConfigError(f"{where}.checkpoint is required")
        if not os.path.isdir(self.checkpoint):
            raise ConfigError(f"{where}.checkpoint: {self.checkpoint!r} is not a directory")
        if not self.host:
            raise ConfigError(f"{where}.host must not be empty")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"{where}.port must be in [0, 65535] (0 = any free port), got {self.port}")
        if not self.served_model_name.strip():
            raise ConfigError(f"{where}.served_model_name must not be empty")
        if self.parent_pid is not None and self.parent_pid <= 0:
            raise ConfigError(f"{where}.parent_pid must be a process id > 0 or null, got {self.parent_pid}")


@dataclass
class RmConfig(TrainLoopConfig):
    """``python -m gymflow_trainer rm``: the learned step-level reward model (docs/reward.md, "Learned reward
    model"). ``data`` is a trajectories JSONL; ``max_length`` caps each step input (left-truncated, the
    instruction kept)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    #: ``regression``: MSE of the step score against labels (the steps' ``reward.score``, or ``labels``);
    #: ``preference``: Bradley–Terry on ``pairs``.
    objective: Literal["regression", "preference"] = "regression"
    #: Human step labels JSONL (``{"trajectoryId","stepIndex","score"}``, as ``gymflow reward calibrate`` reads
    #: them) over the trajectories of ``data``; without it the steps' ``reward.score`` are the labels.
    labels: Optional[str] = None
    #: The labels' scale ``[min, max]``, mapped onto [0, 1] (default: already in [0, 1]).
    label_range: Optional[list[float]] = None
    #: Preference pairs JSONL (``{"chosenId","rejectedId",...}``, as ``gymflow reward preferences`` writes them).
    pairs: Optional[str] = None
    #: A trajectory's value in the Bradley–Terry loss: sum, mean or last of its steps' raw scores.
    pair_aggregate: Literal["sum", "mean", "last"] = "mean"
    #: Share of trajectories (regression) or tasks (preference) held out and evaluated at the end.
    eval_fraction: float = 0.0
    #: LoRA on the backbone; the score head is trained whole beside it (peft's ``modules_to_save``).
    lora: Optional[LoraConfig] = None

    def validate(self, where: str = "$") -> None:
        self.validate_loop(where)
        self.model.validate(f"{where}.model")
        self.optim.validate(f"{where}.optim", self.lora)
        if self.lora is not None:
            self.lora.validate(f"{where}.lora")
        if self.objective == "preference" and not self.pairs:
            raise ConfigError(f"{where}.pairs is required with objective 'preference'")
        if self.objective == "regression" and self.pairs:
            raise ConfigError(f"{where}.pairs is only read with objective 'preference'")
        if self.objective == "preference" and self.labels:
            raise ConfigError(f"{where}.labels is only read with objective 'regression'")
        if self.label_range is not None and (len(self.label_range) != 2 or not self.label_range[0] < self.label_range[1]):
            raise ConfigError(f"{where}.label_range must be [min, max] with min < max")
        if not 0 <= self.eval_fraction < 1:
            raise ConfigError(f"{where}.eval_fraction must be in [0, 1)")


COMMANDS: dict[str, type] = {
    "sft": SftConfig,
    "dpo": DpoConfig,
    "rl": RlConfig,
    "rm": RmConfig,
    "export-onnx": ExportOnnxConfig,
    "serve": ServeConfig,
}

# ---------------------------------------------------------------------------------------------------- loading


def _positive(obj: Any, where: str, *names: str) -> None:
    for n in names:
        if getattr(obj, n) <= 0:
            raise ConfigError(f"{where}.{n} must be > 0 (got {getattr(obj, n)})")


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _convert(value: Any, tp: Any, path: str, file: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        if value is None:
            if type(None) in args:
                return None
            raise ConfigError(f"{file}: {path} must not be null")
        non_none = [a for a in args if a is not type(None)]
        return _convert(value, non_none[0], path, file) if len(non_none) == 1 else value
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{file}: {path} must be one of {', '.join(map(repr, args))} (got {value!r})")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{file}: {path} must be a list (got {type(value).__name__})")
        return [_convert(v, args[0], f"{path}[{i}]", file) for i, v in enumerate(value)] if args else value
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, file, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{file}: {path} must be true or false (got {value!r})")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{file}: {path} must be an integer (got {value!r})")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{file}: {path} must be a number (got {value!r})")
        # YAML's .nan and .inf pass every `<= 0` check, and an infinite learning rate trains NaN weights.
        if not math.isfinite(value):
            raise ConfigError(f"{file}: {path} must be a finite number (got {value!r})")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{file}: {path} must be a string (got {value!r})")
        return value
    raise ConfigError(f"{file}: {path}: unsupported type {_type_name(tp)}")


def from_dict(cls: type, data: Any, file: str = "<config>", path: str = "$") -> Any:
    """Builds dataclass ``cls`` from a mapping, rejecting unknown keys and values of the wrong type."""
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: {path} must be a mapping (got {type(data).__name__})")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in data:
        if key not in fields:
            raise ConfigError(f"{file}: unknown key '{key}' at {path} (known: {', '.join(sorted(fields))})")
    kwargs = {k: _convert(v, hints[k], f"{path}.{k}", file) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except TypeError as e:  # pragma: no cover - every field has a default
        raise ConfigError(f"{file}: {path}: {e}") from e


def read_document(file: str) -> dict[str, Any]:
    """Reads a JSON (``.json``) or YAML (anything else) configuration file into a mapping."""
    try:
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise ConfigError(f"{file}: cannot read the configuration ({e.strerror})") from e
    try:
        if file.endswith(".json"):
            doc = json.loads(text)
        else:
            import yaml

            doc = yaml.safe_load(text)
    except Exception as e:  # json.JSONDecodeError, yaml.YAMLError
        raise ConfigError(f"{file}: not valid {'JSON' if file.endswith('.json') else 'YAML'}: {e}") from e
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{file}: the configuration must be a mapping at the top level")
    return doc


def load_config(command: str, file: str, overrides: Optional[dict[str, Any]] = None) -> Any:
    """Reads, type-checks and validates the configuration of ``command``; touches no model.

    Relative ``data``/``output_dir``/model paths stay relative to the working directory (the TypeScript
    side passes absolute paths).
    """
    if command not in COMMANDS:
        raise ConfigError(f"unknown command '{command}' (known: {', '.join(COMMANDS)})")
    doc = read_document(file)
    doc.update({k: v for k, v in (overrides or {}).items() if v is not None})
    cfg = from_dict(COMMANDS[command], doc, os.path.basename(file) if file else "<config>")
    try:
        cfg.validate()
    except ConfigError as e:
        raise ConfigError(f"{os.path.basename(file)}: {e}") from e
    return cfg


def load_tiny_config(source: str, name: Optional[str] = None, at: Optional[str] = None) -> TinyModelConfig:
    """Reads, type-checks and validates a :class:`TinyModelConfig`; touches no model.

    ``source`` is a JSON object (text starting with ``{``) or a JSON/YAML file holding a tiny config, or
    holding a command configuration whose ``model.tiny`` section is used (the initial model of an
    ``sft``/``dpo``/``rl`` run). Messages name the document ``name`` (default: the file's base name, or
    ``tiny config`` for JSON text) and the section ``at`` (default ``$``, or ``$.model.tiny``), so a caller
    that took the section from a larger document can name it there (``pipeline config``,
    ``$.policy.init.tiny``).
    """
    if source.lstrip().startswith("{"):
        name = name or "tiny config"
        try:
            doc: Any = json.loads(source)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{name}: not valid JSON: {e}") from e
        section, where = doc, at or "$"
    else:
        doc = read_document(source)
        name = name or os.path.basename(source)
        model = doc.get("model")
        if isinstance(model, dict):
            if not isinstance(model.get("tiny"), dict):
                raise ConfigError(f"{name}: $.model has no 'tiny' section (the model is not built from a tiny config)")
            section, where = model["tiny"], at or "$.model.tiny"
        else:
            section, where = doc, at or "$"
    cfg = from_dict(TinyModelConfig, section, name, where)
    cfg.validate(where)
    return cfg


def to_dict(cfg: Any) -> dict[str, Any]:
    """The configuration as plain data (stored in every checkpoint)."""
    return dataclasses.asdict(cfg)
