"""Where an MCP server is: a command run over stdio, or a streamable HTTP URL."""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from ..errors import ConfigurationError

_INTERPRETERS = re.compile(r"(python[\d.]*|node|npx|bunx|uvx|uv|deno|pipx)(\.exe)?", re.IGNORECASE)


@dataclass(frozen=True)
class ServerSpec:
    """How to reach one MCP server: a command (stdio) or a URL (streamable HTTP)."""

    argv: tuple[str, ...] = ()
    """The command and its arguments (stdio servers)."""
    url: str | None = None
    """The endpoint (streamable HTTP servers)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables for the command."""
    cwd: str | None = None
    """Working directory for the command."""

    @classmethod
    def build(
        cls,
        command: str | Sequence[str] | None = None,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> ServerSpec:
        """Check and normalise what the user gave; ``python`` means this Python."""
        if (command is None) == (url is None):
            raise ConfigurationError(
                "give an MCP server either command= (e.g. 'python -m mcp_server_time') or url= "
                "(e.g. 'http://127.0.0.1:8000/mcp'), not both and not neither"
            )
        if url is not None:
            if (
                not isinstance(url, str)
                or urlsplit(url).scheme not in ("http", "https")
                or not urlsplit(url).netloc
            ):
                raise ConfigurationError(f"url must be an http:// or https:// address, got {url!r}")
            if env or cwd:
                raise ConfigurationError("env= and cwd= apply to a command (stdio server), not to a url")
            return cls(url=url)
        assert command is not None  # exactly one of command and url, checked above
        argv = _argv(command)
        if env is not None and not (
            isinstance(env, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        ):
            raise ConfigurationError(f"env must map names to strings, got {env!r}")
        return cls(argv=argv, env=tuple(sorted((env or {}).items())), cwd=None if cwd is None else str(cwd))

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` for a command, ``http`` for a URL."""
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """The URL, or the command line as a shell would show it."""
        return self.url or shlex.join(self.argv)

    def default_name(self) -> str:
        """A short name for labels: ``python -m mcp_server_time`` -> ``time``; a URL's host:port."""
        if self.url:
            return urlsplit(self.url).netloc
        argv = self.argv
        if "-m" in argv[:-1]:
            base = argv[argv.index("-m") + 1]
        else:
            base = argv[0]
            if _INTERPRETERS.fullmatch(Path(argv[0]).name) or argv[0] == sys.executable:
                rest = [a for a in argv[1:] if not a.startswith("-") and a not in ("run", "x", "tool")]
                base = rest[0] if rest else base
        base = re.sub(r"(?<=.)@[^/@]*$", "", base.rstrip("/")).rsplit("/", 1)[-1]
        base = re.sub(r"\.(py|js|mjs|ts)$", "", base)
        slug = re.sub(r"^(mcp[-_]?server[-_]|server[-_]|mcp[-_])", "", base, flags=re.IGNORECASE)
        slug = re.sub(r"([-_]mcp[-_]?server|[-_]mcp|[-_]server)$", "", slug, flags=re.IGNORECASE)
        return slug or base


def _argv(command: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigurationError(f"cannot split the command {command!r}: {exc}") from None
    elif isinstance(command, Sequence) and all(isinstance(a, str) for a in command):
        argv = list(command)
    else:
        raise ConfigurationError(f"command must be a string or a list of strings, got {command!r}")
    if not argv or not argv[0]:
        raise ConfigurationError("the MCP server command is empty; e.g. command='python -m mcp_server_time'")
    if argv[0] in ("python", "python3"):
        # The kernel's own interpreter, where the server package was installed; the PATH of a
        # kernel started from a virtualenv often leads to another Python.
        argv[0] = sys.executable
    return tuple(argv)
