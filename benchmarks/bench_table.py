"""Issue 18's table, every row, measured in one run: ``benchmarks/results/table.md`` and the README.

Run: python benchmarks/bench_table.py [--quick] [--skip dask,r] [--dask-rows N] [--readme]

Each row comes from the benchmark that owns it, through its ``rows()`` function, and is a ratio
against a baseline measured in the same run (or, where the issue's target is absolute, the
figure against that target, baselines printed alongside):

=========  ======================================================================================
section    rows
=========  ======================================================================================
scale      ``model_frame`` vs ``to_numpy``; ``dp_sis`` front door vs the mechanism; streamed
           ``dp_sis`` peak memory (``bench_scale.py``)
knockoff   ``dp_knockoff`` in a warm process vs ``X.T @ X`` (``bench_scale.py``)
import     the imports of a first ``dp_knockoff`` call (``bench_scale.py``, measured as ``bench_import.py`` does)
r          ``library(dpstats)`` + the first ``dp_sis()`` from R (``bench_r_startup.py``)
dask       the Dask pass with 2 worker processes vs 1 (``bench_dask_cluster.py``)
=========  ======================================================================================

``--quick`` runs every section at small sizes (a smoke run: its figures are not the issue's).
``--readme`` also replaces the README's performance section, between ``<!-- perf:begin -->``
and ``<!-- perf:end -->``, with the table.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shlex
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "table.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"
SECTIONS = ("scale", "knockoff", "import", "r", "dask")
sys.path.insert(0, str(HERE))


def _section_rows(name: str, quick: bool, dask_rows: int | None) -> list[dict]:
    """The rows of one section, from the benchmark module that owns them (imported when asked)."""
    if name in ("scale", "knockoff", "import"):
        import bench_scale

        if name == "scale":
            memory_rows = 400_000 if quick else 2_000_000
            return (
                bench_scale.model_frame_rows()
                + [bench_scale.sis_front_door_row()]
                + bench_scale.stream_memory_rows(memory_rows)
            )
        if name == "knockoff":
            return bench_scale.knockoff_warm_rows()
        return [bench_scale.knockoff_first_call_row(repeat=2 if quick else 5)]
    if name == "r":
        import bench_r_startup

        return bench_r_startup.rows(quick=quick)
    import bench_dask_cluster

    return bench_dask_cluster.rows(quick=quick, n_rows=dask_rows)


def collect(
    sections: tuple[str, ...],
    quick: bool = False,
    dask_rows: int | None = None,
    measure: Callable[[str, bool, int | None], list[dict]] | None = None,
) -> list[dict]:
    """Every row of the named sections; a section that fails gives one row saying why."""
    measure = measure or _section_rows
    out = []
    for name in sections:
        print(f"[bench_table] {name} ...", file=sys.stderr, flush=True)
        try:
            out.extend(measure(name, quick, dask_rows))
        except Exception as exc:  # one missing tool (R, distributed) must not lose the other rows
            traceback.print_exc()
            out.append({"work": f"{name}: not measured", "error": f"{type(exc).__name__}: {exc}"})
    return out


def _seconds(x: float) -> str:
    return f"{x:.3f} s" if x < 10 else f"{x:.1f} s"


def _cells(row: dict) -> list[str]:
    """work | measured | baseline | baseline measured | ratio | target | met."""
    if "error" in row:
        return [row["work"], "-", "-", "-", "-", "-", row["error"]]
    if "peak_mb" in row:
        target = row.get("target_mb")
        met = "-" if target is None else "yes" if row["peak_mb"] <= target else "no"
        goal = "reference" if target is None else f"≤ {target:g} MB"
        return [row["work"], f"{row['peak_mb']:.0f} MB peak", "-", "-", "-", goal, met]
    ratio, target, target_s = row["ratio"], row.get("target"), row.get("target_seconds")
    if target is not None:
        goal, met = f"≤ {target:g}x", "yes" if ratio <= target else "no"
    elif target_s is not None:
        goal, met = f"≤ {target_s:g} s", "yes" if row["seconds"] <= target_s else "no"
    else:
        goal, met = "reference", "-"
    if "speed_up" in row:
        goal = f"speed-up {row['speed_up']:.2f}x (ceiling 2 on 2 cores)"
    return [
        row["work"],
        _seconds(row["seconds"]),
        row["baseline"],
        _seconds(row["baseline_seconds"]),
        f"{ratio:.2f}x",
        goal,
        met,
    ]


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[dict]) -> str:
    """The rows as one markdown table (a header, a rule, one line per row, the same column count)."""
    head = ["work", "measured", "baseline", "baseline measured", "ratio", "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_escape(c) for c in _cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def machine() -> str:
    """One line: CPU model, cores, memory, the load average (other work on the machine), OS, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text()
        cpu = re.search(r"model name\s*:\s*(.+)", text).group(1).strip()
    except (OSError, AttributeError):
        pass
    try:
        kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kib / 2**20:.0f} GB memory"
    except (OSError, AttributeError):
        mem = ""
    load = f", load average {os.getloadavg()[0]:.1f} at the end" if hasattr(os, "getloadavg") else ""
    return (
        f"{cpu}, {os.cpu_count()} cores (shared){mem}{load}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def document(rows: list[dict], command: str, when: datetime.datetime | None = None) -> str:
    """The results file: what ran, where and when, then the table."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    return "\n".join(
        [
            f"Measured {when:%Y-%m-%d %H:%M} UTC on {machine()}, by `{command}`.",
            "Every ratio is against a baseline measured in the same run; timings are best of several"
            " runs (in-process) or medians of fresh processes, on a machine shared with other work.",
            "",
            markdown_table(rows),
            "",
        ]
    )


def splice_readme(readme: str, body: str) -> str:
    """``readme`` with the text between the performance markers replaced by ``body`` (markers kept)."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError(
            f"README must hold {BEGIN} once, followed by {END} once, around its performance section"
        )
    start = readme.index(BEGIN) + len(BEGIN)
    return readme[:start] + "\n" + body.strip("\n") + "\n" + readme[readme.index(END) :]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke run, not the issue's figures"
    )
    parser.add_argument(
        "--skip", default="", help=f"comma-separated sections to leave out, of {','.join(SECTIONS)}"
    )
    parser.add_argument(
        "--dask-rows", type=int, default=None, help="rows of the Dask data set (default 10^7)"
    )
    parser.add_argument("--readme", action="store_true", help="replace the README's performance section")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(SECTIONS):
        parser.error(
            f"--skip: unknown section(s) {sorted(skip - set(SECTIONS))}; choose from {', '.join(SECTIONS)}"
        )
    if skip and args.readme:  # the README's table is one measurement: a skipped section would vanish from it
        parser.error("--readme re-measures the README's whole table; run it without --skip")
    command = "python benchmarks/bench_table.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    rows = collect(tuple(s for s in SECTIONS if s not in skip), args.quick, args.dask_rows)
    text = document(rows, command.strip())
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    if args.readme:
        README.write_text(splice_readme(README.read_text(encoding="utf-8"), text), encoding="utf-8")


if __name__ == "__main__":  # the Dask workers are spawned processes: nothing above runs in them
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
