"""Keep long native calls interruptible with Ctrl-C.

A CasADi integrator call runs in C++ and releases the GIL, but Python only handles
``SIGINT`` between bytecodes of the main thread: a long IDAS call would swallow Ctrl-C
until it returns. :func:`call_interruptibly` runs the call in a worker thread while the
main thread waits in short slices, so ``KeyboardInterrupt`` is raised within a fraction of
a second. The abandoned worker finishes its current native call in the background (a
native call cannot be cancelled) and its result is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["call_interruptibly"]

T = TypeVar("T")
_SLICE = 0.05  # s between checks for a pending interrupt


def call_interruptibly(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, with Ctrl-C raising ``KeyboardInterrupt`` at once."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)  # signals are delivered to the main thread only
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    worker = threading.Thread(target=work, name="acausal-native-call", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(_SLICE)
    if "error" in box:
        raise box["error"]
    return box["value"]
