"""serve: the OpenAI-compatible server over a real tiny checkpoint — prompt ids = the ChatML rendering's, log-probs
= a full forward pass's, greedy = argmax decoding, seeds reproduce, errors in OpenAI's shape naming the JSON path
(the server keeps serving), the CLI's events and SIGTERM, the parent watchdog, the configuration."""

import http.client
import io
import json
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
import torch

from conftest import TINY, Capture
from gymflow_trainer import serve
from gymflow_trainer.chat import render
from gymflow_trainer.config import ServeConfig, TinyModelConfig, load_config
from gymflow_trainer.errors import ConfigError
from gymflow_trainer.events import EventWriter
from gymflow_trainer.serve import Engine, PolicyServer
from gymflow_trainer.tiny import save_tiny

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: A short context, so that a prompt over it is cheap to build.
CONTEXT = 256
MESSAGES = [
    {"role": "system", "content": "You are an agent. Tools: echo, submit."},
    {"role": "user", "content": "Echo the word hi."},
    {"role": "assistant", "content": 'I will call echo.\n\n<tool_call>\n{"name":"echo","arguments":{"text":"hi"}}\n</tool_call>'},
    {"role": "tool", "content": "hi", "tool_call_id": "call_0", "name": "echo"},
]


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    return save_tiny(str(tmp_path_factory.mktemp("serve") / "tiny"), TinyModelConfig(**TINY, max_position_embeddings=CONTEXT))


@pytest.fixture(scope="session")
def reference(model_dir):
    """The checkpoint loaded independently of the server (eager attention), for the reference computations."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager").eval()
    return model, AutoTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="module")
def server(model_dir):
    s = PolicyServer(Engine.load(model_dir, "float32"), port=0, served_model_name="policy", log=io.StringIO()).start()
    yield s
    s.stop()


def call(server, method, path, body=None, raw=None):
    """``(status, JSON body)`` of one request (an HTTP error status is returned, not raised)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def complete(server, **body):
    status, out = call(server, "POST", "/v1/chat/completions", {"model": "policy", "messages": MESSAGES, **body})
    assert status == 200, out
    return out


def full_logps(model, ids):
    """log-softmax of a no-cache forward over ``ids``: row t is the distribution of id t+1."""
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


# ------------------------------------------------------------------------------------------------- endpoints


def test_health_and_models(server):
    assert call(server, "GET", "/health") == (200, {"status": "ok"})
    status, out = call(server, "GET", "/v1/models")
    assert status == 200 and out["object"] == "list" and len(out["data"]) == 1
    card = out["data"][0]
    assert card["id"] == "policy" and card["object"] == "model" and card["owned_by"] == "gymflow"
    assert card["max_model_len"] == CONTEXT and isinstance(card["created"], int) and card["created"] <= time.time()
    assert call(server, "GET", "/v1/models/policy") == (200, card)
    assert server.url == f"http://127.0.0.1:{server.port}/v1"


