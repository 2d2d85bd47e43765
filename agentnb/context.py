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

import functools
import inspect
import json
import math
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .errors import ConfigurationError, ContextProviderError
from .events import ContextBlock

if TYPE_CHECKING:
    from .agent import Agent
    from .events import ContextRetrieved
    from .tools import Tool

CONTEXT_KEY = "CONTEXT"
"""The user-payload field that receives passive context."""
CONTEXT_HEADER = "[Context]"
LIST_SOURCES_TOOL = "list_context_sources"
RETRIEVE_TOOL = "retrieve_context"
DEFAULT_TOP_K = 8




class ContextQuery(str):
    """The query handed to ``get_blocks``: a ``str`` that also carries MASFactory's
    ``query_text`` and the turn's inputs, so providers written either way work."""

    inputs: dict[str, Any]
    agent: str | None

    def __new__(cls, query_text: str, *, inputs: Mapping[str, Any] | None = None, agent: str | None = None) -> ContextQuery:
        self = super().__new__(cls, query_text)
        self.inputs = dict(inputs or {})
        self.agent = agent
        return self

    @property
    def query_text(self) -> str:
        return str.__str__(self)

    def replace(self, query_text: str) -> ContextQuery:
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
        data = {k: getattr(item, k) for k in ("text", "score", "source", "uri", "metadata") if hasattr(item, k)}
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


@dataclass(frozen=True)
class _Binding:
    query: ContextQuery
    sink: Callable[[ContextRetrieved], None] | None


class ContextProviders:
    """The context providers of an agent, and the two retrieval tools active ones need.

    Behaves like a list (``agent.context_providers.append(p)``)."""

    _BINDINGS_KEPT = 8

    def __init__(self, providers: Iterable[Any] = (), agent: Agent | None = None) -> None:
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

    def __iter__(self):  # type: ignore[no-untyped-def]
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
        from .tools import Tool

        providers = self

        def list_context_sources() -> dict[str, Any]:
            """List the context sources you can search with retrieve_context.

            Returns {"sources": [{"name", "label", "type"}]}; pass a name to retrieve_context.
            """
            return {
                "sources": [
                    {"name": name, "label": label, "type": type(p).__name__} for name, label, p in providers.sources()
                ]
            }

        def retrieve_context(source: str, query: str, top_k: int = DEFAULT_TOP_K, run_context: Any = None) -> dict[str, Any]:
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


def _lookup(provider: Any, label: str, query: ContextQuery, top_k: int, run_id: str, via: str) -> ContextRetrieved:
    """Ask one provider for blocks; the answer as the event the turn record and inspector keep."""
    from .events import ContextRetrieved

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
        via=via,  # type: ignore[arg-type]
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


