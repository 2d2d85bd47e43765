"""The inspector's thumbnails in a real JupyterLab and a real Notebook 7 (Debian's Chromium, Python
playwright).

``images_demo.ipynb`` (agentnb's offline ScriptedModel) sends an analyst a matplotlib figure
(Agg) and a PDF with ``%%chat --attach``, and its tool returns a chart. The test reads the
inspector: the figure as a thumbnail in the Prompt tab (a blob: URL of at most 160 px, asked for
from the kernel) with the PDF as its name, type and size beside it; a click opens the original
(600 px wide) in a dialog that Esc closes, the focus back on the thumbnail; the Request tab's user
message and the tool result's message with their thumbnails; the Tool calls tab's row marking the
attachment and its thumbnail when expanded; the ``%%chat`` record's small thumbnail. Then the
notebook is saved and reopened without its kernel: the saved file's inspector output and record
hold 80 px thumbnails as data URLs (and not the image), and the static view shows them.
Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from labserver import ARTIFACTS, SAVE_JS, SHUTDOWN_JS, THEME_JS, LabServer, NewPage, run_all, show_tab

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("images_demo.ipynb")
CODE_CELLS = 5
# What the browser drew: the picture's source kind and its own size in pixels.
PICTURE_JS = (
    "(img) => ({ src: img.src.split(':')[0], w: img.naturalWidth, h: img.naturalHeight, done: img.complete })"
)


def _picture(img) -> dict:
    from playwright.sync_api import expect

    expect(img).to_be_visible(timeout=30_000)
    img.page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    return img.evaluate(PICTURE_JS)


def _check_prompt(page, inspector, ui: str) -> None:
    """The user's figure as a thumbnail, the PDF as its line; a click opens the original."""
    from playwright.sync_api import expect

    show_tab(inspector, "prompt")
    user = inspector.locator(".anb-section-user")
    thumb = user.locator(".anb-part-image .anb-thumb-img")
    drawn = _picture(thumb)
    assert drawn["src"] == "blob" and max(drawn["w"], drawn["h"]) == 160, drawn  # a thumbnail, not the image
    expect(user.locator(".anb-part-image .anb-part-line")).to_have_text(
        re.compile(r"^image figure · image/png · 600×400 · \d+\.\d KB$")
    )
    pdf = user.locator(".anb-part-file")
    expect(pdf).to_have_text(re.compile(r"report\.pdf · application/pdf · 48 B"))
    assert pdf.locator("img").count() == 0  # a file is never drawn
    inspector.screenshot(path=str(ARTIFACTS / f"images-{ui}-prompt.png"))

    button = user.locator("button.anb-thumb")
    button.click()
    dialog = page.locator("dialog.anb-full")
    expect(dialog).to_be_visible()
    full = _picture(dialog.locator(".anb-full-img"))
    assert full["src"] == "blob" and (full["w"], full["h"]) == (600, 400), full  # the original
    expect(dialog.locator(".anb-full-line")).to_contain_text("600×400")
    page.screenshot(path=str(ARTIFACTS / f"images-{ui}-full.png"))
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert button.evaluate("(el) => el === document.activeElement"), "the focus goes back to the thumbnail"
    page.keyboard.press("Enter")  # from the keyboard: opened again (fetched again), closed by its button
    expect(dialog).to_be_visible()
    assert _picture(dialog.locator(".anb-full-img"))["w"] == 600
    dialog.locator("button.anb-full-close").click()
    expect(dialog).to_have_count(0)


def _check_request_and_tools(inspector, ui: str) -> None:
    """The request's messages and the tool call show their images too."""
    from playwright.sync_api import expect

    show_tab(inspector, "request")
    panel = inspector.locator(".anb-panel")
    # The last call's request: the user's message, and the chart the tool returned (Chat
    # Completions carries a tool result's image in a user message after the tool message).
    for row in panel.locator("details.anb-role-user").all():
        if not row.evaluate("(el) => el.open"):
            row.locator("summary").first.click()
    thumbs = panel.locator(".anb-thumb-img")
    expect(thumbs).to_have_count(2, timeout=30_000)
    sizes = sorted((d["w"], d["h"]) for d in (_picture(t) for t in thumbs.all()))
    assert sizes == [(160, 107), (160, 120)], sizes  # 600×400 and 400×300, each scaled to 160 px
    expect(panel.locator(".anb-part-file")).to_contain_text("report.pdf · application/pdf · 48 B")
    panel.locator("details.anb-role-user").last.scroll_into_view_if_needed()
    inspector.screenshot(path=str(ARTIFACTS / f"images-{ui}-request.png"))

    show_tab(inspector, "tools")
    row = inspector.locator("details.anb-tool[data-tool='plot_stock']")
    expect(row.locator(".anb-tool-parts")).to_have_text("+1 attachment")
    row.locator("summary").click()
    chart = _picture(row.locator(".anb-thumb-img"))
    assert (chart["w"], chart["h"]) == (160, 120), chart
    expect(row.locator(".anb-part-line")).to_have_text(re.compile(r"^image figure · image/png · 400×300 · "))
    inspector.screenshot(path=str(ARTIFACTS / f"images-{ui}-tools.png"))


