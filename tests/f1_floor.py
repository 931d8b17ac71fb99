"""The one assertion behind every quality floor: no page failed, and the set's
shingle F1 is at least the floor, with the worst pages named when it is not."""

from __future__ import annotations

from corpus_crawler.evaluate import SetReport, format_pages


def assert_f1_floor(report: SetReport, label: str, floor: float) -> None:
    assert report.errors == 0, format_pages(report, limit=10)
    summary = report.summary
    assert summary.f1 >= floor, (
        f"{label}: shingle F1 {summary.f1:.3f} < {floor}"
        f" (P {summary.precision:.3f}, R {summary.recall:.3f});"
        f" worst pages:\n{format_pages(report, limit=10)}"
    )
