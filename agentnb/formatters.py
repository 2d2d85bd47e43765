"""Message formatters: how a structured user payload is written, and how a reply is parsed.

Opt-in, as in MASFactory: an agent with a ``prompt_template``, ``output_fields``, a
``formatter``, passive context providers, or a dict input builds its user message as a payload
of fields — ``MESSAGE TO YOU`` (the rendered template), unused input fields,
``RESPONSE FORMAT REQUIREMENTS``, ``REQUIRED OUTPUT FIELDS AND THEIR DESCRIPTIONS`` and
``CONTEXT`` — and an input formatter writes it out:

- ``ParagraphFormatter``: ``KEY: value`` paragraphs (``KEY:`` on its own line when the value
  spans lines), separated by blank lines;
- ``JsonFormatter``: the payload as one JSON object.

As output formatters they state the reply format (``requirements``) and ``parse`` the reply
into a ``ParsedOutput``: a dict of the fields, or a clear error with the raw text kept. An
agent without any of those options sends the user's message unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigurationError, OutputFormatError

MESSAGE_KEY = "MESSAGE TO YOU"
REQUIREMENTS_KEY = "RESPONSE FORMAT REQUIREMENTS"
FIELDS_KEY = "REQUIRED OUTPUT FIELDS AND THEIR DESCRIPTIONS"
CONTEXT_KEY = "CONTEXT"

_THINKING = re.compile(r"<\s*(think|thinking)\s*>.*?<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def render_value(value: Any) -> str:
    """A payload value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class ParsedOutput:
    """A reply parsed by an output formatter. ``output["field"]`` reads a field; when the
    reply did not parse, reading raises OutputFormatError with the reason and the raw text."""

    raw: str
    """The reply's text, as the model wrote it."""
    data: dict[str, Any] | None = None
    """The fields parsed (None when the reply did not parse at all)."""
    error: str | None = None
    """Why the reply does not fit the format (missing fields, not JSON, ...)."""
    format: str = "json"
    """The output format: json or paragraph."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def _fields(self) -> dict[str, Any]:
        if self.data is None:
            raise OutputFormatError(f"the reply could not be parsed: {self.error}", self.raw)
        return self.data

    def __getitem__(self, key: str) -> Any:
        data = self._fields()
        if key not in data:
            raise OutputFormatError(
                f"the reply has no field {key!r}; fields: {sorted(data)}"
                + (f" ({self.error})" if self.error else ""),
                self.raw,
            )
        return data[key]

    def __contains__(self, key: object) -> bool:
        return self.data is not None and key in self.data

    def __iter__(self) -> Iterator[str]:
        return iter(self.data or {})

    def get(self, key: str, default: Any = None) -> Any:
        return (self.data or {}).get(key, default)

    def keys(self) -> list[str]:
        return list(self.data or {})

    def to_dict(self) -> dict[str, Any]:
        """The parsed fields; raises OutputFormatError when the reply did not parse."""
        return dict(self._fields())


class MessageFormatter:
    """Base class: ``dump(payload) -> str`` for input, ``requirements`` and ``parse`` for output."""

    name = "formatter"
    requirements = ""
    """What the model is told about the reply format (the RESPONSE FORMAT REQUIREMENTS field)."""

    def dump(self, payload: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def parse(self, text: str | None, fields: Sequence[str] = ()) -> ParsedOutput:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @staticmethod
    def _clean(text: str | None) -> str:
        return _THINKING.sub("", text or "").strip()

    def _checked(self, raw: str, data: dict[str, Any], fields: Sequence[str]) -> ParsedOutput:
        missing = [f for f in fields if f not in data]
        error = None
        if missing:
            error = f"the reply is missing required field(s) {missing}; it has {sorted(data)}"
        return ParsedOutput(raw=raw, data=data, error=error, format=self.name)


class ParagraphFormatter(MessageFormatter):
    """``KEY: value`` paragraphs: the payload format MASFactory sends by default."""

    name = "paragraph"
    requirements = (
        "Reply only with key-value paragraphs: each key on a new line, followed by a colon and "
        "its value (on the same line, or on the lines below it). Keys are single-line; write "
        "every required field.\n"
        "FORMAT EXAMPLE:\nKEY1: value1\n\nKEY2:\na value\nover several lines"
    )

    def dump(self, payload: Mapping[str, Any]) -> str:
        paragraphs = []
        for key, value in payload.items():
            text = "" if value is None else render_value(value)
            paragraphs.append(f"{key}:\n{text}" if "\n" in text else f"{key}: {text}".rstrip())
        return "\n\n".join(paragraphs)

    def parse(self, text: str | None, fields: Sequence[str] = ()) -> ParsedOutput:
        raw = text or ""
        body = self._clean(raw)
        known = {f.strip().lower(): f for f in fields}
        start = re.compile(r"^([^\s:][^:\n]{0,80}):(.*)$")
        data: dict[str, Any] = {}
        key: str | None = None
        lines: list[str] = []

        def close() -> None:
            if key is not None:
                value = "\n".join(lines).strip()
                data[key] = f"{data[key]}\n{value}" if key in data else value

        for line in body.splitlines():
            match = start.match(line.rstrip())
            name = match.group(1).strip().strip("*#` ").strip() if match else None
            # With declared fields, only their names start a field: a colon inside a value
            # (a time, a URL) must not split it.
            if match and name and (not known or name.lower() in known):
                close()
                key = known.get(name.lower(), name)
                lines = [match.group(2).strip()] if match.group(2).strip() else []
            elif key is not None:
                lines.append(line)
        close()
        if not data:
            return ParsedOutput(raw=raw, error="the reply has no 'KEY: value' lines", format=self.name)
        return self._checked(raw, data, fields)


class JsonFormatter(MessageFormatter):
    """JSON: the payload as a JSON object; replies parsed as one JSON object."""

    name = "json"
    requirements = (
        "Reply with one JSON object and nothing else (no prose, no markdown code fence), "
        "with one key per required output field and that field's content as its value."
    )

    def dump(self, payload: Mapping[str, Any]) -> str:
        return json.dumps(dict(payload), ensure_ascii=False, indent=2, default=str)

    def parse(self, text: str | None, fields: Sequence[str] = ()) -> ParsedOutput:
        raw = text or ""
        body = self._clean(raw)
        fence = _FENCE.match(body)
        if fence:
            body = fence.group(1).strip()
        if not body:
            return ParsedOutput(raw=raw, error="the reply is empty; expected a JSON object", format=self.name)
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            value = _first_object(body)
            if value is None:
                return ParsedOutput(
                    raw=raw,
                    error=f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                    format=self.name,
                )
        if not isinstance(value, dict):
            return ParsedOutput(
                raw=raw,
                error=f"the reply is JSON but a {type(value).__name__}, not an object",
                format=self.name,
            )
        return self._checked(raw, value, fields)


def _first_object(text: str) -> Any:
    """The first JSON object inside prose ('Here you go: {...}'), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


