"""Defence in depth: credentials from the environment never reach a session's files.

Every snapshot, log line and segment a session writes has the values of credential-like
environment variables (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``) replaced by
``[redacted]``, whatever put them in the state.
"""

from __future__ import annotations

import os
import re

from . import folding

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def env_secrets() -> list[str]:
    """Values of credential-like environment variables, which must never reach a file."""
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]


def redact(text: str) -> str:
    """``text`` with any credential from the environment replaced by ``[redacted]``."""
    return folding.redact(text, env_secrets())


__all__ = ["env_secrets", "redact"]
