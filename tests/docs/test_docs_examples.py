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
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import agentnb

PAGES = [page for page in guide_pages() if any(b.not_run is None for b in blocks(page))]


def ipython():
    """The test session's one real shell (start_ipython only returns it on its first call)."""
    start_ipython()
    from IPython import get_ipython

    return get_ipython()


@pytest.fixture()
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = dict(os.environ)
    os.environ.pop("AGENTNB_REPLAY", None)
    ip = ipython()
    before = set(ip.user_ns)
    agentnb.load_ipython_extension(ip)  # a fresh workspace for every page
    yield ip
    for name in set(ip.user_ns) - before:
        del ip.user_ns[name]
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
