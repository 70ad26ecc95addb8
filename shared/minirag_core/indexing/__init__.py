"""The write path: documents in, chunks, extraction, graph and vector writes, the workdir (``MiniRAGIndex``).
May import: every package except ``interfaces``."""
