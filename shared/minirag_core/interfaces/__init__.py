"""What a user runs: the ``minirag`` command line and pictures of a retrieval.
May import: every package."""
