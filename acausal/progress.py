"""Progress reporting for long builds, simulations and sweeps.

Every long-running entry point takes ``progress=``:

``None`` (default)
    A progress bar (tqdm) on an interactive terminal, shown only when the work takes
    longer than :data:`DELAY` seconds; nothing otherwise (scripts, CI, notebooks' logs,
    pipes) and nothing when tqdm is not installed.
``True`` / ``False``
    Always a bar (tqdm needed: ``pip install 'acausal[progress]'``) / never.
callable
    ``progress(fraction, message)`` with ``0 <= fraction <= 1``: called once per pass of
    :func:`acausal.build`, once per integrator call of :func:`acausal.simulate` (segments
    between events, chunks of a dynamic state selection run) and once per finished run of
    :func:`acausal.sweep`, then with ``fraction == 1`` at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Reporter", "reporter", "DELAY", "format_stats"]

#: seconds of work before the automatic bar appears
DELAY = 1.0


class Reporter:
    """Sends ``(fraction, message)`` to a callback and/or a tqdm bar (see the module)."""

    def __init__(self, callback: Callable[[float, str], Any] | None = None, bar: Any = None,
                 span: tuple[float, float] | None = None) -> None:
        self.callback = callback
        self.bar = bar
        self.span = span
        self.last = -1.0
        self.closed = False

    def __call__(self, fraction: float, message: str = "") -> None:
        if self.closed:
            return
        fraction = min(1.0, max(0.0, float(fraction)))
        self.last = fraction
        if self.callback is not None:
            self.callback(fraction, message)
        if self.bar is not None:
            self.bar.n = round(1000 * fraction)
            if message:
                self.bar.set_postfix_str(message, refresh=False)
            self.bar.refresh()

    def at_time(self, t: float) -> None:
        """Report the simulated time ``t`` as a fraction of the run's span."""
        if self.span is None:
            return
        t0, t1 = self.span
        self(0.0 if t1 <= t0 else (t - t0) / (t1 - t0), f"t = {t:.6g} s")

    def close(self, message: str = "done") -> None:
        """The work is over: a last report at 1 (if not already there), close the bar."""
        if self.closed:
            return
        if self.last < 1.0 and self.callback is not None:
            self.callback(1.0, message)
        self.closed = True
        if self.bar is not None:
            self.bar.n = 1000
            self.bar.close()

    @property
    def active(self) -> bool:
        return self.callback is not None or self.bar is not None


def _interactive() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def reporter(progress: Any = None, *, what: str = "",
             span: tuple[float, float] | None = None) -> Reporter:
    """A :class:`Reporter` for the ``progress=`` argument of an entry point.

    ``what`` labels the bar (``"build"``, ``"simulate"``, ``"sweep"``); ``span`` is the
    time interval of a simulation (for :meth:`Reporter.at_time`).
    """
    if isinstance(progress, Reporter):
        return progress
    if progress is False:
        return Reporter(span=span)
    if callable(progress):
        return Reporter(progress, span=span)
    if progress is None and not _interactive():
        return Reporter(span=span)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress is True:
            import warnings

            from .errors import AcausalWarning

            warnings.warn("progress=True needs tqdm: pip install 'acausal[progress]'",
                          AcausalWarning, stacklevel=3)
        return Reporter(span=span)
    bar = tqdm(total=1000, desc=what or None, delay=0.0 if progress is True else DELAY,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}"
                          "{postfix}", leave=False, file=sys.stderr)
    bar.start_t = time.time()
    return Reporter(None, bar, span=span)


def format_stats(stats: Any) -> str:
    """``res.stats.summary()``: the integrator's counts per call and in total."""
    head = ("call", "steps", "rhs", "jac", "err.test", "newton", "mode")
    rows = [(str(k), str(s.steps), str(s.rhs_evaluations), str(s.jacobian_evaluations),
             str(s.error_test_failures), str(s.newton_failures),
             s.mode + (f" (after {', '.join(s.attempts)})" if s.attempts else ""))
            for k, s in enumerate(stats.segments)]
    rows.append(("total", str(stats.steps), str(stats.rhs_evaluations),
                 str(stats.jacobian_evaluations), str(stats.error_test_failures),
                 str(stats.newton_failures), ""))
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    lines = [f"{stats.solver}: {len(stats.segments)} integrator call(s), "
             f"{len(stats.time_events)} time event(s), {len(stats.events)} event(s), "
             f"{stats.reselections} state re-selection(s), {stats.wall_time:.3f} s"]
    for r in [head, *rows]:
        lines.append("  " + "  ".join(v.rjust(w) if i < 6 else v
                                      for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(lines)
