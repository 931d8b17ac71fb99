"""The dedup library (corpus_crawler.dedup, corpus_crawler.paralang), its profile section
and DedupPipeline, on their own."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from corpus_crawler.config import ConfigError
from corpus_crawler.dedup import (
    DatasketchNearIndex,
    DedupConfig,
    Deduplicator,
    MarkAction,
    NgramSet,
    ParagraphFate,
    SqliteNearIndex,
    document_digest,
    false_positive_rate,
    lsh_bands,
    minhash,
    ngram_hashes,
    words,
)
from corpus_crawler.model import Document, DropReason, Paragraph, ParagraphClass
from corpus_crawler.paralang import foreign_language
from corpus_crawler.profile import ProfileError, parse_profile

VOCABULARY = [f"w{i}" for i in range(20_000)]


def text(rng: random.Random, count: int = 60) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(count))


def small(**changes: object) -> DedupConfig:
    values: dict[str, object] = {"paragraph_filter_mib": 1, "paragraph_language": "off"}
    values.update(changes)
    return DedupConfig(**values)  # type: ignore[arg-type]


# -- text, digests, hashes ---------------------------------------------------------------


def test_digest_ignores_case_punctuation_and_compatibility_forms() -> None:
    one = [words("Hello, World!  It's ﬁne."), words("Second — paragraph")]
    two = [words("hello world it s fine"), words("SECOND paragraph...")]
    assert document_digest(one) == document_digest(two)
    # paragraph breaks count: the same words split differently are another text
    assert document_digest([words("a b"), words("c")]) != document_digest(
        [words("a"), words("b c")]
    )


def test_digests_and_ngram_hashes_are_the_same_in_another_process() -> None:
    code = (
        "from corpus_crawler.dedup import document_digest, ngram_hashes, words;"
        "w = words('The quick brown fox jumps over the lazy dog again and again');"
        "print(document_digest([w]).hex(), *ngram_hashes(w, 7).tolist())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    w = words("The quick brown fox jumps over the lazy dog again and again")
    assert other == [document_digest([w]).hex(), *map(str, ngram_hashes(w, 7).tolist())]


def test_ngram_hashes_shapes() -> None:
    tokens = words("one two three four five six seven eight nine")
    assert len(ngram_hashes(tokens, 7)) == 3
    assert len(ngram_hashes(tokens[:3], 7)) == 1  # a short paragraph is one n-gram
    assert len(ngram_hashes([], 7)) == 0
    assert len(set(ngram_hashes(words(text(random.Random(1), 500)), 7).tolist())) == 494


# -- the n-gram filter ---------------------------------------------------------------------


def test_ngram_set_has_no_false_negatives_and_the_stated_false_positive_rate() -> None:
    rng = np.random.default_rng(7)
    bits = 2**20
    filter_ = NgramSet(None, bits=bits)
    added = rng.integers(0, 2**63, size=100_000, dtype=np.uint64)
    filter_.add(added)
    assert filter_.contains(added).all()
    others = rng.integers(0, 2**63, size=200_000, dtype=np.uint64)
    measured = float(filter_.contains(others).mean())
    stated = false_positive_rate(bits, 3, len(added))
    assert measured == pytest.approx(stated, rel=0.15)
    filter_.close()


def test_ngram_set_persists_and_refuses_another_size(tmp_path: Path) -> None:
    path = tmp_path / "p.bloom"
    values = np.arange(1, 1000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    first = NgramSet(path, bits=2**16)
    first.add(values)
    first.close()
    again = NgramSet(path, bits=2**16)
    assert again.contains(values).all()
    again.close()
    with pytest.raises(ValueError, match=re.escape("not 131072")):
        NgramSet(path, bits=2**17)


# -- near-duplicate documents --------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "datasketch"])
def test_near_index_finds_edited_copies_only(backend: str) -> None:
    import sqlite3

    rng = random.Random(3)
    index = (
        SqliteNearIndex(sqlite3.connect(":memory:"), 0.8, 128)
        if backend == "sqlite"
        else DatasketchNearIndex(0.8, 128)
    )
    originals = [words(text(rng, 400)) for _ in range(50)]
    for doc, tokens in enumerate(originals):
        index.add(doc, minhash(tokens, 128, 5))
    for doc, tokens in enumerate(originals):
        edited = tokens[:180] + words(text(rng, 10)) + tokens[180:]  # 10 words inserted
        assert index.find(minhash(edited, 128, 5)) == doc
        halved = tokens[:200]  # Jaccard 0.5: not a near-duplicate
        assert index.find(minhash(halved, 128, 5)) is None
    assert index.find(minhash(words(text(rng, 400)), 128, 5)) is None


def _lsh_bands_by_loop(threshold: float, num_perm: int) -> tuple[int, int]:
    """lsh_bands as its docstring states it, one (bands, rows) pair at a time."""
    steps = 200

    def caught(s: float, b: int, r: int) -> float:
        return float(1.0 - (1.0 - s**r) ** b)

    best: tuple[float, int, int] | None = None
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            positives = sum(caught(threshold * (i + 0.5) / steps, b, r) for i in range(steps))
            negatives = sum(
                1.0 - caught(threshold + (1 - threshold) * (i + 0.5) / steps, b, r)
                for i in range(steps)
            )
            error = positives * threshold / steps + negatives * (1 - threshold) / steps
            if best is None or error < best[0]:
                best = (error, b, r)
    assert best is not None
    return best[1], best[2]


def test_lsh_bands_are_those_of_the_integral_over_every_threshold() -> None:
    """The band keys a campaign stores depend on (bands, rows): the vectorised search
    must choose what the plain loop chooses, ties included, or a store written before
    would stop matching."""
    for num_perm in (16, 50, 128):
        for step in range(1, 21):
            threshold = step / 20
            expected = _lsh_bands_by_loop(threshold, num_perm)
            assert lsh_bands.__wrapped__(threshold, num_perm) == expected, (threshold, num_perm)
    assert lsh_bands(0.8, 128) == (9, 13)  # the default, as the stores of every release have it


# -- the stages ------------------------------------------------------------------------------


def test_exact_near_and_paragraph_stages() -> None:
    rng = random.Random(5)
    article = [text(rng) for _ in range(8)]
    notice = "Subscribe to our newsletter to get the best stories of the week in your inbox"
    with Deduplicator(small()) as dedup:
        first = dedup.check("a", [*article, notice], "en")
        assert first.drop is None and not first.changed
        exact = dedup.check("b", [p.upper() + "!" for p in [*article, notice]], "en")
        assert (exact.drop, exact.duplicate_of) == (DropReason.DUPLICATE, "a")
        near = dedup.check("c", [*article[:7], text(rng, 20), notice], "en")
        assert (near.drop, near.duplicate_of) == (DropReason.NEAR_DUPLICATE, "a")
        other = [text(rng) for _ in range(4)]
        verdict = dedup.check("d", [notice, *other, other[1]], "en")
        assert verdict.drop is None
        fates = [p.fate for p in verdict.paragraphs]
        # the notice was seen in "a"; the repeat of other[1] inside "d" goes too
        assert fates == [
            ParagraphFate.DUPLICATE,
            *[ParagraphFate.KEPT] * 4,
            ParagraphFate.DUPLICATE,
        ]
        assert verdict.kept_indexes() == [1, 2, 3, 4]
        emptied = dedup.check("e", [notice, other[0]], "en")
        assert emptied.drop is DropReason.NEAR_DUPLICATE
        assert dedup.counts.kept == 2 and dedup.counts.exact == 1


def test_full_text_after_a_shortened_copy_is_a_near_duplicate() -> None:
    rng = random.Random(11)
    article = [text(rng, 40) for _ in range(12)]
    # Jaccard similarity 11/12 < 0.95: only the containment rule (11/12 >= 0.9) sees it
    with Deduplicator(small(near_threshold=0.95)) as dedup:
        assert dedup.check("short", article[:6] + article[7:], "en").drop is None
        full = dedup.check("full", article, "en")
        assert full.drop is DropReason.NEAR_DUPLICATE
        assert "seen before" in full.detail


def test_a_dropped_document_leaves_no_trace() -> None:
    rng = random.Random(8)
    article = [text(rng) for _ in range(5)]
    with Deduplicator(small(near_documents=False)) as dedup:
        assert dedup.check("a", article, "en").drop is None
        extra = text(rng)
        # exact duplicate: dropped, so `extra` is not recorded with it...
        assert dedup.check("b", article, "en").drop is DropReason.DUPLICATE
        # ...and the paragraph stage sees `extra` as new when it appears later
        later = dedup.check("c", [extra, text(rng)], "en")
        assert [p.fate for p in later.paragraphs] == [ParagraphFate.KEPT] * 2


def test_mark_mode_keeps_paragraphs() -> None:
    rng = random.Random(9)
    shared = text(rng)
    with Deduplicator(small(paragraphs="mark", near_documents=False)) as dedup:
        dedup.check("a", [shared, text(rng)], "en")
        verdict = dedup.check("b", [shared, text(rng)], "en")
        assert verdict.drop is None
        assert verdict.paragraphs[0].fate is ParagraphFate.DUPLICATE
        assert not verdict.paragraphs[0].removed
        assert verdict.paragraphs[0].seen_share == 1.0
        assert verdict.kept_indexes() == [0, 1]


def test_stores_persist_across_runs(tmp_path: Path) -> None:
    rng = random.Random(10)
    article = [text(rng) for _ in range(6)]
    boilerplate = text(rng, 30)
    with Deduplicator(small(), tmp_path) as dedup:
        dedup.check("http://one/", [*article, boilerplate], "en")
    with Deduplicator(small(), tmp_path) as dedup:
        assert dedup.stored_documents == 1
        assert dedup.check("x", [*article, boilerplate], "en").duplicate_of == "http://one/"
        assert dedup.check("y", [*article, text(rng, 10)], "en").drop is DropReason.NEAR_DUPLICATE
        fresh = dedup.check("z", [boilerplate, text(rng), text(rng)], "en")
        assert fresh.paragraphs[0].fate is ParagraphFate.DUPLICATE


CZECH = (
    "Praha je hlavní a největší město České republiky. Leží na řece Vltavě a žije v ní"
    " přibližně jeden a půl milionu obyvatel a každý rok sem přijíždějí miliony turistů."
)
GERMAN = (
    "Die Stadt liegt an einem großen Fluss und ist seit dem Mittelalter ein wichtiger Ort"
    " für den Handel, der bis heute viele Besucher aus aller Welt anzieht."
)


def test_paragraph_language() -> None:
    found = foreign_language(GERMAN, "cs", word_count=len(words(GERMAN)))
    assert found is not None and found.language == "de"
    assert foreign_language(CZECH, "cs", word_count=len(words(CZECH))) is None
    assert foreign_language(GERMAN, "cs", word_count=5) is None  # too short to judge
    assert foreign_language(GERMAN, None, word_count=30) is None
    with Deduplicator(small(paragraph_language="remove")) as dedup:
        verdict = dedup.check("a", [CZECH, GERMAN], "cs")
        assert [(p.fate, p.removed, p.language) for p in verdict.paragraphs] == [
            (ParagraphFate.KEPT, False, None),
            (ParagraphFate.FOREIGN, True, "de"),
        ]
        other_german = (
            "Im Sommer kommen viele Menschen in die Berge, weil sie dort wandern und die"
            " frische Luft genießen wollen, bevor der Winter wieder beginnt."
        )
        only_german = dedup.check("b", [other_german], "cs")
        assert only_german.drop is DropReason.WRONG_LANGUAGE


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=re.escape("dedup.paragraphs: unknown value 'drop'")):
        DedupConfig(paragraphs="drop")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=re.escape("dedup.near_threshold: must be in")):
        DedupConfig(near_threshold=1.5)
    with pytest.raises(ConfigError, match=re.escape("power of two")):
        DedupConfig(paragraph_filter_mib=100)
    assert DedupConfig(paragraphs="mark").paragraphs is MarkAction.MARK  # type: ignore[arg-type]


def test_profile_sections() -> None:
    profile = parse_profile(
        {"dedup": {"near_threshold": 0.9, "paragraphs": "mark"}, "yield": {"preset": "strict"}}
    )
    assert profile.dedup.config().near_threshold == 0.9
    assert profile.yield_.preset == "strict"
    for data, message in [
        ({"dedup": {"paragraphs": "delete"}}, "x.yaml: dedup.paragraphs: unknown value 'delete'"),
        ({"yeild": {}}, "x.yaml: yeild: unknown key; did you mean `yield`?"),
        ({"yield": {"preset": False}}, "x.yaml: yield.preset: must be a string"),
        ({"dedup": {"paragraph_treshold": 1}}, "did you mean `paragraph_threshold`?"),
    ]:
        with pytest.raises(ProfileError) as error:
            parse_profile(data, "x.yaml")
        assert message in str(error.value)


def test_bridge_maps_the_sections_and_enabled_false_turns_all_off() -> None:
    from pipelines.bridge import profile_settings

    on = profile_settings(parse_profile({"yield": {"preset": "normal"}}))
    assert on["CORPUS_DEDUP_ENABLED"] is True and on["CORPUS_YIELD_PRESET"] == "normal"
    off = profile_settings(
        parse_profile({"dedup": {"enabled": False}, "yield": {"preset": "normal"}})
    )
    assert off["CORPUS_DEDUP_ENABLED"] is False and off["CORPUS_YIELD_PRESET"] == "off"


# -- the pipeline ----------------------------------------------------------------------------


def test_pipeline_drops_duplicates_and_rewrites_documents(tmp_path: Path) -> None:
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler

    from pipelines.dedup import DedupPipeline
    from pipelines.drops import Duplicate
    from pipelines.items import CorpusDocument, FetchedPage

    shared = (
        "Wir verwenden Cookies, um die Nutzung der Seite zu verstehen und um Ihnen die"
        " besten Inhalte zu zeigen; mit dem Besuch der Seite stimmen Sie dem zu."
    )

    def item(url: str, paragraphs: list[str]) -> CorpusDocument:
        html = "<html><body>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>"
        page = FetchedPage(
            url=url, request_url=url, status=200,
            fetched_at=datetime.now(timezone.utc).isoformat(),
            depth=0, content_type="text/html", http_charset="utf-8", last_modified=None,
            ip_address="127.0.0.1", is_html=True, size=len(html.encode()),
        )  # fmt: skip
        document = Document(
            tuple(
                Paragraph(
                    text, ParagraphClass.GOOD, ParagraphClass.GOOD, word_count=len(words(text))
                )
                for text in paragraphs
            ),
            url=url,
            language="de",
        )
        return CorpusDocument(page, document, url, 100, len(document.text), "vertical text")

    crawler = get_crawler(
        settings_dict={"CORPUS_OUTPUT_DIR": str(tmp_path), "CORPUS_DEDUP_PARAGRAPH_FILTER_MIB": 1}
    )
    pipeline = DedupPipeline.from_crawler(crawler)
    pipeline.open_spider()

    def process(item: CorpusDocument) -> CorpusDocument:
        # both halves of process_item, without a reactor: the stages, then the routing
        return pipeline.route(item, pipeline.judge(item))

    first = item("http://a/1", [GERMAN, shared])
    assert process(first) is first  # nothing to change: the same item
    with pytest.raises(Duplicate):
        process(item("http://a/2", [GERMAN, shared]))
    unique = (
        "Die Geschichte der Stadt ist lang und reich an Ereignissen, von der Gründung im"
        " zwölften Jahrhundert bis zu den großen Bränden und dem Wiederaufbau danach."
    )
    changed = process(item("http://b/1", [unique, shared]))
    assert [p.text for p in changed.document.good_paragraphs] == [unique]
    assert changed.vertical_text is None  # the writer formats the new paragraphs
    assert changed.clean_bytes == len(unique.encode())
    pipeline.close_spider()
    assert crawler.stats.get_value("corpus/dropped/duplicate") == 1
    assert crawler.stats.get_value("corpus/dedup/paragraphs_removed") == 1
    assert (tmp_path / "state" / "dedup" / "dedup.sqlite").exists()
    with pytest.raises(NotConfigured, match=re.escape("dedup.enabled: true")):
        DedupPipeline.from_crawler(get_crawler(settings_dict={"CORPUS_DEDUP_ENABLED": False}))


def test_the_near_index_can_live_elsewhere() -> None:
    rng = random.Random(13)
    article = [text(rng) for _ in range(8)]
    index = DatasketchNearIndex(0.8, 128)
    with Deduplicator(small(), near_index=index) as dedup:
        assert dedup.check("a", article, "en").drop is None
        near = dedup.check("b", [*article, text(rng, 10)], "en")
        assert (near.drop, near.duplicate_of) == (DropReason.NEAR_DUPLICATE, "a")


def test_a_page_repeating_itself_is_not_a_copy_of_another() -> None:
    rng = random.Random(14)
    block = [text(rng, 40) for _ in range(3)]
    with Deduplicator(small()) as dedup:
        verdict = dedup.check("a", block * 10, "en")
        assert verdict.drop is None
        # the repeats go, the first occurrence of each paragraph stays
        assert verdict.kept_indexes() == [0, 1, 2]


def test_stores_in_a_campaign_database_commit_with_it(tmp_path: Path) -> None:
    """Tables in the campaign's transaction; the n-gram filter only gets committed n-grams."""
    from corpus_crawler.state import CampaignStore

    rng = random.Random(21)
    article = [text(rng) for _ in range(5)]
    notice = text(rng, 30)
    folder, filters = tmp_path / "campaign", tmp_path / "dedup"
    folder.mkdir()
    store = CampaignStore(folder)
    dedup = Deduplicator(small(), filters, database=store, keep_same_name=True)
    assert dedup.check("a", [*article, notice], "en").drop is None
    # not committed yet, and seen all the same: the notice is a duplicate paragraph
    other = dedup.check("b", [text(rng), notice], "en")
    assert [p.fate for p in other.paragraphs] == [ParagraphFate.KEPT, ParagraphFate.DUPLICATE]
    assert not (filters / "dedup.sqlite").exists()
    # a crash before the campaign commits: the state rolls back, and so does dedup's
    dedup.close()
    store.abandon()
    store = CampaignStore(folder)
    dedup = Deduplicator(small(), filters, database=store, keep_same_name=True)
    assert dedup.stored_documents == 0
    again = dedup.check("b", [text(rng), notice], "en")  # the filter never got the notice
    assert [p.fate for p in again.paragraphs] == [ParagraphFate.KEPT, ParagraphFate.KEPT]
    store.commit({})
    # committed: later copies are caught, and the filter has the notice's n-grams
    third = [text(rng), notice]
    assert dedup.check("c", third, "en").paragraphs[1].fate is ParagraphFate.DUPLICATE
    assert dedup.check("c2", third, "en").drop is DropReason.DUPLICATE
    dedup.close()
    store.close()
    store = CampaignStore(folder)
    with Deduplicator(small(), filters, database=store, keep_same_name=True) as dedup:
        assert dedup.stored_documents == 2
        # what the last run journaled after its last apply reaches the filter at start
        assert dedup.check("d", [text(rng), notice], "en").paragraphs[1].fate is (
            ParagraphFate.DUPLICATE
        )
        # a page fetched again after a crash is itself, not a duplicate of itself
        assert dedup.check("c", third, "en").drop is None
        assert dedup.counts.replayed == 1
    store.close()


