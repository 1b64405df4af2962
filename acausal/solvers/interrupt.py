"""Keep long native calls interruptible with Ctrl-C.

A CasADi integrator call runs in C++ and releases the GIL, but Python only handles
``SIGINT`` between bytecodes of the main thread: a long IDAS call would swallow Ctrl-C
until it returns. :func:`call_interruptibly` runs the call in a worker thread while the
main thread waits in short slices, so ``KeyboardInterrupt`` is raised within a fraction of
a second. The abandoned worker finishes its current native call in the background (a
native call cannot be cancelled) and its result is dropped.

:func:`simulate <acausal.simulate.simulate>` starts the worker on entry
(:func:`start_worker`), without waiting for it: a new thread waits for the operating
system to run it (0.1 ms on an idle machine, up to 15 ms on a busy one), which then
overlaps the build and the setup before the first native call instead of delaying it.
"""

from __future__ import annotations

import _thread
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

try:  # queue's C part, which is all that is used here (queue.py's imports: 0.7 ms cold)
    from _queue import Empty, SimpleQueue
except ImportError:  # pragma: no cover - another Python implementation
    from queue import Empty, SimpleQueue

__all__ = ["call_interruptibly", "start_worker"]

T = TypeVar("T")
_SLICE = 0.05  # s between checks for a pending interrupt


class _Worker:
    """One thread that runs the calls one after the other (a thread start per call would
    cost as much as a short integration). Started as a bare thread (``_thread``): its
    start is not waited for, and, like a daemon thread, the interpreter does not wait for
    an abandoned native call at exit."""

    def __init__(self) -> None:
        self.jobs: SimpleQueue[tuple[Callable[[], Any], SimpleQueue[Any]]] = SimpleQueue()
        _thread.start_new_thread(self._run, ())

    def _run(self) -> None:
        while True:
            job, reply = self.jobs.get()
            try:
                reply.put((True, job()))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                reply.put((False, exc))


_WORKER: _Worker | None = None


def _forget_worker() -> None:
    global _WORKER
    _WORKER = None


# a forked process (a multiprocessing pool) has no copy of the worker thread: calls queued
# for it there would wait forever; the child starts its own
if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_forget_worker)


def start_worker() -> None:
    """Start the worker thread of :func:`call_interruptibly` now if there is none (in the
    main thread; elsewhere calls run in their own thread)."""
    global _WORKER
    if _WORKER is None and threading.current_thread() is threading.main_thread():
        _WORKER = _Worker()


def call_interruptibly(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, with Ctrl-C raising ``KeyboardInterrupt`` at once."""
    global _WORKER
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)  # signals are delivered to the main thread only
    if _WORKER is None:
        _WORKER = _Worker()
    reply: SimpleQueue[Any] = SimpleQueue()
    _WORKER.jobs.put((lambda: fn(*args, **kwargs), reply))
    try:
        while True:
            try:
                ok, value = reply.get(timeout=_SLICE)
                break
            except Empty:
                continue
    except KeyboardInterrupt:
        # the worker finishes its native call in the background; later calls get a fresh
        # worker instead of queueing behind it
        _WORKER = None
        raise
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
