"""Ray as a ``concurrent.futures.Executor`` for ``agent.evaluate(..., executor=RayExecutor())``.

Ray has no executor of its own; every ``ObjectRef.future()`` is a ``concurrent.futures.Future``,
so ``submit`` is one remote call. Cancelling such a future does not stop the task: ``shutdown``
cancels what is still running with ``ray.cancel``. Needs ``pip install "jupyter-agentnb[ray]"``.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError
from ..util.extras import install_line


class RayExecutor(concurrent.futures.Executor):
    """Runs each submitted call as a Ray task (``ray.init(**init)`` first if Ray is not running)."""

    def __init__(
        self, *, num_cpus: float = 1, init: dict[str, Any] | None = None, **remote_options: Any
    ) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigurationError(f"RayExecutor needs Ray: {install_line('ray')}") from None
        if not ray.is_initialized():
            ray.init(**(init or {}))
        self._ray = ray
        self._options = {"num_cpus": num_cpus, **remote_options}
        self._refs: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        if self._closed:
            raise RuntimeError("cannot submit to a RayExecutor after shutdown")
        ref = self._ray.remote(**self._options)(fn).remote(*args, **kwargs)
        with self._lock:
            self._refs.append(ref)
        return ref.future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        with self._lock:
            refs, self._refs = self._refs, []
        if cancel_futures:
            for ref in refs:
                self._ray.cancel(ref)
        elif wait and refs:
            self._ray.wait(refs, num_returns=len(refs))


__all__ = ["RayExecutor"]
