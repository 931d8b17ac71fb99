"""The Manatee registry and the CWB script written beside each vertical file.

Manatee is in neither Debian nor PyPI, so the registry is checked by a strict
parser of Manatee's documented registry grammar (below) and against every
structure and attribute that occurs in a real vertical. CWB is not in Debian
12 and no PyPI package ships its binaries: the script is checked by `sh -n`,
by running its glue filter (real awk) on the vertical, and by checking its
cwb-encode flags declare everything the vertical holds. Where `cwb-encode`
and `cqp` are installed, the script is run for real and cqp is queried; where
Manatee's `encodevert` and `corpquery` are, the registry is compiled and queried.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.corpustools import (
    _GLUE_FILTER,
    corpus_id,
    cwb_structure_flags,
    manatee_registry,
)
from corpus_crawler.vertical import DocMeta, VerticalConfig, VerticalFormat, VerticalWriter

SITE = Path(__file__).resolve().parent.parent / "corpus_crawler" / "demo_site"
NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)

# --- Manatee's registry grammar, as documented for Sketch Engine / NoSketchEngine ------------
# file      := (comment | blank | directive)*
# directive := KEY value | ("ATTRIBUTE" | "STRUCTURE") NAME block? | STRUCTURE NAME block
# block     := "{" (KEY value | "ATTRIBUTE" NAME block?)* "}"
# value     := bare word without spaces | "double-quoted string" with \" and \\ escapes

_CORPUS_KEYS = {
    "NAME", "PATH", "VERTICAL", "ENCODING", "LANGUAGE", "INFO", "DOCSTRUCTURE",
    "DEFAULTATTR", "MAXDETAIL", "LOCALE", "TAGSETDOC", "WPOSLIST", "LPOSLIST",
    "SUBCDEF", "ALIGNED", "FULLREF", "HARDCUT", "SHORTREF", "MAXCONTEXT",
}  # fmt: skip
_ATTRIBUTE_KEYS = {
    "LABEL", "DYNAMIC", "DYNLIB", "ARG1", "ARG2", "FUNTYPE", "FROMATTR", "TYPE",
    "TRANSQUERY", "MULTIVALUE", "MULTISEP", "LOCALE", "ENCODING", "DEFAULTVALUE",
}  # fmt: skip
_STRUCTURE_KEYS = {"LABEL", "DISPLAYTAG", "DISPLAYBEGIN", "DISPLAYEND", "TYPE", "DEFAULTVALUE"}
_TOKEN = re.compile(r'\s*(?:(#.*)|("(?:[^"\\]|\\.)*")|([{}])|([^\s{}"#]+))')


def parse_registry(text: str) -> dict:
    """Attributes, structures and keys of a Manatee registry; ValueError on any deviation."""
    tokens: list[tuple[int, str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        position = 0
        while position < len(line):
            match = _TOKEN.match(line, position)
            if match is None or match.end() == position:
                if line[position:].strip():
                    raise ValueError(f"line {number}: cannot read {line[position:]!r}")
                break
            position = match.end()
            comment, string, brace, word = match.groups()
            if comment:
                break
            if string:
                tokens.append((number, "str", string))
            elif brace:
                tokens.append((number, brace, brace))
            elif word:
                tokens.append((number, "word", word))
    result: dict = {"keys": {}, "attributes": {}, "structures": {}}
    index = 0

    def take() -> tuple[int, str, str]:
        nonlocal index
        if index >= len(tokens):
            raise ValueError("unexpected end of registry")
        index += 1
        return tokens[index - 1]

    def value() -> str:
        number, kind, text_ = take()
        if kind not in ("word", "str"):
            raise ValueError(f"line {number}: a value expected, got {text_!r}")
        return text_[1:-1] if kind == "str" else text_

    def block(allowed: set[str], nested_attributes: bool) -> tuple[dict, list[str]]:
        keys: dict[str, str] = {}
        attributes: list[str] = []
        while True:
            number, kind, word = take()
            if kind == "}":
                return keys, attributes
            if kind != "word":
                raise ValueError(f"line {number}: a key expected, got {word!r}")
            if word == "ATTRIBUTE" and nested_attributes:
                attributes.append(value())
                if index < len(tokens) and tokens[index][1] == "{":
                    take()
                    block(_ATTRIBUTE_KEYS, False)
            elif word in allowed:
                keys[word] = value()
            else:
                raise ValueError(f"line {number}: unknown key {word!r} in this block")

    while index < len(tokens):
        number, kind, word = take()
        if kind != "word":
            raise ValueError(f"line {number}: a directive expected, got {word!r}")
        if word in ("ATTRIBUTE", "STRUCTURE"):
            name = value()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
                raise ValueError(f"line {number}: bad name {name!r}")
            keys: dict = {}
            attributes: list[str] = []
            if index < len(tokens) and tokens[index][1] == "{":
                take()
                if word == "ATTRIBUTE":
                    keys, _ = block(_ATTRIBUTE_KEYS, False)
                else:
                    keys, attributes = block(_STRUCTURE_KEYS, True)
            table = result["attributes" if word == "ATTRIBUTE" else "structures"]
            if name in table:
                raise ValueError(f"line {number}: {word} {name} declared twice")
            table[name] = {"keys": keys, "attributes": attributes}
        elif word in _CORPUS_KEYS:
            result["keys"][word] = value()
        else:
            raise ValueError(f"line {number}: unknown directive {word!r}")
    for required in ("PATH", "VERTICAL"):
        if required not in result["keys"]:
            raise ValueError(f"{required} missing")
    return result


def test_the_grammar_parser_rejects_what_manatee_rejects() -> None:
    good = 'PATH "/x/"\nVERTICAL "/v"\nATTRIBUTE word\nSTRUCTURE doc {\n ATTRIBUTE id\n}\n'
    assert parse_registry(good)["structures"]["doc"]["attributes"] == ["id"]
    for broken in (
        good.replace("}", ""),  # unclosed block
        good + "STRUCTURE doc\n",  # declared twice
        good.replace("PATH", "PAHT"),  # unknown directive
        good.replace('"/v"', '"/v'),  # unterminated string
        good.replace("ATTRIBUTE id", "DISPLAYTAG"),  # key without value
    ):
        with pytest.raises(ValueError):
            parse_registry(broken)


@pytest.fixture(scope="module")
def vertical(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real vertical of the demo site (all paragraphs, sentences, glue, lang_diff)."""
    folder = tmp_path_factory.mktemp("vertical")
    config = VerticalConfig(
        folder,
        format=VerticalFormat.VERTICAL,
        all_paragraphs=True,
        sentences=True,
        corpus_tools=True,
    )
    with VerticalWriter(config) as writer:
        for number, path in enumerate(sorted(SITE.rglob("*.html"))):
            url = f"http://demo.test/{path.name}"
            document = extract(path.read_bytes(), url, ExtractConfig())
            diffs = tuple(0.1 * (i % 3) for i in range(len(document.paragraphs)))
            meta = DocMeta(str(number), NOW, url, lang_diff=0.3, paragraph_lang_diffs=diffs)
            writer.write(document, meta)
    (path,) = writer.files
    return path