def test_prompt_ids_are_the_chatml_rendering(server, reference):
    _, tok = reference
    out = complete(server, max_tokens=2, return_token_ids=True)
    text, _ = render([{"role": m["role"], "content": m["content"]} for m in MESSAGES], add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n")
    want = tok.encode(text, add_special_tokens=False)
    assert out["prompt_token_ids"] == want and out["usage"]["prompt_tokens"] == len(want)
    # Text parts are concatenated into the same prompt.
    parts = [*MESSAGES[:1], {"role": "user", "content": [{"type": "text", "text": "Echo the "}, {"type": "text", "text": "word hi."}]}, *MESSAGES[2:]]
    _, out2 = call(server, "POST", "/v1/chat/completions", {"model": "policy", "messages": parts, "max_tokens": 1, "return_token_ids": True})
    assert out2["prompt_token_ids"] == want
    # Without return_token_ids the extension fields are absent, and logprobs is null unless asked for.
    plain = complete(server, max_tokens=1)
    assert "prompt_token_ids" not in plain and "token_ids" not in plain["choices"][0] and plain["choices"][0]["logprobs"] is None


def test_a_model_trained_without_the_system_prompt_gets_none(tmp_path, reference):
    _, tok = reference
    drop = save_tiny(str(tmp_path / "drop"), TinyModelConfig(**TINY, max_position_embeddings=CONTEXT, system_prompt="drop"))
    engine = Engine.load(drop, "float32")
    assert engine.system_prompt == "drop"
    text, _ = render([{"role": m["role"], "content": m["content"]} for m in MESSAGES[1:]], add_generation_prompt=True)
    assert engine.prompt_ids([{"role": m["role"], "content": m["content"]} for m in MESSAGES]) == tok.encode(text, add_special_tokens=False)


def test_logprobs_are_the_raw_log_softmax_of_a_full_forward(server, reference):
    model, tok = reference
    out = complete(server, max_tokens=12, temperature=1.3, top_p=0.9, seed=7, logprobs=True, return_token_ids=True)
    choice = out["choices"][0]
    ids, lps = choice["token_ids"], choice["logprobs"]["content"]
    assert 1 <= len(ids) == len(lps) == out["usage"]["completion_tokens"] <= 12
    assert out["usage"]["total_tokens"] == out["usage"]["prompt_tokens"] + len(ids)
    prompt = out["prompt_token_ids"]
    logp = full_logps(model, prompt + ids)
    for k, (i, entry) in enumerate(zip(ids, lps)):
        want = float(logp[len(prompt) + k - 1, i])  # temperature 1, no top-p: what the RL trainer recomputes
        assert math.isfinite(entry["logprob"]) and abs(entry["logprob"] - want) < 1e-4, (k, entry["logprob"], want)
        assert entry["top_logprobs"] == [] and entry["token"] == bytes(entry["bytes"]).decode("utf-8", "replace")
    eos = {2}  # <|im_end|>
    stopped = ids[-1] in eos
    assert choice["finish_reason"] == ("stop" if stopped else "length") and (stopped or len(ids) == 12)
    body = ids[:-1] if stopped else ids
    content = tok.decode(body, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    assert choice["message"] == {"role": "assistant", "content": content}
    assert b"".join(bytes(e["bytes"]) for e in lps[: len(body)]).decode("utf-8", "replace") == content


def test_greedy_is_argmax_decoding(server, reference):
    model, tok = reference
    out = complete(server, max_tokens=10, temperature=0, return_token_ids=True)
    seq, want = list(out["prompt_token_ids"]), []
    for _ in range(10):
        nxt = int(torch.argmax(full_logps(model, seq)[-1, : len(tok)]))
        want.append(nxt)
        seq.append(nxt)
        if nxt == 2:
            break
    assert out["choices"][0]["token_ids"] == want
    # A nucleus so small it holds one token is greedy too, at any temperature.
    assert complete(server, max_tokens=10, temperature=1.0, top_p=1e-9, seed=3, return_token_ids=True)["choices"][0]["token_ids"] == want


def test_seeds_reproduce_and_differ(server):
    def ids(seed):
        return complete(server, max_tokens=12, seed=seed, return_token_ids=True)["choices"][0]["token_ids"]

    a, b, c = ids(11), ids(11), ids(12)
    assert a == b
    assert a != c  # a random tiny model at temperature 1 is close to uniform over 259 ids


def test_max_tokens_one(server):
    out = complete(server, max_tokens=1, seed=5, return_token_ids=True, logprobs=True)
    choice = out["choices"][0]
    assert len(choice["token_ids"]) == 1 == len(choice["logprobs"]["content"]) == out["usage"]["completion_tokens"]
    assert choice["finish_reason"] == ("stop" if choice["token_ids"][0] == 2 else "length")
    # max_completion_tokens is the same limit; a limit past the context is capped to the rest of it.
    assert len(complete(server, max_completion_tokens=1, return_token_ids=True)["choices"][0]["token_ids"]) == 1
    big = complete(server, max_tokens=10**6, temperature=0, return_token_ids=True)
    assert big["usage"]["total_tokens"] <= CONTEXT


def test_return_tokens_as_token_ids(server):
    out = complete(server, max_tokens=4, seed=1, logprobs=True, return_token_ids=True, return_tokens_as_token_ids=True)
    choice = out["choices"][0]
    assert [e["token"] for e in choice["logprobs"]["content"]] == [f"token_id:{i}" for i in choice["token_ids"]]


# ---------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("body, status, type_, param, message", [
    ({"model": "other"}, 404, "not_found_error", "model", r"\$\.model: the model 'other' does not exist; this server serves 'policy'"),
    ({"stream": True}, 400, "invalid_request_error", "stream", r"\$\.stream: streaming is not supported"),
    ({"tools": [{"type": "function", "function": {"name": "echo"}}]}, 400, "invalid_request_error", "tools",
     r"\$\.tools: not supported .*the tools go in the system prompt"),
    ({"stop": ["\n"]}, 400, "invalid_request_error", "stop", r"\$\.stop: not supported"),
    ({"n": 2}, 400, "invalid_request_error", "n", r"\$\.n: only 1"),
    ({"top_logprobs": 5}, 400, "invalid_request_error", "top_logprobs", r"\$\.top_logprobs: only 0"),
    ({"frequency_penalty": 0.5}, 400, "invalid_request_error", "frequency_penalty", r"\$\.frequency_penalty: not supported"),
    ({"messages": [*MESSAGES[:2], {"role": "bot", "content": "x"}]}, 400, "invalid_request_error", "messages[2].role",
     r"^\$\.messages\[2\]\.role: expected one of system, user, assistant, tool, got 'bot'$"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]}]}, 400,
     "invalid_request_error", "messages[0].tool_calls", r"native tool calls are not supported; use text mode"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, 400, "invalid_request_error",
     "messages[0].content[0].type", r"\$\.messages\[0\]\.content\[0\]\.type: expected 'text'"),
    ({"messages": []}, 400, "invalid_request_error", "messages", r"\$\.messages: expected a non-empty array"),
    ({"max_tokens": 0}, 400, "invalid_request_error", "max_tokens", r"\$\.max_tokens: expected an integer >= 1, got 0"),
    ({"temperature": -1}, 400, "invalid_request_error", "temperature", r"\$\.temperature: expected a number >= 0"),
    ({"top_p": 0}, 400, "invalid_request_error", "top_p", r"\$\.top_p: expected a number in \(0, 1\]"),
    ({"seed": "1"}, 400, "invalid_request_error", "seed", r"\$\.seed: expected an integer"),
    ({"messages": [{"role": "user", "content": "x" * CONTEXT}]}, 400, "invalid_request_error", "messages",
     # 256 bytes and the ChatML frame around them (19 tokens: <|im_start|>, "user\\n", <|im_end|>, "\\n", ...)
     rf"\$\.messages: the prompt is {CONTEXT + 19} tokens, the model's context is {CONTEXT}"),
])
def test_bad_requests_name_the_field(server, body, status, type_, param, message):
    import re

    got_status, out = call(server, "POST", "/v1/chat/completions", {"model": "policy", "messages": MESSAGES, **body})
    assert got_status == status, out
    err = out["error"]
    assert err["type"] == type_ and err["param"] == param and err["code"] is None and re.search(message, err["message"]), err


