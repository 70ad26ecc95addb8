"""Language models: the backend protocol, Ollama, a reply cache, MiniRAG's prompts and answering.
May import: the top-level modules (``types``, ``context``) only."""

from minirag_core.llm.base import LLMBackend, LLMError

__all__ = ["LLMBackend", "LLMError"]
