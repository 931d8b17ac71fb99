"""Build glue that pyproject.toml cannot express: the optional compiled walker
and the crawl/language configs packaged inside the wheel."""

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
    except ImportError:  # no compiler toolchain: the pure-Python walker is used
        return []
    ext = Extension(
        "corpus_crawler._segment_fast",
        ["corpus_crawler/_segment_fast.pyx"],
        include_dirs=lxml.get_include(),
        optional=True,
    )
    return cythonize([ext], quiet=True, language_level=3)


setup(ext_modules=extensions(), cmdclass={"build_py": BuildPyWithConfigs})
