"""MiniRAG for LangChain: a drop-in ``BaseRetriever`` over MiniRAG's graph index."""

from .adapters import ChatModelBackend, LangChainEmbedder
from .retrievers import MiniRAGRetriever

__all__ = ["ChatModelBackend", "LangChainEmbedder", "MiniRAGRetriever"]
