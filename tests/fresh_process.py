"""Running code in a fresh interpreter (what a kernel restart gives), for the tests of what a
saved session carries into a new process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(tmp_path: Path, module: str, source: str, code: str) -> dict[str, Any]:
    """Write ``source`` as ``module``.py in ``tmp_path`` and run ``code`` after importing all of
    it, in a new interpreter there; the last line it prints, read as JSON."""
    (tmp_path / f"{module}.py").write_text(source)
    out = subprocess.run(
        [sys.executable, "-c", f"from {module} import *\n" + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def forked(fn: Callable[[], object]) -> int:
    """Run ``fn`` in a forked child (to be killed at any moment, or waited for); its pid. The child
    never returns into pytest: its exit code says whether ``fn`` raised (warnings it gives are
    not shown: a killed writer's sibling announces what it finds, as expected)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        except BaseException:  # noqa: BLE001 - the exit code says it failed
            code = 1
        finally:
            os._exit(code)
    return pid
