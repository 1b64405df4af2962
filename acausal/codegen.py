"""C code generation: the compiled model's CasADi functions as a native shared library.

CasADi writes plain C99 for any ``casadi.Function`` built from SX or MX expressions
(``casadi.CodeGenerator``); this module compiles that C with the system C compiler into a
shared library and loads it back with ``casadi.external``, so a model's functions can be
evaluated natively, checked against their in-memory originals, or embedded elsewhere (the
FMU export of :mod:`acausal.fmi` builds on the same helpers).

* :func:`model_functions` -- the DAE ``(x, z, p, t) -> (ode, alg)``, the outputs, and the
  residual and iteration matrix of the implicit form IDAS solves;
* :func:`generate_c` -- write C for a list of functions (one ``.c`` file and its header);
* :func:`compile_shared` -- compile C sources into a shared library;
* :func:`compile_functions` / :func:`compile_model` -- both steps, and load the result.

A C compiler is needed at export time only: ``$CC`` if set, otherwise the first of
``cc``, ``gcc``, ``clang`` found on the ``PATH``. Without one, :class:`CompilerNotFoundError`
says so. The generated code itself needs nothing beyond the C standard library and ``libm``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import casadi as cs

from .errors import AcausalError
from .names import did_you_mean

__all__ = [
    "CodegenError",
    "CompilerNotFoundError",
    "CompiledFunctions",
    "find_compiler",
    "shared_library_suffix",
    "generate_c",
    "compile_shared",
    "compile_functions",
    "model_functions",
    "compile_model",
]

#: flags for every compilation: position-independent code, and no contraction of ``a*b + c``
#: into fused multiply-adds, so the library computes what CasADi's virtual machine computes
#: (bit for bit on the same libm) and results do not depend on the target CPU
BASE_FLAGS = ("-fPIC", "-ffp-contract=off")
#: optimisation level: -O1 is within ~20 % of -O2 on generated expression code and compiles
#: several times faster on large models
DEFAULT_OPT = "-O1"


class CodegenError(AcausalError):
    """C code generation or compilation failed."""


class CompilerNotFoundError(CodegenError):
    """No C compiler on this machine (needed to build shared libraries and FMUs)."""


def find_compiler(compiler: str | None = None) -> str:
    """Path of the C compiler to use.

    ``compiler`` if given (a name on the ``PATH`` or a path), else ``$CC``, else the first of
    ``cc``, ``gcc``, ``clang`` on the ``PATH``.

    Raises
    ------
    CompilerNotFoundError
        If none is found.
    """
    candidates = [compiler] if compiler else []
    if not compiler and os.environ.get("CC"):
        candidates.append(shlex.split(os.environ["CC"])[0])
    if not compiler:
        candidates += ["cc", "gcc", "clang"]
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    tried = ", ".join(repr(c) for c in candidates)
    raise CompilerNotFoundError(
        f"no C compiler found (tried {tried}). Generating a native library or an FMU needs "
        "one at export time: install gcc or clang (Debian/Ubuntu: apt install gcc; macOS: "
        "xcode-select --install; Windows: MinGW-w64 gcc on the PATH), or name it with the "
        "CC environment variable or the compiler= argument."
    )


def shared_library_suffix() -> str:
    """``.so`` on Linux, ``.dylib`` on macOS, ``.dll`` on Windows."""
    if sys.platform.startswith("win"):
        return ".dll"
    if sys.platform == "darwin":
        return ".dylib"
    return ".so"


def generate_c(functions: Sequence[cs.Function], directory: str | Path, name: str, *,
               export: bool = True) -> Path:
    """Write C for ``functions`` to ``directory/name.c`` (and ``name.h``); return the path.

    With ``export=False`` the functions keep default visibility but carry no export
    attribute (for code linked into a library that exports something else, as an FMU).
    """
    if not cs.Function.check_name(name):  # (CasADi's code generator asserts it)
        raise CodegenError(
            f"name {name!r} cannot name generated C: letters, digits and single "
            "underscores, starting with a letter (e.g. 'dc_motor_gen')")
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # (a file of that name, no permission)
        raise CodegenError(f"cannot write the generated C into {directory}: "
                           f"{exc.strerror or exc}") from None
    opts: dict[str, Any] = {"with_header": True, "with_export": export, "verbose": False}
    cg = cs.CodeGenerator(f"{name}.c", opts)
    for f in functions:
        cg.add(f)
    cg.generate(str(directory) + os.sep)
    return directory / f"{name}.c"


def compile_shared(sources: Sequence[str | Path], output: str | Path, *,
                   compiler: str | None = None, flags: Sequence[str] = (),
                   optimization: str = DEFAULT_OPT) -> Path:
    """Compile C ``sources`` into the shared library ``output``; return its path.

    Raises
    ------
    CompilerNotFoundError
        If there is no C compiler.
    CodegenError
        If the compiler fails; the message holds its command line and first errors.
    """
    cc = find_compiler(compiler)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    platform_flags = ["-dynamiclib"] if sys.platform == "darwin" else ["-shared"]
    cmd = [cc, *platform_flags, optimization, *BASE_FLAGS, *flags, "-o", str(output),
           *[str(s) for s in sources]]
    if not sys.platform.startswith("win"):
        cmd.append("-lm")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error:" in ln.lower()][:10]
        raise CodegenError(
            f"the C compiler failed (exit code {proc.returncode}) building {output.name}:\n  "
            + shlex.join(cmd) + "\n  " + "\n  ".join(errors or proc.stderr.splitlines()[:10])
        )
    return output


@dataclass
class CompiledFunctions(Mapping[str, cs.Function]):
    """Functions loaded from a compiled shared library, by name (``casadi.external``): a
    mapping of the names to the functions (``lib["dae"]``, ``sorted(lib)``,
    ``lib.items()``)."""

    library: Path
    functions: dict[str, cs.Function]
    source: Path
    timings: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, name: str) -> cs.Function:
        f = self.functions.get(name)
        if f is None:
            raise KeyError(f"{name!r} is not a function of {self.library.name}; it has "
                           f"{', '.join(map(repr, self.functions))}"
                           + did_you_mean(str(name), self.functions))
        return f

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)


def compile_functions(functions: Sequence[cs.Function], directory: str | Path | None = None,
                      name: str = "acausal_generated", *, compiler: str | None = None,
                      optimization: str = DEFAULT_OPT) -> CompiledFunctions:
    """Generate C for ``functions``, compile it, and load each back with ``casadi.external``.

    ``directory`` receives ``name.c``, ``name.h`` and the library (a new temporary folder if
    not given; it is not deleted, since the library stays loaded).
    """
    names = [f.name() for f in functions]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise CodegenError(f"functions to generate must have distinct names; repeated: {dup}")
    folder = Path(directory) if directory is not None else Path(
        tempfile.mkdtemp(prefix=f"{name}_"))
    tic = time.perf_counter()
    src = generate_c(functions, folder, name)
    t_gen = time.perf_counter() - tic
    tic = time.perf_counter()
    lib = compile_shared([src], folder / f"{name}{shared_library_suffix()}", compiler=compiler,
                         optimization=optimization)
    t_cc = time.perf_counter() - tic
    path = _fresh_path(lib)
    loaded = {n: cs.external(n, str(path)) for n in names}
    return CompiledFunctions(lib, loaded, src, {"generate": t_gen, "compile": t_cc})


_LOADED: dict[str, int] = {}  # libraries loaded by this process: how many times


def _fresh_path(lib: Path) -> Path:
    """The path to load ``lib`` from: itself the first time; a numbered copy beside it
    after, since the dynamic loader hands back the library already loaded from a path
    (the one compiled before, whose functions a notebook re-running a cell would get)."""
    key = str(lib.resolve())
    n = _LOADED.get(key, 0)
    _LOADED[key] = n + 1
    if n == 0:
        return lib
    copy = lib.with_name(f"{lib.stem}.{n}{lib.suffix}")
    shutil.copyfile(lib, copy)
    return copy


def _compiled(model: Any) -> Any:
    """A compiled model: ``model`` itself, or built from a model (as ``fmu`` takes
    either)."""
    from .compiler import CompiledModel, build
    from .component import Component

    if isinstance(model, CompiledModel):
        return model
    if isinstance(model, Component):
        return build(model)
    raise CodegenError(f"needs a model or the result of ac.build(model), got {model!r:.80} "
                       f"({type(model).__name__})")


def model_functions(cm: Any, outputs: Sequence[str] | None = None) -> list[cs.Function]:
    """The compiled model's functions worth generating, as named CasADi functions.

    * ``dae(x, z, p, t) -> (ode, alg)``: the semi-explicit DAE;
    * ``outputs(x, z, p, t) -> y``: the named outputs (all by default), stacked as
      ``cs.vec`` of each in order;
    * ``dae_residual(t, w, wdot, p) -> r``: the implicit form IDAS integrates, with
      ``w = [x; z]``: ``r = [wdot_x - ode; alg]``;
    * ``dae_jacobian(t, w, wdot, p, cj) -> J``: its iteration matrix
      ``dr/dw + cj dr/dwdot`` (sparse), the matrix IDAS factors.
    """
    from .export import resolve_outputs

    cm = _compiled(cm)
    d = cm.dae
    x, z, p, t = d.x, d.z, d.p, d.t
    exprs = resolve_outputs(cm, list(d.out_names) if outputs is None else outputs,
                            "outputs", CodegenError)
    y = cs.vertcat(*exprs) if exprs else cs.SX(0, 1)
    nx = int(x.numel())
    w = cs.vertcat(x, z)
    wdot = cs.SX.sym("wdot", w.numel())
    cj = cs.SX.sym("cj")
    r = cs.vertcat(wdot[:nx] - d.ode, d.alg)
    jac = cs.jacobian(r, w) + cj * cs.jacobian(r, wdot)
    return [
        cs.Function("dae", [x, z, p, t], [d.ode, d.alg], ["x", "z", "p", "t"],
                    ["ode", "alg"]),
        cs.Function("outputs", [x, z, p, t], [y], ["x", "z", "p", "t"], ["y"]),
        cs.Function("dae_residual", [t, w, wdot, p], [r], ["t", "w", "wdot", "p"], ["r"]),
        cs.Function("dae_jacobian", [t, w, wdot, p, cj], [jac],
                    ["t", "w", "wdot", "p", "cj"], ["J"]),
    ]


def compile_model(cm: Any, directory: str | Path | None = None, *,
                  outputs: Sequence[str] | None = None, name: str = "acausal_model",
                  compiler: str | None = None,
                  optimization: str = DEFAULT_OPT) -> CompiledFunctions:
    """Generate, compile and load :func:`model_functions` of the compiled model ``cm``.

    Returns a :class:`CompiledFunctions` whose ``functions`` are ``dae``, ``outputs``,
    ``dae_residual`` and ``dae_jacobian``, native versions of the in-memory ones with the
    same signatures (``timings`` holds the generation and compile times in seconds).

    Raises
    ------
    CompilerNotFoundError
        If there is no C compiler.
    """
    return compile_functions(model_functions(cm, outputs), directory, name,
                             compiler=compiler, optimization=optimization)
