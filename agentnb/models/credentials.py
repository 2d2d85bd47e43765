"""The credentials a model is configured with, and their removal from all it records or shows.

A model knows its own secrets: the API key, authentication headers and query parameters in its
client and request options, and the user name and password in its base URL (with their HTTP
Basic form). ``Redactor`` replaces each of them by ``[redacted]`` in text, in JSON-like data and
in a stream of text deltas, so no payload, recorded answer or error text — not even one where a
server echoes a key back — carries a credential.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
MIN_LENGTH = 8
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""

_SECRET_NAME = re.compile(
    r"auth|key|token|secret|passw|credential|signature|^sig$|cookie|session", re.IGNORECASE
)


def is_secret_name(name: Any) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential."""
    return isinstance(name, str) and bool(_SECRET_NAME.search(name))


def header_secrets(headers: Any) -> list[str]:
    """Values of authentication headers (and the token of ``Bearer <token>``)."""
    if not isinstance(headers, Mapping):
        return []
    out: list[str] = []
    for name, value in headers.items():
        if is_secret_name(name) and isinstance(value, str):
            out.append(value)
            scheme, _, token = value.partition(" ")
            if token.strip() and scheme.isalpha():
                out.append(token.strip())
    return out


def query_secrets(query: Any) -> list[str]:
    """Values of query parameters that carry credentials (``key``, ``token``, ...)."""
    if isinstance(query, Mapping):
        pairs: Iterable[tuple[Any, Any]] = query.items()
    elif isinstance(query, str):
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    else:
        return []
    out: list[str] = []
    for name, value in pairs:
        if is_secret_name(name) and isinstance(value, (str, int)):
            out += [str(value), urllib.parse.quote(str(value), safe="")]
    return out


def url_secrets(url: Any) -> list[str]:
    """The password (and user) in a URL, their HTTP Basic form, and secret query values."""
    if not isinstance(url, str):
        return []
    parts = urllib.parse.urlsplit(url)
    out = query_secrets(parts.query)
    if parts.password is not None:
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password)
        out += [parts.password, password, base64.b64encode(f"{user}:{password}".encode()).decode()]
    return out


def redact_url(url: str) -> str:
    """``url`` with its user, password and secret query values replaced, for messages."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{k}={REDACTED if is_secret_name(k) else v}" for k, v in pairs)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class Redactor:
    """Replaces a set of secrets by ``[redacted]`` wherever they occur."""

    def __init__(self, secrets: Iterable[Any]) -> None:
        unique = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_LENGTH}
        # Longest first, so a token inside a longer header value does not split it.
        self.secrets = sorted(unique, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def found_in(self, text: str) -> bool:
        """Whether ``text`` holds any of the secrets."""
        return any(secret in text for secret in self.secrets)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted]``."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def data(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings) with secrets replaced, as a copy."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value

    def deltas(self) -> DeltaRedactor:
        """A redactor for text arriving in pieces (a secret may span several)."""
        return DeltaRedactor(self)


class DeltaRedactor:
    """Redacts streamed text, holding back only a tail that could be the start of a secret."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.held = ""

    def feed(self, delta: str) -> str:
        """The text that can be shown now."""
        if not self.redactor:
            return delta
        text = self.redactor.text(self.held + delta)
        hold = self._partial(text)
        self.held = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold]

    def flush(self) -> str:
        """What was held back, once the stream has ended."""
        rest, self.held = self.redactor.text(self.held), ""
        return rest

    def _partial(self, text: str) -> int:
        """Length of the longest end of ``text`` that begins some secret."""
        longest = 0
        for secret in self.redactor.secrets:
            for size in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:size]):
                    longest = size
                    break
        return longest
