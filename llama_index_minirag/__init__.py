"""MiniRAG for LlamaIndex: a PropertyGraphIndex kg extractor, retrievers over the property
graph store or a core ``MiniRAGIndex``, and model adapters. Thin adapters over ``minirag_core``."""

from .adapters import LlamaIndexEmbedder, LlamaIndexLLMBackend, MiniLMEmbedding
from .extractor import MENTIONED_IN, RELATED, MiniRAGExtractor
from .filters import to_core_filter
from .graph_sources import PropertyGraphSources
from .graph_stores import LadybugLockedError, close_store, falkordb_store, ladybug_store, minirag_index_kwargs, open_property_graph
from .retriever import MiniRAGPGRetriever, MiniRAGRetriever, result_to_nodes
from .splitter import MiniRAGTokenSplitter
from .store_watch import ForeignExtractionWarning
from .vector_cache import ChromaVectorCache

__all__ = [
    "ChromaVectorCache",
    "ForeignExtractionWarning",
    "LadybugLockedError",
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
    "close_store",
    "falkordb_store",
    "ladybug_store",
    "minirag_index_kwargs",
    "open_property_graph",
    "result_to_nodes",
    "to_core_filter",
]
