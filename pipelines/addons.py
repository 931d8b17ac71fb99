"""Scrapy add-ons of the crawler (`ADDONS` in `pipelines/settings.py`).

`SwitchedOffExtensions` takes out of `EXTENSIONS_BASE` the Scrapy extensions whose
switch is off, so that their modules are never imported: Scrapy imports every
extension's class before the class can refuse with NotConfigured, and every class
path named in `EXTENSIONS` too, even one mapped to None (to normalise the keys), so
only leaving it out of the base list spares the import. Scrapy 2.19's RemoteControl
(off here: `REMOTE_CONTROL_ENABLED`) imports aiohttp, ~70-110 ms of CPU in every crawl
process for an extension that does nothing (`benchmarks/crawl_startup.py`). Add-ons
run after every other source of settings (profile, `-s`), so
`-s REMOTE_CONTROL_ENABLED=true` still turns it on.
"""

from __future__ import annotations

from scrapy.settings import BaseSettings

__all__ = ["SwitchedOffExtensions"]

#: Extension class path (as in Scrapy's EXTENSIONS_BASE) -> the setting that switches it on.
SWITCHES = {"scrapy.extensions.remote_control.RemoteControl": "REMOTE_CONTROL_ENABLED"}


class SwitchedOffExtensions:
    def update_settings(self, settings: BaseSettings) -> None:
        base = settings.getdict("EXTENSIONS_BASE")
        off = [path for path, switch in SWITCHES.items() if not settings.getbool(switch)]
        if any(path in base for path in off):
            for path in off:
                base.pop(path, None)
            settings.set(
                "EXTENSIONS_BASE", base, priority=settings.getpriority("EXTENSIONS_BASE") or 0
            )
