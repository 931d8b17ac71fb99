"""Files that let corpus tools load a finished vertical as it is.

For each finished ``*.vert[.gz]`` file the writer puts beside it:

* ``NAME.manatee``: a Manatee / NoSketchEngine registry file. ``encodevert -c
  NAME.manatee`` compiles the corpus into ``manatee/CORPUS_ID/`` beside the
  vertical; ``corpquery NAME.manatee '[word="..."]'`` queries it.
* ``NAME.cwb.sh``: a POSIX shell script running ``cwb-encode`` and
  ``cwb-makeall``; the CWB data goes to ``cwb/data/CORPUS_ID/`` and the CWB
  registry to ``cwb/registry/`` beside the vertical (``CWB_DATA_DIR`` and
  ``CWB_REGISTRY_DIR`` override both), then ``cqp -r cwb/registry CORPUS_ID``.

Every structure and attribute our (pre)vertical can hold is declared:
``<doc>`` with `vertical.DOC_ATTRIBUTES` + `vertical.OPTIONAL_DOC_ATTRIBUTES`,
``<p>`` with `vertical.PARAGRAPH_ATTRIBUTES` +
`vertical.OPTIONAL_PARAGRAPH_ATTRIBUTES`, ``<s>`` and the glue tag ``<g/>``.

Glue and entities differ between the tools, on purpose:

* Manatee keeps ``<g/>`` as the zero-width structure ``g`` (Sketch Engine's
  convention: ``DISPLAYTAG 0``, ``DISPLAYBEGIN "_EMPTY_"``, so concordances
  show the tokens joined), and stores ``&amp; &lt; &gt; &quot;`` literally as
  they are in the file: a query for an ampersand is ``[word="&amp;"]``.
* CWB cannot hold zero-width regions reliably across versions, so the script
  turns each ``<g/>`` into the value ``1`` of a positional attribute ``glue``
  on the token after it (``0`` elsewhere) and leaves no ``<g/>`` line for
  ``cwb-encode``; ``-x`` decodes the entities, so ``[word="&"]`` finds an
  ampersand and ``[glue="1"]`` a token written without a space before it.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from .vertical import (
    DOC_ATTRIBUTES,
    OPTIONAL_DOC_ATTRIBUTES,
    OPTIONAL_PARAGRAPH_ATTRIBUTES,
    PARAGRAPH_ATTRIBUTES,
)

__all__ = [
    "STRUCTURES",
    "CorpusToolFiles",
    "corpus_id",
    "cwb_script",
    "manatee_registry",
    "write_corpus_tool_files",
]

#: Every structure of our (pre)vertical files with its attributes, in file order.
STRUCTURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("doc", DOC_ATTRIBUTES + OPTIONAL_DOC_ATTRIBUTES),
    ("p", PARAGRAPH_ATTRIBUTES + OPTIONAL_PARAGRAPH_ATTRIBUTES),
    ("s", ()),
    ("g", ()),
)

_VERTICAL_SUFFIXES = (".vert.gz", ".vert", ".prevert.gz", ".prevert")


@dataclass(frozen=True, slots=True)
class CorpusToolFiles:
    registry: Path
    cwb_script: Path


def _stem(vertical: Path) -> str:
    name = vertical.name
    for suffix in _VERTICAL_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return vertical.stem


def corpus_id(vertical: Path | str) -> str:
    """A corpus name both tools accept: lower-case ``[a-z0-9_]``, starting with a letter.

    CWB ids are ``[A-Za-z_][A-Za-z0-9_-]*`` and its registry file names lower
    case; Manatee names corpora after their registry file: one id serves both.
    """
    stem = re.sub(r"[^a-z0-9_]+", "_", _stem(Path(vertical)).lower()).strip("_")
    if not stem or not stem[0].isalpha():
        stem = "c_" + stem
    return stem


def _quote(value: str) -> str:
    # Manatee's registry strings are double-quoted; a quote or backslash inside is escaped.
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manatee_registry(
    vertical: Path,
    *,
    name: str = "",
    language: str = "",
    data_dir: Path | None = None,
) -> str:
    """The Manatee/NoSketchEngine registry of one vertical file (absolute paths)."""
    vertical = vertical.resolve()
    identifier = corpus_id(vertical)
    data = (data_dir or vertical.parent / "manatee" / identifier).resolve()
    source = (
        f"| gzip -dc {shlex.quote(str(vertical))}"
        if vertical.name.endswith(".gz")
        else str(vertical)
    )
    lines = [
        f"# Manatee / NoSketchEngine registry for {vertical.name}, written by corpus-crawler.",
        f"# Compile: encodevert -c {vertical.parent / (_stem(vertical) + '.manatee')}",
        f"NAME {_quote(name or identifier)}",
        f"PATH {_quote(str(data) + os.sep)}",
        f"VERTICAL {_quote(source)}",
        'ENCODING "UTF-8"',
    ]
    if language:
        lines.append(f"LANGUAGE {_quote(language)}")
    lines += [
        'INFO "Web corpus crawled by corpus-crawler; entities are stored as written'
        ' (&amp; &lt; &gt; &quot;)."',
        "DOCSTRUCTURE doc",
        "DEFAULTATTR word",
        "",
        "ATTRIBUTE word",
        "ATTRIBUTE lc {",
        '    LABEL "word (lower case)"',
        "    DYNAMIC utf8lowercase",
        "    DYNLIB internal",
        '    ARG1 "C"',
        "    FUNTYPE s",
        "    FROMATTR word",
        "    TYPE index",
        "    TRANSQUERY yes",
        "}",
    ]
    for structure, attributes in STRUCTURES:
        lines.append("")
        if structure == "g":
            lines += [
                "STRUCTURE g {",
                "    DISPLAYTAG 0",
                '    DISPLAYBEGIN "_EMPTY_"',
                "}",
            ]
        elif attributes:
            lines.append(f"STRUCTURE {structure} {{")
            lines += [f"    ATTRIBUTE {attribute}" for attribute in attributes]
            lines.append("}")
        else:
            lines.append(f"STRUCTURE {structure}")
    return "\n".join(lines) + "\n"


def cwb_structure_flags() -> list[str]:
    """``-S`` flags for cwb-encode: every structure but the glue (a p-attribute there)."""
    flags = []
    for structure, attributes in STRUCTURES:
        if structure == "g":
            continue
        flags += ["-S", ":".join([structure, "0" + "".join(f"+{a}" for a in attributes)])]
    return flags


# The awk filter turns each <g/> line into glue=1 on the next token; token lines get a
# second column (0 or 1); tags pass through.
_GLUE_FILTER = (
    "BEGIN { glue = 0 } "
    '$0 == "<g/>" { glue = 1; next } '
    "/^<.*>$/ { print; next } "
    '{ print $0 "\\t" glue; glue = 0 }'
)


def cwb_script(vertical: Path) -> str:
    """A POSIX shell script that encodes `vertical` with CWB (paths relative to itself)."""
    identifier = corpus_id(vertical)
    reader = "gzip -dc" if vertical.name.endswith(".gz") else "cat"
    encode = [
        "cwb-encode",
        "-c",
        "utf8",
        "-x",
        "-s",
        "-B",
        "-d",
        '"$DATA"',
        "-R",
        f'"$REGISTRY/{identifier}"',
        "-P",
        "glue",
        *cwb_structure_flags(),
    ]
    return "\n".join(
        [
            "#!/bin/sh",
            f"# CWB encoding of {vertical.name}, written by corpus-crawler.",
            "# Needs cwb-encode, cwb-makeall, awk and gzip on PATH; runs from any folder.",
            f"# Then: cqp -r cwb/registry -D {identifier.upper()}",
            "set -eu",
            'HERE=$(cd "$(dirname "$0")" && pwd)',
            f'DATA="${{CWB_DATA_DIR:-$HERE/cwb/data/{identifier}}}"',
            'REGISTRY="${CWB_REGISTRY_DIR:-$HERE/cwb/registry}"',
            'mkdir -p "$DATA" "$REGISTRY"',
            f'{reader} "$HERE/{vertical.name}" \\',
            f"  | awk '{_GLUE_FILTER}' \\",
            "  | " + " ".join(encode),
            f'cwb-makeall -r "$REGISTRY" -V {identifier.upper()}',
            "",
        ]
    )


def write_corpus_tool_files(
    vertical: Path, *, name: str = "", language: str = ""
) -> CorpusToolFiles:
    """Write ``NAME.manatee`` and ``NAME.cwb.sh`` beside a finished vertical file.

    Each is written to ``*.open`` and renamed, so a crash never leaves half a
    registry; the script is executable.
    """
    stem = vertical.parent / _stem(vertical)
    registry = stem.with_name(stem.name + ".manatee")
    script = stem.with_name(stem.name + ".cwb.sh")
    _write_atomically(registry, manatee_registry(vertical, name=name, language=language))
    _write_atomically(script, cwb_script(vertical), mode=0o755)
    return CorpusToolFiles(registry=registry, cwb_script=script)


def _write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    temporary = path.with_name(path.name + ".open")
    temporary.write_text(text, encoding="utf-8")
    os.chmod(temporary, mode)
    os.replace(temporary, path)
