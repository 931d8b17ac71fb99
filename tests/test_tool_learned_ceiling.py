"""tools/learned_ceiling.py: its logistic regression, and the tool on made gold sets
whose gold leaves out what the `corpus` preset keeps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from tool_loader import load_tool

STORY = (
    "The committee met on Tuesday {n} to discuss the new budget and the plans for the"
    " coming year, which were not accepted by all of the members who were there."
)
REPLY = (
    "I think that the committee is wrong about this {n}, and that the plan should have"
    " been put to the vote of all the members before it was sent to the town council."
)


def _gold_set(folder: Path, name: str, pages: int) -> None:
    """Posts with a comment thread (each comment in a list item); the gold is the
    post alone, so `corpus`, which keeps comments, loses precision."""
    root = folder / name
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    records = []
    for page in range(pages):
        story = " ".join(STORY.format(n=f"{name}{page}x{i}") for i in range(3))
        replies = "".join(
            f"<li><p>{REPLY.format(n=f'{name}{page}r{i}')}</p></li>" for i in range(3)
        )
        html = (
            f'<html><body><div class="post"><h1>The plan of page {page}</h1><p>{story}</p></div>'
            f'<div id="comments"><ol>{replies}</ol></div></body></html>'
        )
        (root / "html" / f"{page}.html").write_text(html, encoding="utf-8")
        (root / "gold" / f"{page}.txt").write_text(
            f"The plan of page {page}\n{story}\n", encoding="utf-8"
        )
        records.append(json.dumps({"id": str(page), "url": None, "bytes": len(html)}))
    (root / "manifest.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")


def test_the_regression_learns_a_separable_rule() -> None:
    tool = load_tool("learned_ceiling")
    rng = np.random.default_rng(1)
    features = rng.normal(size=(400, 3))
    labels = (features[:, 1] - 0.5 * features[:, 2] > 0.2).astype(float)
    model = tool.fit(features, labels, np.ones(len(labels)), l2=1e-3)
    assert ((model.probability(features) > 0.5) == labels.astype(bool)).mean() > 0.97
    # the weight is on the features that decide, not on the noise
    assert abs(model.coef[1]) > 5 * abs(model.coef[0])


def _f1(out: str, label: str) -> float:
    match = re.search(rf"{re.escape(label)}\s+F1 ([0-9.]+)", out)
    assert match, out
    return float(match.group(1))


def test_trained_on_one_set_scored_on_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _gold_set(tmp_path, "train", 6)
    _gold_set(tmp_path, "test", 3)
    tool = load_tool("learned_ceiling")
    argv = ["--gold", str(tmp_path), "--train", "train", "--test", "test", "--workers", "1"]
    assert tool.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("test: 3 pages, preset corpus, logistic regression trained on train")
    rules = _f1(out, "the preset's rules")
    assert rules < 0.9  # corpus keeps the comments the gold leaves out
    assert _f1(out, "block oracle") == 1.0
    # the comments' list items tell them apart: learned from the other set's pages
    assert _f1(out, "learned, keep above 0.5") == 1.0


def test_folds_of_the_test_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gold_set(tmp_path, "blogs", 4)
    tool = load_tool("learned_ceiling")
    assert (
        tool.main(["--gold", str(tmp_path), "--test", "blogs", "--folds", "2", "--workers", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert "logistic regression 2-fold by page" in out
    assert _f1(out, "learned, keep above 0.5") == 1.0
    with pytest.raises(SystemExit, match=re.escape("--folds must be 2..4")):
        tool.main(["--gold", str(tmp_path), "--test", "blogs", "--folds", "9"])
    with pytest.raises(SystemExit, match="no gold set 'nope'"):
        tool.main(["--gold", str(tmp_path), "--test", "nope"])
