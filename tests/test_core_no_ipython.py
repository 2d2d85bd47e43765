"""The core runs with IPython absent, and ``import agentnb`` stays light."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import sys
sys.modules["IPython"] = None  # any import of IPython now fails
for name in ("ipywidgets", "anywidget"):
    sys.modules[name] = None
import agentnb
from agentnb import Agent, ScriptedModel, tool_call
agent = Agent(model=ScriptedModel([tool_call("update_session_state", session_state_updates={"a": 1}), "ok"]),
              enable_agentic_state=True, add_session_state_to_context=True, session_state={})
result = agent.run("go")
assert result["a"] == 1, result.state
heavy = sorted(m for m in ("openai", "pandas", "IPython", "ipywidgets", "numpy") if sys.modules.get(m) is not None)
print("heavy:", heavy)
"""


def test_core_runs_without_ipython_and_imports_no_heavy_modules():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "heavy: []"
