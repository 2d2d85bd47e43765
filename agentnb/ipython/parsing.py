"""Reading magic options: one-line UsageErrors that name the magic and what to fix."""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring


def parse_options(func: Callable[..., Any], line: str, magic: str) -> Any:
    """parse_argstring with a one-line error that names the magic and where its help is."""
    try:
        args = parse_argstring(func, line)
    except UsageError as exc:
        hint = closest_option(func, line, str(exc))
        raise UsageError(f"{magic}: {exc}{hint}. See {magic}? for the options.") from None
    except ValueError as exc:  # shlex: unbalanced quotes
        raise UsageError(f"{magic}: cannot read the options ({exc}); close every quote") from None
    # IPython splits magic lines in non-POSIX mode, which keeps the quotes around a value.
    for key, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, key, unquote(value))
        elif isinstance(value, list):
            setattr(args, key, [unquote(v) if isinstance(v, str) else v for v in value])
    return args


def closest_option(func: Callable[..., Any], line: str, error: str = "") -> str:
    """``" (did you mean --model?)"`` for the first ``--word`` in ``line`` that is not an option
    of ``func``'s parser but is close to one (or, for an invalid choice named in ``error``, the
    closest choice); else ``""``."""
    parser = getattr(func, "parser", None)
    if parser is None:
        return ""
    choice = re.search(r"invalid choice: '([^']*)'", error)
    if choice:
        choices = [str(c) for action in parser._actions for c in (action.choices or ())]
        match = _closest(choice.group(1), choices)
        return f" (did you mean {match}?)" if match else ""
    known = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    for word in line.split():
        given = word.partition("=")[0]
        if not given.startswith("--") or given in known or any(o.startswith(given) for o in known):
            continue
        # Compared without the dashes, which every option shares.
        match = _closest(given[2:], [o[2:] for o in known])
        if match:
            return f" (did you mean --{match}?)"
    return ""


def _closest(given: str, candidates: list[str]) -> str | None:
    """The candidate closest to ``given``; among close ones, one with the same letters first
    (two letters swapped is the commonest slip: ``--modle`` is ``--model``, not ``--mode``)."""
    matches = difflib.get_close_matches(given, candidates, n=3, cutoff=0.7)
    swapped = [m for m in matches if sorted(m) == sorted(given)]
    found = swapped or matches
    return found[0] if found else None


def unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def identifier(name: str, magic: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"{magic}: {name!r} is not a valid Python name; use letters, digits and underscores")
    return name


def names(text: str, option: str, magic: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(
            f"{magic}: {option} {text!r} has an empty name; write comma-separated names like a,b"
        )
    return names


def pairs(
    items: list[str] | None, option: str, magic: str, example: str, allow_empty: bool
) -> list[tuple[str, str]]:
    out = []
    for item in items or ():
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not key or (not value and not allow_empty) or (not sep and not allow_empty):
            raise UsageError(f"{magic}: {option} {item!r} must look like {example}")
        out.append((key, value))
    return out


__all__ = ["closest_option", "identifier", "names", "pairs", "parse_options", "unquote"]
