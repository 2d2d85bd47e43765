"""System-prompt assembly with per-section provenance, following Agno's ``get_system_message``.

Order (Agno's): description, role, instructions, additional information (markdown hint,
datetime, name), tool instructions — these are template-resolved — then expected output,
additional context and, last, the ``<session_state>`` block. The result is stripped once at
the end. A ``system_message`` overrides all of it (template-resolved, not stripped, no state
block), as in Agno.

Templates: ``{name}`` is replaced only when ``name`` is a known key (session state first, then
dependencies). Unknown placeholders, ``$words``, ``{{doubled}}`` braces and JSON braces are left
exactly as written — unlike Agno's ``string.Template`` round trip, which mangles ``$`` signs.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..errors import ConfigurationError
from ..events import Placeholder, PromptSection
from ..util.fastinit import fast_init

PLACEHOLDER = _PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")

MARKDOWN_HINT = "Use markdown to format your answers."


@dataclass
class PromptOptions:
    """How the system prompt is assembled: Agno's options, in one object (``agent.prompt``)."""

    system_message: str | Callable[..., Any] | None = None
    """Overrides everything below when set (a string, or a function returning one)."""
    description: str | None = None
    """First section: what the agent is."""
    role: str | None = None
    """A ``<your_role>`` section."""
    instructions: str | list[str] | Callable[..., Any] | None = None
    """A string, a list (bulleted) or a function returning either."""
    markdown: bool = False
    """Ask for markdown answers."""
    add_name_to_context: bool = False
    """Tell the model its name."""
    add_datetime_to_context: bool = False
    """Tell the model the current time."""
    datetime_format: str | None = None
    """strftime format for that time (default: Python's ``str(datetime)``)."""
    expected_output: str | None = None
    """An ``<expected_output>`` section."""
    additional_context: str | None = None
    """Free text appended near the end."""
    use_instruction_tags: bool = False
    """Wrap instructions in ``<instructions>`` tags."""
    add_session_state_to_context: bool = False
    """Append the ``<session_state>`` block."""
    session_state_format: str = "repr"
    """repr: Python ``str(dict)`` as Agno writes it; json: indented JSON."""
    resolve_in_context: bool = True
    """Fill ``{name}`` placeholders from the state and dependencies."""
    hide_state_keys: tuple[str, ...] = ()
    """State keys kept out of the prompt, by name or glob pattern (``secret_*``): they are in no
    ``<session_state>`` block and fill no ``{placeholder}``; tools and hooks still see them."""

    def __post_init__(self) -> None:
        for option in fields(self):
            if option.type == "bool":
                setattr(self, option.name, bool(getattr(self, option.name)))
        if self.session_state_format not in ("repr", "json"):
            raise ConfigurationError(
                f"session_state_format must be 'repr' (Agno's str(dict)) or 'json'; got {self.session_state_format!r}"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        # Checked whenever it is set (agent.hide_state_keys = [...] too), not only at creation.
        super().__setattr__(name, key_patterns(value) if name == "hide_state_keys" else value)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (each is also an ``Agent`` keyword and attribute)."""
        return tuple(f.name for f in fields(cls))

    def hidden_keys(self, data: Mapping[str, Any]) -> tuple[str, ...]:
        """The keys of ``data`` that ``hide_state_keys`` keeps out of the prompt, in state order."""
        patterns = self.hide_state_keys
        if not patterns:
            return ()
        return tuple(k for k in data if any(fnmatch.fnmatchcase(str(k), p) for p in patterns))


def key_patterns(value: Any) -> tuple[str, ...]:
    """``hide_state_keys`` as a tuple of names or glob patterns; a clear error for anything else."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    try:
        patterns = tuple(value)
    except TypeError:
        raise ConfigurationError(
            f"hide_state_keys must be a list of state key names or glob patterns, got {type(value).__name__}: {value!r}"
        ) from None
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigurationError(
                f"hide_state_keys holds {pattern!r}; each entry is a state key name or a glob pattern such "
                "as 'secret_*'"
            )
    return tuple(p.strip() for p in patterns)


@fast_init(read_often=True)
@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered system prompt and how it was assembled."""

    text: str
    """The final system prompt."""
    sections: tuple[PromptSection, ...]
    """Its parts in order, each labelled with the option that produced it."""
    notes: tuple[str, ...] = ()
    """Options that were set but had no effect, and why."""
    hidden_keys: tuple[str, ...] = ()
    """State keys kept out of the prompt (``hide_state_keys``)."""
    unused_keys: tuple[str, ...] = ()
    """State keys no placeholder and no ``<session_state>`` block used."""

    @property
    def placeholders(self) -> list[Placeholder]:
        return [p for s in self.sections for p in s.placeholders]

    @property
    def unresolved(self) -> list[str]:
        """Names of placeholders that stayed as written."""
        return [p.name for p in self.placeholders if not p.resolved]

    @property
    def template_map(self) -> TemplateMap:
        """Which key filled each placeholder, which stayed as written, and the unused state keys."""
        return TemplateMap.of(self)


@fast_init
@dataclass(frozen=True)
class TemplateMap:
    """The whole template map of a prompt: which state key or dependency filled each
    ``{placeholder}``, which stayed as written, which state keys no placeholder or block used,
    and which were hidden from the model."""

    filled: tuple[tuple[str, str], ...]
    """(placeholder, where its value came from: session_state / dependencies), in prompt order."""
    unresolved: tuple[str, ...]
    """Placeholders left as written (no key of that name, or a hidden one)."""
    unused_keys: tuple[str, ...]
    """State keys the model saw nowhere."""
    hidden_keys: tuple[str, ...]
    """State keys kept out of the prompt (``hide_state_keys``)."""

    @classmethod
    def of(cls, prompt: Any) -> TemplateMap:
        """The map of anything with ``sections``, ``hidden_keys`` and ``unused_keys``: a
        RenderedPrompt, an ``agent.observe(...)`` result or a turn's ``PromptRendered``."""
        holders = [p for s in prompt.sections for p in s.placeholders]
        filled = {p.name: p.source or "" for p in holders if p.resolved}
        unresolved = dict.fromkeys(p.name for p in holders if not p.resolved)
        return cls(
            tuple(filled.items()), tuple(unresolved), tuple(prompt.unused_keys), tuple(prompt.hidden_keys)
        )

    def lines(self) -> list[str]:
        """The map as lines of text (empty parts left out)."""
        out = [f"{{{name}}} ← {source}.{name}" for name, source in self.filled]
        out += [f"{{{name}}} unresolved (left as written)" for name in self.unresolved]
        if self.unused_keys:
            out.append("state keys used by no placeholder or block: " + ", ".join(self.unused_keys))
        if self.hidden_keys:
            out.append("state keys hidden from the model: " + ", ".join(self.hidden_keys))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines()) or "no placeholders; every state key is in the prompt"


