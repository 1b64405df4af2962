"""The ``acausal`` command line (also ``python -m acausal``).

::

    acausal simulate examples/dc_motor.py:DCMotorDrive --t-end 0.3 --param resistor.R=0.5 \\
        --plot out.png --csv out.csv
    acausal info examples/dc_motor.py:DCMotorDrive [--graph] [--equations]
    acausal export examples/dc_motor.py:DCMotorDrive --fmu DCMotorDrive.fmu
    acausal export examples/dc_motor.py:DCMotorDrive --save dc_motor.acm
    acausal simulate dc_motor.acm --t-end 1        # a saved compiled model
    acausal cache [--clear]      # the compiled right-hand sides kept between runs

A **target** is ``FILE.py:NAME`` or ``package.module:NAME``, where ``NAME`` is a model
class, a function returning a model (or a compiled model), or a model instance; or a file
written by ``cm.save(path)``. Errors of the library, of the command line and of the
target's code (a script that fails to import, a function that needs arguments) are printed
as one message (exit status 1), without a traceback; ``--traceback`` shows it. An
unexpected error inside acausal (a bug) is printed with its traceback. Every output file's
folder is made if missing, and the output paths are checked before any work.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "load_target", "UserCodeError"]


def load_target(target: str) -> Any:
    """The compiled model (or model) that ``target`` names (see the module doc)."""
    from .compiler import CompiledModel
    from .component import Component
    from .errors import AcausalError
    from .persist import load

    how = (f"target {target!r}: write FILE.py:NAME or module:NAME (a model class, a function "
           "returning a model, or a model), or give a file saved with cm.save()")
    path, sep, name = target.rpartition(":")
    if not sep or (len(path) == 1 and path.isalpha()):  # no name (or a drive letter)
        if Path(target).is_file() and not target.endswith(".py"):
            return load(target)
        if Path(target).suffix not in ("", ".py"):  # (a saved model's name: dc_motor.acm)
            raise AcausalError(f"target {target!r}: no file {target}")
        raise AcausalError(how)
    if not path or not name:
        raise AcausalError(how)
    if path.endswith(".py") or Path(path).is_file():
        file = Path(path).resolve()
        if not file.is_file():
            raise AcausalError(f"target {target!r}: no file {path}")
        sys.path.insert(0, str(file.parent))  # the script's siblings import as usual
        mod_name = f"acausal_cli_{file.stem}"
        spec = importlib.util.spec_from_file_location(mod_name, file)
        if spec is None or spec.loader is None:
            raise AcausalError(f"cannot import {file}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        with _users_code(f"importing {path}"):
            spec.loader.exec_module(module)
    else:
        try:
            spec_found = importlib.util.find_spec(path)
        except (ImportError, ValueError):  # (a parent package that is not there)
            spec_found = None
        if spec_found is None:
            raise AcausalError(f"target {target!r}: there is no module {path!r} on the "
                               "import path (give a file as FILE.py:NAME, or install or add "
                               "the package to PYTHONPATH)")
        with _users_code(f"importing {path}"):
            module = importlib.import_module(path)
    obj = getattr(module, name, None)
    if obj is None:
        found = sorted(n for n, v in vars(module).items()
                       if isinstance(v, type) and issubclass(v, Component)
                       and v.__module__ == module.__name__)
        raise AcausalError(f"{path} has no {name!r}" + (f"; models there: {', '.join(found)}"
                                                        if found else ""))
    if isinstance(obj, Component | CompiledModel):
        return obj
    if callable(obj):
        import inspect

        try:
            inspect.signature(obj).bind()
        except TypeError:
            raise AcausalError(
                f"target {target!r}: {name}{inspect.signature(obj)} needs arguments; the "
                "command line calls a model class or a function without arguments (write "
                "a function that returns the model)") from None
        except ValueError:  # (no signature to read: call it and see)
            pass
        with _users_code(f"{name}()"):
            made = obj()
        if isinstance(made, Component | CompiledModel):
            return made
        raise AcausalError(f"{name}() returned {type(made).__name__}, not a model")
    raise AcausalError(f"{name} is not a model, a model class or a function")


class UserCodeError(Exception):
    """The target's own code (the script, the module, the function) raised."""


class _users_code:
    """Exceptions of the target's code become :class:`UserCodeError` (one message), but
    those of acausal, which the code may call (``ac.build`` in a function), stay what they
    are."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        from .errors import AcausalError

        if exc is None or isinstance(exc, AcausalError) or not isinstance(exc, Exception):
            return
        raise UserCodeError(f"{self.what} raised {type(exc).__name__}: {exc}") from exc


def _assignments(items: Sequence[str], what: str) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; a value that is not a number is kept as text, which
    simulate() reads as a number with a unit (``20 N/m``) or refuses naming it."""
    from .errors import AcausalError

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise AcausalError(f"--{what} {item!r}: write NAME=VALUE, e.g. resistor.R=0.5 "
                               "or 'resistor.R=500 mOhm'")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out


