"""``python -m gymflow_trainer serve``: an OpenAI-compatible chat-completions server for one checkpoint
(docs/trainer.md, "Serving a checkpoint").

The rollout workers act through it with the TypeScript ``OpenAIPolicy`` in text mode: the conversation goes
as ``messages``, is rendered with the trainer's ChatML (:func:`gymflow_trainer.chat.render`, the text SFT
trained on and the ``local:`` policy's prompt), tokenized as one string without added special tokens, and
decoded token by token with the KV cache. What a completion records is what ``src/policy/local.ts`` records:
the sampled ids (the end-of-turn id included when it stopped on one) and, per id, the log-softmax of the
**raw** logits (temperature 1, no top-p) — the quantity the RL trainer recomputes.

This is the dependency-free reference (and what CI tests against), not a throughput server: one generation
at a time, under a lock; requests that arrive meanwhile wait. Batching many rollouts is vLLM's or SGLang's job
(``vllm serve DIR --served-model-name NAME``: the tokenizer directory carries the same ChatML template).

Endpoints: ``GET /health``, ``GET /v1/models`` (and ``/v1/models/{name}``), ``POST /v1/chat/completions``
(non-streaming). Extensions (vLLM's): ``return_token_ids`` adds ``choices[0].token_ids`` and
``prompt_token_ids``; ``return_tokens_as_token_ids`` writes each log-prob ``token`` as ``token_id:<id>``.
Errors have OpenAI's shape and name the JSON path of the bad field. One line per request goes to stderr;
stdout carries only the ``serving`` and ``done`` events.

Embedding it (tests, a notebook)::

    server = PolicyServer(Engine.load("runs/sft/final"), port=0).start()
    ...  # requests to server.url
    server.stop()
"""

from __future__ import annotations

import inspect
import json
import math
import os
import secrets
import socket
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, Callable, Optional, TextIO
from urllib.parse import urlsplit

import torch

from .chat import ROLES, render
from .models import SYSTEM_PROMPT_ATTR
from .config import ServeConfig
from .errors import Terminated
from .events import EventWriter

#: Bodies larger than this are refused (413) before they are read.
MAX_BODY_BYTES = 64 << 20
#: How long stopping waits for the generation in flight to give up (it checks before every token).
STOP_WAIT_S = 10.0

# ---------------------------------------------------------------------------------------------------- errors


class RequestError(Exception):
    """A request the server answers with an error: HTTP ``status`` and OpenAI's error body."""

    def __init__(self, status: int, message: str, param: Optional[str] = None, type: str = "invalid_request_error") -> None:  # noqa: A002
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.type = type

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": None}}


class ServerStopping(Exception):
    """The server is shutting down: the generation in flight (or a new one) is abandoned (503)."""


def _show(v: Any) -> str:
    """A value as an error message quotes it: strings in quotes, JSON's names for the rest, cut at 60 chars."""
    if isinstance(v, str):
        s = repr(v)
    else:
        try:
            s = json.dumps(v)
        except (TypeError, ValueError):
            s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _bad(path: str, what: str, got: Any) -> RequestError:
    return RequestError(400, f"{path}: expected {what}, got {_show(got)}", param=path[2:] or None)


# --------------------------------------------------------------------------------------------------- request

#: Fields this server refuses when present (not null / empty), with what to do instead.
UNSUPPORTED = {
    "tools": "native tool calls are not supported; use text mode: the tools go in the system prompt and the model "
             "writes <tool_call>…</tool_call> in its content",
    "tool_choice": "native tool calls are not supported; use text mode: the tools go in the system prompt",
    "functions": "native tool calls are not supported; use text mode: the tools go in the system prompt",
    "function_call": "native tool calls are not supported; use text mode: the tools go in the system prompt",
    "stop": "stop sequences are not supported (a completion ends at the end of the turn, <|im_end|>, or at max_tokens)",
    "response_format": "response_format is not supported (no constrained decoding)",
}
#: Sampling fields of other servers that would change the distribution: refused unless neutral, so that no
#: request silently samples from something other than what it asked for.
NEUTRAL = {"presence_penalty": (0,), "frequency_penalty": (0,), "repetition_penalty": (1,), "top_k": (0, -1),
           "min_p": (0,), "logit_bias": ({},)}


