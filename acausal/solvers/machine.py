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

A compiled library is also kept on disk (:func:`cache_dir`: ``~/.cache/acausal/rhs``,
or ``$ACAUSAL_COMPILE_CACHE``), named by a hash of the function, the compiler and the
CasADi version: a later run of the same model, in this process or another, loads it
and runs on machine code almost from its start (it looks once the lookup,
:data:`KEY_SECONDS_PER_INSTRUCTION`, would cost :data:`LOOKUP_SHARE` of what it has
run). The least recently used libraries are removed beyond :data:`CACHE_MAX_FILES` or
:data:`CACHE_MAX_BYTES`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import weakref

import casadi as cs

__all__ = ["BackgroundCompile", "c_compiler", "cache_dir", "cached_library", "library_key",
           "cache_contents", "clear_cache",
           "COMPILE_MIN_INSTRUCTIONS", "COMPILE_SECONDS_PER_INSTRUCTION",
           "KEY_SECONDS_PER_INSTRUCTION", "LOOKUP_SHARE"]

#: right-hand sides with fewer instructions stay on the virtual machine under
#: ``compile="auto"`` (their runs are short: a 50-link chain's 5 000 instructions, 1 s of
#: motion in 0.2 s, ran slower with a compiler competing for the processor)
COMPILE_MIN_INSTRUCTIONS = 10_000
#: compiler time per instruction at ``-O0`` (measured: 0.25 s for 5 000, 0.9 s for 20 000)
COMPILE_SECONDS_PER_INSTRUCTION = 45e-6
#: time per instruction of a function's cache key (:func:`library_key`; measured: 20 to
#: 27 ms for 20 500 instructions, 88 ms for a 10 000-mass chain's right-hand side)
KEY_SECONDS_PER_INSTRUCTION = 1.5e-6
#: a run looks in the disk cache once the lookup would cost this share of what it has
#: run (a run whose lookup finds nothing spends this much more at most)
LOOKUP_SHARE = 0.2

_COUNTER = itertools.count()
#: the compiler's flags (part of a library's cache key)
_FLAGS = ("-O0", "-fPIC", "-shared")
#: bounds of the disk cache: libraries beyond either are removed, least recently used
#: first (a 200-link chain's right-hand side compiles to about 1 MB)
CACHE_MAX_FILES = 64
CACHE_MAX_BYTES = 512 * 2**20


def cache_dir() -> str | None:
    """The directory compiled right-hand sides are kept in between runs and processes:
    ``$ACAUSAL_COMPILE_CACHE`` if set (empty, ``0``, ``off``, ``false`` or ``no``: none),
    else ``$XDG_CACHE_HOME/acausal/rhs`` or ``~/.cache/acausal/rhs``."""
    env = os.environ.get("ACAUSAL_COMPILE_CACHE")
    if env is not None:
        return None if env.strip().lower() in ("", "0", "off", "false", "no") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "acausal", "rhs")


def _usable(d: str) -> bool:
    """Whether libraries may be loaded from (and kept in) ``d``: not if anyone may write
    there (a world-writable directory, such as ``/tmp`` itself: another user could put a
    library under an expected name; the process would run it)."""
    try:
        return os.name != "posix" or not (os.stat(d).st_mode & 0o002)
    except OSError:  # (not there yet: made by _keep, for this user only)
        return True


