"""Model families: scripted (offline), and the resolution of model specs."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from .base import Model, ModelRequest, ModelResponse
from .scripted import ScriptedModel, ToolCallSpec, tool_call


def offline_model() -> ScriptedModel:
    """The offline default: answers every request with a one-line hint, calls no tools."""

    def reply(request: ModelRequest) -> str:
        return (
            "(offline model: no model is configured, so this is a placeholder reply. Pass "
            "model='openai:gpt-5-mini' with OPENAI_API_KEY set, or a ScriptedModel.)"
        )

    return ScriptedModel(reply, name="offline")


def resolve_model(spec: Any) -> Model:
    """A Model from a model object, a model string, or None (the offline default)."""
    if isinstance(spec, Model):
        return spec
    if spec is None:
        return offline_model()
    if isinstance(spec, str):
        if spec in ("scripted", "offline"):
            return offline_model()
        raise ConfigurationError(
            f"unknown model {spec!r}; use a Model object such as ScriptedModel([...]) or 'offline'"
        )
    raise ConfigurationError(f"model must be a Model object or a model string, got {spec!r}")


__all__ = ["Model", "ModelRequest", "ModelResponse", "ScriptedModel", "ToolCallSpec", "resolve_model", "tool_call"]
