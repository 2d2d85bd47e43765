"""The browser tests' fixtures: a real JupyterLab (or Notebook 7) on a stripped copy of a
notebook, and watched pages in Debian's Chromium. Every module here is marked ``browser``
(its ``pytestmark``), so ``-m "not browser"`` leaves them out."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from labserver import CHROMIUM, CHROMIUM_ARGS, LabServer, NewPage, PageLog, watch


def _require_a_browser() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab_server(tmp_path: Path) -> Iterator[LabServer]:
    """Start JupyterLab on a stripped copy (no outputs, no widget state) of a notebook:
    ``start(notebook, name, companions=()) -> (port, folder)``; ``companions`` are folders copied
    beside it (its recording). Stopped through its own process handle."""
    _require_a_browser()
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


@pytest.fixture
def new_page() -> Iterator[NewPage]:
    """Open a page in Debian's Chromium, watched (``labserver.watch``): ``new_page(height=1000)
    -> (page, log)``, 1280 px wide; a test asserts on the log. The browser starts with the first
    page, so whatever the test prepares before (a server, a notebook) comes first, and closes
    after the test with every page it holds."""
    _require_a_browser()
    with ExitStack() as stack:
        browser: Any = None

        def open_page(height: int = 1000) -> tuple[Any, PageLog]:
            nonlocal browser
            if browser is None:
                from playwright.sync_api import sync_playwright

                playwright = stack.enter_context(sync_playwright())
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                stack.callback(browser.close)
            page = browser.new_page(viewport={"width": 1280, "height": height})
            return page, watch(page)

        yield open_page
