"""Non-Latin scripts: no sentence-long names; text without spaces between words is still searchable."""

from __future__ import annotations

from minirag_core.extraction.chunk_reader import ChunkEntities
from minirag_core.extraction.scripts import fits_a_name, latin_share
from minirag_core.search.lexical import tokenize


def test_a_sentence_in_an_unspaced_script_is_no_name():
    assert not fits_a_name("李华昨天和朋友一起去公园散步了")
    assert fits_a_name("李华") and fits_a_name("Ada Lovelace") and fits_a_name("Москва")
    assert not fits_a_name("Это очень длинное предложение о чём-то совсем другом сегодня")
    ce = ChunkEntities()
    assert ce.add("李华昨天和朋友一起去公园散步了", "ner", None, None) is None
    assert ce.add("李华", "ner", None, None) is not None


def test_latin_share():
    assert latin_share("Hello 世界") == 5 / 7 and latin_share("1234") == 1.0


def test_unspaced_text_is_searchable_by_character_bigrams():
    [doc], [query] = tokenize(["李华在公园散步"]), tokenize(["公园在哪里"])
    assert "公园" in doc and "公园" in query
    [code] = tokenize(["call field_validator here"])
    assert "field_validator" in code and "field" in code and "validator" in code