def test_malformed_json_unknown_path_and_keep_alive(server):
    status, out = call(server, "POST", "/v1/chat/completions", raw=b'{"model": "policy", "messages": [')
    assert status == 400 and out["error"]["message"].startswith("$: the body is not valid JSON")
    assert call(server, "GET", "/v1/nothing")[0] == 404
    assert call(server, "GET", "/v1/chat/completions")[0] == 405
    # One kept-alive connection: a refused request (its body read and dropped) leaves the next one intact.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        for body, want in ((b"not json", 400), (b'{"model":"policy","messages":[{"role":"user","content":"hi"}],"max_tokens":1}', 200),
                           (b"{}", 400), (b'{"model":"policy","messages":[{"role":"user","content":"hi"}],"max_tokens":2}', 200)):
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            assert r.status == want and json.loads(r.read())
    finally:
        conn.close()


def test_internal_error_is_500_and_the_server_keeps_serving(server, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("CUDA out of memory (simulated)")

    with monkeypatch.context() as m:
        m.setattr(server.engine, "generate", boom)
        status, out = call(server, "POST", "/v1/chat/completions", {"model": "policy", "messages": MESSAGES})
    assert status == 500 and out["error"] == {"message": "RuntimeError: CUDA out of memory (simulated)", "type": "server_error",
                                              "param": None, "code": None}
    assert complete(server, max_tokens=1)["choices"][0]["message"]["role"] == "assistant"
    assert call(server, "GET", "/health") == (200, {"status": "ok"})
    stats = server.stats()
    assert stats["errors"] >= 1 and stats["completions"] >= 1 and stats["requests"] > stats["completions"]


# --------------------------------------------------------------------------------------------- the mechanics


def test_sample_token_follows_the_typescript_sampler():
    g = torch.Generator().manual_seed(0)
    assert serve.sample_token(torch.tensor([1.0, 3.0, 3.0, 0.0]), 0, 1, g) == 1  # greedy: the lowest id on ties
    logits = torch.log(torch.tensor([0.5, 0.3, 0.2]))
    nucleus = {serve.sample_token(logits, 1.0, 0.6, g) for _ in range(200)}
    assert nucleus == {0, 1}  # 0.5 < 0.6 <= 0.5 + 0.3
    full = [serve.sample_token(logits, 1.0, 1.0, g) for _ in range(3000)]
    assert [round(full.count(i) / 3000, 1) for i in range(3)] == [0.5, 0.3, 0.2]
    with pytest.raises(RuntimeError, match="non-finite"):
        serve.sample_token(torch.tensor([0.0, float("nan")]), 1.0, 1.0, g)


def test_token_bytes_of_a_byte_level_bpe(bpe_tokenizer, server):
    engine = Engine(server.engine.model, bpe_tokenizer)
    text = "héllo wörld ✓ <|im_end|>"
    ids = bpe_tokenizer.encode(text, add_special_tokens=False)
    assert b"".join(engine._token_bytes(i) for i in ids) == text.encode("utf-8")


# ---------------------------------------------------------------------------------------------- configuration


def test_config_validation(tmp_path, model_dir):
    def cfg(**doc):
        p = tmp_path / "serve.json"
        p.write_text(json.dumps(doc))
        return load_config("serve", str(p))

    c = cfg(checkpoint=model_dir)
    assert isinstance(c, ServeConfig) and (c.host, c.port, c.served_model_name, c.dtype, c.parent_pid) == ("127.0.0.1", 8000, "policy", "auto", None)
    for doc, message in [
        ({}, r"serve\.json: \$\.checkpoint is required"),
        ({"checkpoint": str(tmp_path / "nope")}, r"\$\.checkpoint: .* is not a directory"),
        ({"checkpoint": model_dir, "port": 70000}, r"\$\.port must be in \[0, 65535\]"),
        ({"checkpoint": model_dir, "port": "80"}, r"\$\.port must be an integer"),
        ({"checkpoint": model_dir, "served_model_name": " "}, r"\$\.served_model_name must not be empty"),
        ({"checkpoint": model_dir, "dtype": "float16"}, r"\$\.dtype must be one of"),
        ({"checkpoint": model_dir, "parent_pid": 0}, r"\$\.parent_pid must be a process id > 0"),
        ({"checkpoint": model_dir, "max_tokens": 5}, r"unknown key 'max_tokens' at \$"),
    ]:
        with pytest.raises(ConfigError, match=message):
            cfg(**doc)


# --------------------------------------------------------------------------------------------- CLI and watchdog


class Launched:
    """A process whose stdout is read line by line in a thread (so a test can wait with a timeout)."""

    def __init__(self, root, argv):
        root.mkdir()
        self.stderr_path = root / "stderr.txt"
        self._err = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._err, text=True, cwd=root,
                                     env=dict(os.environ, PYTHONPATH=TRAINER_DIR, OMP_NUM_THREADS="1"))
        self.q = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.q.put(line)
        self.q.put(None)

    def stderr(self):
        self._err.flush()
        return self.stderr_path.read_text()

    def next(self, timeout=60):
        line = self.q.get(timeout=timeout)
        return None if line is None else json.loads(line)

    def rest(self, timeout=30):
        """The events until EOF (every writer of the pipe gone)."""
        out = []
        while (e := self.next(timeout)) is not None:
            out.append(e)
        return out

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self._err.close()


