"""Context providers: memories, documents and tables that feed ``ContextBlock``s to an agent.

A provider is any object with ``get_blocks(query, top_k=8) -> list[ContextBlock]``, a
``context_label`` and ``passive`` / ``active`` flags (MASFactory's ContextProvider):

- passive providers are queried while the user turn is assembled (the Observe step) with the
  user's message; their blocks go into the user payload's ``CONTEXT`` field, rendered as
  ``[Context]`` followed by one ``(LABEL) text`` line per block;
- active providers are not queried up front: the agent offers the model two tools for the run,
  ``list_context_sources()`` and ``retrieve_context(source, query, top_k=8)``, and the model
  decides whether to look something up.

Every retrieval, passive or through the tool, is recorded as a ``ContextRetrieved`` event;
``agent.history[-1].context`` lists a turn's. The two tools are part of ``agent.all_tools()``
(MASFactory's ``agent.tools`` after ``observe``; a Tool's ``__name__`` is its name), while
``agent.tools`` stays the list of tools you configured.
The query handed to ``get_blocks`` is a ``ContextQuery``: a ``str`` (so ``query.lower()``
works) that also has MASFactory's ``query.query_text``.

Built-in providers: ``DocumentContext`` (strings or documents, BM25-ranked),
``DataFrameContext`` (rows of a pandas DataFrame, BM25-ranked) and ``ConversationMemory``
(the agent's earlier turns).
"""

from __future__ import annotations

import inspect
import json
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import ConfigurationError, ContextProviderError
from ..events import ContextBlock, ContextRetrieved
from ..formatters import CONTEXT_KEY
from ..tools import Tool
from ..util.fastinit import fast_init

CONTEXT_HEADER = "[Context]"
LIST_SOURCES_TOOL = "list_context_sources"
RETRIEVE_TOOL = "retrieve_context"
DEFAULT_TOP_K = 8


class ContextQuery(str):
    """The query handed to ``get_blocks``: a ``str`` that also carries MASFactory's
    ``query_text`` and the turn's inputs, so providers written either way work."""

    inputs: dict[str, Any]
    agent: str | None

    def __new__(
        cls, query_text: str, *, inputs: Mapping[str, Any] | None = None, agent: str | None = None
    ) -> ContextQuery:
        self = super().__new__(cls, query_text)
        self.inputs = dict(inputs or {})
        self.agent = agent
        return self

    @property
    def query_text(self) -> str:
        return str.__str__(self)

    def replace(self, query_text: str) -> ContextQuery:  # type: ignore[override]  # new text, not str.replace
        return ContextQuery(query_text, inputs=self.inputs, agent=self.agent)

    def __repr__(self) -> str:
        return f"ContextQuery({self.query_text!r})"


@runtime_checkable
class ContextProvider(Protocol):
    """What an agent needs from a memory, retriever or other source of context."""

    context_label: str
    passive: bool
    active: bool

    def get_blocks(self, query: ContextQuery, *, top_k: int = DEFAULT_TOP_K) -> list[ContextBlock]: ...


def provider_label(provider: Any) -> str:
    label = getattr(provider, "context_label", None)
    return label.strip() if isinstance(label, str) and label.strip() else type(provider).__name__


def is_passive(provider: Any) -> bool:
    """MASFactory's defaults: passive unless it says otherwise (or cannot be)."""
    return bool(getattr(provider, "supports_passive", True)) and bool(getattr(provider, "passive", True))


def is_active(provider: Any) -> bool:
    return bool(getattr(provider, "supports_active", True)) and bool(getattr(provider, "active", False))


def render_context(groups: Iterable[tuple[str, Sequence[ContextBlock]]]) -> str:
    """``[Context]`` then ``(LABEL) text`` per block, as MASFactory renders it; '' if no block."""
    lines = [CONTEXT_HEADER]
    for label, blocks in groups:
        lines.extend(f"({label}) {block.text}".rstrip() for block in blocks)
    return "\n".join(lines).strip() if len(lines) > 1 else ""


def fetch_blocks(provider: Any, label: str, query: ContextQuery, top_k: int) -> tuple[ContextBlock, ...]:
    """Ask ``provider`` for blocks and normalise what it returns; provider failures become a
    ContextProviderError naming the provider."""
    get_blocks = provider.get_blocks
    try:
        if _accepts_top_k(get_blocks):
            raw = get_blocks(query, top_k=top_k)
        else:
            raw = get_blocks(query)
    except Exception as exc:
        raise ContextProviderError(
            f"context provider {label!r} ({type(provider).__name__}) failed in get_blocks: "
            f"{type(exc).__name__}: {exc}. Fix the provider, or remove it from the agent."
        ) from exc
    if raw is None:
        return ()
    if isinstance(raw, (str, ContextBlock)) or not isinstance(raw, Iterable):
        raw = [raw]
    return tuple(_as_block(item, label, provider) for item in raw)


