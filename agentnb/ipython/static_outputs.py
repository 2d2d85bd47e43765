"""The static view an inspector's outputs carry, kept current where no front end renders the
widget.

An inspector shown by ``%%agent`` or ``%agentnb show`` is displayed with a display id. Where no
front end renders the widget (``jupyter nbconvert --execute``, papermill, nbclient) the saved
notebook would keep the static view as it was displayed ("0 turn(s)"); so after each cell that
ran a turn the output is updated (``update_display``: the same widget view, its text and static
view as of now). Where a front end renders it, an update would redraw the live view, and the
front end makes the static view at save time (``agentnb.serverext``): JupyterLab and Notebook 7
send each cell's id with the request, and a rendered view tells the kernel (``wire.VIEWING``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .record import static_view


class StaticOutputs:
    """The outputs ``Inspector.show`` made, and what their static view shows."""

    def __init__(self, model_id: str, shell: Any) -> None:
        self.display_id = f"agentnb-inspector-{model_id}"
        """The display id of those outputs."""
        self.shell = shell
        """The IPython shell (None outside IPython)."""
        self.shown: tuple[int, str] | None = None
        """What their static view shows (turns, the last turn's run id and status); None while
        none is kept current (not shown, not in a kernel, or a front end renders the widget)."""
        self.front_end = False
        """A front end renders the widget (see ``rendered``)."""

    def displayed(self, agent: Any) -> None:
        """An output was displayed: keep its static view current from now on, in a kernel (a
        terminal shell prints each display, and would print every update) without a front end."""
        if self.shown is None and getattr(self.shell, "kernel", None) is not None and not self.rendered():
            self.shown = _key(agent)

    def rendered(self) -> bool:
        """Whether a front end renders the widget: a view said so, or the cell was run by a
        notebook front end (JupyterLab and Notebook 7 send the cell's id)."""
        if not self.front_end:
            parent = getattr(self.shell, "parent_header", None)
            self.front_end = isinstance(parent, Mapping) and "cellId" in (parent.get("metadata") or {})
        return self.front_end

    def viewed(self) -> None:
        """A view was rendered in a front end: no more updates."""
        self.front_end = True
        self.shown = None

    def refresh(self, agent: Any, bundle: Callable[[], dict[str, Any]]) -> None:
        """After a cell: update the outputs if the agent's last turn changed (``bundle``: the
        widget's display data)."""
        if self.shown is None:
            return
        key = _key(agent)
        if key == self.shown:
            return
        if self.rendered():
            self.shown = None
            return
        from IPython.display import update_display

        self.shown = key
        data = bundle()
        data["text/html"] = static_view(agent)
        update_display(data, raw=True, display_id=self.display_id)


def _key(agent: Any) -> tuple[int, str]:
    history = agent.history
    return (len(history), f"{history[-1].run_id}:{history[-1].status}" if len(history) else "")


__all__ = ["StaticOutputs"]