def _tags_in(vertical: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in vertical.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"<([a-z]+)((?: [\w.-]+=\"[^\"]*\")*)\s*/?>", line)
        if match:
            names = set(re.findall(r'([\w.-]+)="', match.group(2)))
            found.setdefault(match.group(1), set()).update(names)
    return found


def test_the_registry_declares_every_structure_and_attribute_of_the_vertical(
    vertical: Path,
) -> None:
    registry_path = vertical.with_name(vertical.name.removesuffix(".vert") + ".manatee")
    registry = parse_registry(registry_path.read_text(encoding="utf-8"))
    assert registry["keys"]["VERTICAL"] == str(vertical.resolve())
    assert registry["keys"]["PATH"].endswith(f"/manatee/{corpus_id(vertical)}/")
    assert registry["keys"]["ENCODING"] == "UTF-8"
    assert registry["keys"]["DOCSTRUCTURE"] == "doc"
    assert "word" in registry["attributes"]
    found = _tags_in(vertical)
    assert set(found) == {"doc", "p", "s", "g"}  # the vertical really has all of them
    assert {"lang_diff"} <= found["doc"] and {"langdiff"} <= found["p"]
    for structure, attributes in found.items():
        assert structure in registry["structures"]
        assert attributes <= set(registry["structures"][structure]["attributes"])
    glue = registry["structures"]["g"]["keys"]
    assert glue == {"DISPLAYTAG": "0", "DISPLAYBEGIN": "_EMPTY_"}


def test_a_gzipped_vertical_is_read_through_a_pipe(tmp_path: Path) -> None:
    text = manatee_registry(tmp_path / "c-1.vert.gz")
    vertical = parse_registry(text)["keys"]["VERTICAL"]
    assert vertical.startswith("| gzip -dc ") and shlex.split(vertical[2:])[-1].endswith(".gz")


