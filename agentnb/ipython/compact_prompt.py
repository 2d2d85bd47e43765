"""What the Prompt and Preview tabs show of a rendered prompt: its sections and their
placeholders, the user message, notes, hidden and unused keys, and its token counts."""

from __future__ import annotations

from typing import Any

from ..events import PromptSection, PromptTokens


def compact_tokens(tokens: PromptTokens | None) -> dict[str, Any] | None:
    """A prompt's token counts: per section, system prompt, earlier turns, user message,
    template overhead and total, with what counted them."""
    if tokens is None:
        return None
    out = {
        "counter": tokens.counter,
        "exact": tokens.exact,
        "note": tokens.note,
        "sections": list(tokens.sections),
        "system": tokens.system,
        "history": tokens.history,
        "user": tokens.user,
        "template": tokens.template,
        "total": tokens.total,
    }
    if tokens.user_sections or tokens.earlier_sections:  # a delegated run's labelled parts
        out["user_sections"] = list(tokens.user_sections)
        out["earlier_sections"] = list(tokens.earlier_sections)
    return out


def compact_prompt(prompt: Any) -> dict[str, Any]:
    """What the Prompt and Preview tabs show of a rendered prompt (a PromptRendered or an
    Observation): sections, user message, notes, hidden and unused keys, token counts."""
    return {
        "sections": [compact_section(s) for s in prompt.sections],
        "user_prompt": prompt.user_prompt,
        "notes": list(prompt.notes),
        "hidden_keys": list(prompt.hidden_keys),
        "unused_keys": list(prompt.unused_keys),
        "tokens": compact_tokens(prompt.tokens),
    }


def compact_section(section: PromptSection) -> dict[str, Any]:
    return {
        "source": section.source,
        "text": section.text,
        "start": section.start,
        "placeholders": [
            {"name": p.name, "resolved": p.resolved, "source": p.source, "start": p.start, "end": p.end}
            for p in section.placeholders
        ],
    }


__all__ = ["compact_prompt", "compact_section", "compact_tokens"]
