"""Sec. 3.2.2 topology-enhanced graph retrieval: eq. 2 key edges (``key_edges``), eq. 3 reasoning
paths (``reasoning_paths``), query-relevant chunks (``chunk_ranking``); ``array_search`` runs them on arrays."""