def test_the_cwb_script_is_valid_and_declares_everything(vertical: Path) -> None:
    script = vertical.with_name(vertical.name.removesuffix(".vert") + ".cwb.sh")
    subprocess.run(["sh", "-n", str(script)], check=True)
    text = script.read_text(encoding="utf-8")
    assert f'cwb-makeall -r "$REGISTRY" -V {corpus_id(vertical).upper()}' in text
    flags = cwb_structure_flags()
    declared = {spec.split(":")[0]: set(spec.split(":")[1].split("+")[1:]) for spec in flags[1::2]}
    assert " ".join(flags) in text
    # the glue filter, run for real: no <g/> is left, every token has its glue column
    filtered = subprocess.run(
        ["awk", _GLUE_FILTER, str(vertical)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    source = vertical.read_text(encoding="utf-8").splitlines()
    assert "<g/>" not in filtered
    tokens = [line for line in filtered if not line.startswith("<")]
    assert all(len(line.split("\t")) == 2 for line in tokens)
    assert sum(line.endswith("\t1") for line in tokens) == source.count("<g/>") > 0
    assert [t.split("\t")[0] for t in tokens] == [s for s in source if not s.startswith("<")]
    for structure, attributes in _tags_in(vertical).items():
        if structure != "g":
            assert attributes <= declared[structure]


# CWB cannot be installed on this project's machines (no Debian 12 or PyPI package ships
# its binaries, and building fetched source is not allowed here), so this test runs only
# where CWB is on the PATH. What it would catch is also checked without CWB above: the
# registry against Manatee's grammar, the script with `sh -n`, the glue filter with awk.
@pytest.mark.skipif(
    shutil.which("cwb-encode") is None or shutil.which("cqp") is None,
    reason="CWB is not installed (not in Debian 12; no PyPI package ships it)",
)
def test_the_cwb_script_encodes_and_cqp_answers(vertical: Path, tmp_path: Path) -> None:
    script = vertical.with_name(vertical.name.removesuffix(".vert") + ".cwb.sh")
    registry = tmp_path / "registry"
    env = {"CWB_DATA_DIR": str(tmp_path / "data"), "CWB_REGISTRY_DIR": str(registry)}
    subprocess.run(["sh", str(script)], check=True, env={**__import__("os").environ, **env})
    query = f'{corpus_id(vertical).upper()}; A = [word="the"]; size A;'
    out = subprocess.run(
        ["cqp", "-c", "-r", str(registry)], input=query, capture_output=True, text=True, check=True
    ).stdout
    assert int(out.strip().splitlines()[-1]) > 0


# Manatee (NoSketchEngine's manatee-open) is not packaged for Debian or PyPI either, so like
# the CWB test above this runs only where `encodevert` and `corpquery` are on the PATH: the
# shipped registry, unchanged but for its data folder, must compile and answer a query.
@pytest.mark.skipif(
    shutil.which("encodevert") is None or shutil.which("corpquery") is None,
    reason="Manatee is not installed (not in Debian 12; no PyPI package ships it)",
)
def test_the_manatee_registry_compiles_and_corpquery_answers(
    vertical: Path, tmp_path: Path
) -> None:
    shipped = vertical.with_name(vertical.name.removesuffix(".vert") + ".manatee")
    registry = tmp_path / "registry"
    registry.write_text(manatee_registry(vertical, data_dir=tmp_path / "data"), encoding="utf-8")
    # only PATH may differ from the shipped file
    differ = set(shipped.read_text("utf-8").splitlines()) ^ set(
        registry.read_text("utf-8").splitlines()
    )
    assert {line.split()[0] for line in differ} == {"PATH"}
    subprocess.run(["encodevert", "-c", str(registry)], check=True, capture_output=True)
    out = subprocess.run(
        ["corpquery", str(registry), '[lc="the"]'], capture_output=True, text=True, check=True
    ).stdout
    assert len([line for line in out.splitlines() if line.strip()]) > 0


def test_a_vertical_finished_by_crash_recovery_gets_its_tool_files(
    vertical: Path, tmp_path: Path
) -> None:
    from corpus_crawler.vertical import recover
    from pipelines.writer import _finish_recovered_vertical

    text = vertical.read_text(encoding="utf-8")
    left = tmp_path / "c-20240506-00000-h.vert.open"
    left.write_text(text + '<doc id="torn">\n<p>\nhalf', encoding="utf-8")  # a crash
    config = VerticalConfig(tmp_path, format=VerticalFormat.VERTICAL, corpus_tools=True)
    (recovered,) = recover(tmp_path)
    _finish_recovered_vertical(recovered, config)
    assert (tmp_path / "c-20240506-00000-h.vert").read_text(encoding="utf-8") == text
    registry = parse_registry((tmp_path / "c-20240506-00000-h.manatee").read_text("utf-8"))
    assert registry["keys"]["VERTICAL"].endswith("c-20240506-00000-h.vert")
    assert (tmp_path / "c-20240506-00000-h.cwb.sh").is_file()
