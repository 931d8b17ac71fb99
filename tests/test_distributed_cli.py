"""What `corpus-crawler crawl --redis` tells its user: a Redis campaign that has
finished is named as Redis's (its state is not in the output folder, so a new `-o`
joins it as it stands), and a password in the Redis URL is never printed."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import test_distributed
from test_deferred_retries import crawl, site_pages, write_profile
from test_distributed import RedisServer

from corpus_crawler.redis_state import shown_url
from corpus_crawler.testserver import SiteServer

#: A real redis-server for the distributed crawl (tests/test_distributed.py's fixture).
redis_server = test_distributed.redis_server


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("rediss://user:s3cret@cache.example:6380/2", "rediss://user:***@cache.example:6380/2"),
        ("redis://user@host/0", "redis://user@host/0"),
        # an unescaped "@" in the password: redis-py splits at the last one, and so do we
        ("redis://:pa@ss@host/0", "redis://:***@host/0"),
        ("redis://:s3cret@[::1]:6379/0", "redis://:***@[::1]:6379/0"),
        ("unix:///run/redis.sock?db=1&password=s3cret", "unix:///run/redis.sock?db=1&password=***"),
        ("not a url", "not a url"),
    ],
)  # fmt: skip
def test_a_redis_password_is_masked_wherever_the_url_is_shown(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_a_finished_redis_campaign_is_named_as_redis_s_and_its_password_never_shown(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.config_set("requirepass", "s3cret-pw")
    client.close()
    url = f"redis://:s3cret-pw@127.0.0.1:{redis_server.port}/0"
    with SiteServer(pages=site_pages("a", 2)) as server:
        profile = write_profile(tmp_path / "p.yaml", [server.url("/a0.html")])
        first = crawl(profile, tmp_path / "first", redis_url=url)
        assert first.returncode == 0, first.stderr[-4000:]
        # the same campaign from a new folder: nothing is left in Redis to fetch
        again = crawl(profile, tmp_path / "second", redis_url=url)
    assert again.returncode == 0, again.stderr[-4000:]
    masked = f"redis://:***@127.0.0.1:{redis_server.port}/0"
    assert (
        f"nothing left to fetch: the Redis campaign 'deferred' at {masked} had already"
        " finished (2 exchanges archived and 2 documents kept by its earlier runs)"
    ) in again.stderr
    assert "CORPUS_DISTRIBUTED_NAMESPACE" in again.stderr
    # the single-process advice (-o OUTDIR, --recrawl) would not help a Redis campaign
    assert "-o OUTDIR" not in again.stderr and "--recrawl" not in again.stderr
    assert f" of the Redis campaign at {masked}\n" in first.stderr
    for result in (first, again):
        assert "s3cret-pw" not in result.stdout + result.stderr
    for folder in (tmp_path / "first", tmp_path / "second"):
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                data = gzip.decompress(data) if path.name.endswith(".gz") else data
                assert b"s3cret-pw" not in data, path


def test_an_unreachable_redis_is_named_without_its_password(tmp_path: Path) -> None:
    profile = write_profile(tmp_path / "p.yaml", ["http://127.0.0.1:9/"])
    port = test_distributed._free_port()
    result = crawl(profile, tmp_path / "out", redis_url=f"redis://:s3cret-pw@127.0.0.1:{port}/0")
    assert result.returncode == 2
    assert f"cannot reach Redis at redis://:***@127.0.0.1:{port}/0" in result.stderr
    assert "s3cret-pw" not in result.stderr + result.stdout


def test_a_refused_setting_is_the_only_line_of_a_redis_run(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The worker's line came before the settings were checked: a refused value was
    the second of two lines, after "Worker ... of the Redis campaign"."""
    profile = write_profile(tmp_path / "p.yaml", ["http://127.0.0.1:9/"])
    result = crawl(
        profile, tmp_path / "out", "CORPUS_DISTRIBUTED_LEASE_TIMEOUT=0", redis_url=redis_server.url
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "CORPUS_DISTRIBUTED_LEASE_TIMEOUT (distributed.lease_timeout): must be > 0" in lines[0]