@fast_init
@dataclass(frozen=True)
class _Piece:
    source: str
    text: str
    resolve: bool


def resolve_template(
    text: str, variables: Sequence[tuple[str, Mapping[str, Any]]]
) -> tuple[str, list[Placeholder]]:
    """Replace known ``{name}`` placeholders; returns the text and every placeholder found
    (offsets relative to the returned text)."""
    out: list[str] = []
    found: list[Placeholder] = []
    pos = 0
    length = 0
    for match in _PLACEHOLDER.finditer(text):
        name = match.group(1)
        before = text[pos : match.start()]
        out.append(before)
        length += len(before)
        source, value = _lookup(name, variables)
        replacement = match.group(0) if source is None else str(value)
        found.append(
            Placeholder(
                name=name,
                resolved=source is not None,
                source=source,
                value=None if source is None else replacement,
                start=length,
                end=length + len(replacement),
            )
        )
        out.append(replacement)
        length += len(replacement)
        pos = match.end()
    out.append(text[pos:])
    return "".join(out), found


def _lookup(name: str, variables: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[str | None, Any]:
    for source, mapping in variables:
        if name in mapping:
            return source, mapping[name]
    return None, None


def render_instructions(items: Sequence[str]) -> str:
    """Instructions as Agno writes them: one as it is; several as ``- item`` lines (stripped),
    except that a multi-line item is kept as a block and then every item stands in its own
    paragraph (a block's own lines cannot sit inside a bullet)."""
    if len(items) == 1:
        return items[0]
    blocks = ["\n" in item.strip() for item in items]
    parts = [item if block else f"- {item.strip()}" for item, block in zip(items, blocks)]
    return "\n\n".join(parts) if any(blocks) else "\n".join(parts)


def render_system_prompt(
    options: PromptOptions,
    *,
    system_message: str | None = None,
    instructions: Sequence[str] = (),
    name: str | None = None,
    datetime_text: str | None = None,
    tool_instructions: Sequence[str] = (),
    session_state_text: str | None = None,
    variables: Sequence[tuple[str, Mapping[str, Any]]] = (),
    leading: Sequence[tuple[str, str]] = (),
    trailing: Sequence[tuple[str, str]] = (),
) -> RenderedPrompt:
    """Assemble the system prompt (see the module docstring). ``options`` says what goes in;
    the keywords carry what was resolved for this run: the system message and instructions
    (functions already called), the time, the tools' instructions and the state's text;
    ``leading`` are (source, text) sections that open the prompt (a team's ``<team_members>``)."""
    description, role, markdown = options.description, options.role, options.markdown
    expected_output, additional_context = options.expected_output, options.additional_context
    add_session_state_to_context = options.add_session_state_to_context
    resolve_in_context = options.resolve_in_context
    if system_message is not None:
        notes = []
        if add_session_state_to_context:
            notes.append("add_session_state_to_context: no <session_state> block, system_message overrides")
        for option, value in (("instructions", instructions), ("description", description)):
            if value:
                notes.append(f"{option}: not used, system_message overrides")
        only = [_Piece("system_message", system_message, resolve_in_context)]
        only += [_Piece(source, text, False) for source, text in trailing]
        return _assemble(only, variables, strip=False, notes=tuple(notes))

    pieces: list[_Piece] = [_Piece(source, text, False) for source, text in leading]
    if description is not None:
        pieces.append(_Piece("description", f"{description}\n", True))
    if role is not None:
        pieces.append(_Piece("role", f"\n<your_role>\n{role}\n</your_role>\n\n", True))
    items = [i for i in instructions if i is not None]
    if items:
        body = render_instructions(items)
        if options.use_instruction_tags:
            body = f"<instructions>\n{body}\n</instructions>"
        pieces.append(_Piece("instructions", body + "\n\n", True))
    extra: list[tuple[str, str]] = []
    if markdown:
        extra.append(("markdown", MARKDOWN_HINT))
    if datetime_text is not None:
        extra.append(("add_datetime_to_context", f"The current time is {datetime_text}."))
    if name is not None and options.add_name_to_context:
        extra.append(("add_name_to_context", f"Your name is: {name}."))
    for i, (source, text) in enumerate(extra):
        head = "<additional_information>" if i == 0 else ""
        tail = "\n</additional_information>\n\n" if i == len(extra) - 1 else ""
        pieces.append(_Piece(source, f"{head}\n- {text}{tail}", True))
    for text in tool_instructions:
        pieces.append(_Piece("tool_instructions", f"{text}\n", True))
    if expected_output is not None:
        pieces.append(
            _Piece(
                "expected_output",
                f"<expected_output>\n{expected_output.strip()}\n</expected_output>\n\n",
                False,
            )
        )
    if additional_context is not None:
        pieces.append(_Piece("additional_context", f"{additional_context}\n", False))
    if add_session_state_to_context and session_state_text is not None:
        pieces.append(
            _Piece("session_state", f"\n<session_state>\n{session_state_text}\n</session_state>\n\n", False)
        )
    pieces += [_Piece(source, text, False) for source, text in trailing]
    return _assemble(pieces, variables if resolve_in_context else (), strip=True, notes=())


def _assemble(
    pieces: list[_Piece],
    variables: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    strip: bool,
    notes: tuple[str, ...],
) -> RenderedPrompt:
    texts: list[str] = []
    found: list[list[Placeholder]] = []
    for piece in pieces:
        if piece.resolve and variables:
            text, placeholders = resolve_template(piece.text, variables)
        elif piece.resolve:
            text, placeholders = resolve_template(piece.text, ())
        else:
            text, placeholders = piece.text, []
        texts.append(text)
        found.append(placeholders)
    raw = "".join(texts)
    final = raw.strip() if strip else raw
    shift = len(raw) - len(raw.lstrip()) if strip else 0
    sections: list[PromptSection] = []
    offset = 0
    for piece, text, placeholders in zip(pieces, texts, found):
        start = max(0, min(len(final), offset - shift))
        end = max(0, min(len(final), offset + len(text) - shift))
        if end > start:
            sections.append(
                PromptSection(
                    source=piece.source,
                    text=final[start:end],
                    start=start,
                    end=end,
                    placeholders=tuple(
                        Placeholder(
                            name=p.name,
                            resolved=p.resolved,
                            source=p.source,
                            value=p.value,
                            start=offset - shift + p.start,
                            end=offset - shift + p.end,
                        )
                        for p in placeholders
                    ),
                )
            )
        offset += len(text)
    return RenderedPrompt(text=final, sections=tuple(sections), notes=notes)


class PromptOption:
    """``agent.<name>`` reads and writes ``agent.prompt.<name>`` (Agno's attribute names)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, agent: Any, owner: type | None = None) -> Any:
        return self if agent is None else getattr(agent.prompt, self.name)

    def __set__(self, agent: Any, value: Any) -> None:
        setattr(agent.prompt, self.name, value)


__all__ = [
    "PromptOption",
    "PromptOptions",
    "RenderedPrompt",
    "TemplateMap",
    "key_patterns",
    "render_instructions",
    "render_system_prompt",
    "resolve_template",
]
