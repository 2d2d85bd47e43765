"""The fenced ```python blocks of the documentation's pages, and which of them run as tests.

A block runs unless the line before its fence is ``<!-- not-run: REASON -->``. The blocks of one
page run in order, in one namespace, so a page reads top to bottom as a session would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
INDENTED_FENCE = re.compile(r"^[ \t]+```python", re.M)
NOT_RUN = re.compile(r"^<!--\s*not-run:(.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, and why it does not run (None: it runs)."""

    page: Path
    line: int
    source: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def guide_pages() -> list[Path]:
    """Every page whose examples should run: the README and all of docs/ but the generated API
    reference."""
    pages = sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.relative_to(DOCS).parts)
    return [ROOT / "README.md", *pages]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    indented = INDENTED_FENCE.search(text)
    if indented:
        line = text.count("\n", 0, indented.start()) + 1
        raise ValueError(f"{page}:{line}: a ```python fence must start its line (indented ones are not run)")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.match(before.strip())
        reason = marker.group(1).strip() if marker else None
        if marker and not reason:
            raise ValueError(f"{page}:{line}: <!-- not-run: --> needs a reason")
        found.append(Block(page, line, match.group(1), reason))
    return found
