"""Crash-safe, size-rotated output files shared by the WARC and vertical writers.

A file is created as ``NAME.open`` (exclusively: an existing file is never
overwritten), every unit (a WARC record, a vertical document) is written with
one ``write`` and flushed, and the file is renamed to ``NAME`` when it is
closed. A crash therefore leaves at most one ``*.open`` file per writer whose
tail may be torn; `recover_files` finishes or quarantines such leftovers on
restart (STYLE.md rule 12).

Names follow the IIPC recommendation for WARC files,
``{prefix}-{timestamp}-{serial:05d}-{hostname}{extension}``, with a 14-digit
(seconds) or 17-digit (milliseconds) UTC timestamp taken when the file is opened.
"""

from __future__ import annotations

import enum
import logging
import os
import re
import socket
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Protocol

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]

OPEN_SUFFIX = ".open"
QUARANTINE_DIR = "quarantine"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(moment: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def default_hostname() -> str:
    return safe_name_part(socket.gethostname()) or "localhost"


def safe_name_part(value: str) -> str:
    """`value` reduced to characters that are safe in a file name on any system."""
    return re.sub(r"[^A-Za-z0-9.\-]+", "_", value).strip("._")


def file_timestamp(moment: datetime, digits: int) -> str:
    moment = as_utc(moment)
    stamp = moment.strftime("%Y%m%d%H%M%S")
    if digits == 17:
        stamp += f"{moment.microsecond // 1000:03d}"
    return stamp


def fsync_directory(directory: Path) -> None:
    """Make a rename durable; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class RotatingConfig(Protocol):
    """What an output writer's frozen config says about its rotating files."""

    @property
    def directory(self) -> Path: ...
    @property
    def prefix(self) -> str: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def hostname(self) -> str | None: ...
    @property
    def timestamp_digits(self) -> int: ...
    @property
    def fsync(self) -> bool: ...


class RotatingFile:
    """An append-only output that lives as ``NAME.open`` until closed, then ``NAME``.

    `header` is called with the final file name each time a new file is opened
    and returns the bytes written first (the WARC writer's ``warcinfo`` record);
    `rotate_if_full` closes the current file once it holds `max_bytes` or more,
    so the next `write` starts a new one. Not thread-safe: one writer path owns it.
    """

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str,
        extension: str,
        max_bytes: int,
        hostname: str,
        timestamp_digits: int,
        clock: Clock,
        header: Callable[[str], bytes] | None = None,
        fsync: bool = False,
    ) -> None:
        self._directory = directory
        self._prefix = prefix
        self._extension = extension
        self._max_bytes = max_bytes
        self._hostname = hostname
        self._timestamp_digits = timestamp_digits
        self._clock = clock
        self._header = header
        self._fsync = fsync
        self._serial = 0
        self._file: BinaryIO | None = None
        self._final_path: Path | None = None
        self._size = 0
        self._closed: list[Path] = []

    @classmethod
    def for_config(
        cls,
        config: RotatingConfig,
        *,
        extension: str,
        clock: Clock | None = None,
        header: Callable[[str], bytes] | None = None,
    ) -> RotatingFile:
        """The rotating file of a writer whose config names the folder, prefix, size,
        host name (None: this machine's), timestamp digits and fsync policy."""
        return cls(
            config.directory,
            prefix=config.prefix,
            extension=extension,
            max_bytes=config.max_bytes,
            hostname=config.hostname or default_hostname(),
            timestamp_digits=config.timestamp_digits,
            clock=clock or utc_now,
            header=header,
            fsync=config.fsync,
        )

    @property
    def open_path(self) -> Path | None:
        """The ``*.open`` file being written, if any."""
        if self._final_path is None:
            return None
        return self._final_path.with_name(self._final_path.name + OPEN_SUFFIX)

    @property
    def final_path(self) -> Path | None:
        """The name the current file will have once closed."""
        return self._final_path

    @property
    def size(self) -> int:
        return self._size

    @property
    def closed_paths(self) -> tuple[Path, ...]:
        """Every finished file this object wrote, in order."""
        return tuple(self._closed)

    def write(self, data: bytes) -> int:
        """Append one whole unit and flush it; returns its offset in the file."""
        if self._file is None:
            self._open()
        assert self._file is not None
        offset = self._size
        self._file.write(data)
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())
        self._size += len(data)
        return offset

    def ensure_open(self) -> None:
        if self._file is None:
            self._open()

    def rotate_if_full(self) -> None:
        if self._file is not None and self._size >= self._max_bytes:
            self.close()

    def close(self) -> None:
        """Finish the current file (rename ``NAME.open`` to ``NAME``); safe to repeat."""
        if self._file is None:
            return
        open_path, final_path = self.open_path, self._final_path
        assert open_path is not None and final_path is not None
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        self._final_path = None
        self._size = 0
        os.replace(open_path, final_path)
        fsync_directory(self._directory)
        self._closed.append(final_path)

    def _open(self) -> None:
        self._directory.mkdir(parents=True, exist_ok=True)
        stamp = file_timestamp(self._clock(), self._timestamp_digits)
        while True:
            name = f"{self._prefix}-{stamp}-{self._serial:05d}-{self._hostname}{self._extension}"
            self._serial += 1
            final_path = self._directory / name
            open_path = final_path.with_name(name + OPEN_SUFFIX)
            if final_path.exists():
                continue
            try:
                handle = open(open_path, "xb")  # noqa: SIM115 - kept open across calls
            except FileExistsError:
                continue
            break
        self._file = handle
        self._final_path = final_path
        self._size = 0
        if self._header is not None:
            self.write(self._header(name))