def write_serve_cfg(root, model_dir, **extra):
    p = root / "serve.json"
    p.write_text(json.dumps({"checkpoint": model_dir, "port": 0, "served_model_name": "ckpt-7", **extra}))
    return str(p)


#: A stand-in for the rollout worker: starts the server with itself as parent_pid, then waits (the test SIGKILLs it).
WORKER = """
import json, os, subprocess, sys
cfg = json.load(open(sys.argv[1]))
cfg["parent_pid"] = os.getpid()
json.dump(cfg, open(sys.argv[1], "w"))
subprocess.Popen([sys.executable, "-m", "gymflow_trainer", "serve", "--config", sys.argv[1]]).wait()
"""


@pytest.fixture(scope="module")
def launched(tmp_path_factory, model_dir):
    """The two out-of-process servers, started together: each spends seconds importing torch."""
    root = tmp_path_factory.mktemp("cli")
    (root / "cli").mkdir()
    (root / "worker").mkdir()
    procs = {
        "cli": Launched(root / "cli" / "run", [sys.executable, "-m", "gymflow_trainer", "serve", "--config",
                                               write_serve_cfg(root / "cli", model_dir)]),
        "worker": Launched(root / "worker" / "run", [sys.executable, "-c", WORKER, write_serve_cfg(root / "worker", model_dir)]),
    }
    yield procs
    for p in procs.values():
        p.kill()


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def test_cli_serves_until_sigterm_then_exits_0(launched, model_dir):
    p = launched["cli"]
    ev = p.next()
    assert ev is not None, p.stderr()
    assert ev["event"] == "serving" and ev["model"] == "ckpt-7" and ev["max_model_len"] == CONTEXT
    assert ev["checkpoint"] == os.path.abspath(model_dir) and ev["url"].startswith("http://127.0.0.1:") and ev["url"].endswith("/v1")
    assert [m["id"] for m in get_json(ev["url"] + "/models")["data"]] == ["ckpt-7"]
    p.proc.send_signal(signal.SIGTERM)
    rest = p.rest()
    assert p.proc.wait(timeout=30) == 0, p.stderr()
    assert [e["event"] for e in rest] == ["done"]
    done = rest[0]
    assert done["command"] == "serve" and done["stopped_by"] == "SIGTERM" and done["requests"] == 1 and done["errors"] == 0
    assert "GET /v1/models 200" in p.stderr()  # the request log goes to stderr, never among the events
    with pytest.raises(urllib.error.URLError):
        get_json(ev["url"] + "/models")


