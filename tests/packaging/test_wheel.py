"""The wheel as users get it: the sdist and wheel built from a copy of the clone (the wheel again
from the sdist), the wheel installed with its ``notebook`` and ``openai`` extras in a fresh venv
outside the clone, and used there with the clone nowhere on ``sys.path``: the import, the front
end's files, the server extension, the quickstart notebook.

The venv's dependencies come from the package index (or pip's cache), so this is the one test
that needs more than loopback; ``-m "not wheel"`` leaves it out. It takes about a minute, most of
it pip; the timings are printed at the end.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentnb.ipython import wire
from agentnb.util.extras import DISTRIBUTION, EXTRAS
from agentnb.util.version import __version__

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Built:
    """What the build made, and how long each step took."""

    sdist: Path
    wheel: Path  # built from the sdist, as ``python -m build`` does by default
    direct: Path  # built from the source tree
    output: str
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class Venv:
    """A fresh venv holding the wheel, and a place outside the clone to run in."""

    bin: Path
    work: Path
    env: dict[str, str]


def _run(args: Sequence[str | Path], cwd: Path, env: dict[str, str] | None = None) -> tuple[str, str]:
    """Run ``args``; their stdout and stderr, or a failure showing them."""
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode:
        output = (done.stdout + done.stderr)[-6000:]
        pytest.fail(f"{' '.join(map(str, args))} exited with {done.returncode}:\n{output}")
    return done.stdout, done.stderr


def _clean_env() -> dict[str, str]:
    """This process's environment without what would point a child at the clone or the dev venv."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JPY_SESSION_NAME", "IPYTHONDIR")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("JUPYTER")}


def _copy_of_the_clone(to: Path) -> Path:
    """The clone's files as a fresh clone would have them (tracked and new, not ignored), so the
    build's egg-info and build/ land in the copy."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet committed is not copied
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    return to


def _contents(wheel: Path) -> dict[str, str]:
    """Each file of ``wheel`` and the hash of its bytes."""
    with zipfile.ZipFile(wheel) as z:
        return {name: hashlib.sha256(z.read(name)).hexdigest() for name in z.namelist()}


@pytest.fixture(scope="module")
def timings(request: pytest.FixtureRequest) -> Iterator[dict[str, float]]:
    """Seconds per step, written to the terminal when the module is done."""
    spent: dict[str, float] = {}
    yield spent
    line = "wheel test: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in spent.items())
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n{line}")


@dataclass
class Jupyter:
    """A fresh venv getting the Jupyter a user already has, installed while the wheel builds."""

    home: Path
    bin: Path
    pip: subprocess.Popen[bytes]
    log: Path
    start: float


def _pip_into(bin_: Path, *args: str | Path) -> list[str]:
    """This pip installing into the venv of ``bin_`` (--python): the venv gets no pip of its own
    and no path of ours. Not compiled: nothing here runs long enough to gain from it."""
    return [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(bin_ / "python"),
        "install",
        "-q",
        "--no-compile",
    ] + [str(a) for a in args]


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jupyter]:
    home = tmp_path_factory.mktemp("venv")
    start = time.monotonic()
    _run([sys.executable, "-m", "venv", "--without-pip", home / "env"], cwd=home)
    bin_, log = home / "env" / "bin", home / "jupyter-install.log"
    with open(log, "wb") as out:
        pip = subprocess.Popen(
            _pip_into(bin_, "jupyter-server", "nbclient", "ipykernel"),
            cwd=home,
            env=_clean_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    yield Jupyter(home=home, bin=bin_, pip=pip, log=log, start=start)
    if pip.poll() is None:  # a build failed first: this install is not needed any more
        pip.kill()
        pip.wait()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, jupyter: Jupyter, timings: dict[str, float]) -> Built:
    # Takes ``jupyter`` so that its install runs while this builds.
    start = time.monotonic()
    source = _copy_of_the_clone(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    env = _clean_env()
    # The default build: the sdist, then the wheel from the unpacked sdist.
    output = "".join(_run([sys.executable, "-m", "build", "--outdir", out, source], cwd=source, env=env))
    direct = tmp_path_factory.mktemp("direct")
    output += "".join(
        _run([sys.executable, "-m", "build", "--wheel", "--outdir", direct, source], cwd=source, env=env)
    )
    timings["build"] = time.monotonic() - start
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    (from_tree,) = direct.glob("*.whl")
    return Built(sdist=sdist, wheel=wheel, direct=from_tree, output=output)


@pytest.fixture(scope="module")
def venv(jupyter: Jupyter, built: Built, timings: dict[str, float]) -> Venv:
    if jupyter.pip.wait(timeout=600):
        pytest.fail(f"installing Jupyter in the venv failed:\n{jupyter.log.read_text()[-6000:]}")
    timings["jupyter"] = time.monotonic() - jupyter.start
    start = time.monotonic()
    # As a user installs it into the environment of their Jupyter: the wheel with its extras.
    _run(_pip_into(jupyter.bin, f"{built.wheel}[notebook,openai]"), cwd=jupyter.home, env=_clean_env())
    timings["install"] = time.monotonic() - start
    home, bin_ = jupyter.home, jupyter.bin
    env = {
        **_clean_env(),
        "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}",
        "JUPYTER_CONFIG_DIR": str(home / "jupyter-config"),  # no user config: what the wheel did alone
        "JUPYTER_DATA_DIR": str(home / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(home / "jupyter-runtime"),
        "IPYTHONDIR": str(home / "ipython"),
    }
    (home / "work").mkdir()
    return Venv(bin=bin_, work=home / "work", env=env)


def _in_venv(venv: Venv, code: str, cwd: Path | None = None) -> Any:
    """Run ``code`` with the venv's Python outside the clone; the JSON it prints last."""
    stdout, _ = _run([venv.bin / "python", "-c", code], cwd=cwd or venv.work, env=venv.env)
    return json.loads(stdout.strip().splitlines()[-1])


