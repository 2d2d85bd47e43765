"""The main job end to end: the quickstart notebook opened in a real JupyterLab and run top to
bottom in Debian's Chromium, offline, with its inspector rendered and no error anywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from labserver import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, lab_server, run_all_cells  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def test_quickstart_runs_in_jupyterlab(lab_server: Callable[[Path, str], tuple[int, Path]]) -> None:
    import json

    from playwright.sync_api import expect, sync_playwright

    code_cells = sum(c["cell_type"] == "code" for c in json.loads(QUICKSTART.read_text())["cells"])
    port, work = lab_server(QUICKSTART, "quickstart.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            run_all_cells(page, port, "quickstart.ipynb", code_cells)
            # Both inspectors (the %%agent cell's and %agentnb show's) follow the agent to turn 2.
            inspectors = page.locator(".anb-root")
            expect(inspectors).to_have_count(2, timeout=30_000)
            for i in range(2):
                expect(inspectors.nth(i).locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
            # The %%chat records rendered as HTML, answer included.
            expect(page.get_by_text("Took the eggs off; milk is left.").first).to_be_visible()
            first = page.locator(".anb-root").first
            first.scroll_into_view_if_needed()
            # Lab renders the cells of a scrolled notebook lazily: wait until they are drawn.
            expect(first).to_be_in_viewport()
            expect(first.locator(".anb-panel")).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "quickstart.png"))
        finally:
            browser.close()
    assert (work / "quickstart.agentnb").is_dir(), "the session is saved beside the notebook"
    assert not errors, errors