def test_a_campaign_adopts_the_stores_of_its_earlier_dedup_sqlite(tmp_path: Path) -> None:
    from corpus_crawler.state import CampaignStore

    rng = random.Random(22)
    article = [text(rng) for _ in range(5)]
    filters = tmp_path / "campaign" / "state" / "dedup"
    with Deduplicator(small(), filters) as dedup:  # a campaign of the earlier layout
        assert dedup.check("a", article, "en").drop is None
    store = CampaignStore(tmp_path / "campaign")
    with Deduplicator(small(), filters, database=store) as dedup:
        assert dedup.stored_documents == 1
        assert dedup.check("b", article, "en").drop is DropReason.DUPLICATE
        near = dedup.check("c", [*article, text(rng, 10)], "en")
        assert near.drop is DropReason.NEAR_DUPLICATE and near.duplicate_of == "a"
    store.close()


def test_a_page_kept_again_as_itself_loses_its_foreign_paragraphs_again() -> None:
    rng = random.Random(23)
    page = [text(rng), GERMAN]
    config = small(paragraph_language="remove")
    with Deduplicator(config, keep_same_name=True) as dedup:
        first = dedup.check("a", page, "cs")
        assert [p.fate for p in first.paragraphs][1] is ParagraphFate.FOREIGN
        again = dedup.check("a", page, "cs")  # fetched again after a crash
        assert again.drop is None and dedup.counts.replayed == 1
        assert again.kept_indexes() == first.kept_indexes() == [0]
        assert again.paragraphs[1].lang_diff is not None and again.paragraphs[1].lang_diff >= 0.2
