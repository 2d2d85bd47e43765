"""The pytest plugin loads with every pytest start wherever agentnb is installed, so loading it
imports only what it reads (the replay setting), not agentnb's agents, sessions or models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LIGHT = [
    "agentnb",
    "agentnb.errors",
    "agentnb.ipython",
    "agentnb.ipython.pytest_plugin",
    "agentnb.util",
    "agentnb.util.replay",
    "agentnb.util.version",
]
"""All of agentnb a pytest start imports to load the plugin."""

CONFTEST = """
import json, sys
from pathlib import Path

def pytest_configure(config):
    loaded = sorted(m for m in sys.modules if m == "agentnb" or m.startswith("agentnb."))
    seen = {"loaded": loaded, "plugin": config.pluginmanager.has_plugin("agentnb")}
    (Path(__file__).parent / "seen.json").write_text(json.dumps(seen))
"""

TEST = """
import os

def test_outside_a_notebook_the_replay_mode_is_left_alone():
    assert os.environ.get("AGENTNB_REPLAY") is None
"""


def test_loading_the_pytest_plugin_imports_only_a_handful_of_modules(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_plain.py").write_text(TEST)
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "AGENTNB_REPLAY")
    }
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["plugin"] is True  # loaded through its entry point, as at every pytest start
    assert seen["loaded"] == LIGHT
