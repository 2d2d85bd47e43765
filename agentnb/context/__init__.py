"""Context providers (MASFactory): memories, documents and tables that feed ``ContextBlock``s
to an agent. See ``providers.py`` for how passive and active providers reach the model, and
``builtin.py`` for the providers agentnb ships."""

from __future__ import annotations

from ..events import ContextBlock
from .builtin import BM25, ConversationMemory, DataFrameContext, DocumentContext, tokenize
from .providers import (
    CONTEXT_HEADER,
    CONTEXT_KEY,
    DEFAULT_TOP_K,
    LIST_SOURCES_TOOL,
    RETRIEVE_TOOL,
    ContextProvider,
    ContextProviders,
    ContextQuery,
    check_provider,
    fetch_blocks,
    is_active,
    is_passive,
    provider_label,
    render_context,
)

__all__ = [
    "BM25",
    "CONTEXT_HEADER",
    "CONTEXT_KEY",
    "DEFAULT_TOP_K",
    "LIST_SOURCES_TOOL",
    "RETRIEVE_TOOL",
    "ContextBlock",
    "ContextProvider",
    "ContextProviders",
    "ContextQuery",
    "ConversationMemory",
    "DataFrameContext",
    "DocumentContext",
    "check_provider",
    "fetch_blocks",
    "is_active",
    "is_passive",
    "provider_label",
    "render_context",
    "tokenize",
]
