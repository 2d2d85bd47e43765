"""Built-in context providers: documents and tables ranked by BM25, and the conversation."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConfigurationError
from ..events import ContextBlock
from .providers import DEFAULT_TOP_K

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
            term: math.log(1 + (self.size - len(p) + 0.5) / (len(p) + 0.5))
            for term, p in self.postings.items()
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
            raise ConfigurationError(f"DataFrameContext needs a pandas DataFrame, got {type(frame).__name__}")
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
                text=rows[i][1],
                score=round(score, 4),
                source=f"row {rows[i][0]}",
                metadata={"row": _plain(rows[i][0])},
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

    def attach(self, agent: Any) -> None:
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


__all__ = ["BM25", "ConversationMemory", "DataFrameContext", "DocumentContext", "tokenize"]
