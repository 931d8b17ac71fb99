"""concurrent.futures -> Twisted: resume on the reactor thread when a future finishes."""

from __future__ import annotations

from concurrent.futures import Future
from typing import TypeVar

from twisted.internet import defer
from twisted.python.failure import Failure

__all__ = ["deferred_from_future"]

T = TypeVar("T")


def deferred_from_future(future: Future[T]) -> defer.Deferred[T]:
    """A Deferred that fires on the reactor thread with the future's result or error.

    The future's callback runs on whatever thread finished it (a writer thread, a
    process pool's manager thread), so it only hands over with `callFromThread`.
    Cancelling the Deferred cancels the future if it has not started.
    """
    from twisted.internet import reactor

    def cancel(_: defer.Deferred[T]) -> None:
        future.cancel()

    result: defer.Deferred[T] = defer.Deferred(cancel)

    def fire(done: Future[T]) -> None:
        if result.called:
            return
        if done.cancelled():
            result.errback(Failure(defer.CancelledError()))
            return
        error = done.exception()
        if error is None:
            result.callback(done.result())
        else:
            result.errback(Failure(error))

    future.add_done_callback(lambda done: reactor.callFromThread(fire, done))
    return result
