"""The SQLite graph's tables (``sqlite_store.py`` says what each holds) and its layout version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT, type TEXT,
                                  surname TEXT, attrs TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS nodes_kind ON nodes (kind, id);
CREATE INDEX IF NOT EXISTS nodes_surname ON nodes (surname) WHERE surname IS NOT NULL;
CREATE TABLE IF NOT EXISTS mentions (entity TEXT NOT NULL, chunk TEXT NOT NULL, subject INTEGER NOT NULL,
                                     description TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL, raw TEXT,
                                     PRIMARY KEY (entity, chunk)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_chunk ON mentions (chunk, entity);
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions (entity, chunk);
CREATE TABLE IF NOT EXISTS relations (u TEXT NOT NULL, v TEXT NOT NULL, weight REAL NOT NULL,
                                      keywords TEXT NOT NULL, description TEXT NOT NULL, attrs TEXT NOT NULL,
                                      PRIMARY KEY (u, v)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_v ON relations (v, u);
CREATE TABLE IF NOT EXISTS relation_sources (u TEXT NOT NULL, v TEXT NOT NULL, chunk TEXT NOT NULL,
                                             weight REAL NOT NULL, keywords TEXT NOT NULL,
                                             description TEXT NOT NULL, PRIMARY KEY (u, v, chunk)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relation_sources_chunk ON relation_sources (chunk);
CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
"""
#: the layout above; 1 kept every per-chunk record inside its entity's or relation's JSON
FORMAT_VERSION = 2


def check_format(db: sqlite3.Connection, path: Path | None) -> None:
    """Refuse a file in an earlier layout (its records would be read as missing); closes ``db`` then."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    has_nodes = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'nodes'").fetchone() is not None
    if has_nodes and version < FORMAT_VERSION:
        db.close()
        raise ValueError(f"{path} holds a graph in an earlier layout (format {version or 1}, this version "
                         f"reads {FORMAT_VERSION}); rebuild the index into a new workdir (the extraction "
                         "cache of the old one can be copied along, so nothing is extracted again)")


def create_tables(db: sqlite3.Connection) -> None:
    """The tables, where missing, and the layout version."""
    db.executescript(SCHEMA)
    db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
