"""Run the notebooks in this folder under nbval, with or without ``--nbval`` on the command line.

``pytest notebooks`` (and ``pytest tests notebooks``) collects every ``*.ipynb`` here as an nbval
test: each code cell runs in a fresh kernel of the current environment and its outputs must
equal the committed ones, after ``nbval_sanitize.cfg``. agentnb's pytest plugin (installed with
the package) names the notebook to its kernel and makes replay strict, so every ``%%agent``
replays the recording committed beside its notebook. Notebooks elsewhere (for example
``tests/browser/inspector_demo.ipynb``, saved without outputs) are left alone unless ``--nbval``
is given.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from nbval.plugin import IPyNbFile

HERE = Path(__file__).resolve().parent
SANITIZE = HERE / "nbval_sanitize.cfg"


class NotebookFile(IPyNbFile):
    """A notebook of this folder: current environment's kernel, this folder's sanitize file."""

    def setup(self) -> None:
        option = self.config.option
        saved = option.nbval_current_env, option.nbval_kernel_name
        # nbval reads the kernel choice from the options; set them only while the kernel starts.
        option.nbval_current_env, option.nbval_kernel_name = True, None
        try:
            super().setup()
        finally:
            option.nbval_current_env, option.nbval_kernel_name = saved

    def get_sanitize_files(self) -> list[str]:
        return super().get_sanitize_files() or [str(SANITIZE)]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    option = parent.config.option
    if option.nbval or option.nbval_lax:
        return None  # nbval's own hook collects it, with the options given
    if file_path.suffix == ".ipynb" and file_path.parent == HERE:
        return NotebookFile.from_parent(parent, path=file_path)
    return None
