"""Model families: scripted (offline), OpenAI Chat Completions and Responses, the embedded
llama.cpp model, and replay. The OpenAI, local and replay modules load only when asked for.
Model strings (``openai:gpt-5-mini``, ...) are resolved by ``agentnb.model_spec``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Model, ModelRequest, ModelResponse
from .scripted import ScriptedModel, ToolCallSpec, tool_call

if TYPE_CHECKING:
    from .local import LocalModel
    from .openai_chat import OpenAIChat
    from .openai_responses import OpenAIResponses
    from .replay import ReplayModel


def __getattr__(name: str) -> Any:
    # The network and local families load on first use so `import agentnb` stays light.
    if name == "OpenAIChat":
        from .openai_chat import OpenAIChat

        return OpenAIChat
    if name == "OpenAIBase":
        from .openai_base import OpenAIBase

        return OpenAIBase
    if name == "OpenAIResponses":
        from .openai_responses import OpenAIResponses

        return OpenAIResponses
    if name == "LocalModel":
        from .local import LocalModel

        return LocalModel
    if name == "ReplayModel":
        from .replay import ReplayModel

        return ReplayModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LocalModel",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChat",
    "OpenAIResponses",
    "ReplayModel",
    "ScriptedModel",
    "ToolCallSpec",
    "tool_call",
]
