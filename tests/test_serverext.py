"""The Jupyter server extension loads with every notebook server, so loading it imports nothing of
agentnb but itself: no agent, model, session or IPython layer (``import agentnb`` is light; its
names load on first use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LIGHT = ["agentnb", "agentnb.serverext", "agentnb.util", "agentnb.util.version"]
"""All of agentnb a notebook server imports to load the extension."""

SERVER = r"""
import json, sys
from jupyter_server.serverapp import ServerApp

app = ServerApp()
app.initialize(argv=[
    "--ServerApp.jpserver_extensions={'agentnb.serverext': True}",
    "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.open_browser=False",
    "--ServerApp.root_dir=" + sys.argv[1],
])
loaded = sorted(m for m in sys.modules if m == "agentnb" or m.startswith("agentnb."))
view = "application/vnd.jupyter.widget-view+json"
notebook = {
    "metadata": {"agentnb": {"inspectors": {"m1": {"text": "shop · inspector\nturn 1 · ok"}}}},
    "cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {view: {"model_id": "m1"}, "text/plain": "Inspector()"}}
    ]}],
}
app.contents_manager.run_pre_save_hooks({"type": "notebook", "content": notebook}, "x.ipynb")
print(json.dumps({"loaded": loaded, "saved": notebook["cells"][0]["outputs"][0]["data"]}))
"""


def run(code: str, tmp_path: Path, *args: str) -> dict:
    jupyter = {f"JUPYTER_{d}_DIR": str(tmp_path / d.lower()) for d in ("CONFIG", "DATA", "RUNTIME")}
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **jupyter},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_loading_the_server_extension_imports_only_itself(tmp_path):
    result = run(SERVER, tmp_path, str(tmp_path))
    assert result["loaded"] == LIGHT
    # Loaded: its pre-save hook gives the inspector's output its static view in the saved file.
    saved = result["saved"]
    assert "application/vnd.jupyter.widget-view+json" not in saved
    assert saved["text/html"].startswith('<div class="agentnb-static-inspector')
    assert "turn 1 · ok" in saved["text/html"]


def test_import_agentnb_loads_its_names_on_first_use(tmp_path):
    code = (
        "import json, sys\n"
        "import agentnb\n"
        "before = sorted(m for m in sys.modules if m.startswith('agentnb'))\n"
        "listed = sorted(set(agentnb.__all__) - set(dir(agentnb)))\n"
        "agent = agentnb.Agent('a', agentnb.ScriptedModel(['hi']))\n"
        "from agentnb import Team, tool_call\n"
        "print(json.dumps({'before': before, 'listed': listed, 'answer': agent.run('hello').content,\n"
        "                  'after': 'agentnb.agent' in sys.modules, 'team': Team.__module__}))\n"
    )
    result = run(code, tmp_path)
    assert result["before"] == ["agentnb", "agentnb.util", "agentnb.util.version"]
    assert result["listed"] == []  # dir() (tab completion) shows the names not loaded yet
    assert (result["answer"], result["after"], result["team"]) == ("hi", True, "agentnb.team.team")