FORMATTERS: dict[str, type[MessageFormatter]] = {"paragraph": ParagraphFormatter, "json": JsonFormatter}


def resolve_formatter(value: Any, what: str) -> MessageFormatter | None:
    """A formatter from an instance, a class or a name ('paragraph' / 'json')."""
    if value is None or isinstance(value, MessageFormatter):
        return value
    if isinstance(value, type) and issubclass(value, MessageFormatter):
        return value()
    if isinstance(value, str) and value.lower() in FORMATTERS:
        return FORMATTERS[value.lower()]()
    if callable(getattr(value, "dump", None)) and callable(getattr(value, "parse", None)):
        return value  # duck-typed formatter
    raise ConfigurationError(
        f"{what} must be 'paragraph', 'json' or a MessageFormatter (ParagraphFormatter(), "
        f"JsonFormatter()), got {value!r}"
    )


@dataclass(frozen=True)
class FormatSettings:
    """An agent's structured-payload options."""

    prompt_template: str | None = None
    """The MESSAGE TO YOU template, with ``{field}`` placeholders."""
    input_formatter: MessageFormatter | None = None
    """Writes the payload (explicitly chosen; None = paragraph when the payload is used)."""
    output_formatter: MessageFormatter | None = None
    """States and parses the reply format (None = the reply stays plain text)."""
    output_fields: dict[str, str] = field(default_factory=dict)
    """{field: description} the reply must contain."""
    hide_unused_fields: bool = False
    """Leave input fields the template does not use out of the payload."""

    @classmethod
    def build(
        cls,
        *,
        prompt_template: str | Sequence[str] | None,
        formatter: Any,
        output_formatter: Any,
        formatters: Any,
        output_fields: Mapping[str, str] | Iterable[str] | None,
        hide_unused_fields: bool,
    ) -> FormatSettings:
        if isinstance(prompt_template, (list, tuple)):
            prompt_template = "\n".join(str(p) for p in prompt_template)
        if prompt_template is not None and not isinstance(prompt_template, str):
            raise ConfigurationError(
                f"prompt_template must be a str (or a list of lines), got {type(prompt_template).__name__}"
            )
        fields = _output_fields(output_fields)
        if formatters is not None:
            if formatter is not None or output_formatter is not None:
                raise ConfigurationError(
                    "give either formatters=[input, output] (MASFactory) or formatter= / output_formatter=, not both"
                )
            pair = list(formatters) if isinstance(formatters, (list, tuple)) else [formatters]
            if len(pair) not in (1, 2):
                raise ConfigurationError(
                    f"formatters must be one formatter or a list of two [input, output], got {len(pair)}"
                )
            formatter, output_formatter = pair[0], pair[-1]
        input_fmt = resolve_formatter(formatter, "formatter")
        output_fmt: MessageFormatter | None
        if output_formatter is False:
            output_fmt = None
        elif output_formatter is None:
            # MASFactory-style agents (a template or declared fields) answer in JSON by default.
            output_fmt = JsonFormatter() if (prompt_template or fields) else None
        else:
            output_fmt = resolve_formatter(output_formatter, "output_formatter")
        return cls(
            prompt_template=prompt_template,
            input_formatter=input_fmt,
            output_formatter=output_fmt,
            output_fields=fields,
            hide_unused_fields=bool(hide_unused_fields),
        )

    @property
    def structured(self) -> bool:
        """Whether the user message is a payload even without context or a dict input."""
        return bool(
            self.prompt_template or self.input_formatter or self.output_formatter or self.output_fields
        )