# --- recovery -----------------------------------------------------------------


class RecoveryAction(enum.Enum):
    #: The file was complete; it only lacked its final name.
    RENAMED = "renamed"
    #: A torn tail was cut off after the last complete unit, then the file was renamed.
    TRUNCATED = "truncated"
    #: Nothing readable: the file was moved to ``quarantine/`` for a human to look at.
    QUARANTINED = "quarantined"
    #: Empty (opened, then killed before its first byte): removed, nothing to look at.
    REMOVED = "removed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Recovered:
    """What `recover` did with one leftover ``*.open`` file."""

    source: Path
    destination: Path
    action: RecoveryAction
    #: Complete units (WARC records, vertical documents) kept.
    units: int
    kept_bytes: int
    dropped_bytes: int

    def __str__(self) -> str:
        if self.action is RecoveryAction.REMOVED:
            return f"{self.source.name}: removed (empty)"
        return (
            f"{self.source.name}: {self.action} -> {self.destination} "
            f"({self.units} complete units, {self.kept_bytes} bytes kept, "
            f"{self.dropped_bytes} bytes dropped)"
        )


#: Returns (end offset of the last complete unit, number of complete units).
ValidPrefix = Callable[[Path], tuple[int, int]]


def recover_files(
    directory: Path, extensions: tuple[str, ...], valid_prefix: ValidPrefix
) -> list[Recovered]:
    """Finish every ``*{extension}.open`` file in `directory` left by a crashed writer."""
    results: list[Recovered] = []
    if not directory.is_dir():
        return results
    for source in sorted(directory.iterdir()):
        name = source.name
        if not name.endswith(OPEN_SUFFIX) or not source.is_file():
            continue
        final_name = name[: -len(OPEN_SUFFIX)]
        if not final_name.endswith(extensions):
            continue
        size = source.stat().st_size
        if size == 0:
            source.unlink()
            fsync_directory(directory)
            result = Recovered(source, source, RecoveryAction.REMOVED, 0, 0, 0)
            logger.warning("recovered %s", result)
            results.append(result)
            continue
        end, units = valid_prefix(source)
        destination = directory / final_name
        if units == 0 or destination.exists():
            destination = _quarantine(source)
            action = RecoveryAction.QUARANTINED
            end = 0
        else:
            if end < size:
                with open(source, "r+b") as handle:
                    handle.truncate(end)
                    handle.flush()
                    os.fsync(handle.fileno())
                action = RecoveryAction.TRUNCATED
            else:
                action = RecoveryAction.RENAMED
            os.replace(source, destination)
            fsync_directory(directory)
        result = Recovered(source, destination, action, units, end, size - end)
        logger.warning("recovered %s", result)
        results.append(result)
    return results


def _quarantine(source: Path) -> Path:
    target_dir = source.parent / QUARANTINE_DIR
    target_dir.mkdir(exist_ok=True)
    target = target_dir / source.name
    counter = 1
    while target.exists():
        target = target_dir / f"{source.name}.{counter}"
        counter += 1
    os.replace(source, target)
    return target


def gzip_member_ends(stream: BinaryIO, chunk_size: int = 1 << 20) -> Iterator[tuple[int, bytes]]:
    """Offsets just past each complete gzip member, with the member's last output bytes.

    Stops silently at the first member that is torn (no end), corrupt (bad data
    or CRC) or followed by garbage: everything before it is intact.
    """
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    offset = 0
    tail = b""
    pending = b""
    while True:
        if not pending:
            pending = stream.read(chunk_size)
            if not pending:
                return
        try:
            out = decompressor.decompress(pending)
        except zlib.error:
            return
        if out:
            tail = (tail + out[-64:])[-64:]
        if decompressor.eof:
            used = len(pending) - len(decompressor.unused_data)
            offset += used
            yield offset, tail
            pending = decompressor.unused_data
            decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
            tail = b""
        else:
            offset += len(pending)
            pending = b""
