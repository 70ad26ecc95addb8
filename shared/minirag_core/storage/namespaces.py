"""Namespaces: several independent indexes on one Chroma server and one FalkorDB server.

An index opened with ``namespace="team-a"`` keeps its vectors in the Chroma collections
``minirag-team-a_<collection>`` and its graph in the FalkorDB graph ``minirag-team-a``: indexes of
other namespaces never see them, and every index opened with the same namespace on the same
servers is the same index (another process, a server replica, or no workdir at all).
"""

from __future__ import annotations

import re

#: letters, digits, ``-`` and ``_``, starting and ending with a letter or digit: valid inside a
#: Chroma collection name (3-63 characters in all) and a FalkorDB graph key
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38}[A-Za-z0-9])?")
PREFIX = "minirag-"


def check_namespace(namespace: str | None) -> str | None:
    """``namespace`` if it is a valid name (None stays None), else a ``ValueError`` saying why."""
    if namespace is None:
        return None
    if not isinstance(namespace, str) or not _NAME.fullmatch(namespace):
        raise ValueError(f"namespace {namespace!r}: use 1-40 letters, digits, '-' or '_', starting and ending "
                         "with a letter or digit")
    return namespace


def namespaced(namespace: str) -> str:
    """The Chroma collection prefix and the FalkorDB graph name of ``namespace``."""
    return PREFIX + str(check_namespace(namespace))


def check_namespace_location(namespace: str | None, has_workdir: bool, graph_on_server: bool) -> None:
    """Refuse a namespace whose graph would live in this process only: opened elsewhere with
    the same namespace, its empty graph would disown (and repair away) the shared vectors."""
    check_namespace(namespace)
    if namespace is not None and not has_workdir and not graph_on_server:
        raise ValueError(f"namespace {namespace!r} without a workdir needs the graph on a server "
                         "(falkordb_url or graph_store): a namespace names an index shared through its servers")
