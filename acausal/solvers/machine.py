"""Machine code for a right-hand side, compiled in the background while the run goes on.

CasADi evaluates an ``SX`` function on its virtual machine: one instruction at a time,
about 5 ns each once the instruction list no longer fits in the cache (a 200-link
pendulum chain's right-hand side has 20 000 of them, ~120 us). The same function as C
code, compiled without optimisation (``-O0``), runs about 2.8 times faster; compiling it
costs about 45 us of compiler time per instruction (0.25 s at 5 000 instructions, 0.9 s
at 20 000; ``-O1`` would run 4 times faster but compiles ten times slower on such long
straight-line code). So the compile is worth it for long runs only, and a run cannot
know in advance how long it will be.

:class:`BackgroundCompile` therefore starts the C compiler as a separate process once a
run has lasted as long as the compiler is expected to take (the ski-rental rule), and
lets the integrator go on with the virtual machine; the integrator polls it between
steps and switches to the machine code as soon as it is there (same arithmetic, same
results to rounding). A short run never starts the compiler; a long one runs mostly on
machine code; the compiler uses the second core meanwhile (on a busy machine it competes
with the run). Without a C compiler (none on the ``PATH``, or ``CC`` unset and no
``cc``/``gcc``), or if it fails, everything stays on the virtual machine, silently: it
is an optimisation only. The temporary directory is removed as soon as the library is
loaded (or the compile is abandoned).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import weakref

import casadi as cs

__all__ = ["BackgroundCompile", "c_compiler", "COMPILE_MIN_INSTRUCTIONS",
           "COMPILE_SECONDS_PER_INSTRUCTION"]

#: right-hand sides with fewer instructions stay on the virtual machine under
#: ``compile="auto"`` (their runs are short: a 50-link chain's 5 000 instructions, 1 s of
#: motion in 0.2 s, ran slower with a compiler competing for the processor)
COMPILE_MIN_INSTRUCTIONS = 10_000
#: compiler time per instruction at ``-O0`` (measured: 0.25 s for 5 000, 0.9 s for 20 000)
COMPILE_SECONDS_PER_INSTRUCTION = 45e-6

_COUNTER = itertools.count()


def c_compiler() -> str | None:
    """The C compiler to use: ``$CC``, else ``cc`` or ``gcc`` on the ``PATH``; None if
    there is none."""
    cc = os.environ.get("CC")
    if cc:
        return shutil.which(cc)
    return shutil.which("cc") or shutil.which("gcc")


def _abandon(proc: subprocess.Popen[bytes], directory: str) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    shutil.rmtree(directory, ignore_errors=True)


class BackgroundCompile:
    """``f`` (an ``SX`` function) compiled to a shared library by a separate process.

    Parameters
    ----------
    f : casadi.Function
        The function; the compiled one has the same inputs and outputs.
    compiler : str
        Path of the C compiler (:func:`c_compiler`).

    Notes
    -----
    :meth:`result` never blocks unless asked to: it returns None while the compiler runs.
    """

    def __init__(self, f: cs.Function, compiler: str) -> None:
        self.name = f"acausal_rhs_{os.getpid()}_{next(_COUNTER)}"
        self._dir = tempfile.mkdtemp(prefix="acausal_rhs_")
        g = cs.Function(self.name, f.sx_in(), f.call(f.sx_in()), f.name_in(), f.name_out())
        gen = cs.CodeGenerator(f"{self.name}.c", {"with_header": False})
        gen.add(g)
        gen.generate(self._dir + os.sep)
        self._so = os.path.join(self._dir, f"{self.name}.so")
        self._proc = subprocess.Popen(
            [compiler, "-O0", "-fPIC", "-shared", "-o", self._so,
             os.path.join(self._dir, f"{self.name}.c"), "-lm"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._cleanup = weakref.finalize(self, _abandon, self._proc, self._dir)
        self._result: cs.Function | None = None
        self.failed = False

    @property
    def done(self) -> bool:
        """Whether the compiler has finished (successfully or not)."""
        return self._result is not None or self.failed or self._proc.poll() is not None

    def result(self, wait: bool = False) -> cs.Function | None:
        """The compiled function, or None (still compiling, or failed: see ``failed``)."""
        if self._result is not None or self.failed:
            return self._result
        if wait:
            self._proc.wait()
        elif self._proc.poll() is None:
            return None
        try:
            if self._proc.returncode == 0:
                self._result = cs.external(self.name, self._so)
            else:
                self.failed = True
        except RuntimeError:  # the library did not load: stay on the virtual machine
            self.failed = True
        self._cleanup()  # (a loaded library stays mapped after its file is removed)
        return self._result