def _output(file: str, option: str) -> str:
    """An output file of ``option``: not a folder; its folder made if missing (before the
    work, so that a wrong path is known now, not after the run)."""
    from .errors import AcausalError

    path = Path(file)
    if path.is_dir():
        raise AcausalError(f"{option} {file}: that is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AcausalError(f"{option} {file}: cannot make the folder {path.parent} "
                           f"({exc.strerror or exc})") from None
    return file


def _compiled(args: argparse.Namespace) -> Any:
    from .compiler import build

    return build(load_target(args.target), progress=args.progress)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .errors import AcausalError
    from .simulate import simulate

    if args.plot:  # (before the work: a wrong figure type is known now)
        from .results import check_figure_file

        check_figure_file(args.plot, make_folder=False)  # (_output makes it)
    for option in ("plot", "csv", "save_result"):
        if getattr(args, option):
            _output(getattr(args, option), "--" + option.replace("_", "-"))
    params = _assignments(args.param, "param")
    start = _assignments(args.start, "start")
    names = [n.strip() for group in args.outputs for n in group.split(",") if n.strip()]
    cm = _compiled(args)
    names = names or list(cm.states)
    if args.plot and not names:
        raise AcausalError(f"--plot {args.plot}: the model has no states, which are what is "
                           "plotted by default; name the quantities to plot with -o NAME,NAME")
    res = simulate(cm, args.t_end, t_start=args.t_start, n_points=args.n_points, dt=args.dt,
                   rtol=args.rtol, atol=args.atol, params=params, start=start,
                   solver=args.solver, max_step=args.max_step,
                   raise_on_failure=False, progress=args.progress)
    for n in names:
        res[n]  # unknown names fail here, with suggestions
    print(f"{res!r}")
    st = res.stats
    print(f"  solver {st.solver} ({st.integration_mode}), {st.steps} steps, "
          f"{len(st.segments)} integrator call(s), {st.wall_time:.3f} s")
    print(f"  at t = {res.t[-1]:.6g} s:")
    for n in names:
        v = res[n][-1]
        print(f"    {n} = {v:.10g}" if v.ndim == 0 else f"    {n} = {v.tolist()}")
    if args.csv:
        res.to_csv(args.csv, names if args.outputs else None)
        print(f"  table written to {args.csv}")
    if args.plot:
        res.plot(*names, file=args.plot)
        print(f"  plot written to {args.plot}")
    if args.save_result:
        res.save(args.save_result)
        print(f"  result written to {args.save_result}")
    if res.status != "ok":
        from .simulate import PARTIAL_NOTE

        where = (" The values up to the last output point before the failure are shown above"
                 + (" and written to the files." if args.csv or args.plot or args.save_result
                    else "."))
        said = res.message in _WARNED  # (a Zeno stop: its warning said it all)
        print("acausal: the simulation stopped" + (" (see the warning above)." if said else
              f": {res.message.replace(PARTIAL_NOTE, where)}"), file=sys.stderr)
        return 1
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    cm = _compiled(args)
    print(cm.report)
    print(f"  parameters ({len(cm.dae.p_names)}): "
          + ", ".join(f"{n}={v:g}" for n, v in zip(cm.dae.p_names, cm.dae.p_values,
                                                  strict=True)))
    if args.graph:
        print(cm.graph.listing())
    if args.equations:
        print(cm.equations())
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .errors import AcausalError

    if not (args.fmu or args.save or args.casadi):
        raise AcausalError("export: choose --fmu FILE, --save FILE and/or --casadi FILE")
    for option in ("fmu", "save", "casadi"):
        if getattr(args, option):
            _output(getattr(args, option), "--" + option)
    cm = _compiled(args)
    if args.save:
        cm.save(args.save)
        print(f"compiled model written to {args.save} (read it with acausal.load)")
    if args.casadi:
        try:
            cm.dae.function("dae").save(args.casadi)
        except RuntimeError as exc:  # (CasADi's "Error opening stream": no permission)
            raise AcausalError(f"--casadi {args.casadi}: cannot write the file ("
                               f"{str(exc).strip().splitlines()[-1]})") from None
        print(f"CasADi function dae(x, z, p, t) -> (ode, alg) written to {args.casadi} "
              "(casadi.Function.load)")
    if args.fmu:
        from .export import fmu

        path = fmu(cm, args.fmu)
        print(f"FMI 2.0 Model Exchange FMU written to {path}")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    from .solvers import machine

    d = machine.cache_dir()
    if d is None:
        print("the cache of compiled right-hand sides is off (ACAUSAL_COMPILE_CACHE="
              f"{machine.os.environ.get('ACAUSAL_COMPILE_CACHE', '')!r})")
        return 0
    if machine.os.path.exists(d) and not machine.os.path.isdir(d):
        print(f"{d} (ACAUSAL_COMPILE_CACHE) is not a directory: compiled right-hand sides "
              "are not kept; set it to a directory, or to 'off'")
        return 1
    if args.clear:
        n = machine.clear_cache()
        print(f"{d}: {n} compiled right-hand side{'s' if n != 1 else ''} removed")
        return 0
    entries = machine.cache_contents()
    size = sum(e[1] for e in entries)
    print(f"{d}: {len(entries)} compiled right-hand side{'s' if len(entries) != 1 else ''}, "
          f"{size / 2**20:.1f} MB (at most {machine.CACHE_MAX_FILES} or "
          f"{machine.CACHE_MAX_BYTES // 2**20} MB are kept; ACAUSAL_COMPILE_CACHE sets the "
          "directory, 'off' none)")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="acausal", description="Build, simulate and export acausal models.",
        epilog="TARGET: FILE.py:NAME or module:NAME (a model class, a function returning a "
               "model, or a model), or a compiled model saved with cm.save().")
    sub = p.add_subparsers(dest="command", required=True)

    def traceback_option(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--traceback", action="store_true",
                        help="on an error, show the full Python traceback")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("target", metavar="TARGET")
        sp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar (default: in a terminal, for long work)")
        traceback_option(sp)

    s = sub.add_parser("simulate", help="simulate a model and print, plot or tabulate")
    common(s)
    s.add_argument("--t-end", type=float, required=True, help="final time [s]")
    s.add_argument("--t-start", type=float, default=0.0, help="initial time [s]")
    s.add_argument("--n-points", type=int, default=None, help="output points (501)")
    s.add_argument("--dt", type=float, default=None, help="output step [s]")
    s.add_argument("--rtol", type=float, default=1e-6)
    s.add_argument("--atol", type=float, default=1e-8)
    s.add_argument("--solver", default="auto", metavar="NAME",
                   help="integration backend: auto (default: chosen from the model), idas, "
                   "cvodes-adams, cvodes-bdf, cvodes-krylov, dopri5, dop853, ...")
    s.add_argument("--max-step", type=float, default=None, help="largest step [s]")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter override (repeatable)")
    s.add_argument("--start", action="append", default=[], metavar="NAME=VALUE",
                   help="start value override (repeatable)")
    s.add_argument("--outputs", "-o", action="append", default=[], metavar="NAMES",
                   help="comma-separated quantities to print/plot (default: the states)")
    s.add_argument("--plot", metavar="FILE", help="plot the outputs (PNG, SVG, PDF)")
    s.add_argument("--csv", metavar="FILE", help="write a CSV table (all quantities, or "
                   "the --outputs)")
    s.add_argument("--save-result", metavar="FILE", help="pickle the result (acausal.load)")
    s.set_defaults(run=_cmd_simulate)

    i = sub.add_parser("info", help="print the structure report")
    common(i)
    i.add_argument("--graph", action="store_true", help="also list the linear graph")
    i.add_argument("--equations", action="store_true",
                   help="also list the index-reduced equations")
    i.set_defaults(run=_cmd_info)

    e = sub.add_parser("export", help="export an FMU, a saved model or a CasADi function")
    common(e)
    e.add_argument("--fmu", metavar="FILE", help="FMI 2.0 Model Exchange FMU (needs a C "
                   "compiler)")
    e.add_argument("--save", metavar="FILE", help="the compiled model (acausal.load)")
    e.add_argument("--casadi", metavar="FILE", help="the DAE as a serialised CasADi "
                   "function")
    e.set_defaults(run=_cmd_export)

    c = sub.add_parser("cache", help="the compiled right-hand sides kept between runs")
    c.add_argument("--clear", action="store_true", help="remove them")
    traceback_option(c)
    c.set_defaults(run=_cmd_cache)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    shown, warnings.showwarning = warnings.showwarning, _show_warning
    try:
        return _main(args)
    finally:
        warnings.showwarning = shown
        _WARNED.clear()


_WARNED: list[str] = []  # the warnings' texts printed by this command


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """A warning as one line of the command's messages (not Python's file:line and source
    line, which name the library's code, not the user's)."""
    text = str(message)
    _WARNED.append(text)
    print(f"acausal: {category.__name__}: {text}", file=sys.stderr)


def _main(args: argparse.Namespace) -> int:
    from .errors import AcausalError

    if args.traceback:
        return int(args.run(args))
    try:
        return int(args.run(args))
    except AcausalError as exc:
        print(f"acausal: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except UserCodeError as exc:
        print(f"acausal: {exc} (--traceback shows where)", file=sys.stderr)
        return 1
    except KeyError as exc:  # an unknown result name, with suggestions
        print(f"acausal: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # (a reader that stopped early: acausal info ... | head)
        # (stdout's remaining output cannot be written: sent nowhere, as other tools do)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # writing an output file: a full disk, no permission
        print(f"acausal: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