def test_watchdog_stops_the_server_when_its_parent_dies(launched):
    p = launched["worker"]
    ev = p.next()  # the server inherits the worker's stdout
    assert ev is not None and ev["event"] == "serving", p.stderr()
    assert get_json(ev["url"].removesuffix("/v1") + "/health") == {"status": "ok"}
    p.proc.kill()  # SIGKILL: the worker cannot stop its child; the server is re-parented
    p.proc.wait(timeout=10)
    rest = p.rest(timeout=20)  # EOF: the server exited (it held the last copy of the pipe)
    assert [e["event"] for e in rest] == ["done"] and rest[0]["stopped_by"] == "parent_exit", p.stderr()
    assert "parent process" in p.stderr()
    with pytest.raises(urllib.error.URLError):
        get_json(ev["url"].removesuffix("/v1") + "/health")


def test_run_with_a_parent_pid_that_is_not_the_parent_stops_at_once(model_dir):
    cap = Capture()
    cfg = ServeConfig(checkpoint=model_dir, port=0, served_model_name="x", parent_pid=os.getppid() + 1_000_000)
    t0 = time.time()
    result = serve.run(cfg, EventWriter(cap))
    assert result["stopped_by"] == "parent_exit" and result["requests"] == 0 and time.time() - t0 < 30
    assert [e["event"] for e in cap.lines] == ["serving"] and cap.lines[0]["model"] == "x"
