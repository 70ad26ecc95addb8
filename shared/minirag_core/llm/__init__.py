"""Model backends: the protocol and the Ollama implementation."""

from .base import LLMBackend, LLMError

__all__ = ["LLMBackend", "LLMError"]
