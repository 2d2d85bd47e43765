"""The documentation site builds with `mkdocs build --strict` (a broken link or anchor, a name the
API reference cannot find, a page left out of the nav fails it), and the README stays a short
front page whose links all land."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from doc_blocks import DOCS, ROOT

README = ROOT / "README.md"


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config)]
    return subprocess.run(
        [*command, "--site-dir", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def nav_pages(nav: list) -> list[str]:
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_the_site_builds_strict(tmp_path: Path) -> None:
    run = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, run.stdout + run.stderr
    reference = (tmp_path / "site" / "reference" / "agentnb" / "index.html").read_text()
    assert 'id="agentnb.Agent"' in reference and 'id="agentnb.team.Team"' in reference


@pytest.mark.parametrize(
    "breakage, complaint",
    [
        ({"orphan.md": "# Not in the nav\n"}, 'not included in the "nav" configuration'),
        (
            {"page.md": "# Page\n\nSee [the guide](missing.md).\n"},
            "'missing.md', but the target is not found",
        ),
        ({"page.md": "# Page\n\nSee [the top](index.md#no-such-heading).\n"}, "does not contain an anchor"),
        ({"page.md": "# Page\n\n::: agentnb.no_such_name\n"}, "agentnb.no_such_name"),
    ],
)
def test_the_strict_build_fails_on(tmp_path: Path, breakage: dict[str, str], complaint: str) -> None:
    """The real configuration, on a two-page site with one thing broken."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n## A heading\n")
    (docs / "page.md").write_text("# Page\n\nBack [home](index.md#a-heading).\n")
    for name, text in breakage.items():
        (docs / name).write_text(text)
    config["docs_dir"] = str(docs)
    config["nav"] = [{"Home": "index.md"}, {"Page": "page.md"}]
    mkdocstrings = next(
        p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p
    )
    mkdocstrings["handlers"]["python"]["paths"] = [str(ROOT)]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    run = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert run.returncode != 0 and complaint in run.stdout + run.stderr, run.stdout + run.stderr


def test_every_page_is_in_the_nav_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = nav_pages(config["nav"])
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(listed) == on_disk


def test_the_readme_is_short_and_its_links_land() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = set(nav_pages(config["nav"]))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") and link.endswith(".md") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README links {link}, which does not exist"
        if link.startswith("docs/") and link.endswith(".md"):
            assert link.removeprefix("docs/") in pages, f"README links {link}, which is not in the site's nav"


def test_contributing_lists_the_layers_of_the_import_contract() -> None:
    """The layers on the contributing page are pyproject's import-linter contract, in order."""
    tomllib = pytest.importorskip("tomllib")
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    page = (DOCS / "contributing.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: the import-linter contract -->\n```text\n(.*?)```", page, re.S)
    assert block, "contributing.md lost its layers block"
    listed = [
        line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()
    ]
    assert listed == contract["layers"]


def test_the_screenshots_the_pages_show_exist() -> None:
    for page in DOCS.rglob("*.md"):
        for image in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / image).resolve().is_file(), (
                f"{page.relative_to(ROOT)} shows {image}, missing"
            )
