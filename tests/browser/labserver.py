"""A real JupyterLab for the browser tests (they import the ``lab_server`` fixture from here): a
server on a free loopback port, rooted in a scratch folder holding a stripped copy of a
notebook, driven through Debian's Chromium."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

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

EXECUTE_JS = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code });
  const reply = await future.done;
  return reply.content.status;
}"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab_server(tmp_path: Path) -> Iterator[Callable[..., tuple[int, Path]]]:
    """Start JupyterLab on a stripped copy (no outputs, no widget state) of a notebook:
    ``start(notebook, name, companions=()) -> (port, folder)``; ``companions`` are folders copied
    beside it (its recording). Stopped through its own process handle."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    servers: list[tuple[subprocess.Popen, object]] = []

    def start(
        source: Path, name: str, companions: tuple[Path, ...] = (), ui: str = "lab"
    ) -> tuple[int, Path]:
        notebook = json.loads(source.read_text())
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        notebook["metadata"].pop("widgets", None)
        work = tmp_path / "lab"
        work.mkdir()
        (work / name).write_text(json.dumps(notebook))
        for folder in companions:
            shutil.copytree(folder, work / folder.name, ignore=shutil.ignore_patterns("*.lock"))
        settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(
            '{"fetchNews": "false", "checkForUpdates": false}'
        )
        env = dict(
            os.environ,
            JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
            JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
            JUPYTER_DATA_DIR=str(tmp_path / "data"),  # the notebook trust database too
            IPYTHONDIR=str(tmp_path / "ipython"),
        )
        port = _free_port()
        app = "LabApp" if ui == "lab" else "JupyterNotebookApp"  # JupyterLab, or Notebook 7
        command = [
            sys.executable, "-m", "jupyterlab" if ui == "lab" else "notebook", "--no-browser", "--allow-root",
            "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.ip=127.0.0.1",
            f"--port={port}", f"--ServerApp.root_dir={work}",
            f"--{app}.workspaces_dir={tmp_path / 'workspaces'}",
            f"--{app}.user_settings_dir={tmp_path / 'settings'}",
            # Both front ends show window.jupyterapp: a notebook saved in one is opened in the other.
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
        ]  # fmt: skip
        if ui == "lab":
            command += [
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ]
        log = (tmp_path / "lab.log").open("w")
        server = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        servers.append((server, log))
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2):
                    return port, work
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start; see {tmp_path / 'lab.log'}") from None
                time.sleep(0.2)

    try:
        yield start
    finally:
        for server, log in servers:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()  # type: ignore[attr-defined]


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
