"""Stand-in tokenizers and models for the token-count tests (the models' and the inspector's)."""

from __future__ import annotations

from collections.abc import Iterator

from agentnb import ScriptedModel
from agentnb.models.base import ModelRequest, ModelResponse
from agentnb.models.tokens import TokenCounter


class Exact(TokenCounter):
    """A stand-in tokenizer: one token per word, and a fixed template overhead."""

    exact = True
    knows_template = True

    @property
    def name(self) -> str:
        return "words"

    def count(self, text: str) -> int:
        return len(text.split())

    def template_overhead(self, messages, content_tokens):
        return 5 * len(messages)


class WarmingUp(ScriptedModel):
    """Like the local model: its tokenizer is there only once it has answered."""

    started = False

    def token_counter(self) -> TokenCounter:
        return Exact() if self.started else TokenCounter("not started")

    def stream(self, request: ModelRequest) -> Iterator[str | ModelResponse]:
        self.started = True
        yield from super().stream(request)
