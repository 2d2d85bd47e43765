"""``%%chat``: one turn of an agent, the cell body as the user's message."""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ..errors import AgentnbError, ReplayDriftError
from ..util.text import one_line, shorten
from .attach import chat_message
from .parsing import parse_options
from .record import LiveTurn
from .workspace import WorkspaceMagics


class TurnFailed(Exception):
    """A ``%%chat`` turn failed. Shown as its message alone (and, for a replay drift, the short
    diff), not as a traceback through agentnb's code; nbval reports the same lines."""

    def __init__(self, head: str, detail: str = "") -> None:
        super().__init__(head + (f"\n{detail}" if detail else ""))
        self.lines = [head, *detail.splitlines()]

    def _render_traceback_(self) -> list[str]:
        return self.lines


@magics_class
class ChatMagics(WorkspaceMagics):
    """``%%chat``: run one turn of an agent with the cell body as the user's message."""

    @magic_arguments()
    @argument("name", help="the agent to talk to")
    @argument(
        "--attach",
        action="append",
        default=[],
        metavar="NAME",
        help="send an image or file with the message: a variable of the notebook (a figure, a PIL "
        "image, an array, a DataFrame, a path) or a path; may be given several times",
    )
    @cell_magic
    def chat(self, line: str, cell: str) -> None:
        """Send the cell body to agent NAME. The answer streams into the cell; when the turn
        ends the cell keeps a static record (answer, tool calls, state changes).

        ``NAME.run("...")`` in plain Python runs the same turn and updates the same inspector.
        ``--attach fig --attach report.pdf`` sends images and files with the message, and
        ``{fig}`` in the body puts the notebook's ``fig`` (a figure, image, array, frame or
        path) there as an image or file.

        Example::

            %%chat shop --attach receipt.png
            Add what is on this receipt.
        """
        args = parse_options(self.chat, line, "%%chat")
        agent = self.workspace.agent(args.name, "%%chat")
        if not cell.strip():
            raise UsageError(
                f"%%chat {args.name}: the cell is empty; write the message to send below the %%chat line"
            )
        message = chat_message(cell.strip(), args.attach, self.workspace.ns, f"%%chat {args.name}")
        shown = message if isinstance(message, str) else cell.strip()
        live = LiveTurn()
        try:
            result = agent.run(message, on_event=live)
        except AgentnbError as exc:
            # A failed run carries its result (AgentRunError, or agentnb's own error with
            # .result attached): leave its record, then say in one line what went wrong.
            failed = getattr(exc, "result", None)
            turn = getattr(failed, "turn", None)
            if turn is None:
                raise UsageError(f"%%chat {args.name}: {one_line(exc)}") from None
            live.finish(turn, show_error=False)  # the error box below says why, once
            # The cell is named by its message: execution counts differ between front ends (nbval's stay at 1).
            head = f"%%chat {args.name} {shorten(one_line(shown), 60)!r}: turn {turn.number} failed: {one_line(exc)}"
            detail = str(exc).partition("\n")[2] if isinstance(exc, ReplayDriftError) else ""
            raise TurnFailed(head, detail) from None
        assert result.turn is not None
        live.finish(result.turn)


__all__ = ["ChatMagics"]