@dataclass
class ChatRequest:
    """A validated ``POST /v1/chat/completions`` body."""

    #: ``{"role", "content"}`` with the content as one string (text parts concatenated).
    messages: list[dict[str, str]]
    #: ``max_completion_tokens`` or ``max_tokens``; None = the rest of the context.
    max_tokens: Optional[int] = None
    temperature: float = 1.0
    top_p: float = 1.0
    seed: Optional[int] = None
    logprobs: bool = False
    return_token_ids: bool = False
    return_tokens_as_token_ids: bool = False


def _content(v: Any, path: str, role: str) -> str:
    if isinstance(v, str):
        return v
    if v is None and role == "assistant":  # an assistant turn without text (OpenAI allows null there)
        return ""
    if not isinstance(v, list):
        raise _bad(path, "a string or an array of text parts", v)
    parts = []
    for j, part in enumerate(v):
        p = f"{path}[{j}]"
        if not isinstance(part, dict):
            raise _bad(p, 'an object {"type":"text","text":…}', part)
        if part.get("type") != "text":
            raise _bad(f"{p}.type", "'text' (only text parts are supported)", part.get("type"))
        if not isinstance(part.get("text"), str):
            raise _bad(f"{p}.text", "a string", part.get("text"))
        parts.append(part["text"])
    return "".join(parts)


def _number(body: dict[str, Any], key: str, default: float, ok: Callable[[float], bool], what: str) -> float:
    v = body.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not ok(v):
        raise _bad(f"$.{key}", what, v)
    return float(v)


def _flag(body: dict[str, Any], key: str) -> bool:
    v = body.get(key)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise _bad(f"$.{key}", "true or false", v)
    return v


def parse_chat_request(body: Any, served_model_name: str) -> ChatRequest:
    """Validates a chat-completions body; raises :class:`RequestError` naming the JSON path of the first bad
    field (404 for a model this server does not serve). Unknown fields are ignored."""
    if not isinstance(body, dict):
        raise _bad("$", "a JSON object", body)
    model = body.get("model")
    if model is None:
        raise RequestError(400, "$.model is required", param="model")
    if not isinstance(model, str):
        raise _bad("$.model", "a string", model)
    if model != served_model_name:
        raise RequestError(404, f"$.model: the model {model!r} does not exist; this server serves {served_model_name!r}",
                           param="model", type="not_found_error")
    for key, why in UNSUPPORTED.items():
        if body.get(key) not in (None, [], {}):
            raise RequestError(400, f"$.{key}: not supported by this server: {why}", param=key)
    for key, neutral in NEUTRAL.items():
        if body.get(key) is not None and not any(body[key] == n and type(body[key]) is not bool for n in neutral):
            raise RequestError(400, f"$.{key}: not supported by this server (only {', '.join(_show(n) for n in neutral)} "
                                    f"or absent), got {_show(body[key])}", param=key)
    if body.get("stream") not in (None, False):
        raise RequestError(400, f"$.stream: streaming is not supported (send false or leave it out), got {_show(body['stream'])}", param="stream")
    if body.get("n") not in (None, 1) or isinstance(body.get("n"), bool):
        raise RequestError(400, f"$.n: only 1 completion per request is supported, got {_show(body['n'])}", param="n")
    if body.get("top_logprobs") not in (None, 0) or isinstance(body.get("top_logprobs"), bool):
        raise RequestError(400, f"$.top_logprobs: only 0 is supported (logprobs of the sampled tokens only), got {_show(body['top_logprobs'])}",
                           param="top_logprobs")

    msgs = body.get("messages")
    if msgs is None:
        raise RequestError(400, "$.messages is required", param="messages")
    if not isinstance(msgs, list) or not msgs:
        raise _bad("$.messages", "a non-empty array of messages", msgs)
    messages = []
    for i, m in enumerate(msgs):
        p = f"$.messages[{i}]"
        if not isinstance(m, dict):
            raise _bad(p, "an object with role and content", m)
        role = m.get("role")
        if role not in ROLES:
            raise _bad(f"{p}.role", f"one of {', '.join(ROLES)}", role)
        if m.get("tool_calls"):
            raise RequestError(400, f"{p}.tool_calls: native tool calls are not supported; use text mode (the call as "
                                    "<tool_call>…</tool_call> in the assistant's content)", param=f"messages[{i}].tool_calls")
        messages.append({"role": role, "content": _content(m.get("content"), f"{p}.content", role)})

    max_tokens = None
    for key in ("max_tokens", "max_completion_tokens"):  # the newer name wins when both are given
        v = body.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise _bad(f"$.{key}", "an integer >= 1", v)
        max_tokens = v
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _bad("$.seed", "an integer", seed)
    return ChatRequest(
        messages=messages,
        max_tokens=max_tokens,
        temperature=_number(body, "temperature", 1.0, lambda x: x >= 0, "a number >= 0 (0 = greedy)"),
        top_p=_number(body, "top_p", 1.0, lambda x: 0 < x <= 1, "a number in (0, 1]"),
        seed=seed,
        logprobs=_flag(body, "logprobs"),
        return_token_ids=_flag(body, "return_token_ids"),
        return_tokens_as_token_ids=_flag(body, "return_tokens_as_token_ids"),
    )


