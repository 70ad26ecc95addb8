"""Benchmarks of MiniRAG on LiHuaWorld (see README.md)."""
