"""The chat template and its rendering with character spans (docs/trainer.md, "Chat template").

One template for training and for rollouts: ChatML, the format of Qwen2/2.5 and many others. Every
message, whatever its role (``system``, ``user``, ``assistant``, ``tool``), renders as

    <|im_start|>{role}\\n{content}<|im_end|>\\n

and the generation prompt is ``<|im_start|>assistant\\n``. An assistant turn's content already holds its
tool call as ``<tool_call>\\n{"name":…,"arguments":…}\\n</tool_call>`` (the exporter writes it so); the
template adds nothing else — no default system prompt, no tool list (the exporter's system message
carries the tools), no BOS token. The trained part of an assistant message is its content plus the
``<|im_end|>`` that ends it (the model must learn to stop); the ``<|im_start|>assistant\\n`` header and the
newline after ``<|im_end|>`` are prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
PAD = "<|endoftext|>"
SPECIAL_TOKENS = [PAD, IM_START, IM_END]

#: The Jinja template stored with the tokenizer (``tokenizer.chat_template``). ``render`` below must produce
#: exactly the same text; a test checks it through ``apply_chat_template``.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

#: :data:`CHAT_TEMPLATE` without the system messages: what a model trained with ``system_prompt: drop`` saw.
CHAT_TEMPLATE_NO_SYSTEM = (
    "{% for message in messages %}{% if message['role'] != 'system' %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def template_for(system_prompt: str | None) -> str:
    """The chat template that renders what a model trained with ``system_prompt`` (``keep``, the default, or
    ``drop``) saw in training. It is saved with every model directory, so a server that renders prompts from
    the tokenizer (vLLM, SGLang) gives the model exactly those."""
    return CHAT_TEMPLATE_NO_SYSTEM if system_prompt == "drop" else CHAT_TEMPLATE


ROLES = ("system", "user", "assistant", "tool")


@dataclass
class Segment:
    """A piece of the rendered text: ``[start, end)`` in characters, and whether its tokens are trained."""

    start: int
    end: int
    trained: bool
    #: Index of the message it belongs to (-1 for the generation prompt).
    message: int


def render(messages: Sequence[dict[str, Any]], add_generation_prompt: bool = False, trained: Sequence[bool] | None = None) -> tuple[str, list[Segment]]:
    """Renders ``messages`` with :data:`CHAT_TEMPLATE` and returns the text and its trained spans.

    ``trained[i]`` says whether message ``i``'s content + ``<|im_end|>`` is trained (default: assistant
    messages only). Headers and separators are never trained.
    """
    parts: list[str] = []
    segs: list[Segment] = []
    pos = 0
    for i, msg in enumerate(messages):
        role, content = msg["role"], msg["content"]
        if role not in ROLES:
            raise ValueError(f"message {i}: unknown role {role!r} (known: {', '.join(ROLES)})")
        if not isinstance(content, str):
            raise ValueError(f"message {i}: content must be a string")
        header = f"{IM_START}{role}\n"
        body = f"{content}{IM_END}"
        is_trained = (role == "assistant") if trained is None else bool(trained[i])
        for text, tr in ((header, False), (body, is_trained), ("\n", False)):
            segs.append(Segment(pos, pos + len(text), tr, i))
            parts.append(text)
            pos += len(text)
    if add_generation_prompt:
        gp = f"{IM_START}assistant\n"
        segs.append(Segment(pos, pos + len(gp), False, -1))
        parts.append(gp)
    return "".join(parts), segs
