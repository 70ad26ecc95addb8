"""Storage backends behind small protocols (``base.py``), one implementation per file: graph stores
(networkx, SQLite, FalkorDB) and vector stores (Chroma). May import: ``graph`` and the top-level modules."""
