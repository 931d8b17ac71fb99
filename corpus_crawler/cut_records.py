"""Records a file ends inside of, which warcio hands out as if they were whole.

warcio's ArchiveIterator reads a record's block through a reader limited to its
Content-Length and stops quietly where the file stops: the payload of the last,
cut record is the bytes there are, and a header block cut before its
Content-Length gives a record with no length at all. `corpus-crawler process` and
`corpus-crawler extract` read WARC files a crawl killed mid-write (or a partial
download) left; this is how they tell a cut record from a whole one.
"""

from __future__ import annotations

from warcio.recordloader import ArcWarcRecord

__all__ = ["cut_short"]


def cut_short(record: ArcWarcRecord) -> str | None:
    """Why `record` is not whole, None when it is. The rest of its block is read here
    (after it the record's content can no longer be read).

    warcio hands out the record a file ends inside of as if it were whole: its payload
    is the bytes there are, and a header block cut before its Content-Length gives a
    record with no length at all."""
    if record.format == "warc" and record.rec_headers.get_header("Content-Length") is None:
        return "the file ends inside the record's header block (it has no Content-Length)"
    raw = record.raw_stream
    while raw.read(1 << 16):
        pass
    missing = int(getattr(raw, "limit", 0) or 0)
    if missing > 0:
        return (
            f"the file ends {missing:,} bytes before the end of the record"
            " (a writer killed mid-record, or a partial copy)"
        )
    return None
