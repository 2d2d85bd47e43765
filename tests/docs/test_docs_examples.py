"""The code on the documentation's pages runs: each page's ```python blocks in order, in one real
IPython shell (so `%%agent` / `%%chat` cells run as in a notebook), offline, in a scratch folder.
A block marked ``<!-- not-run: REASON -->`` is only checked to be valid Python or IPython."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from doc_blocks import ROOT, Block, blocks, guide_pages
from IPython.core.inputtransformer2 import TransformerManager
from IPython.utils.capture import capture_output

PAGES = [page for page in guide_pages() if any(b.not_run is None for b in blocks(page))]


@pytest.fixture()
def shell(shell):
    """The shared shell (tests/conftest.py), a fresh workspace for every page; what a page sets
    in the environment, the default model and tracing are undone after it."""
    environ = dict(os.environ)
    os.environ.pop("AGENTNB_REPLAY", None)
    yield shell
    from agentnb import set_default_model, tracing

    set_default_model(None)
    tracing.uninstrument()
    os.environ.clear()
    os.environ.update(environ)


def run_block(ip, block: Block) -> None:
    with capture_output() as out:
        result = ip.run_cell(block.source, store_history=False)
    if not result.success:
        error = result.error_in_exec or result.error_before_exec
        pytest.fail(
            f"{block.where}: {type(error).__name__}: {error}\n--- the block\n{block.source}"
            f"--- its output\n{out.stdout}{out.stderr}",
            pytrace=False,
        )


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run(page: Path, shell) -> None:
    for block in blocks(page):
        if block.not_run is None:
            run_block(shell, block)


def test_blocks_not_run_are_still_valid_code() -> None:
    """A block kept out of the run still parses, as Python or as an IPython cell."""
    transform = TransformerManager().transform_cell
    for page in guide_pages():
        for block in blocks(page):
            if block.not_run is not None:
                compile(transform(block.source), block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
