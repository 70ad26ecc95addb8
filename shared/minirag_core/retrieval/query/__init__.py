"""Sec. 3.2.1 query semantic mapping: query entities and answer types (with a model or offline),
then seed entities and answer candidates. May import what ``retrieval`` may."""
