"""Generate configs/languages/<code>.yaml and index.yaml from jusText 3.0.2's stoplists.

Run from the repository root with the test extras installed (they pin justext==3.0.2):

    python tools/make_language_configs.py            # (re)write the files
    python tools/make_language_configs.py --check    # exit 1 if any file differs

The word lists are jusText's data (BSD licence, Jan Pomikálek), lower-cased exactly as
`justext.get_stoplist` does (bytes -> splitlines -> utf-8 -> str.lower) and sorted by
code point, so `tests/test_stoplists.py` can compare every file with the package.
`parameters` already present in a file are kept, so hand-tuned thresholds survive a rerun.
"""

from __future__ import annotations

import argparse
import pkgutil
import sys
from pathlib import Path
from typing import Any

import yaml

from corpus_crawler.stoplists import (
    LanguageConfig,
    _scalar,
    load_language_file,
    render_language_yaml,
)

JUSTEXT_VERSION = "3.0.2"
#: a plain safe loader (not the project's): the files must read the same in any YAML tool
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: jusText stoplist name -> (file code, ISO 639-3 code or "", extra aliases).
#: The file code is ISO 639-1 where one exists, else ISO 639-3; the two lists without an
#: ISO code of their own use a BCP 47 tag. Aliases hold the Wikipedia code the list was
#: built from when it differs (jusText's tools/stopwords/wiki-lang_codes.csv) and the
#: ISO 639-2/B code when it differs from the ISO 639-3 one.
LANGUAGES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "Afrikaans": ("af", "afr", ()),
    "Albanian": ("sq", "sqi", ("alb",)),
    "Arabic": ("ar", "ara", ()),
    "Aragonese": ("an", "arg", ()),
    "Armenian": ("hy", "hye", ("arm",)),
    "Aromanian": ("rup", "rup", ("roa-rup",)),
    "Asturian": ("ast", "ast", ()),
    "Azerbaijani": ("az", "aze", ()),
    "Basque": ("eu", "eus", ("baq",)),
    "Belarusian": ("be", "bel", ()),
    "Belarusian_Taraskievica": ("be-tarask", "", ("be-x-old",)),
    "Bengali": ("bn", "ben", ()),
    "Bishnupriya_Manipuri": ("bpy", "bpy", ()),
    "Bosnian": ("bs", "bos", ()),
    "Breton": ("br", "bre", ()),
    "Bulgarian": ("bg", "bul", ()),
    "Catalan": ("ca", "cat", ()),
    "Cebuano": ("ceb", "ceb", ()),
    "Chuvash": ("cv", "chv", ()),
    "Croatian": ("hr", "hrv", ()),
    "Czech": ("cs", "ces", ("cze",)),
    "Danish": ("da", "dan", ()),
    "Dutch": ("nl", "nld", ("dut",)),
    "English": ("en", "eng", ()),
    "Esperanto": ("eo", "epo", ()),
    "Estonian": ("et", "est", ()),
    "Finnish": ("fi", "fin", ()),
    "French": ("fr", "fra", ("fre",)),
    "Galician": ("gl", "glg", ()),
    "Georgian": ("ka", "kat", ("geo",)),
    "German": ("de", "deu", ("ger",)),
    "Greek": ("el", "ell", ("gre",)),
    "Gujarati": ("gu", "guj", ()),
    "Haitian": ("ht", "hat", ()),
    "Hebrew": ("he", "heb", ("iw",)),
    "Hindi": ("hi", "hin", ()),
    "Hungarian": ("hu", "hun", ()),
    "Icelandic": ("is", "isl", ("ice",)),
    "Ido": ("io", "ido", ()),
    "Igbo": ("ig", "ibo", ()),
    "Indonesian": ("id", "ind", ("in",)),
    "Irish": ("ga", "gle", ()),
    "Italian": ("it", "ita", ()),
    "Javanese": ("jv", "jav", ()),
    "Kannada": ("kn", "kan", ()),
    "Kazakh": ("kk", "kaz", ()),
    "Korean": ("ko", "kor", ()),
    "Kurdish": ("ku", "kur", ()),
    "Kyrgyz": ("ky", "kir", ()),
    "Latin": ("la", "lat", ()),
    "Latvian": ("lv", "lav", ()),
    "Lithuanian": ("lt", "lit", ()),
    "Lombard": ("lmo", "lmo", ()),
    "Low_Saxon": ("nds", "nds", ()),
    "Luxembourgish": ("lb", "ltz", ()),
    "Macedonian": ("mk", "mkd", ("mac",)),
    "Malay": ("ms", "msa", ("may",)),
    "Malayalam": ("ml", "mal", ()),
    "Maltese": ("mt", "mlt", ()),
    "Marathi": ("mr", "mar", ()),
    "Neapolitan": ("nap", "nap", ()),
    "Nepali": ("ne", "nep", ()),
    "Newar": ("new", "new", ()),
    "Norwegian_Bokmal": ("nb", "nob", ("no", "nor")),
    "Norwegian_Nynorsk": ("nn", "nno", ()),
    "Occitan": ("oc", "oci", ()),
    "Persian": ("fa", "fas", ("per",)),
    "Piedmontese": ("pms", "pms", ()),
    "Polish": ("pl", "pol", ()),
    "Portuguese": ("pt", "por", ()),
    "Quechua": ("qu", "que", ()),
    "Romanian": ("ro", "ron", ("rum", "mo")),
    "Russian": ("ru", "rus", ()),
    "Samogitian": ("sgs", "sgs", ("bat-smg",)),
    "Serbian": ("sr", "srp", ()),
    "Serbo_Croatian": ("hbs", "hbs", ("sh",)),
    "Sicilian": ("scn", "scn", ()),
    "Simple_English": ("en-x-simple", "", ("simple",)),
    "Slovak": ("sk", "slk", ("slo",)),
    "Slovenian": ("sl", "slv", ()),
    "Spanish": ("es", "spa", ()),
    "Sundanese": ("su", "sun", ()),
    "Swahili": ("sw", "swa", ()),
    "Swedish": ("sv", "swe", ()),
    "Tagalog": ("tl", "tgl", ()),
    "Tamil": ("ta", "tam", ()),
    "Telugu": ("te", "tel", ()),
    "Turkish": ("tr", "tur", ()),
    "Turkmen": ("tk", "tuk", ()),
    "Ukrainian": ("uk", "ukr", ()),
    "Urdu": ("ur", "urd", ()),
    "Uzbek": ("uz", "uzb", ()),
    "Vietnamese": ("vi", "vie", ()),
    "Volapuk": ("vo", "vol", ()),
    "Walloon": ("wa", "wln", ()),
    "Waray_Waray": ("war", "war", ()),
    "Welsh": ("cy", "cym", ("wel",)),
    "West_Frisian": ("fy", "fry", ()),
    "Western_Panjabi": ("pnb", "pnb", ()),
    "Yoruba": ("yo", "yor", ()),
}