def _check_dark(page, inspector, ui: str) -> None:
    """In the dark theme the thumbnails' frames and lines follow it (a screenshot to look at)."""
    from playwright.sync_api import expect

    page.evaluate(THEME_JS, "JupyterLab Dark")
    expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1, timeout=30_000)
    show_tab(inspector, "prompt")
    frame = inspector.locator(".anb-section-user button.anb-thumb")
    background = frame.evaluate("(el) => getComputedStyle(el).backgroundColor")
    assert background not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
    inspector.screenshot(path=str(ARTIFACTS / f"images-{ui}-dark.png"))
    page.evaluate(THEME_JS, "JupyterLab Light")
    expect(page.locator("body[data-jp-theme-light='true']")).to_have_count(1, timeout=30_000)


def _saved_outputs(path: Path) -> list[dict]:
    notebook = json.loads(path.read_text())
    return [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def _data_urls(html: str) -> list[bytes]:
    return [
        base64.b64decode(b)
        for b in re.findall(r'src="data:image/(?:jpeg|png);base64,([A-Za-z0-9+/=]+)"', html)
    ]


def _check_saved_and_reopened(page, port: int, work: Path, ui: str) -> None:
    """Saved, the inspector's static view and the record keep small thumbnails; reopened without a
    kernel, they show."""
    from playwright.sync_api import expect

    page.evaluate(SAVE_JS)
    outputs = _saved_outputs(work / "images.ipynb")
    htmls = ["".join(o.get("data", {}).get("text/html", "")) for o in outputs]
    static = next(h for h in htmls if "agentnb-static-inspector" in h)
    record = next(h for h in htmls if "agentnb-record" in h)
    for html in (static, record):
        pictures = _data_urls(html)
        assert len(pictures) == 2, html[:400]  # the figure and the chart, small
        assert all(len(p) < 6000 for p in pictures), [len(p) for p in pictures]
    assert "image figure · image/png · 600×400" in static and "report.pdf · application/pdf · 48 B" in static
    page.evaluate(SHUTDOWN_JS)
    open_notebook_without_kernel(page, port, ui)
    view = page.locator(".agentnb-static-inspector").first
    expect(view).to_be_visible(timeout=30_000)
    for img in view.locator(".agentnb-part img").all():
        drawn = _picture(img)
        assert drawn["src"] == "data" and max(drawn["w"], drawn["h"]) == 80, drawn
    page.locator(".agentnb-record").first.scroll_into_view_if_needed()
    expect(page.locator(".agentnb-record .agentnb-part img")).to_have_count(2)
    view.screenshot(path=str(ARTIFACTS / f"images-{ui}-static.png"))


def open_notebook_without_kernel(page, port: int, ui: str) -> None:
    path = "lab/tree/images.ipynb" if ui == "lab" else "notebooks/images.ipynb"
    page.goto(f"http://127.0.0.1:{port}/{path}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_thumbnails_in_prompt_request_tools_and_the_saved_notebook(
    lab_server: LabServer, new_page: NewPage, ui: str
) -> None:
    if ui == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, work = lab_server(NOTEBOOK, "images.ipynb", ui=ui)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page()
    run_all(page, port, ui, "images.ipynb", CODE_CELLS, timeout=120_000)
    inspector = page.locator(".anb-root[data-agent='analyst']").first
    inspector.scroll_into_view_if_needed()
    _check_prompt(page, inspector, ui)
    _check_request_and_tools(inspector, ui)
    _check_dark(page, inspector, ui)
    record = page.locator(".agentnb-record").first
    record.scroll_into_view_if_needed()
    for img in record.locator(".agentnb-part img").all():
        drawn = _picture(img)
        assert drawn["src"] == "data" and max(drawn["w"], drawn["h"]) == 80, drawn
    record.screenshot(path=str(ARTIFACTS / f"images-{ui}-record.png"))
    _check_saved_and_reopened(page, port, work, ui)
    ours = [e for e in log.errors if "agentnb" in e or "inspector" in e or "anb-" in e]
    assert not ours, "\n\n".join(ours)