def test_the_build_warns_of_nothing_and_names_the_distribution(built: Built) -> None:
    assert not re.findall(r"\w+Warning\b.*", built.output)  # e.g. the license table's deprecation
    assert built.sdist.name == f"jupyter_agentnb-{__version__}.tar.gz"
    assert built.wheel.name == f"jupyter_agentnb-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(built.wheel) as z:
        metadata = z.read(f"jupyter_agentnb-{__version__}.dist-info/METADATA").decode()
        license_text = z.read(f"jupyter_agentnb-{__version__}.dist-info/licenses/LICENSE")
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert f"Name: {DISTRIBUTION}" in headers and f"Version: {__version__}" in headers
    assert "License-Expression: MIT" in headers and "License-File: LICENSE" in headers
    assert not [h for h in headers if h.startswith(("License:", "Classifier: License"))]
    assert license_text == (ROOT / "LICENSE").read_bytes()


def test_every_install_line_names_an_extra_the_wheel_provides(built: Built) -> None:
    named = set(EXTRAS)
    for module in (ROOT / "agentnb").rglob("*.py"):
        named.update(re.findall(r"install_line\(['\"](\w+)['\"]\)", module.read_text(encoding="utf-8")))
    with zipfile.ZipFile(built.wheel) as z:
        metadata = z.read(f"jupyter_agentnb-{__version__}.dist-info/METADATA").decode()
    provided = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.M))
    assert {"notebook", "openai", "evals", "tracing"} <= named
    assert named <= provided, named - provided


def test_the_sdist_builds_the_same_wheel(built: Built) -> None:
    from_sdist, from_tree = _contents(built.wheel), _contents(built.direct)
    assert sorted(from_sdist) == sorted(from_tree)
    assert from_sdist == from_tree


def test_the_wheel_holds_the_front_end_and_the_server_extensions_config(built: Built) -> None:
    static = ROOT / "agentnb" / "ipython" / "static"
    names = sorted(p.name for p in static.iterdir() if p.is_file())
    assert {"inspector.js", "inspector.css", "loader.js"} <= set(names)
    config = "jupyter-config/jupyter_server_config.d/agentnb.json"
    with zipfile.ZipFile(built.wheel) as z:
        for name in names:
            assert z.read(f"agentnb/ipython/static/{name}") == (static / name).read_bytes(), name
        data = z.read(
            f"jupyter_agentnb-{__version__}.data/data/etc/jupyter/jupyter_server_config.d/agentnb.json"
        )
    assert data == (ROOT / config).read_bytes()
    assert json.loads(data)["ServerApp"]["jpserver_extensions"] == {"agentnb.serverext": True}