# -------------------------------------------------------------------------------------------------- sampling


def sample_token(logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator) -> int:
    """The next id from a row of raw logits — the algorithm of ``src/policy/sampling.ts``, in float64 on the CPU:

    - ``temperature == 0``: argmax (the lowest id on ties);
    - else ``p = softmax(logits / temperature)``; with ``top_p < 1`` cut to the smallest set of most probable ids
      (ties ordered by id) whose mass reaches ``top_p``; one uniform ``u`` from ``generator`` picks the id where
      the cumulative mass (ids in order, or in the nucleus order) first exceeds ``u × mass``.
    """
    x = logits.detach().to("cpu", torch.float64)
    top = float(x.max())
    if math.isnan(top) or top == math.inf or bool(torch.isnan(x).any()):
        raise RuntimeError("the model produced non-finite logits (NaN or +inf)")
    if temperature == 0:
        return int(torch.argmax(x))
    p = torch.exp((x - top) / temperature)
    u = float(torch.rand((), generator=generator, dtype=torch.float64))
    if top_p >= 1:
        cdf = torch.cumsum(p, 0)
        i = int(torch.searchsorted(cdf, torch.tensor([u * float(cdf[-1])], dtype=torch.float64), right=True)[0])
        return i if i < len(p) else int(torch.nonzero(p)[-1, 0])  # rounding: the last id with mass
    probs, order = torch.sort(p, descending=True, stable=True)
    cum = torch.cumsum(probs, 0)
    k = min(int(torch.searchsorted(cum, torch.tensor([top_p * float(cum[-1])], dtype=torch.float64))[0]) + 1, len(p))
    j = int(torch.searchsorted(cum[:k], torch.tensor([u * float(cum[k - 1])], dtype=torch.float64), right=True)[0])
    return int(order[min(j, k - 1)])


# ---------------------------------------------------------------------------------------------------- engine


def _byte_decoder() -> dict[str, int]:
    """The inverse of GPT-2's byte-to-character map, which byte-level BPE vocabularies are written in."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


BYTE_DECODER = _byte_decoder()


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """``auto``: bfloat16 on a CUDA device that supports it, else float32."""
    if name == "float32":
        return torch.float32
    if name == "bfloat16":
        return torch.bfloat16
    return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32


@dataclass
class Completion:
    """One generation: the ids (the end-of-turn id included when it stopped on one), their raw log-probs,
    the text without that id, and each id's bytes."""

    prompt_ids: list[int]
    ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" (an end-of-turn id) or "length"
    text: str
    token_bytes: list[bytes] = field(default_factory=list)