def _accepts_top_k(function: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return True
    return "top_k" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _as_block(item: Any, label: str, provider: Any) -> ContextBlock:
    if isinstance(item, str):
        return ContextBlock(text=item)
    if isinstance(item, Mapping) and "text" in item:
        data = item
    elif hasattr(item, "text"):
        # MASFactory's own ContextBlock (or any block-like object) converts field by field.
        data = {
            k: getattr(item, k) for k in ("text", "score", "source", "uri", "metadata") if hasattr(item, k)
        }
    else:
        raise ContextProviderError(
            f"context provider {label!r} ({type(provider).__name__}) returned {type(item).__name__} "
            f"{item!r:.80}; get_blocks must return ContextBlock objects (or strings)"
        )
    score = data.get("score")
    return ContextBlock(
        text=str(data["text"]),
        score=None if score is None else float(score),
        source=_opt_str(data.get("source") or data.get("uri")),
        metadata=_json_safe(data.get("metadata") or {}),
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _json_safe(value: Any) -> dict[str, Any]:
    """Metadata is kept in events and sessions, so it must survive JSON."""
    if not isinstance(value, Mapping):
        return {"value": str(value)}
    return json.loads(json.dumps(dict(value), ensure_ascii=False, default=str))


# -- the providers of one agent --------------------------------------------------------------


@fast_init
@dataclass(frozen=True)
class _Binding:
    query: ContextQuery
    sink: Callable[[ContextRetrieved], None] | None


class ContextProviders:
    """The context providers of an agent, and the two retrieval tools active ones need.

    Behaves like a list (``agent.context_providers.append(p)``)."""

    _BINDINGS_KEPT = 8

    def __init__(self, providers: Iterable[Any] = (), agent: Any = None) -> None:
        self._providers: list[Any] = []
        self._agent = agent
        self._bindings: OrderedDict[str, _Binding] = OrderedDict()
        self._tools: dict[tuple[str, str], list[Tool]] = {}
        for provider in providers:
            self.append(provider)

    # -- list-like ---------------------------------------------------------------------

    def append(self, provider: Any) -> None:
        check_provider(provider)
        self._providers.append(provider)
        attach = getattr(provider, "attach", None)
        if self._agent is not None and callable(attach):
            attach(self._agent)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._providers)

    def __len__(self) -> int:
        return len(self._providers)

    def __getitem__(self, index: int) -> Any:
        return self._providers[index]

    def __bool__(self) -> bool:
        return bool(self._providers)

    def __repr__(self) -> str:
        return f"ContextProviders([{', '.join(self.describe())}])"

    def describe(self) -> list[str]:
        out = []
        for p in self._providers:
            modes = "+".join(m for m, on in (("passive", is_passive(p)), ("active", is_active(p))) if on)
            out.append(f"{provider_label(p)} ({type(p).__name__}, {modes})")
        return out

    @property
    def passive(self) -> list[Any]:
        return [p for p in self._providers if is_passive(p)]

    @property
    def active(self) -> list[Any]:
        return [p for p in self._providers if is_active(p)]

    # -- passive -----------------------------------------------------------------------

    def retrieve_passive(self, query: ContextQuery, run_id: str) -> list[ContextRetrieved]:
        """Query every passive provider; one event per provider (also when it found nothing)."""
        return [
            _lookup(provider, provider_label(provider), query, _top_k_of(provider), run_id, "passive")
            for provider in self.passive
        ]

    # -- active ------------------------------------------------------------------------

    def bind(self, run_id: str, query: ContextQuery, sink: Callable[[ContextRetrieved], None] | None) -> None:
        """Tie the retrieval tools to a run: its base query and where its events go. Keyed by
        run id, so a preview (observe) never redirects the events of a running turn."""
        self._bindings[run_id] = _Binding(query, sink)
        self._bindings.move_to_end(run_id)
        while len(self._bindings) > self._BINDINGS_KEPT:
            self._bindings.popitem(last=False)

    def sources(self) -> list[tuple[str, str, Any]]:
        """(name, label, provider) for the active providers; repeated labels get ``#1``, ``#2``."""
        active = self.active
        labels = [provider_label(p) for p in active]
        counts = Counter(labels)
        seen: Counter[str] = Counter()
        out = []
        for provider, label in zip(active, labels):
            if counts[label] == 1:
                out.append((label, label, provider))
            else:
                seen[label] += 1
                out.append((f"{label}#{seen[label]}", label, provider))
        return out

    def tools(self, taken: Iterable[str] = ()) -> list[Tool]:
        """The two retrieval tools (none without active providers). A name already used by
        one of the agent's own tools gets an ``agentnb_`` prefix, as MASFactory does."""
        if not self.active:
            return []
        taken = set(taken)
        list_name = LIST_SOURCES_TOOL if LIST_SOURCES_TOOL not in taken else f"agentnb_{LIST_SOURCES_TOOL}"
        retrieve_name = RETRIEVE_TOOL if RETRIEVE_TOOL not in taken else f"agentnb_{RETRIEVE_TOOL}"
        key = (list_name, retrieve_name)
        if key not in self._tools:
            self._tools[key] = self._make_tools(list_name, retrieve_name)
        return list(self._tools[key])

    def _make_tools(self, list_name: str, retrieve_name: str) -> list[Tool]:
        providers = self

        def list_context_sources() -> dict[str, Any]:
            """List the context sources you can search with retrieve_context.

            Returns {"sources": [{"name", "label", "type"}]}; pass a name to retrieve_context.
            """
            return {
                "sources": [
                    {"name": name, "label": label, "type": type(p).__name__}
                    for name, label, p in providers.sources()
                ]
            }

        def retrieve_context(
            source: str, query: str, top_k: int = DEFAULT_TOP_K, run_context: Any = None
        ) -> dict[str, Any]:
            """Search one context source and return the matching blocks.

            Args:
                source: A source name from list_context_sources().
                query: What to search for.
                top_k: Most blocks to return (0 means as many as there are).
            """
            return providers._retrieve(source, query, top_k, run_context)

        list_context_sources.__name__ = list_name
        retrieve_context.__name__ = retrieve_name
        return [
            Tool.from_function(list_context_sources, name=list_name),
            Tool.from_function(retrieve_context, name=retrieve_name),
        ]

    def _retrieve(self, source: str, query: str, top_k: int, ctx: Any) -> dict[str, Any]:
        entries = self.sources()
        by_name = {name: provider for name, _label, provider in entries}
        provider = by_name.get(source)
        if provider is None:
            aliases = [name for name, label, _p in entries if label == source]
            if aliases:
                raise ValueError(
                    f"context source {source!r} is ambiguous; choose one of {aliases} "
                    f"(see list_context_sources)"
                )
            raise ValueError(f"unknown context source {source!r}; available: {sorted(by_name)}")
        if top_k < 0:
            raise ValueError(f"top_k must be 0 (as many as there are) or more, got {top_k}")
        run_id = getattr(ctx, "run_id", None) or "observe"
        binding = self._bindings.get(run_id)
        base = binding.query if binding else ContextQuery(query or "")
        effective = base.replace(query or base.query_text)
        event = _lookup(provider, source, effective, top_k, run_id, "tool")
        if binding is not None and binding.sink is not None:
            binding.sink(event)
        return {
            "provider": source,
            "query": effective.query_text,
            "blocks": [b.to_dict() for b in event.blocks],
            "rendered": event.rendered,
        }


def _lookup(
    provider: Any, label: str, query: ContextQuery, top_k: int, run_id: str, via: Literal["passive", "tool"]
) -> ContextRetrieved:
    """Ask one provider for blocks; the answer as the event the turn record and inspector keep."""
    started = time.perf_counter()
    blocks = fetch_blocks(provider, provider_label(provider), query, top_k)
    return ContextRetrieved(
        run_id=run_id,
        label=label,
        provider=type(provider).__name__,
        query=query.query_text,
        top_k=top_k,
        blocks=blocks,
        rendered=render_context([(label, blocks)]),
        via=via,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def check_provider(provider: Any) -> None:
    """A clear error for an object that cannot serve as a context provider."""
    if not callable(getattr(provider, "get_blocks", None)):
        raise ConfigurationError(
            f"{type(provider).__name__} is not a context provider: it needs a method "
            f"get_blocks(query, top_k=8) returning a list of ContextBlock"
        )
    if not is_passive(provider) and not is_active(provider):
        raise ConfigurationError(
            f"context provider {provider_label(provider)!r} is neither passive nor active; "
            f"set passive=True (inject into every turn) or active=True (the model retrieves by tool)"
        )


def _top_k_of(provider: Any) -> int:
    top_k = getattr(provider, "top_k", DEFAULT_TOP_K)
    return top_k if isinstance(top_k, int) and top_k >= 0 else DEFAULT_TOP_K


__all__ = [
    "CONTEXT_HEADER",
    "CONTEXT_KEY",
    "DEFAULT_TOP_K",
    "LIST_SOURCES_TOOL",
    "RETRIEVE_TOOL",
    "ContextProvider",
    "ContextProviders",
    "ContextQuery",
    "check_provider",
    "fetch_blocks",
    "is_active",
    "is_passive",
    "provider_label",
    "render_context",
]
