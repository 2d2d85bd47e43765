"""Execute the notebooks of this folder in place and normalise them, or check they are normalised.

    .venv/bin/python notebooks/execute.py [NAME.ipynb ...]          # execute, normalise, write
    .venv/bin/python notebooks/execute.py --check [NAME.ipynb ...]  # fail if one is not normalised

The ``.ipynb`` files are the source: edit one in JupyterLab, then run this (or ``make notebooks``).
Each notebook runs top to bottom in a fresh kernel of the current environment, in its own folder,
and is written back without what changes from run to run, in the layout Jupyter itself saves.
``pytest notebooks`` (nbval) re-runs every cell against the committed outputs, and
``tests/ipython/test_notebooks.py`` checks every committed notebook is normalised.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import ipykernel.kernelspec
import nbformat
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
# What JupyterLab saves for its default Python kernel: no machine's own kernel name in the file.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class CurrentEnvironment(AsyncKernelManager):
    """A kernel of this interpreter, whichever kernel the notebook names: it runs the code here."""

    @property
    def kernel_spec(self) -> KernelSpec:
        return KernelSpec(
            resource_dir=ipykernel.kernelspec.RESOURCES, **ipykernel.kernelspec.get_kernel_dict()
        )


def execute(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` after running all its cells in a fresh kernel, in its folder."""
    nb = nbformat.read(path, as_version=4)
    folder = {"metadata": {"path": str(path.parent)}}
    client = NotebookClient(nb, kernel_manager_class=CurrentEnvironment, resources=folder)
    # JPY_SESSION_NAME is how Jupyter tells a kernel its notebook; %%agent saves its session
    # beside that notebook (NAME.agentnb/), as it does in JupyterLab and under nbval.
    client.execute(env={**os.environ, "JPY_SESSION_NAME": str(path)})
    return nb


def normalise(nb: nbformat.NotebookNode) -> str:
    """The notebook as the file to commit: volatile metadata stripped, in Jupyter's own layout."""
    nb.metadata.pop("widgets", None)  # widget state: random model ids and the inspector's source
    nb.metadata.pop("papermill", None)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # nbclient's and JupyterLab's timestamps
        cell.metadata.pop("papermill", None)
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:
                # The model is gone once the kernel is: with no id, JupyterLab hides the view
                # instead of "model not found", and other renderers show the static text/html
                # beside it. (A random id would also change the file on every run.)
                view["model_id"] = ""
    # What nbformat.write (and so JupyterLab's save) produces: 1-space indent, sorted keys, "\n".
    return nbformat.writes(nb) + "\n"


def main(argv: list[str]) -> int:
    """Execute and normalise the notebooks named (all of this folder by default), or check them."""
    parser = argparse.ArgumentParser(prog="notebooks/execute.py", description=main.__doc__)
    parser.add_argument("notebooks", nargs="*", help="NAME.ipynb in notebooks/, or a path")
    parser.add_argument("--check", action="store_true", help="do not execute; fail if one is not normalised")
    args = parser.parse_args(argv)
    paths = [Path(n) if Path(n).exists() else HERE / n for n in args.notebooks]
    paths = [p.resolve() for p in paths] or sorted(HERE.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)} (give NAME.ipynb of notebooks/ or a path)")
    if args.check:
        stale = [
            p.name
            for p in paths
            if normalise(nbformat.read(p, as_version=4)) != p.read_text(encoding="utf-8")
        ]
        if stale:
            names = " ".join(stale)
            print(
                f"not normalised: {names}\nrun: .venv/bin/python notebooks/execute.py {names}",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path in paths:
        path.write_text(normalise(execute(path)), encoding="utf-8")
        print("executed", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
