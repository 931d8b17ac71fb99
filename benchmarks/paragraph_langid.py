"""Paragraph language: the stop-word method against model-based identifiers on short texts.

The labelled set: every paragraph of 12 to 80 words of the gold texts
(tests/data/gold.tar.xz), labelled with its page's language, which CLD2 gives
reliably on the page's whole gold text (pages where it is unsure are left out;
a page-level label on long text is a different task from the short paragraphs
measured here, but it does favour CLD2 slightly where pages mix languages).
Languages without a stoplist are left out (the stop-word method cannot name them).

For each method and paragraph, `corpus_crawler.paralang.foreign_language` is
asked twice, the way the dedup stage asks it:

* with the paragraph's own language as the document's: any answer is a
  **false foreign** call, which would remove good text;
* with another language as the document's (en, or de for English paragraphs):
  an answer is a **caught** foreign paragraph.

Plus plain accuracy of the identified language and CPU microseconds per
paragraph (best of --rounds). py3langid is measured when importable.

    python benchmarks/paragraph_langid.py [--rounds 3] [--min-confidence 0.5]
"""

from __future__ import annotations

import argparse
import tarfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from corpus_crawler import langid
from corpus_crawler.dedup import words
from corpus_crawler.langid import LanguageGuess
from corpus_crawler.stoplists import available_languages

ROOT = Path(__file__).resolve().parent.parent
TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"


def labelled_paragraphs(min_words: int = 12, max_words: int = 80) -> list[tuple[str, str]]:
    import pycld2

    known = set(available_languages())
    result: list[tuple[str, str]] = []
    with tarfile.open(TARBALL) as tar:
        for member in tar.getmembers():
            if not (member.isfile() and "/gold/" in member.name and member.name.endswith(".txt")):
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            text = handle.read().decode("utf-8", "replace")
            clean = langid._CLD2_REJECTS.sub(" ", text)
            try:
                reliable, _, details = pycld2.detect(clean, isPlainText=True)
            except Exception:
                continue
            code = langid._cld2_code(details[0][1])
            if not reliable or code is None or code not in known:
                continue
            for line in text.splitlines():
                count = len(words(line))
                if min_words <= count <= max_words:
                    result.append((line, code))
    return result


def py3langid_method() -> Callable[[str], LanguageGuess] | None:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)

    def identify(text: str) -> LanguageGuess:
        code, probability = identifier.classify(text)
        return LanguageGuess(code, float(probability), "py3langid")

    return identify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-confidence", type=float, default=0.5)
    args = parser.parse_args()
    data = labelled_paragraphs()
    languages = Counter(code for _, code in data)
    print(f"{len(data)} paragraphs, {len(languages)} languages: {dict(languages.most_common(12))}")
    methods: dict[str, Callable[[str], LanguageGuess]] = {
        "stopwords": langid.identify_by_stopwords,
        "cld2": langid.identify_by_model,
    }
    extra = py3langid_method()
    if extra is not None:
        methods["py3langid"] = extra
    base = {"en-x-simple": "en", "be-tarask": "be"}
    print(
        f"{'method':12} {'accuracy':>9} {'false foreign':>14} {'caught':>8} {'us/para':>8}"
        f"   (confidence >= {args.min_confidence})"
    )
    for name, identify in methods.items():
        best = float("inf")
        guesses: list[LanguageGuess] = []
        for _ in range(args.rounds):
            start = time.process_time()
            guesses = [identify(text) for text, _ in data]
            best = min(best, time.process_time() - start)
        correct = false_foreign = caught = 0
        for guess, (_, code) in zip(guesses, data, strict=True):
            guessed = base.get(guess.code or "", guess.code)
            correct += guessed == code
            sure = guess.code is not None and guess.confidence >= args.min_confidence
            # same document language: a sure other answer removes good text
            false_foreign += sure and guessed != code
            # another document language: a sure answer that differs from it is caught
            other = "de" if code == "en" else "en"
            caught += sure and guessed != other
        total = len(data)
        print(
            f"{name:12} {correct / total:9.3f} {false_foreign / total:14.4f}"
            f" {caught / total:8.3f} {best / total * 1e6:8.1f}"
        )


if __name__ == "__main__":
    main()
