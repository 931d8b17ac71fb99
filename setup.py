"""Build glue that pyproject.toml cannot express: the optional compiled core
(block walker and classifier) and the crawl/language configs packaged inside
the wheel."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPyWithConfigs(build_py):
    """Ship configs/ as corpus_crawler/_configs so installed copies find their YAML."""

    def run(self) -> None:
        super().run()
        source = Path(__file__).parent / "configs"
        target = Path(self.build_lib) / "corpus_crawler" / "_configs"
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)


def extensions() -> list[Extension]:
    try:
        import lxml
        from Cython.Build import cythonize
    except ImportError:  # no Cython: the pure-Python walker and classifier are used
        return []
    exts = [
        Extension(
            f"corpus_crawler.{name}",
            [f"corpus_crawler/{name}.pyx"],
            include_dirs=lxml.get_include(),
            optional=True,
        )
        for name in ("_segment_fast", "_classify_fast", "_kimatu_fast")
    ]
    # elementmarks' word lists over class and id names (pure-Python twin there)
    exts.append(
        Extension("corpus_crawler._names_fast", ["corpus_crawler/_names_fast.pyx"], optional=True)
    )
    # the seen filter's probes of the campaign state (pure-Python twin in state.py)
    exts.append(
        Extension("corpus_crawler._seen_fast", ["corpus_crawler/_seen_fast.pyx"], optional=True)
    )
    # the campaign scheduler's per-link work (seen key, JSON text; pure-Python twin in
    # pipelines/scheduler.py), with OpenSSL's SHA-1 (libcrypto, as Python's hashlib;
    # its headers: Debian's libssl-dev)
    exts.append(
        Extension(
            "pipelines._frontier_fast",
            ["pipelines/_frontier_fast.pyx"],
            libraries=["crypto"],
            define_macros=[("OPENSSL_SUPPRESS_DEPRECATED", None)],
            optional=True,
        )
    )
    return cythonize(exts, quiet=True, language_level=3)


setup(ext_modules=extensions(), cmdclass={"build_py": BuildPyWithConfigs})
