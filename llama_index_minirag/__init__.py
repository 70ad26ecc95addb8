"""MiniRAG for LlamaIndex: a PropertyGraphIndex kg extractor, retrievers over the property
graph store or a core ``MiniRAGIndex``, and model adapters. Thin adapters over ``minirag_core``."""

from .adapters import LlamaIndexEmbedder, LlamaIndexLLMBackend, MiniLMEmbedding
from .extractor import MENTIONED_IN, RELATED, MiniRAGExtractor
from .graph_sources import PropertyGraphSources
from .retriever import MiniRAGPGRetriever, MiniRAGRetriever, result_to_nodes
from .splitter import MiniRAGTokenSplitter

__all__ = [
    "LlamaIndexEmbedder",
    "LlamaIndexLLMBackend",
    "MENTIONED_IN",
    "MiniLMEmbedding",
    "MiniRAGExtractor",
    "MiniRAGPGRetriever",
    "MiniRAGRetriever",
    "MiniRAGTokenSplitter",
    "PropertyGraphSources",
    "RELATED",
    "result_to_nodes",
]