def _output_fields(value: Mapping[str, str] | Iterable[str] | None) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        raise ConfigurationError(
            f"output_fields must be a dict {{field: description}} or a list of field names, got the str {value!r}"
        )
    if isinstance(value, Mapping):
        items = list(value.items())
    else:
        items = [(name, "") for name in value]
    bad = [k for k, _ in items if not isinstance(k, str) or not k.strip()]
    if bad:
        raise ConfigurationError(f"output field names must be non-empty strings, got {bad}")
    return {k: str(v) for k, v in items}


_QUERY_KEYS = ("input", "task", "task_description", "question", "query", "message", "content", "text")


@dataclass(frozen=True)
class UserPayload:
    """The user turn before it is written out: its fields, and the text to query context with."""

    fields: dict[str, Any]
    """Field name -> value, in order."""
    query_text: str
    """What passive providers are asked about."""
    inputs: dict[str, Any]
    """The turn's input fields (a str message is ``{"message": text}``)."""


def build_payload(
    settings: FormatSettings,
    inputs: Mapping[str, Any],
    message_text: str | None,
    resolve: Any,
) -> UserPayload:
    """The payload fields of a structured user turn (CONTEXT is added by the caller).

    ``message_text`` is the plain message when the input was a str; ``resolve(template,
    inputs)`` renders a template and returns (text, names of input fields it used).
    """
    fields: dict[str, Any] = {}
    used: set[str] = set()
    if settings.prompt_template:
        text, used = resolve(settings.prompt_template, inputs)
        fields[MESSAGE_KEY] = text
    elif message_text is not None:
        fields[MESSAGE_KEY] = message_text
        used = {"message"}
    if not settings.hide_unused_fields:
        for key, value in inputs.items():
            if key not in used and key not in fields:
                fields[key] = value
    if settings.output_formatter is not None:
        fields[REQUIREMENTS_KEY] = settings.output_formatter.requirements
    if settings.output_fields:
        fields[FIELDS_KEY] = json.dumps(settings.output_fields, ensure_ascii=False, indent=2)
    return UserPayload(fields=fields, query_text=query_text(inputs, fields), inputs=dict(inputs))


def query_text(inputs: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    """The text passive providers are queried with (MASFactory's choice of field)."""
    for key in _QUERY_KEYS:
        value = inputs.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    message = fields.get(MESSAGE_KEY)
    if isinstance(message, str) and message.strip():
        return message.strip()
    if len(inputs) == 1:
        only = next(iter(inputs.values()))
        if isinstance(only, str) and only.strip():
            return only.strip()
    return json.dumps(dict(inputs), ensure_ascii=False, sort_keys=True, default=str)


__all__ = [
    "FormatSettings",
    "JsonFormatter",
    "MessageFormatter",
    "ParagraphFormatter",
    "ParsedOutput",
    "UserPayload",
    "build_payload",
    "render_value",
]
