"""Steps this project adds to the paper's retrieval: bridge entities, a residual bridging round,
entity coverage of the top chunks. May import what ``retrieval`` may."""
