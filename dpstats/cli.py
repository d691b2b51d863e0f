"""The ``dpstats`` command line.

    dpstats run METHOD --data FILE.csv|.parquet --formula "y ~ ." --eps 1 [--delta D]
                [--bounds FILE.json|auto] [--levels FILE.json] [--na-action fill|omit] [--seed N] [--stream]
                [--arg key=value ...] --report out.html [--json out.json] [--diagnostics]
    dpstats demo [--out DIR] [--quick]   (reports, DIR/index.html, and a closing table)
    dpstats simulate NAME [--arg key=value ...] [--json out.json]
    dpstats plan METHOD --n 100[,1000] --p 2000 --eps 1,5,10,20 [--signals 8 --strength 0.5 ...]
                [--target 0.8 | --target power=0.8] [--arg key=value ...] [--json out.json] [--report out.html]
    dpstats party ...            (vertical GLM parties; see ``dpstats party --help``)

Exit codes: 0 success; 2 bad input (message on stderr, no output files left
behind half-written).

``--levels`` declares the levels of text columns (``{"city": ["Leeds", "York"]}``)
and ``--na-action`` the rule for missing values (``dpstats.schema``); a CSV's
text columns without declared levels have their levels read from the rows, a
named data-dependent step.  No message on stderr counts rows dropped or values
filled.

Non-private diagnostics (rows dropped, values clipped, class counts, ...) are
in no output unless ``--diagnostics`` is given; it then asks the method for them
and fences them off as "not private" in the printed summary, ``--json`` and
``--report``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import inspect
import json
import os
import sys
import warnings
from pathlib import Path

from .catalog import cli_names, planner_names
from .errors import DataError, DPStatsError
from .schema import read_levels_file

# ``dpstats run NAME`` -> the public function, from the catalog of methods (dpstats/catalog.py).
METHODS = cli_names()


class CLIError(Exception):
    """Bad command-line input: exit code 2."""


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _extra_args(pairs: list[str] | None) -> dict:
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise CLIError(f"--arg expects key=value, got '{pair}'")
        key, value = pair.split("=", 1)
        out[key.strip()] = _parse_value(value.strip())
    return out


def _check_names(func, extra: dict, name: str) -> dict:
    """``extra`` (the ``--arg`` pairs) when ``func`` takes every key; else a :class:`CLIError` naming the
    first unknown key and the closest public argument (from ``inspect.signature``), before anything is read."""
    params = inspect.signature(func).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return extra
    for key in extra:
        if key not in params:
            close = difflib.get_close_matches(key, list(params), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; its arguments: {', '.join(params)}"
            raise CLIError(f"--arg {key}=...: {name}() has no argument '{key}'{hint}")
    return extra


def _check_outputs(**paths: str | None) -> None:
    """Refuse, before any data is read or budget spent, an output path (``--json``, ``--report``) that
    cannot be written: its folder missing, not a folder or not writable, or the path itself a folder."""
    for flag, path in paths.items():
        if path is None:
            continue
        target = Path(path)
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise CLIError(f"--{flag} {path}: the folder '{folder}' does not exist; create it first")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CLIError(f"--{flag} {path}: the folder '{folder}' is not writable")
        if target.is_dir():
            raise CLIError(f"--{flag} {path}: is a folder; give a file name")


def _read_data(path: str):
    """The whole file as a pandas DataFrame; a file its reader cannot parse is a DataError (exit 2) that
    names the file, never its rows (:mod:`dpstats.engines.files`)."""
    from .engines.files import read_frame

    p = Path(path)
    if not p.exists():
        raise CLIError(f"data file '{path}' does not exist")
    if p.suffix.lower() == ".parquet":
        return read_frame(p, "parquet")
    if p.suffix.lower() in (".csv", ".txt"):
        return read_frame(p, "csv")
    raise CLIError(f"data file '{path}' must end in .csv or .parquet")


def _stream_data(path: str, quiet: bool):
    """A chunked pass over the file instead of loading it (dp_sis and dp_knockoff accept it)."""
    from .engines import stream

    if not Path(path).exists():
        raise CLIError(f"data file '{path}' does not exist")
    return stream(path, progress=not quiet)


def _read_bounds(path: str | None):
    if path is None or path == "auto":
        return path  # "auto": private bounds (docs/architecture.md, "Private bounds")
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CLIError(f"cannot read bounds file '{path}': {exc}") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)  # dp_knockoff's row-norm bound B
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return {k: tuple(v) for k, v in value.items()}
    raise CLIError('bounds file must hold [lo, hi], {"column": [lo, hi], ...} or a number (knockoff\'s B)')


def _read_levels(path: str | None) -> dict | None:
    """``--levels FILE.json``: ``{"column": ["level", ...], ...}``."""
    try:
        return read_levels_file(path)
    except DataError as exc:
        raise CLIError(str(exc)) from None


@contextlib.contextmanager
def _progress_env(quiet: bool):
    """Silence tqdm for this command only (main() may be called in-process)."""
    if not quiet:
        yield
        return
    saved = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = saved


def cmd_run(args) -> int:
    import dpstats

    if args.method not in METHODS:
        raise CLIError(f"unknown method '{args.method}'; choose one of {sorted(METHODS)}")
    func = getattr(dpstats, METHODS[args.method])
    _check_outputs(report=args.report, json=args.json)
    extra = _check_names(func, _extra_args(args.arg), METHODS[args.method])
    kwargs = {
        "data": _stream_data(args.data, args.quiet) if args.stream else _read_data(args.data),
        "eps": args.eps,
    }
    if args.formula is None:
        raise CLIError("--formula is required, e.g. --formula 'y ~ .'")
    if args.delta is not None:
        kwargs["delta"] = args.delta
    bounds = _read_bounds(args.bounds)
    if bounds is not None:
        kwargs["bounds"] = bounds
    levels = _read_levels(args.levels)
    if levels is not None:
        kwargs["levels"] = levels
    if args.na_action is not None:
        kwargs["na_action"] = args.na_action
    if args.seed is not None:
        kwargs["random_state"] = args.seed
    if args.diagnostics:
        kwargs["diagnostics"] = True
    kwargs.update(extra)
    result = func(args.formula, **kwargs)
    if not args.quiet:
        print(result.summary() if args.diagnostics else result)
    if args.report:
        result.report(args.report, include_diagnostics=args.diagnostics)
    if args.json:
        result.to_json(args.json)
    return 0


def cmd_demo(args) -> int:
    from .demos import INDEX_NAME, run_all
    from .demos._index import closing_table

    reports = run_all(args.out, quick=args.quick)
    for r in reports:
        print(f"wrote {r.path}")
    print()
    print(closing_table(reports))
    print(f"\nindex of the reports: {Path(args.out) / INDEX_NAME}")
    return 0


def cmd_simulate(args) -> int:
    import dpstats

    name = f"simulate_{args.name}"
    try:
        func = getattr(dpstats, name)
    except AttributeError:
        raise CLIError(f"unknown simulation '{args.name}'") from None
    _check_outputs(json=args.json)
    out = func(**_check_names(func, _extra_args(args.arg), name))
    table = out if hasattr(out, "to_string") else getattr(out, "table", lambda: out)()
    print(table.to_string() if hasattr(table, "to_string") else table)
    if args.json:
        from ._io import atomic_write, jsonable

        data = table.to_dict(orient="list") if hasattr(table, "to_dict") else table
        atomic_write(args.json, json.dumps(jsonable(data), indent=2))
    return 0


def cmd_plan(args) -> int:
    """Predict what a method will deliver (no data is read, no budget is charged)."""
    import dpstats
    from .planner import assume_from_options

    _check_outputs(report=args.report, json=args.json)
    if args.target is None:
        target = None
    elif "=" in args.target:
        key, value = args.target.split("=", 1)
        target = {key.strip(): _number(value, "--target")}
    else:
        target = _number(args.target, "--target")
    model = {k: getattr(args, k) for k in ("signals", "strength", "noise", "correlation", "amplitude")}
    kwargs = {
        "n": _numbers(args.n, "--n", int),
        "p": args.p,
        "eps": _numbers(args.eps, "--eps", float),
        "assume": assume_from_options(METHODS.get(args.method, args.method), **model),
        "target": target,
        "trials": args.trials,
        "random_state": args.seed,
    }
    kwargs.update(_check_names(dpstats.plan, _extra_args(args.arg), "plan"))
    result = dpstats.plan(METHODS.get(args.method, args.method), **kwargs)
    if not args.quiet:
        print(result)
    if args.report:
        result.report(args.report)
    if args.json:
        result.to_json(args.json)
    return 0


def _number(text: str, flag: str, kind=float):
    try:
        return kind(text)
    except ValueError:
        raise CLIError(f"{flag}: expected a number, got {text!r}") from None


def _numbers(text: str, flag: str, kind) -> list:
    return [_number(v.strip(), flag, kind) for v in text.split(",") if v.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpstats", description="Differentially private statistics.")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or printed results")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one method on a data file")
    run.add_argument("method", help=f"one of {sorted(METHODS)}")
    run.add_argument("--data", required=True, help="the data: a .csv or .parquet file")
    run.add_argument("--formula", help="R-style formula, e.g. 'y ~ .' or 'y ~ x1 + log(x2)'")
    run.add_argument("--eps", type=float, required=True, help="the privacy budget epsilon, e.g. 1")
    run.add_argument(
        "--delta",
        type=float,
        help="the privacy parameter delta (well below 1/n, e.g. 1e-6); left out, delta = 0: pure DP "
        "with Laplace noise, which glm refuses (it needs delta > 0)",
    )
    run.add_argument(
        "--bounds",
        help="JSON file: [lo, hi] or {column: [lo, hi]}; or auto (private bounds, --arg bounds_eps=...)",
    )
    run.add_argument(
        "--levels", help='JSON file: declared levels of text columns, {"city": ["Leeds", "York"]}'
    )
    run.add_argument(
        "--na-action",
        choices=["fill", "omit"],
        help="missing values: fill (public fills; default under replace) or omit (R's na.omit)",
    )
    run.add_argument(
        "--seed",
        type=int,
        help="random seed: makes the run reproducible, and the statement says 'seeded: not for release'",
    )
    run.add_argument(
        "--arg", action="append", help="extra argument of the method, key=value (repeatable), e.g. k=8"
    )
    run.add_argument(
        "--stream", action="store_true", help="read the file in chunks instead of loading it (sis, knockoff)"
    )
    run.add_argument("--report", help="write an HTML report here")
    run.add_argument("--json", help="write the result as JSON here")
    run.add_argument(
        "--diagnostics",
        action="store_true",
        help="also compute and show NON-PRIVATE diagnostics (not for release)",
    )
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="analyse bundled data and write HTML reports")
    demo.add_argument("--out", default="reports")
    demo.add_argument("--quick", action="store_true", help="fewer simulation trials")
    demo.set_defaults(func=cmd_demo)

    sim = sub.add_parser("simulate", help="run a simulation (e.g. knockoff)")
    sim.add_argument("name")
    sim.add_argument("--arg", action="append")
    sim.add_argument("--json")
    sim.set_defaults(func=cmd_simulate)

    plan = sub.add_parser("plan", help="predict accuracy before spending budget (reads no data)")
    planned = [cli for cli, name in METHODS.items() if name in planner_names()]
    plan.add_argument("method", help=f"one of {planned}")
    plan.add_argument("--n", required=True, help="rows, or a comma-separated grid")
    plan.add_argument("--p", type=int, required=True, help="candidate columns")
    plan.add_argument("--eps", required=True, help="comma-separated eps grid, e.g. 1,5,10,20")
    for name in ("signals", "strength", "noise", "correlation", "amplitude"):
        plan.add_argument(f"--{name}", type=float, help=f"assumed model: {name}")
    plan.add_argument("--target", help="0.8 (the main measure) or measure=value, e.g. power=0.8")
    plan.add_argument("--trials", type=int, default=200)
    plan.add_argument("--seed", type=int)
    plan.add_argument("--arg", action="append", help="extra argument key=value (repeatable), e.g. k=8")
    plan.add_argument("--json", help="write the plan as JSON here")
    plan.add_argument("--report", help="write an HTML report here")
    plan.add_argument("--quiet", action="store_true")
    plan.set_defaults(func=cmd_plan)

    # listed for --help only: main() hands ``dpstats [--quiet] party ...`` to the party's own parser
    sub.add_parser("party", help="vertical GLM parties: init, keygen, lead, join (dpstats party --help)")
    return parser


def _party_argv(argv: list[str]) -> list[str] | None:
    """The arguments after ``party`` when the command is ``dpstats [--quiet] party ...``, else None."""
    first = next((i for i, a in enumerate(argv) if a != "--quiet"), None)
    return argv[first + 1 :] if first is not None and argv[first] == "party" else None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    party = _party_argv(argv)
    if party is not None:
        from .vertical import party_main

        return party_main(party)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _progress_env(getattr(args, "quiet", False)), warnings.catch_warnings():
            if getattr(args, "quiet", False):
                warnings.simplefilter("ignore")
            return args.func(args)
    except (CLIError, DPStatsError) as exc:
        print(f"dpstats: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