class Engine:
    """The model, its tokenizer and the decode loop. Thread-safe: one generation (or tokenization) at a time."""

    def __init__(self, model: Any, tokenizer: Any, model_dir: str = "") -> None:
        from .onnx_export import eos_token_ids

        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = next(model.parameters()).device
        max_len = getattr(model.config, "max_position_embeddings", None)
        if not isinstance(max_len, int) or max_len < 2:
            raise ValueError(f"{model_dir or 'model'}: config.max_position_embeddings is {max_len!r}; the server needs the context length")
        #: The context length (``max_position_embeddings``): prompt + completion never exceed it.
        self.max_model_len = max_len
        self.eos_ids = frozenset(eos_token_ids(model, tokenizer))
        #: Ids at or past this are padding rows of the embedding (no token): never sampled.
        self.vocab_limit = len(tokenizer)
        # The prefill needs the last position's logits only (a 4k-token prompt × 150k vocab is 2.4 GB in float32).
        self._prefill_kw = {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.forward).parameters else {}
        self._byte_level = type(getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)).__name__ == "ByteLevel"
        self._added = {int(i): t.content for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items()}
        self._bytes_cache: dict[int, bytes] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        #: ``drop``: the model was trained without the system message (``system_prompt: drop``, recorded in its
        #: config), so the prompt leaves it out, as the SFT data and the ``local:`` policy's prompt do.
        self.system_prompt = getattr(model.config, SYSTEM_PROMPT_ATTR, None) or "keep"

    @classmethod
    def load(cls, checkpoint: str, dtype: str = "auto", device: Optional[torch.device] = None) -> "Engine":
        """Loads ``checkpoint`` as ``export-onnx`` resolves it (LoRA merged), in ``dtype`` on ``device``
        (default: the GPU if there is one), with transformers' default attention."""
        from .models import device as default_device
        from .onnx_export import load_policy

        dev = device or default_device()
        model, tok, model_dir, _ = load_policy(checkpoint, dtype=resolve_dtype(dtype, dev), device=dev,
                                               attn_implementation=None, model_types=None)
        return cls(model, tok, os.path.abspath(model_dir))

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The ids of ``render(messages, add_generation_prompt=True)``, encoded as one string without added
        special tokens (what the SFT data and the ``local:`` policy's prompt give); without the system messages
        for a model trained with ``system_prompt: drop``."""
        if self.system_prompt == "drop":
            messages = [m for m in messages if m["role"] != "system"]
        text, _ = render(messages, add_generation_prompt=True)
        with self._lock:
            return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        """Text of ``ids``, special tokens kept as text (as ``src/core/tokenizer.ts`` decodes)."""
        return self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def _token_bytes(self, i: int) -> bytes:
        """The bytes id ``i`` stands for (a byte-level BPE token can be part of a UTF-8 character, which decoding
        it alone would turn into U+FFFD). Call it holding the lock (the tokenizer is not thread-safe)."""
        b = self._bytes_cache.get(i)
        if b is None:
            piece = None if i in self._added else self.tokenizer.convert_ids_to_tokens(i)
            if piece is None:
                b = self._added[i].encode("utf-8") if i in self._added else b""
            elif self._byte_level and all(ch in BYTE_DECODER for ch in piece):
                b = bytes(BYTE_DECODER[ch] for ch in piece)
            else:  # another vocabulary (SentencePiece, …): the token's text
                b = self.decode([i]).encode("utf-8")
            self._bytes_cache[i] = b
        return b

    def generate(self, prompt_ids: list[int], max_tokens: int, temperature: float = 1.0, top_p: float = 1.0,
                 seed: Optional[int] = None) -> Completion:
        """Prefills ``prompt_ids`` and samples up to ``max_tokens`` ids with the KV cache, stopping after an
        end-of-turn id. ``seed`` (any int; random when None) seeds the sampling: the same seed and prompt give
        the same completion. The caller keeps ``len(prompt_ids) + max_tokens`` within the context."""
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        gen = torch.Generator().manual_seed(seed % (1 << 64) if seed is not None else secrets.randbits(64))
        ids: list[int] = []
        lps: list[float] = []
        finish = "length"
        with self._lock, torch.inference_mode():
            self._check_open()
            out = self.model(input_ids=torch.tensor([prompt_ids], device=self.device), use_cache=True, **self._prefill_kw)
            while True:
                logits = out.logits[0, -1].float()
                i = sample_token(logits[: self.vocab_limit], temperature, top_p, gen)
                lp = float(torch.log_softmax(logits, dim=-1)[i])  # the raw distribution, whatever was sampled from
                if not math.isfinite(lp):
                    raise RuntimeError(f"log-prob of sampled id {i} is {lp}: the model's logits are broken")
                ids.append(i)
                lps.append(lp)
                if i in self.eos_ids:
                    finish = "stop"
                    break
                if len(ids) >= max_tokens:
                    break
                self._check_open()
                out = self.model(input_ids=torch.tensor([[i]], device=self.device), past_key_values=out.past_key_values, use_cache=True)
            text = self.decode(ids[:-1] if finish == "stop" else ids)
            token_bytes = [self._token_bytes(i) for i in ids]
        return Completion(list(prompt_ids), ids, lps, finish, text, token_bytes)

    def _check_open(self) -> None:
        if self._stopping.is_set():
            raise ServerStopping("the server is shutting down")

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Refuses new generations, and waits up to ``timeout`` s for the one in flight to give up."""
        self._stopping.set()
        if self._lock.acquire(timeout=timeout):
            self._lock.release()


# ------------------------------------------------------------------------------------------------------ HTTP


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a connection held open by a client never blocks the exit

    def __init__(self, address: tuple[str, int], app: "PolicyServer") -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.app = app
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host's name up (socket.getfqdn), which can wait on DNS for seconds.
        TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a rollout worker reuses its connection step after step
    server_version = "gymflow-serve"
    server: _HTTPServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            raise RequestError(411, "$: send the body with a Content-Length (chunked bodies are not supported)")
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise RequestError(400, f"$: bad Content-Length {self.headers.get('Content-Length')!r}") from None
        if n > MAX_BODY_BYTES:
            self.close_connection = True
            raise RequestError(413, f"$: the body is {n} bytes; the limit is {MAX_BODY_BYTES}")
        return self.rfile.read(n) if n > 0 else b""

    def _handle(self, method: str) -> None:
        app = self.server.app
        t0 = time.perf_counter()
        path = urlsplit(self.path).path
        note = ""
        try:
            raw = self._read_body() if method == "POST" else b""  # read before routing: keep-alive stays in step
            status, payload, note = 200, *app.route(method, path, raw)
        except RequestError as e:
            status, payload, note = e.status, e.body(), e.message
        except ServerStopping as e:
            status, payload, note = 503, RequestError(503, str(e), type="server_error").body(), str(e)
        except Exception as e:  # noqa: BLE001 - a failed request must not take the server down
            traceback.print_exc(file=sys.stderr)
            msg = f"{type(e).__name__}: {e}"
            status, payload, note = 500, RequestError(500, msg, type="server_error").body(), msg
        # Logged (and counted) before the answer leaves: a client that has its answer sees it in the log and stats.
        app.log(f"{self.client_address[0]} {method} {path} {status} {time.perf_counter() - t0:.3f}s {note}".rstrip(), status)
        data = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            app.log(f"{self.client_address[0]} {method} {path}: the client went away before the answer", 0)

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass  # _handle logs one line with more in it

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        # http.server's own errors (a malformed request line, a timeout): one line, as ours.
        self.server.app.log(f"{self.address_string()} {format % args}", 400)


class PolicyServer:
    """The HTTP API over an :class:`Engine`, bound at construction (``port=0``: any free port, see ``port``).

    ``serve_forever()`` serves in the calling thread until ``shutdown()`` (from another thread); ``start()``
    serves in a daemon thread and ``stop()`` ends it. ``close()`` stops generations and frees the socket.
    """

    def __init__(self, engine: Engine, host: str = "127.0.0.1", port: int = 0, served_model_name: str = "policy",
                 log: Optional[TextIO] = None) -> None:
        self.engine = engine
        #: Where the one line per request goes (default: stderr; stdout is the event stream).
        self.log_stream = log
        self.served_model_name = served_model_name
        self.host = host
        self.created = int(time.time())
        self._stats = {"requests": 0, "completions": 0, "errors": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._stats_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        try:
            self.httpd = _HTTPServer((host, port), self)
        except OSError as e:
            raise OSError(e.errno, f"cannot listen on {host}:{port}: {e.strerror}") from e
        #: The bound port (the one the system chose when ``port`` was 0).
        self.port = int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI base URL, ``http://HOST:PORT/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    # -- lifecycle

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Ends ``serve_forever`` (call it from another thread)."""
        self.httpd.shutdown()

    def close(self) -> None:
        self.engine.stop()
        self.httpd.server_close()

    def start(self) -> "PolicyServer":
        self._thread = threading.Thread(target=self.serve_forever, name="gymflow-serve", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        self.close()

    def __enter__(self) -> "PolicyServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- bookkeeping

    def stats(self) -> dict[str, Any]:
        with self._stats_lock:
            return {"url": self.url, "model": self.served_model_name, **self._stats}

    def log(self, line: str, status: int) -> None:
        """Writes one log line; ``status`` > 0 counts a request (an error from 400 on)."""
        with self._stats_lock:
            self._stats["requests"] += status > 0
            self._stats["errors"] += status >= 400
        stream = self.log_stream or sys.stderr
        stream.write(f"serve: {line}\n")
        stream.flush()

    # -- API

    def model_card(self) -> dict[str, Any]:
        return {"id": self.served_model_name, "object": "model", "created": self.created, "owned_by": "gymflow",
                "max_model_len": self.engine.max_model_len}

    def route(self, method: str, path: str, raw: bytes) -> tuple[dict[str, Any], str]:
        """``(200 body, log note)`` for a request, or :class:`RequestError`."""
        routes = {"/health": "GET", "/v1/models": "GET", "/v1/chat/completions": "POST"}
        p = path.rstrip("/") or "/"
        if p.startswith("/v1/models/") and method == "GET":
            name = p[len("/v1/models/"):]
            if name != self.served_model_name:
                raise RequestError(404, f"the model {name!r} does not exist; this server serves {self.served_model_name!r}",
                                   param="model", type="not_found_error")
            return self.model_card(), ""
        if p not in routes:
            raise RequestError(404, f"no route {method} {path} (known: GET /health, GET /v1/models, POST /v1/chat/completions)",
                               type="not_found_error")
        if method != routes[p]:
            raise RequestError(405, f"{method} {path}: use {routes[p]}", type="invalid_request_error")
        if p == "/health":
            return {"status": "ok"}, ""
        if p == "/v1/models":
            return {"object": "list", "data": [self.model_card()]}, ""
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RequestError(400, f"$: the body is not valid JSON ({e})") from None
        out = self.chat_completion(body)
        u = out["usage"]
        return out, f"prompt={u['prompt_tokens']} completion={u['completion_tokens']} {out['choices'][0]['finish_reason']}"

    def chat_completion(self, body: Any) -> dict[str, Any]:
        """The response to a chat-completions body (already parsed JSON)."""
        req = parse_chat_request(body, self.served_model_name)
        prompt = self.engine.prompt_ids(req.messages)
        n, ctx = len(prompt), self.engine.max_model_len
        if n >= ctx:
            raise RequestError(400, f"$.messages: the prompt is {n} tokens, the model's context is {ctx} (max_position_embeddings): "
                                    "nothing is left to generate", param="messages")
        room = ctx - n
        c = self.engine.generate(prompt, room if req.max_tokens is None else min(req.max_tokens, room),
                                 req.temperature, req.top_p, req.seed)
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": c.text},
                                  "finish_reason": c.finish_reason, "logprobs": None}
        if req.logprobs:
            choice["logprobs"] = {"content": [
                {"token": f"token_id:{i}" if req.return_tokens_as_token_ids else b.decode("utf-8", errors="replace"),
                 "logprob": lp, "bytes": list(b), "top_logprobs": []}
                for i, lp, b in zip(c.ids, c.logprobs, c.token_bytes)]}
        if req.return_token_ids:
            choice["token_ids"] = c.ids
        out: dict[str, Any] = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                               "model": self.served_model_name, "choices": [choice]}
        if req.return_token_ids:
            out["prompt_token_ids"] = c.prompt_ids
        out["usage"] = {"prompt_tokens": n, "completion_tokens": len(c.ids), "total_tokens": n + len(c.ids)}
        with self._stats_lock:
            self._stats["completions"] += 1
            self._stats["prompt_tokens"] += n
            self._stats["completion_tokens"] += len(c.ids)
        return out


# ------------------------------------------------------------------------------------------------------- run


class ParentWatchdog(threading.Thread):
    """Calls ``on_exit`` once when this process's parent is no longer ``parent_pid`` (the worker that started
    the server died and the server was re-parented); checks at once, then every ``interval`` seconds."""

    def __init__(self, parent_pid: int, on_exit: Callable[[], None], interval: float = 1.0) -> None:
        super().__init__(name="gymflow-serve-watchdog", daemon=True)
        self.parent_pid = parent_pid
        self.on_exit = on_exit
        self.interval = interval
        #: Whether the parent was found gone.
        self.fired = False
        self._halt = threading.Event()

    def run(self) -> None:
        while True:
            if os.getppid() != self.parent_pid:
                self.fired = True
                self.on_exit()
                return
            if self._halt.wait(self.interval):
                return

    def cancel(self) -> None:
        self._halt.set()


def create_server(cfg: ServeConfig) -> PolicyServer:
    """Loads the checkpoint and binds the socket (not serving yet)."""
    return PolicyServer(Engine.load(cfg.checkpoint, cfg.dtype), cfg.host, cfg.port, cfg.served_model_name)


def run(cfg: ServeConfig, events: EventWriter) -> dict[str, Any]:
    """The ``serve`` command: loads, binds, emits ``serving``, serves until SIGTERM / SIGINT (cli.py raises
    them in this thread as ``Terminated`` / ``KeyboardInterrupt``; one during the model's loading stops it too)
    or until the parent is gone; returns the ``done`` event's fields (``stopped_by``: ``SIGTERM``, ``SIGINT`` or
    ``parent_exit``, and the counters of :meth:`PolicyServer.stats`)."""
    server: Optional[PolicyServer] = None
    watchdog: Optional[ParentWatchdog] = None
    try:
        server = create_server(cfg)
        events.emit("serving", url=server.url, model=cfg.served_model_name, max_model_len=server.engine.max_model_len,
                     checkpoint=server.engine.model_dir)
        if cfg.parent_pid is not None:
            watchdog = ParentWatchdog(cfg.parent_pid, server.shutdown)
            watchdog.start()
        server.serve_forever()
        stopped_by = "parent_exit" if watchdog is not None and watchdog.fired else "shutdown"
    except Terminated:
        stopped_by = "SIGTERM"
    except KeyboardInterrupt:
        stopped_by = "SIGINT"
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if server is not None:
            server.close()
    if stopped_by == "parent_exit":
        sys.stderr.write(f"serve: parent process {cfg.parent_pid} is gone (parent is now {os.getppid()}): stopped\n")
    return {"stopped_by": stopped_by, **(server.stats() if server is not None else {})}
