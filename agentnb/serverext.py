"""A Jupyter server extension: saved notebooks show each inspector's latest turn, and each
evaluation's record, where the widget cannot be drawn.

JupyterLab and Notebook 7 do not save widget state by default, so a reopened notebook would show
"Error displaying widget: model not found" in the place of agentnb's widgets (and a notebook saved
from one front end would make the other log "widget model not found"). At each save the
inspector's front end puts its agent's latest turn, as text, into the notebook's metadata
(``agentnb.inspectors``, keyed by the widget's model id; js/saved.js). This extension's pre-save
hook moves that text, escaped, into the inspector's output in the saved file, and drops the
widget view from agentnb's outputs whose widget state is not saved with the notebook (an
inspector, an evaluation's grid, a comparison's grid: each carries its static record as
``text/html`` already, see ``agentnb.ipython.eval_view``): reopened, in either front end, the
output shows the static view. The open notebook and its live views are not touched (only the
file is).

It also serves the inspector's front end (``ipython/static/``), which each inspector widget loads
instead of carrying it in its state (``static/loader.js``).

Enabled by ``etc/jupyter/jupyter_server_config.d/agentnb.json``, which the wheel installs.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Jupyter imports this module when it starts, for every notebook server: it imports nothing of
# agentnb's own here (``import agentnb`` itself is light); a save that has an inspector's
# thumbnails to show loads what draws them.

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
METADATA_KEY = "agentnb"
STATIC_CLASS = "agentnb-static-inspector"
"""The class of the inspector's static stand-in (``agentnb.ipython.record.STATIC_CSS_CLASS``)."""
STATIC_CLASSES = (STATIC_CLASS, "agentnb-static-eval", "agentnb-eval-compare")
"""The classes of the static records agentnb's widget outputs carry: an inspector's, an
evaluation display's (``agentnb.ipython.eval_view.STATIC_EVAL_CLASS``) and a comparison's
(``agentnb.evals.EvalComparison.html``)."""


def static_html(text: str, images: Any = ()) -> str:
    """The static stand-in of one inspector, from its text (escaped: nothing in it is markup) and
    the thumbnails of its last turn's images (``[{"line", "url"}]``, as js/saved.js writes them:
    only a data URL of a PNG, JPEG, GIF or WEBP becomes a picture, at most ``STATIC_IMAGES``)."""
    from .history.attachments import static_figures

    head, _, rest = text.partition("\n")
    body = (
        '<pre style="white-space:pre-wrap;word-break:normal;overflow-wrap:break-word">'
        f"{html.escape(rest, quote=True)}</pre>"
        if rest
        else ""
    )
    return (
        f'<div class="{STATIC_CLASS} tex2jax_ignore mathjax_ignore">'
        f"<div>{html.escape(head, quote=True)}</div>{body}{static_figures(images)}</div>"
    )


def _saved_models(notebook: Mapping[str, Any]) -> set[str]:
    widgets = notebook.get("metadata", {}).get("widgets", {})
    state = widgets.get(WIDGET_STATE, {}) if isinstance(widgets, Mapping) else {}
    models = state.get("state", {}) if isinstance(state, Mapping) else {}
    return set(models) if isinstance(models, Mapping) else set()


def _is_ours(data: Mapping[str, Any], texts: Mapping[str, Any], model_id: str) -> bool:
    html_text = str(data.get("text/html", ""))
    return model_id in texts or any(f'class="{name}' in html_text for name in STATIC_CLASSES)


def fix_inspectors(notebook: dict[str, Any]) -> int:
    """Rewrite ``notebook`` (nbformat 4, as a dict) as it is saved: each inspector output gets its
    latest static text, and each of agentnb's widget outputs loses its widget view when the
    widget's state is not saved. Returns the number of outputs changed."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return 0
    ours = metadata.get(METADATA_KEY)
    texts = ours.get("inspectors", {}) if isinstance(ours, dict) else {}
    if not isinstance(texts, Mapping):
        texts = {}
    saved = _saved_models(notebook)
    changed = 0
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            data = output.get("data") if isinstance(output, dict) else None
            if not isinstance(data, dict):
                continue
            view = data.get(WIDGET_VIEW)
            model_id = view.get("model_id") if isinstance(view, Mapping) else None
            if not isinstance(model_id, str) or not _is_ours(data, texts, model_id):
                continue
            entry = texts.get(model_id)
            text = entry.get("text") if isinstance(entry, Mapping) else None
            if isinstance(text, str) and text:
                data["text/html"] = static_html(
                    text, entry.get("images") if isinstance(entry, Mapping) else ()
                )
                data["text/plain"] = text
            if model_id not in saved:
                del data[WIDGET_VIEW]
            changed += 1
    if isinstance(ours, dict):
        ours.pop("inspectors", None)
        if not ours:
            del metadata[METADATA_KEY]
    return changed


def pre_save_hook(model: dict[str, Any], **_kwargs: Any) -> None:
    """The contents manager's pre-save hook: notebooks only."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        fix_inspectors(model["content"])


STATIC = Path(__file__).parent / "ipython" / "static"
"""The inspector's front end, served at ``{base_url}agentnb/static/`` (what its widgets load)."""


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Called by the Jupyter server at start (see the module docstring)."""
    from jupyter_server.utils import url_path_join
    from tornado.web import StaticFileHandler

    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
    web_app = serverapp.web_app
    pattern = url_path_join(web_app.settings.get("base_url", "/"), "agentnb/static/(.*)")
    web_app.add_handlers(".*$", [(pattern, StaticFileHandler, {"path": str(STATIC)})])
    serverapp.log.info(
        "agentnb: the inspector's front end served; inspectors in saved notebooks fall back to their static view"
    )


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "agentnb.serverext"}]


__all__ = ["fix_inspectors", "pre_save_hook", "static_html"]
