"""Import a script of `tools/` or `benchmarks/` (not packages) in a test, as the
scripts run it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"
BENCHMARKS = TOOLS.parent / "benchmarks"


def load_tool(name: str, folder: Path = TOOLS) -> ModuleType:
    """`tools/<name>.py` (or `<folder>/<name>.py`) as module `name` (registered in
    sys.modules: dataclasses and pickling look their module up)."""
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
