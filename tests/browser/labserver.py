"""What the browser tests share besides their fixtures (``conftest.py``): where Chromium and the
screenshots are, the JavaScript that reads Lab's own objects, a watched page's log, and running a
notebook's cells in Lab or Notebook 7."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
# Where the tests' screenshots land: test-artifacts/, or the folder AGENTNB_SCREENSHOTS names
# (relative to the repository; `make screenshots` points it at docs/img for the documentation).
ARTIFACTS = ROOT / os.environ.get("AGENTNB_SCREENSHOTS", "test-artifacts")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Lab's own objects tell when the notebook's kernel can take a run-all (the toolbar's idle
# indicator turns idle before the session has a kernel).
READY_JS = """async (timeout) => {
  const app = window.jupyterapp;
  await app.restored;
  const start = Date.now();
  const pause = () => new Promise((r) => setTimeout(r, 100));
  let panel = app.shell.currentWidget;
  while (!panel || !panel.sessionContext) {
    if (Date.now() - start > timeout) throw new Error("no notebook panel");
    await pause();
    panel = app.shell.currentWidget;
  }
  await panel.context.ready;
  await panel.sessionContext.ready;
  for (;;) {
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (kernel && kernel.connectionStatus === "connected" && kernel.status === "idle") return true;
    if (Date.now() - start > timeout) throw new Error("kernel not ready");
    await pause();
  }
}"""

SAVE_JS = "async () => { await window.jupyterapp.commands.execute('docmanager:save'); }"
SHUTDOWN_JS = (
    "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown(); }"
)
THEME_JS = (
    "async (theme) => { await window.jupyterapp.commands.execute('apputils:change-theme', { theme }); }"
)

EXECUTE_JS = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code });
  const reply = await future.done;
  return reply.content.status;
}"""


def write_notebook(path: Path, cells: list[str]) -> Path:
    """Write a notebook of code cells (Python 3 kernel) at ``path``."""
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
            for c in cells
        ],
        "metadata": {"kernelspec": kernel},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))
    return path


def show_tab(inspector: Any, tab: str) -> None:
    """Click an inspector's tab and wait until its panel shows it."""
    from playwright.sync_api import expect

    inspector.locator(f"[role=tab][data-tab='{tab}']").click()
    expect(inspector.locator(".anb-panel")).to_have_attribute("data-tab", tab)


@dataclass
class PageLog:
    """What a page reported while a test drove it (``watch``), in the order it came."""

    console: list[str] = field(default_factory=list)
    """Every console message, as ``type: text``."""
    errors: list[str] = field(default_factory=list)
    """The console's errors (with where they were logged) and the page's uncaught errors (with
    their stacks): ``console error: ...`` and ``page error: Name: message``."""
    dialogs: list[str] = field(default_factory=list)
    """The messages of the dialogs the page opened (each dismissed)."""

    @property
    def page_errors(self) -> list[str]:
        """The page's uncaught errors only."""
        return [e for e in self.errors if e.startswith("page error:")]


LabServer = Callable[..., tuple[int, Path]]
"""The ``lab_server`` fixture: ``start(notebook, name, companions=(), ui="lab") -> (port, folder)``."""
NewPage = Callable[..., tuple[Any, PageLog]]
"""The ``new_page`` fixture: ``new_page(height=1000) -> (page, log)``."""


def watch(page: Any) -> PageLog:
    """Log what ``page`` reports from now on; its dialogs are dismissed, as Playwright does
    when nothing listens, once their message is logged."""
    log = PageLog()

    def on_console(message: Any) -> None:
        log.console.append(f"{message.type}: {message.text}")
        if message.type == "error":
            log.errors.append(f"console error: {message.text}\n    at {message.location.get('url', '')}")

    def on_dialog(dialog: Any) -> None:
        log.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("console", on_console)
    page.on(
        "pageerror",
        lambda exc: log.errors.append(f"page error: {exc.name}: {exc.message}\n{exc.stack or ''}"),
    )
    page.on("dialog", on_dialog)
    return log


def run_all_cells(
    page: Any, port: int, name: str, code_cells: int, while_running: Callable[[], None] | None = None
) -> list[str]:
    """Open NAME in Lab, wait until its kernel can take a run-all, run every cell, wait for
    the last prompt, and return the cells' output texts (none may hold a traceback).
    ``while_running`` is called once Run All has started (it must let the last cell finish)."""
    from playwright.sync_api import expect

    page.goto(f"http://127.0.0.1:{port}/lab/tree/{name}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.evaluate(READY_JS, 60_000)
    # Not awaited: the command's promise settles only when the last cell has run.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    if while_running is not None:
        while_running()
    prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
    expect(prompts.last).to_have_text(f"[{code_cells}]:", timeout=60_000)
    outputs = page.locator(".jp-NotebookPanel .jp-OutputArea-output").all_inner_texts()
    assert not any("Traceback" in o or "Error" in o for o in outputs), outputs
    return outputs


def open_notebook(page: Any, port: int, ui: str, name: str) -> None:
    """Open NAME in JupyterLab (``ui="lab"``) or Notebook 7 (``"notebook"``) and wait until its
    kernel can take a run."""
    path = f"lab/tree/{name}" if ui == "lab" else f"notebooks/{name}"
    page.goto(f"http://127.0.0.1:{port}/{path}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.evaluate(READY_JS, 60_000)


def run_all(page: Any, port: int, ui: str, name: str, code_cells: int, timeout: int = 60_000) -> None:
    """Open NAME in ``ui``, run every cell and wait for the last prompt."""
    from playwright.sync_api import expect

    open_notebook(page, port, ui, name)
    # Not awaited: the command's promise settles only when the last cell has run.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt")
    expect(prompts.last).to_have_text(f"[{code_cells}]:", timeout=timeout)
