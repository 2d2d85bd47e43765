"""How an agent is run: ``run`` / ``iter_run`` / ``arun`` / ``print_response``, and what they take.

A run takes a message (a str, or a dict of input fields for a ``prompt_template``), a list of
what the message holds (``["What changed?", fig, Path("report.pdf")]``: text, images and files,
converted by ``agentnb.messages.to_parts``) or, as Haystack's Agent does, a list of chat messages
(``messages=[ChatMessage.from_user(...)]``: the last is the user's message, the ones before it go
to the model before it, for this run only).
Agno's ``session_state=`` is deep-merged into the state, ``dependencies=`` fill placeholders,
and any other keyword is put into the state (Haystack).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import slots
from ..errors import ConfigurationError
from ..events import Event, TextDelta
from ..messages import Message, Part, TextPart, to_parts
from ..messages.limits import check_message_size
from ..util.fastinit import fast_init
from .run_result import RunResult, RunStream

if TYPE_CHECKING:
    from contextlib import _GeneratorContextManager

    from .loop import Turn
    from .setup import Delegated

Subscriber = Callable[[Event], Any]
Messages = Sequence["Message | Mapping[str, Any]"]


@fast_init(read_often=True)
@dataclass(frozen=True)
class RunInput:
    """What one run was given."""

    message: str | Mapping[str, Any]
    """The user's message (or a dict of input fields)."""
    earlier: tuple[Message, ...] = ()
    """Messages given before it (``messages=[...]``), sent ahead of it in this run only."""
    following: tuple[Message, ...] = ()
    """Messages sent after it in this run only (a handoff's run so far: the calls and results
    the run handing over made before it did)."""
    state_values: Mapping[str, Any] = field(default_factory=dict)
    """Keywords put into the state (Haystack)."""
    dependencies: Mapping[str, Any] | None = None
    """Run dependencies, over the agent's."""
    session_state: Mapping[str, Any] | None = None
    """Deep-merged into the state first (Agno)."""
    output_type: Any = None
    """This run's output type, over the agent's (None: the agent's)."""
    parts: tuple[Part, ...] = ()
    """The message's parts in order when it carries images or files (``message`` is then its
    text); empty for a text message."""

    @property
    def text(self) -> str:
        """The message as recorded (a dict of input fields as its JSON text)."""
        if isinstance(self.message, str):
            return self.message
        return json.dumps(dict(self.message), ensure_ascii=False, default=str)

    @classmethod
    def build(
        cls,
        message: str | Mapping[str, Any] | Sequence[Any] | None,
        messages: Messages | None,
        dependencies: Mapping[str, Any] | None,
        session_state: Mapping[str, Any] | None,
        state_values: Mapping[str, Any],
        output_type: Any = None,
    ) -> RunInput:
        """Check what a run was given; a short error says what is wrong."""
        parts: tuple[Part, ...] = ()
        if not isinstance(message, (list, tuple)):
            pass
        elif not _chat_messages(message):  # the parts of one message: text, images, files
            message, parts = message_parts(message)
        else:  # Haystack's run(messages), positionally
            if messages is not None:
                raise ConfigurationError("give the messages once: run([...]) or run(messages=[...])")
            message, messages = None, message
        if messages is not None:
            if message is not None:
                raise ConfigurationError("give a message or messages=[...], not both")
            message, earlier, parts = _split_messages(messages)
        else:
            earlier = ()
        message = check_message(message)
        output_type, state_values = _output_aliases(output_type, state_values)
        if session_state is not None and not isinstance(session_state, Mapping):
            raise ConfigurationError(
                f"session_state must be a dict, got {type(session_state).__name__}: {session_state!r}"
            )
        return cls(message, earlier, (), dict(state_values), dependencies, session_state, output_type, parts)


OUTPUT_ALIASES = ("output_schema", "structured_model")
"""A run's ``output_type`` as Agno (``run(output_schema=T)``) and AgentScope name it: never
state keywords."""


