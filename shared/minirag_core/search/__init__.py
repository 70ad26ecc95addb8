"""Search over what the graph holds: dense vectors per collection (chunks, entities, relations), BM25.
May import: ``storage``, ``embedding``, ``extraction`` (date spellings), ``graph`` and the top-level modules."""
