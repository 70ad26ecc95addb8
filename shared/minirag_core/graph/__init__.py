"""The heterogeneous graph of Sec. 3.1 (eq. 1): chunk and entity nodes, per-chunk records, aliases, arrays.
May import: ``minirag_core.types`` only; every other package builds on this one."""