def _output_aliases(output_type: Any, state_values: Mapping[str, Any]) -> tuple[Any, Mapping[str, Any]]:
    """The run's output type, whichever of its names was given, and the keywords left for the state."""
    if not state_values:  # (most runs: nothing to look for)
        return output_type, state_values
    aliases = {k: state_values[k] for k in OUTPUT_ALIASES if k in state_values}
    if not aliases:
        return output_type, state_values
    given = [n for n, v in (("output_type", output_type), *aliases.items()) if v is not None]
    if len(given) > 1:
        raise ConfigurationError(
            f"give the run's output type once: {' and '.join(given)} are the same option "
            "(output_schema is Agno's name, structured_model AgentScope's)"
        )
    chosen = next((v for v in (output_type, *aliases.values()) if v is not None), None)
    return chosen, {k: v for k, v in state_values.items() if k not in aliases}


def _chat_messages(items: Sequence[Any]) -> bool:
    """Whether a list given as the message is chat messages (Haystack's ``run(messages)``),
    not the parts of one message."""
    return not items or all(isinstance(m, Message) or (isinstance(m, Mapping) and "role" in m) for m in items)


def message_parts(message: Sequence[Any]) -> tuple[str, tuple[Part, ...]]:
    """(the text, the parts) of one message given as a list of text, images and files (no parts
    when it is all text); a short error for what is not one, or too large."""
    return _with_parts(to_parts(message))


def _with_parts(parts: tuple[Part, ...]) -> tuple[str, tuple[Part, ...]]:
    """(the text, the parts) of a message given as parts; no parts when it is all text. Parts
    larger than a request may carry fail here, before the run starts."""
    check_message_size(parts)
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return text, (parts if any(not isinstance(p, TextPart) for p in parts) else ())


def _split_messages(messages: Messages) -> tuple[str, tuple[Message, ...], tuple[Part, ...]]:
    """(the last message's text, the ones before it, its parts) for ``messages=[...]``."""
    try:
        parsed = [m if isinstance(m, Message) else Message.from_openai(dict(m)) for m in messages]
    except (TypeError, KeyError, ValueError):
        raise ConfigurationError(
            "messages=[...] takes chat messages: ChatMessage.from_user('...') or {'role': ..., 'content': ...}"
        ) from None
    if not parsed or parsed[-1].role != "user" or parsed[-1].content is None:
        raise ConfigurationError(
            "messages=[...] must end with the user's message (ChatMessage.from_user('...'))"
        )
    last = parsed[-1]
    return last.text, tuple(parsed[:-1]), last.parts if last.attachments else ()


def check_message(message: Any) -> str | Mapping[str, Any]:
    """``message``, when it is a str or a dict of input fields (str keys) for a
    ``prompt_template``; a ConfigurationError otherwise."""
    if isinstance(message, str):
        return message
    if isinstance(message, Mapping) and all(isinstance(k, str) for k in message):
        return message
    raise ConfigurationError(
        "the message must be a str, a dict of input fields for a prompt_template, a list of text, images "
        f"and files (['What changed?', fig]), or a list of chat messages; got {type(message).__name__}"
    )