def test_the_venv_imports_the_installed_package_and_not_the_clone(venv: Venv) -> None:
    seen = _in_venv(
        venv,
        "import importlib.metadata as m, json, sys\n"
        "from importlib.resources import files\n"
        "import agentnb\n"
        "static = sorted(p.name for p in files('agentnb.ipython').joinpath('static').iterdir())\n"
        "names = sorted(d.metadata['Name'] for d in m.distributions())\n"
        "print(json.dumps({'file': agentnb.__file__, 'version': agentnb.__version__, 'path': sys.path,\n"
        f"    'metadata': m.version({DISTRIBUTION!r}), 'static': static, 'names': names}}))",
    )
    prefix = str(venv.bin.parent) + os.sep
    assert seen["file"].startswith(prefix), seen["file"]
    assert not [p for p in seen["path"] if p.startswith((str(ROOT), sys.prefix))], seen["path"]
    assert seen["version"] == seen["metadata"] == __version__
    assert {"inspector.js", "inspector.css", "loader.js"} <= set(seen["static"])
    assert DISTRIBUTION in seen["names"] and "agentnb" not in seen["names"]  # not the index's agentnb


def test_jupyter_server_lists_the_extension_enabled_with_no_manual_step(venv: Venv) -> None:
    output = ANSI.sub(
        "", "".join(_run([venv.bin / "jupyter", "server", "extension", "list"], venv.work, venv.env))
    )
    where, enabled = None, []
    for line in output.splitlines():
        if line.startswith("Config dir:"):
            where = line.split(":", 1)[1].strip()
        elif re.fullmatch(r"\s*agentnb\.serverext\s+enabled\s*", line):
            enabled.append(where)
    assert enabled == [str(venv.bin.parent / "etc" / "jupyter")], output
    assert re.search(r"^\s*agentnb\.serverext\s+OK\s*$", output, re.M), output  # it imports and loads


def test_the_quickstart_runs_in_the_venv_and_saves_its_inspectors(
    venv: Venv, tmp_path: Path, timings: dict[str, float]
) -> None:
    start = time.monotonic()
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", tmp_path)
    shutil.copytree(ROOT / "notebooks" / "quickstart.agentnb", tmp_path / "quickstart.agentnb")
    # A last cell says which Python and which agentnb the kernel ran; nbclient raises on a cell's
    # error, so every assertion cell of the quickstart passed too.
    code = (
        "import json, os, nbformat\n"
        "from nbclient import NotebookClient\n"
        "path = os.path.abspath('quickstart.ipynb')\n"
        "nb = nbformat.read(path, as_version=4)\n"
        "nb.cells.append(nbformat.v4.new_code_cell("
        "'import json, sys, agentnb; print(json.dumps([sys.prefix, agentnb.__file__]))'))\n"
        "client = NotebookClient(nb, timeout=120, kernel_name='python3',"
        " resources={'metadata': {'path': os.getcwd()}})\n"
        "client.execute(env={**os.environ, 'JPY_SESSION_NAME': path})\n"
        "nbformat.write(nb, 'executed.ipynb')\n"
        "print(json.dumps(len(nb.cells)))"
    )
    _in_venv(venv, code, cwd=tmp_path)
    timings["quickstart"] = time.monotonic() - start
    nb = json.loads((tmp_path / "executed.ipynb").read_text(encoding="utf-8"))
    prefix, module = json.loads("".join(nb["cells"][-1]["outputs"][0]["text"]))
    assert prefix == str(venv.bin.parent) and module.startswith(prefix + os.sep)
    saved = {}
    for widget in nb["metadata"]["widgets"][WIDGET_STATE]["state"].values():
        for buffer in widget.get("buffers", []):
            if buffer["path"] == [wire.TRAIT_SNAPSHOT]:
                saved[widget["state"][wire.TRAIT_AGENT]] = json.loads(base64.b64decode(buffer["data"]))
    assert sorted(saved) == ["shop", "tiny"]
    shop = saved["shop"]
    assert shop[wire.TURN_INDEX] == 1  # the inspector's saved state is at the last turn
    assert [row["content"] for row in shop[wire.SUMMARIES]] == [
        "Added milk and eggs.",
        "Took the eggs off; milk is left.",
    ]
    assert [row["message"] for row in saved["tiny"][wire.SUMMARIES]] == [
        "What is the capital of France?",
        "And of Italy?",
    ]
