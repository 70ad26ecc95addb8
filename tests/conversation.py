"""A small made-up corpus and a chain of related questions for the conversation tests."""

from __future__ import annotations

from minirag_core.types import Document

DOCS = [
    Document("acme", "Acme Robotics was founded in 2011 by Maria Okafor in Lisbon. Acme Robotics builds warehouse robots."),
    Document("okafor", "Maria Okafor studied engineering in Porto. Maria Okafor joined the board of Tidewater Labs in 2019."),
    Document("tidewater", "Tidewater Labs is a research company in Boston. Tidewater Labs works on solid-state batteries."),
    Document("trams", "The Lisbon tram network has six lines. Most trams in Lisbon are painted yellow."),
    Document("porto", "Porto is a city in northern Portugal known for port wine and its bridges."),
    Document("boston", "Boston is the capital of Massachusetts. The Charles River runs through Boston."),
]
CHAIN = ["Who founded Acme Robotics?", "Where did she study engineering?", "What does Tidewater Labs work on?",
         "Which company did Maria Okafor found?"]


def conversation_index(embedder, workdir=None):
    """A ``MiniRAGIndex`` of :data:`DOCS` (in memory unless ``workdir`` is given), built in this process."""
    from minirag_core.indexing.index import MiniRAGIndex

    index = MiniRAGIndex(workdir, embedder=embedder, workers=1)
    index.insert(DOCS)
    return index