def library_key(f: cs.Function, compiler: str) -> str:
    """The cache key of ``f`` compiled by ``compiler``: a hash of the function (its
    serialisation: the same expressions give the same text, in any process), the
    compiler, its flags, CasADi's version and the platform."""
    h = hashlib.sha256()
    for part in (os.path.realpath(compiler), " ".join(_FLAGS), cs.CasadiMeta.version(),
                 sys.platform, platform.machine(), f.serialize()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _library_name(key: str) -> str:
    return f"acausal_rhs_{key}"


def cached_library(f: cs.Function, compiler: str, key: str | None = None
                   ) -> cs.Function | None:
    """``f`` from the disk cache, if it was compiled before (None otherwise, or if the
    cache is off or the library does not load)."""
    d = cache_dir()
    if d is None or not _usable(d):
        return None
    key = key or library_key(f, compiler)
    path = os.path.join(d, _library_name(key) + ".so")
    if not os.path.isfile(path):
        return None
    try:
        fc = cs.external(_library_name(key), path)
    except RuntimeError:  # (a damaged file: compiled again, and replaced)
        return None
    try:
        os.utime(path)  # (recently used: kept longest)
    except OSError:
        pass
    return fc


def _keep(so: str, key: str) -> str | None:
    """Put the library ``so`` into the disk cache (atomically: a process reading the cache
    sees the whole file or none); its path there, or None if the cache is off or not
    writable. Prunes the cache to its bounds."""
    d = cache_dir()
    if d is None:
        return None
    tmp = None
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        if not _usable(d):
            return None
        final = os.path.join(d, _library_name(key) + ".so")
        fd, tmp = tempfile.mkstemp(prefix=".incoming_", suffix=".so", dir=d)
        os.close(fd)
        shutil.copyfile(so, tmp)
        os.replace(tmp, final)
        tmp = None
        _prune(d, keep=final)
        return final
    except OSError:  # (not writable, or the disk full: this run loads its own copy)
        if tmp is not None:
            try:
                os.remove(tmp)
            except OSError:
                pass
        return None


def cache_contents() -> list[tuple[float, int, str]]:
    """The libraries in the disk cache: ``(last used, bytes, path)``, most recent first
    (none if the cache is off or empty)."""
    d = cache_dir()
    if d is None or not os.path.isdir(d):
        return []
    entries = []
    for name in os.listdir(d):
        path = os.path.join(d, name)
        if name.startswith("acausal_rhs_") and name.endswith(".so"):
            try:
                st = os.stat(path)
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, path))
    entries.sort(reverse=True)
    return entries


def clear_cache() -> int:
    """Remove every library of the disk cache; how many were removed."""
    removed = 0
    for _, _, path in cache_contents():
        try:
            os.remove(path)
            removed += 1
        except OSError:
            pass
    return removed


def _prune(d: str, keep: str) -> None:
    """Remove the least recently used libraries beyond the cache's bounds."""
    entries = cache_contents()  # (most recent first)
    total = 0
    for k, (_, size, path) in enumerate(entries):
        total += size
        if path != keep and (k >= CACHE_MAX_FILES or total > CACHE_MAX_BYTES):
            try:
                os.remove(path)
            except OSError:
                pass


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

    def __init__(self, f: cs.Function, compiler: str, key: str | None = None) -> None:
        self._result: cs.Function | None = None
        self.failed = False
        # (named by the cache key where the cache is on: a library's functions carry its
        # name, so a library loaded again from the cache must have been named so)
        self._key = key or (library_key(f, compiler) if cache_dir() is not None else None)
        if self._key is not None:
            self._result = cached_library(f, compiler, self._key)
            if self._result is not None:  # compiled before: nothing to do
                self.name = _library_name(self._key)
                return
        self.name = (_library_name(self._key) if self._key is not None
                     else f"acausal_rhs_{os.getpid()}_{next(_COUNTER)}")
        self._dir = tempfile.mkdtemp(prefix="acausal_rhs_")
        g = cs.Function(self.name, f.sx_in(), f.call(f.sx_in()), f.name_in(), f.name_out())
        gen = cs.CodeGenerator(f"{self.name}.c", {"with_header": False})
        gen.add(g)
        gen.generate(self._dir + os.sep)
        self._so = os.path.join(self._dir, f"{self.name}.so")
        self._proc = subprocess.Popen(
            [compiler, *_FLAGS, "-o", self._so, os.path.join(self._dir, f"{self.name}.c"),
             "-lm"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._cleanup = weakref.finalize(self, _abandon, self._proc, self._dir)

    @property
    def cached(self) -> bool:
        """Whether the library came from the disk cache (no compiler run)."""
        return not hasattr(self, "_proc")

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
                kept = _keep(self._so, self._key) if self._key is not None else None
                self._result = cs.external(self.name, kept or self._so)
            else:
                self.failed = True
        except RuntimeError:  # the library did not load: stay on the virtual machine
            self.failed = True
        self._cleanup()  # (a loaded library stays mapped after its file is removed)
        return self._result
