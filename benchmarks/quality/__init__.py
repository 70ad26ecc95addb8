"""The quality suite: every development set, MiniRAG against the baselines a user would pick (run_suite.py)."""