HEADER = """\
# {name} ({code}): stop words for jusText-style boilerplate removal.
# Word list: jusText {version} stoplists/{name}.txt (BSD licence, Jan Pomikálek),
# lower-cased and sorted by tools/make_language_configs.py; see README.md here.
# `parameters` may override JustextParams fields for this language (e.g. stopwords_low: 0.2).
"""


def justext_words(name: str) -> list[str]:
    data = pkgutil.get_data("justext", f"stoplists/{name}.txt")
    if data is None:  # pragma: no cover - pkgutil returns None only for odd loaders
        raise SystemExit(f"justext has no stoplist {name!r}")
    # the same lower-casing as justext.get_stoplist, so the sets compare equal
    return sorted({line.decode("utf8").lower() for line in data.splitlines()})


def render(name: str, words: list[str], parameters: dict[str, Any]) -> str:
    code, iso639_3, aliases = LANGUAGES[name]
    config = LanguageConfig(
        code=code,
        name=name,
        stoplist=frozenset(words),
        parameters=parameters,
        iso639_3=iso639_3 or None,
        aliases=aliases,
    )
    return render_language_yaml(
        config, header=HEADER.format(name=name, code=code, version=JUSTEXT_VERSION)
    )


def render_index() -> str:
    lines = [
        "# code -> jusText name, ISO 639-3 code and aliases of every file in this folder.\n",
        "# Generated by tools/make_language_configs.py; read by corpus_crawler.stoplists so that\n",
        "# resolving a language name does not parse 100 word lists.\n",
        "languages:\n",
    ]
    for name in sorted(LANGUAGES, key=lambda n: LANGUAGES[n][0]):
        code, iso639_3, aliases = LANGUAGES[name]
        lines.append(f"  {_scalar(code)}:\n")
        lines.append(f"    name: {_scalar(name)}\n")
        if iso639_3:
            lines.append(f"    iso639_3: {_scalar(iso639_3)}\n")
        if aliases:
            lines.append(f"    aliases: [{', '.join(_scalar(a) for a in aliases)}]\n")
    return "".join(lines)


def existing_parameters(path: Path) -> dict[str, Any]:
    if not path.exists() or "\nparameters: {}\n" in path.read_text(encoding="utf-8"):
        return {}
    return dict(load_language_file(path).parameters)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "configs" / "languages",
        help="folder to write (default: configs/languages of this checkout)",
    )
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    args = parser.parse_args(argv)

    import justext

    installed = getattr(justext, "__version__", None)
    if installed != JUSTEXT_VERSION:
        raise SystemExit(f"need justext=={JUSTEXT_VERSION}, found {installed}")
    shipped = set(justext.get_stoplists())
    if shipped != set(LANGUAGES):
        missing, unknown = sorted(shipped - set(LANGUAGES)), sorted(set(LANGUAGES) - shipped)
        raise SystemExit(f"stoplists differ from the table: add {missing}, remove {unknown}")

    outputs: dict[Path, str] = {}
    for name in sorted(LANGUAGES):
        path = args.out / f"{LANGUAGES[name][0]}.yaml"
        words = justext_words(name)
        outputs[path] = render(name, words, existing_parameters(path))
    outputs[args.out / "index.yaml"] = render_index()

    changed = [
        path
        for path, text in outputs.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    for path in changed:
        if path.name == "index.yaml":
            continue
        # any YAML reader (not only ours, which reads `no` as a word) must see the same words
        loaded = yaml.load(outputs[path], Loader=_SAFE_LOADER)
        name = loaded["name"]
        if loaded["stoplist"] != justext_words(name) or LANGUAGES[name][0] != path.stem:
            raise SystemExit(f"{path}: YAML round trip changed the data")
    if args.check:
        for path in changed:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if changed else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for path in changed:
        path.write_text(outputs[path], encoding="utf-8", newline="\n")
    print(f"wrote {len(changed)} of {len(outputs)} files in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
