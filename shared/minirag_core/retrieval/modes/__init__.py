"""The retrieval modes: mini (MiniRAG, Sec. 3.2), light (LightRAG-style), naive (dense top-k).
May import what ``retrieval`` may."""