# -- ranking -------------------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    # Compiling this Unicode class takes milliseconds: done on first use, not at import.
    return re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words; CJK characters count one by one (those scripts have no spaces)."""
    return _token_pattern().findall(text.lower())


class BM25:
    """Okapi BM25 over a list of texts.

    The IDF is Lucene's ``ln(1 + (N - n + 0.5) / (n + 0.5))``, which stays positive: the classic
    form gives 0 or negative weights when a term is in half the documents or more, which in a
    notebook-sized corpus of three documents ranks a perfect match last.
    """

    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.size = len(texts)
        # An inverted index: a query only touches the documents that contain its words.
        self.postings: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self.postings.setdefault(term, []).append((i, tf))
        avg = (sum(lengths) / len(lengths)) if lengths else 0.0
        self.norms = [k1 * (1 - b + b * n / avg) if avg else k1 for n in lengths]
        self.idf = {
            term: math.log(1 + (self.size - len(p) + 0.5) / (len(p) + 0.5)) for term, p in self.postings.items()
        }

    def scores(self, query: str) -> dict[int, float]:
        """{document index: score} for the documents sharing a word with the query."""
        out: dict[int, float] = {}
        for term in tokenize(query):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i, tf in self.postings[term]:
                out[i] = out.get(i, 0.0) + idf * tf * (self.k1 + 1) / (tf + self.norms[i])
        return out

    def top(self, query: str, top_k: int) -> list[tuple[int, float]]:
        """(index, score) of the best matches, best first; ties keep document order.
        ``top_k=0`` means all matches."""
        ranked = sorted(self.scores(query).items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:top_k] if top_k else ranked


# -- built-in providers --------------------------------------------------------------------


class _Provider:
    context_label: str
    passive: bool
    active: bool
    top_k: int

    def _setup(self, label: str, passive: bool, active: bool, top_k: int) -> None:
        if not isinstance(label, str) or not label.strip():
            raise ConfigurationError(f"label must be a non-empty string, got {label!r}")
        if not isinstance(top_k, int) or top_k < 0:
            raise ConfigurationError(f"top_k must be a whole number >= 0 (0 = all), got {top_k!r}")
        self.context_label = label
        self.passive = bool(passive)
        self.active = bool(active)
        self.top_k = top_k
        if not self.passive and not self.active:
            raise ConfigurationError(
                f"context provider {label!r} is neither passive nor active; set passive=True or active=True"
            )

    def __repr__(self) -> str:
        modes = "+".join(m for m, on in (("passive", self.passive), ("active", self.active)) if on)
        return f"{type(self).__name__}({self.context_label!r}, {modes}, {len(self)} item(s))"

    def __len__(self) -> int:
        raise NotImplementedError


class DocumentContext(_Provider):
    """Strings or documents, ranked by BM25 against the query.

    ``documents`` is a list of strings (or ContextBlocks), or a dict ``{source: text}``.
    Only blocks that share a word with the query are returned, best first.
    """

    def __init__(
        self,
        documents: Iterable[str | ContextBlock] | Mapping[str, str] = (),
        *,
        label: str = "DOCS",
        passive: bool = True,
        active: bool = False,
        top_k: int = 3,
    ) -> None:
        self._setup(label, passive, active, top_k)
        self.documents: list[ContextBlock] = []
        self._index: BM25 | None = None
        if isinstance(documents, Mapping):
            for source, text in documents.items():
                self.add(text, source=str(source))
        elif isinstance(documents, str):
            self.add(documents)
        else:
            for doc in documents:
                self.add(doc)

    def add(self, document: str | ContextBlock, *, source: str | None = None) -> None:
        """Add one document (a string or a ContextBlock)."""
        if isinstance(document, ContextBlock):
            block = document
        elif isinstance(document, str):
            block = ContextBlock(text=document, source=source or f"doc {len(self.documents)}")
        else:
            raise ConfigurationError(
                f"a document must be a str or a ContextBlock, got {type(document).__name__}: {document!r:.60}"
            )
        self.documents.append(block)
        self._index = None

    def __len__(self) -> int:
        return len(self.documents)

    def get_blocks(self, query: str, *, top_k: int = DEFAULT_TOP_K) -> list[ContextBlock]:
        if self._index is None:
            self._index = BM25([d.text for d in self.documents])
        return [
            ContextBlock(text=d.text, score=round(score, 4), source=d.source, metadata=dict(d.metadata))
            for d, score in ((self.documents[i], s) for i, s in self._index.top(str(query), top_k))
        ]


class DataFrameContext(_Provider):
    """Rows of a pandas DataFrame, ranked by BM25 against the query.

    Each row becomes one block, ``"col: value, col: value"`` over ``columns`` (all by default);
    its source is ``row <index>``. The frame is re-read when its content changes (checked by a
    hash at every query), so edits made to it in the notebook show up in the next turn.
    """

    def __init__(
        self,
        frame: Any,
        *,
        label: str = "TABLE",
        columns: Sequence[str] | None = None,
        passive: bool = True,
        active: bool = False,
        top_k: int = 5,
    ) -> None:
        self._setup(label, passive, active, top_k)
        if not (hasattr(frame, "columns") and hasattr(frame, "itertuples")):
            raise ConfigurationError(
                f"DataFrameContext needs a pandas DataFrame, got {type(frame).__name__}"
            )
        missing = [c for c in columns or () if c not in frame.columns]
        if missing:
            raise ConfigurationError(
                f"DataFrameContext: no column(s) {missing} in the frame; its columns are {list(frame.columns)}"
            )
        self.frame = frame
        self.columns = list(columns) if columns is not None else None
        self._cache: tuple[Any, list[tuple[Any, str]], BM25] | None = None

    def __len__(self) -> int:
        return len(self.frame)

    def rows(self) -> list[tuple[Any, str]]:
        """(index, text) for every row."""
        columns = self.columns if self.columns is not None else list(self.frame.columns)
        view = self.frame[columns]
        return [
            (row[0], ", ".join(f"{col}: {value}" for col, value in zip(columns, row[1:])))
            for row in view.itertuples(index=True, name=None)
        ]

    def _fingerprint(self) -> Any:
        import pandas

        columns = self.columns if self.columns is not None else list(self.frame.columns)
        try:
            digest = int(pandas.util.hash_pandas_object(self.frame[columns], index=True).sum())
        except (TypeError, ValueError):
            return None  # unhashable cells (lists, dicts): re-index every time
        return (tuple(map(str, columns)), len(self.frame), digest)

    def get_blocks(self, query: str, *, top_k: int = DEFAULT_TOP_K) -> list[ContextBlock]:
        fingerprint = self._fingerprint()
        if self._cache is not None and fingerprint is not None and self._cache[0] == fingerprint:
            _, rows, index = self._cache
        else:
            rows = self.rows()
            index = BM25([text for _, text in rows])
            self._cache = (fingerprint, rows, index)
        return [
            ContextBlock(
                text=rows[i][1], score=round(score, 4), source=f"row {rows[i][0]}", metadata={"row": _plain(rows[i][0])}
            )
            for i, score in index.top(str(query), top_k)
        ]


def _plain(value: Any) -> Any:
    """numpy scalars (a DataFrame's index) as plain Python values, for JSON."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


class ConversationMemory(_Provider):
    """The agent's earlier turns as context: each finished turn is remembered as a block
    ``user: …`` / ``assistant: …``.

    ``mode="recent"`` returns the last ``top_k`` turns, oldest first; ``mode="relevant"``
    ranks them by BM25 against the message. Given to an agent, it records that agent's turns
    by itself; ``add(user, assistant)`` records one by hand.
    """

    def __init__(
        self,
        *,
        label: str = "MEMORY",
        mode: str = "recent",
        top_k: int = 3,
        passive: bool = True,
        active: bool = False,
        max_turns: int | None = None,
    ) -> None:
        self._setup(label, passive, active, top_k)
        if mode not in ("recent", "relevant"):
            raise ConfigurationError(f"mode must be 'recent' or 'relevant', got {mode!r}")
        if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
            raise ConfigurationError(f"max_turns must be a whole number >= 1 or None, got {max_turns!r}")
        self.mode = mode
        self.max_turns = max_turns
        self.turns: list[dict[str, str]] = []
        self._agents: list[Any] = []

    def __len__(self) -> int:
        return len(self.turns)

    def add(self, user: str, assistant: str) -> None:
        """Remember one exchange."""
        self.turns.append({"user": str(user), "assistant": str(assistant)})
        if self.max_turns is not None and len(self.turns) > self.max_turns:
            del self.turns[: len(self.turns) - self.max_turns]

    def clear(self) -> None:
        self.turns.clear()

    def attach(self, agent: Agent) -> None:
        """Record ``agent``'s finished turns (called when the memory is given to an agent)."""
        if any(a is agent for a in self._agents):
            return
        self._agents.append(agent)

        def on_event(event: Any) -> None:
            if getattr(event, "kind", None) != "run_finished":
                return
            turn = next((t for t in reversed(agent.history) if t.run_id == event.run_id), None)
            if turn is not None:
                self.add(turn.message, event.content or "")

        agent.subscribe(on_event)

    def _block(self, i: int, score: float | None = None) -> ContextBlock:
        turn = self.turns[i]
        return ContextBlock(
            text=f"user: {turn['user']}\nassistant: {turn['assistant']}", score=score, source=f"turn {i}"
        )

    def get_blocks(self, query: str, *, top_k: int = DEFAULT_TOP_K) -> list[ContextBlock]:
        if self.mode == "recent":
            start = max(0, len(self.turns) - top_k) if top_k else 0
            return [self._block(i) for i in range(start, len(self.turns))]
        index = BM25([f"{t['user']}\n{t['assistant']}" for t in self.turns])
        return [self._block(i, round(s, 4)) for i, s in index.top(str(query), top_k)]

    # sessions keep memories as state modules (AgentScope's state_dict protocol)
    def state_dict(self) -> dict[str, Any]:
        return {"turns": [dict(t) for t in self.turns]}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        turns = state.get("turns")
        if not isinstance(turns, list) or not all(
            isinstance(t, Mapping) and isinstance(t.get("user"), str) and isinstance(t.get("assistant"), str)
            for t in turns
        ):
            raise ConfigurationError(
                "ConversationMemory.load_state_dict expects {'turns': [{'user': str, 'assistant': str}, ...]}"
            )
        self.turns = [{"user": t["user"], "assistant": t["assistant"]} for t in turns]


__all__ = [
    "BM25",
    "CONTEXT_KEY",
    "ContextBlock",
    "ContextProvider",
    "ContextProviders",
    "ContextQuery",
    "ConversationMemory",
    "DataFrameContext",
    "DocumentContext",
    "render_context",
    "tokenize",
]
