"""Model specs: what a user writes for a model (a Model, a string, or nothing) → a Model.

``resolve_model`` records how the model was chosen in ``model.origin`` (shown in the
inspector): ``explicit`` (a Model object or string was given), ``default``
(``set_default_model``), ``environment`` (``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` is set) or
``offline fallback`` (the scripted offline model, with a one-line hint).

Model strings: ``openai:<model>`` (Chat Completions), ``openai-responses:<model>`` (Responses
API), ``local`` (the embedded llama.cpp server), ``replay`` / ``replay:<session path>`` (answers
from a saved session), ``offline`` / ``scripted``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from .errors import ConfigurationError
from .models import Model, ScriptedModel
from .models.base import ModelRequest, ModelResponse
from .util.extras import require

DEFAULT_OPENAI_MODEL = "gpt-5-mini"
OFFLINE_HINT = (
    "(offline model: no model is configured, so this is a placeholder reply. Pass "
    "model='openai:gpt-5-mini' with OPENAI_API_KEY set, model='local' for the embedded "
    "model, or a ScriptedModel.)"
)

_default: Any = None


def offline_model() -> ScriptedModel:
    """The offline default: answers every request with a one-line hint, calls no tools."""

    def reply(request: ModelRequest) -> str:
        return OFFLINE_HINT

    return ScriptedModel(reply, name="offline")


class PlaceholderModel(Model):
    """What an agent holds when its ``model`` is not a model (MASFactory's examples pass
    ``model=object()`` to use only ``observe()``): observe works, a run fails saying why."""

    kind = "placeholder"

    def __init__(self, given: Any) -> None:
        self.given = given
        """What was passed as the model."""

    @property
    def label(self) -> str:
        return f"placeholder:{type(self.given).__name__}"

    def offline_reason(self) -> str:
        return f"model={self.given!r} is not a model"

    def stream(self, request: ModelRequest) -> Iterator[str | ModelResponse]:
        raise ConfigurationError(
            f"this agent's model is {self.given!r}, which is not a model: observe() works, a run needs one. "
            f"Give model=ScriptedModel([...]), OpenAIChat(...) or a model string such as 'openai:gpt-5-mini'"
        )
        yield  # a generator, like every model's stream


def set_default_model(spec: Any) -> None:
    """The model agents get when they are given none (a Model, a model string, or None to clear)."""
    global _default
    if spec is not None and not isinstance(spec, (Model, str)):
        raise ConfigurationError(f"the default model must be a Model object or a model string, got {spec!r}")
    if isinstance(spec, str):
        _from_string(spec)  # fail now on a bad string, not at the next Agent()
    _default = spec


def get_default_model() -> Any:
    """What ``set_default_model`` was given (None when unset)."""
    return _default


def resolve_model(spec: Any) -> Model:
    """A Model from a model object, a model string, or None (default, environment, offline)."""
    if spec is not None:
        model = (
            spec
            if isinstance(spec, Model)
            else _from_string(spec)
            if isinstance(spec, str)
            else PlaceholderModel(spec)
        )
        origin = "explicit"
    elif _default is not None:
        model = _default if isinstance(_default, Model) else _from_string(_default)
        origin = "default"
    elif os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        from .models.openai_chat import OpenAIChat

        require("openai", "OPENAI_API_KEY / OPENAI_BASE_URL (the default model when none is given)")
        model = OpenAIChat(os.environ.get("AGENTNB_OPENAI_MODEL") or DEFAULT_OPENAI_MODEL)
        origin = "environment"
    else:
        model = offline_model()
        origin = "offline fallback"
    model.origin = origin
    return model


def _from_string(spec: Any) -> Model:
    if not isinstance(spec, str):
        raise ConfigurationError(f"model must be a Model object or a model string, got {spec!r}")
    name = spec.strip()
    family, _, rest = name.partition(":")
    if name in ("scripted", "offline"):
        return offline_model()
    if family in ("openai", "openai-responses"):
        if not rest:
            raise ConfigurationError(f"model {spec!r} names no model; write e.g. '{family}:gpt-5-mini'")
        require("openai", f"model {spec!r}")
        if family == "openai":
            from .models.openai_chat import OpenAIChat

            return OpenAIChat(rest)
        from .models.openai_responses import OpenAIResponses

        return OpenAIResponses(rest)
    if family == "local":
        from .models.local import LocalModel

        return LocalModel(rest or None)
    if family == "replay":
        from .models.replay import ReplayModel
        from .sessions import load_history

        return ReplayModel.from_history(load_history(rest)) if rest else ReplayModel()
    raise ConfigurationError(
        f"unknown model {spec!r}; use 'openai:<model>', 'openai-responses:<model>', 'local', "
        f"'replay', 'offline', or a Model object such as ScriptedModel([...])"
    )


__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "OFFLINE_HINT",
    "PlaceholderModel",
    "get_default_model",
    "offline_model",
    "resolve_model",
    "set_default_model",
]
