"""A %%chat record in a real JupyterLab: text shows literally (dollar signs are not TeX)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from labserver import CHROMIUM, CHROMIUM_ARGS, lab_server, run_all_cells  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

ANSWER = "Apples are $0.50 each and bread is $2.25; $x^2$ stays as typed."


def test_a_chat_record_shows_dollars_as_dollars(tmp_path: Path, lab_server: Callable[..., tuple[int, Path]]) -> None:
    from playwright.sync_api import expect, sync_playwright

    cells = [
        "%load_ext agentnb",
        f"from agentnb import ScriptedModel\nmodel = ScriptedModel([{ANSWER!r}])",
        "%%agent grocer --model model --no-session\nAnswer with prices.",
        "%%chat grocer\nHow much are apples and bread?",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    source = tmp_path / "prices.ipynb"
    source.write_text(json.dumps(notebook))
    port, _ = lab_server(source, "prices.ipynb")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            run_all_cells(page, port, "prices.ipynb", len(cells))
            record = page.locator(".agentnb-record").last
            expect(record.locator(".agentnb-record-answer")).to_contain_text(ANSWER, timeout=30_000)
            page.wait_for_timeout(1000)  # MathJax typesets after rendering: give it the chance
            assert record.locator("mjx-container, .MathJax").count() == 0
            expect(record.locator(".agentnb-record-answer")).to_contain_text(ANSWER)
        finally:
            browser.close()