class Runs:
    """Agent's run methods (the agent gives ``_new_turn`` and ``_running``)."""

    if TYPE_CHECKING:

        def _new_turn(self, inputs: RunInput, delegated: Delegated | None = None) -> Turn: ...

        def _running(self) -> _GeneratorContextManager[None]: ...  # TurnMaking's @contextmanager

        markdown: bool

    def iter_run(
        self,
        message: str | Mapping[str, Any] | Sequence[Any] | None = None,
        *,
        messages: Messages | None = None,
        dependencies: Mapping[str, Any] | None = None,
        session_state: Mapping[str, Any] | None = None,
        output_type: Any = None,
        **state_values: Any,
    ) -> RunStream:
        """Run a turn, yielding its events as they happen (see RunStream)."""
        inputs = RunInput.build(message, messages, dependencies, session_state, state_values, output_type)
        return RunStream(lambda: self._new_turn(inputs), self._running)

    def run(
        self,
        message: str | Mapping[str, Any] | Sequence[Any] | None = None,
        *,
        messages: Messages | None = None,
        on_event: Subscriber | None = None,
        dependencies: Mapping[str, Any] | None = None,
        session_state: Mapping[str, Any] | None = None,
        output_type: Any = None,
        **state_values: Any,
    ) -> RunResult:
        """Run one turn. ``session_state`` is deep-merged into the state first (Agno; it
        replaces the state with ``overwrite_db_session_state=True``); other keyword arguments
        are then put into the state (Haystack). ``output_type`` asks this run for typed output
        (over the agent's): ``result.output`` is then the validated value.

        Works in a plain script and inside a running event loop (a Jupyter kernel). A run
        that ends without an answer raises ``AgentRunError``; its ``.result`` and
        ``agent.history[-1]`` keep everything it did.
        """
        stream = self.iter_run(
            message,
            messages=messages,
            dependencies=dependencies,
            session_state=session_state,
            output_type=output_type,
            **state_values,
        )
        for event in stream:
            if on_event is not None:
                on_event(event)
        assert stream.result is not None
        return stream.result

    async def arun(
        self, message: str | Mapping[str, Any] | Sequence[Any] | None = None, **kwargs: Any
    ) -> RunResult:
        """``run`` for async code; the turn runs in a worker thread so the event loop stays free."""
        import asyncio

        return await asyncio.to_thread(lambda: self.run(message, **kwargs))

    def evaluate(self, cases: Any, checks: Any = (), **options: Any) -> Any:
        """Run this agent's definition over ``cases`` — each (case, repeat) on a fresh agent, never
        this one — and score each with ``checks``; returns an ``agentnb.evals.EvalRun``. Options:
        ``name`` (the folder beside the notebook, default the agent's name), ``concurrency=8``,
        ``repeat=1``, ``executor`` (any concurrent.futures.Executor), ``retry_errors``,
        ``max_errors``, ``max_cost`` with ``prices``, ``folder``. Re-running resumes: finished cases
        replay from the store. Works inside a running event loop."""
        return _evaluator()(self, cases, checks, **options)

    def map(self, items: Any, *, output_type: Any = None, **options: Any) -> Any:
        """Run this agent's definition once per item — a list, a pandas Series, or a DataFrame
        with ``input=`` a column or a template (``"{title}: {body}"``) — each on a fresh agent,
        and return a DataFrame aligned with the items' index: one column per field of the output
        (``output_type`` over the agent's), then ``status``, ``error``, ``attempts``, ``tokens``.
        Built on ``evaluate``: ``name`` (the store beside the notebook; re-running resumes),
        ``concurrency=8``, ``executor``, ``max_cost`` with ``prices``, ``retry_errors``."""
        mapper = slots.map_items.get()
        if mapper is None:
            raise ConfigurationError("agent.map is not available: agentnb.evals did not load")
        return mapper(self, items, output_type=output_type, **options)

    async def aevaluate(self, cases: Any, checks: Any = (), **options: Any) -> Any:
        """``evaluate`` for async code."""
        import asyncio

        evaluate = _evaluator()
        loop = asyncio.get_running_loop()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="agentnb-eval-driver") as driver:
            return await loop.run_in_executor(driver, lambda: evaluate(self, cases, checks, **options))

    def print_response(
        self,
        message: str | Mapping[str, Any] | Sequence[Any] | None = None,
        *,
        stream: bool = False,
        markdown: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Run a turn and print the answer (Agno's ``print_response``); ``stream=True`` prints
        the text as it arrives. ``markdown=True`` (or the agent's ``markdown``) shows the answer
        as markdown where something can (a notebook with ``%load_ext agentnb``), the text
        otherwise."""
        as_markdown = self.markdown if markdown is None else markdown
        show = slots.markdown_display.get() if as_markdown else None
        if not stream:
            content = self.run(message, **kwargs).content or ""
        else:
            pieces: list[str] = []
            printed: Iterable[Event] = self.iter_run(message, **kwargs)
            for event in printed:
                if isinstance(event, TextDelta):
                    pieces.append(event.text)
                    if show is None:
                        print(event.text, end="", flush=True)
            content = "".join(pieces)
            if show is None:
                print()
                return
        if show is not None:
            show(content)
        else:
            print(content)

    async def aprint_response(
        self, message: str | Mapping[str, Any] | Sequence[Any] | None = None, **kwargs: Any
    ) -> None:
        """``print_response`` for async code."""
        import asyncio

        await asyncio.to_thread(lambda: self.print_response(message, **kwargs))


def _evaluator() -> slots.Evaluate:
    evaluate = slots.evaluate.get()
    if evaluate is None:
        raise ConfigurationError("evaluation is not available: agentnb.evals did not load")
    return evaluate


__all__ = ["RunInput", "Runs", "check_message", "message_parts"]
