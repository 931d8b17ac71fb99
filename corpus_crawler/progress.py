"""Progress for long jobs: a bar on a terminal, a plain periodic line elsewhere.

For `crawl`, `process`, `dedup` and any loop over many pages or files::

    with progress_bar(total=len(paths), description="dedup", unit="docs") as bar:
        for path in paths:
            ...
            bar.update(1, kept=kept)           # counters shown beside the bar

    bar.update_to(pages, kept=..., words=...)  # when the caller has absolute counts

On a terminal (the stream is a TTY) this is a tqdm bar (tqdm: small, pure
Python, the de-facto progress bar of the Python data stack; it handles
terminal width, rates and ETA). Otherwise (a log file, CI, a pipe) one plain
line every `interval` seconds and one at the end, so logs stay readable.
`enabled=False` shows nothing.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["Progress", "progress_bar"]


def _format_postfix(values: dict[str, Any]) -> str:
    parts = []
    for key, value in values.items():
        if isinstance(value, float):
            parts.append(f"{key} {value:,.1f}")
        elif isinstance(value, int):
            parts.append(f"{key} {value:,}")
        else:
            parts.append(f"{key} {value}")
    return " | ".join(parts)


class Progress:
    """Counts work done; shows it as a bar (TTY) or periodic lines (anything else)."""

    def __init__(
        self,
        *,
        total: int | None = None,
        description: str = "",
        unit: str = "items",
        stream: TextIO | None = None,
        interval: float = 5.0,
        enabled: bool = True,
        tty: bool | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.description = description
        self.unit = unit
        self.interval = interval
        self.enabled = enabled
        self.count = 0
        self.postfix: dict[str, Any] = {}
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar: Any = None
        self._closed = False
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty())
        self.tty = tty
        if enabled and tty:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=description or None,
                unit=f" {unit}",
                file=self.stream,
                dynamic_ncols=True,
                mininterval=0.5,
                leave=True,
            )

    def update(self, amount: int = 1, **postfix: Any) -> None:
        self.update_to(self.count + amount, **postfix)

    def update_to(self, count: int, **postfix: Any) -> None:
        """Set the absolute count (and the counters shown beside it)."""
        delta = count - self.count
        self.count = count
        if postfix:
            self.postfix.update(postfix)
        if not self.enabled:
            return
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix_str(_format_postfix(self.postfix), refresh=False)
            self._bar.update(delta)
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._last_line = now
            self._line(now)

    def line(self) -> str:
        """The plain progress line for the current counts."""
        elapsed = time.monotonic() - self._started
        rate = self.count / elapsed if elapsed > 0 else 0.0
        done = f"{self.count:,}" + (f"/{self.total:,}" if self.total is not None else "")
        head = f"{self.description}: " if self.description else ""
        clock = f"{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}"
        text = f"{head}{done} {self.unit} ({rate:,.1f}/s, {clock})"
        if self.postfix:
            text += " | " + _format_postfix(self.postfix)
        return text

    def _line(self, now: float) -> None:
        print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            self._line(time.monotonic())

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def progress_bar(
    *,
    total: int | None = None,
    description: str = "",
    unit: str = "items",
    stream: TextIO | None = None,
    interval: float = 5.0,
    enabled: bool = True,
) -> Progress:
    """A `Progress` on `stream` (default standard error)."""
    return Progress(
        total=total,
        description=description,
        unit=unit,
        stream=stream,
        interval=interval,
        enabled=enabled,
    )
