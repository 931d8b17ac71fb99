"""Imported once by the local pool's fork server, so that every worker starts warm.

Importing the task code and running `extract()` once with ``language="auto"``
loads the code, the stop lists of every language and the language profiles
(~0.8 s of CPU) in the fork server; the workers it forks share them
copy-on-write instead of each loading them again.
"""

from __future__ import annotations

from ..config import ExtractConfig
from ..extract import extract
from . import _task  # noqa: F401 - imported for the workers

extract(b"<html><body><p>warm-up</p></body></html>", "http://localhost/", ExtractConfig())
