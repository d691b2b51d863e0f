"""Benchmark: ``library(dpstats)`` + the first ``dp_sis()`` call from R (issue 18: at most 2 s together;
issue 28: a fresh ``Rscript`` running ``library(dpstats)`` and a first ``dp_sis()`` on ``mtcars`` in at
most 1.5 s).

Run: python benchmarks/bench_r_startup.py [--repeat 5] [--n 100] [--d 2000] [--mtcars]

The R package in ``r_wrapper/`` is installed from this tree into a temporary library (as
``tests/test_r_package.py`` does), with ``DPSTATS_PYTHON`` set to this interpreter and this
checkout first on ``PYTHONPATH``.  The package reaches Python as a child process over two private
FIFOs (``r_wrapper/R/channel.R``, ``dpstats/rpipe.py``).  Then, in fresh processes, interleaved,
``--repeat`` times each (medians printed):

* the whole of issue 28's command, wall time until ``Rscript`` exits:
  ``Rscript -e 'library(dpstats); fit <- dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2,
  bounds = c(-500, 500), seed = 1)'``, against the 1.5 s target and against a bare R start;
* ``Rscript`` timing, inside R, ``library(dpstats)`` and then the first ``dp_sis()`` call on a
  Fan & Lv-like data frame built in R (n x d standard normal predictors, 8 nonzero coefficients,
  declared bounds, default arguments otherwise), or on ``mtcars`` with ``--mtcars``, and a second
  identical call;
* the baselines: a bare R start (``Rscript -e 'library(stats)'``, wall time), a bare Python start
  with numpy, with pandas and with the channel's module (``python -c 'import numpy'``,
  ``'import pandas'``, ``'import dpstats.rpipe'``, wall time).  The table's baseline is the floor
  no R-to-pandas bridge goes below: a Python start that imports pandas.

The first call's own parts (starting Python and importing the channel's module, then the call)
are printed from one more instrumented run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "r_wrapper"
TARGET_SECONDS = 2.0  # issue 18: library() + the first call, inside R
WHOLE_TARGET_SECONDS = 1.5  # issue 28: the whole fresh Rscript on mtcars
WHOLE = (
    "library(dpstats); fit <- dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)"
)

DATA = """
set.seed(1)
n <- {n}; d <- {d}
X <- matrix(rnorm(n * d), n, d, dimnames = list(NULL, paste0("x", seq_len(d))))
beta <- numeric(d); beta[sample(d, 8)] <- 4 * log(n) / sqrt(n) + abs(rnorm(8))
df <- data.frame(y = as.vector(X %*% beta + rnorm(n, sd = sqrt(1.5))), X)
call <- function() dp_sis(y ~ ., data = df, eps = 1, k = 10, bounds = c(-40, 40), seed = 1)
"""

# issue 28's case: R's own small data set
MTCARS = """
call <- function() dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)
"""

TIMED = """
t0 <- Sys.time()
library(dpstats)
t1 <- Sys.time()
fit <- call()
t2 <- Sys.time()
fit <- call()
t3 <- Sys.time()
s <- function(a, b) as.numeric(b - a, units = "secs")
cat(sprintf("TIMES library=%.4f first=%.4f second=%.4f\\n", s(t0, t1), s(t1, t2), s(t2, t3)))
"""

PARTS = """
s <- function(expr) {{ t <- Sys.time(); force(expr); as.numeric(Sys.time() - t, units = "secs") }}
lib <- s(library(dpstats))
channel <- s(dpstats:::.dp_ensure())
first <- s(call())
cat(sprintf("PARTS library=%.4f channel=%.4f call=%.4f\\n", lib, channel, first))
"""


def r_env(lib: Path) -> dict:
    """The environment the R processes run in: this checkout's dpstats, this interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(DPSTATS_PYTHON=sys.executable, R_LIBS=str(lib), LC_ALL=env.get("LC_ALL", "C.UTF-8"))
    env.pop("RETICULATE_PYTHON", None)
    return env


def install(lib: Path) -> None:
    """``R CMD INSTALL`` the package from the tree into ``lib``."""
    r = shutil.which("R")
    if r is None or shutil.which("Rscript") is None:
        raise RuntimeError("R is not installed (R and Rscript are needed)")
    cmd = [r, "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(PKG)]
    res = subprocess.run(cmd, env=r_env(lib), capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"R CMD INSTALL failed:\n{res.stderr[-3000:]}")


def _rscript(code: str, env: dict) -> dict[str, float]:
    res = subprocess.run(["Rscript", "-e", code], env=env, capture_output=True, text=True, cwd=ROOT)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(("TIMES ", "PARTS "))]
    if res.returncode or not lines:
        raise RuntimeError(f"Rscript failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
    return {key: float(value) for key, value in (kv.split("=") for kv in lines[-1].split()[1:])}


def _wall(cmd: list[str], env: dict) -> float:
    """Seconds until ``cmd`` exits (output discarded, so nothing waits on a pipe it left open)."""
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def measure(lib: Path, repeat: int = 5, n: int = 100, d: int = 2000, mtcars: bool = False) -> dict:
    """Medians over ``repeat`` interleaved fresh processes, plus one instrumented run's parts."""
    env = r_env(lib)
    data = MTCARS if mtcars else DATA.format(n=n, d=d)
    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        timed = _rscript(data + TIMED, env)
        timed["together"] = timed["library"] + timed["first"]
        timed["whole"] = _wall(["Rscript", "-e", WHOLE], env)
        timed["r_start"] = _wall(["Rscript", "-e", "library(stats)"], env)
        timed["python_numpy"] = _wall([sys.executable, "-c", "import numpy"], env)
        timed["python_pandas"] = _wall([sys.executable, "-c", "import pandas"], env)
        timed["python_rpipe"] = _wall([sys.executable, "-c", "import dpstats.rpipe"], env)
        for key, value in timed.items():
            runs.setdefault(key, []).append(value)
    out = {key: statistics.median(values) for key, values in runs.items()}
    out["parts"] = _rscript(data + PARTS, env)
    out.update(repeat=repeat, n=32 if mtcars else n, d=10 if mtcars else d)
    return out


def _row(m: dict) -> dict:
    base = m["python_pandas"]
    return {
        "work": f"R: library(dpstats) + first dp_sis(), n = {m['n']}, d = {m['d']}",
        "seconds": m["together"],
        "baseline": "python -c 'import pandas'",
        "baseline_seconds": base,
        "ratio": m["together"] / base,
        "target": None,
        "target_seconds": TARGET_SECONDS,
    }


def rows(quick: bool = False, repeat: int | None = None) -> list[dict]:
    """The issue-18 table's R row (``benchmarks/bench_table.py``); ``quick``: 2 runs at d = 200."""
    with tempfile.TemporaryDirectory(prefix="dpstats_bench_r_") as tmp:
        install(Path(tmp))
        m = measure(Path(tmp), repeat or (2 if quick else 5), d=200 if quick else 2000)
    return [_row(m)]


def report(m: dict) -> str:
    p = m["parts"]
    ok = "ok" if m["together"] <= TARGET_SECONDS else "MISSED"
    whole_ok = "ok" if m["whole"] <= WHOLE_TARGET_SECONDS else "MISSED"
    return "\n".join(
        [
            f"medians of {m['repeat']} fresh R processes",
            f"  the whole Rscript -e '{WHOLE}' (wall)",
            f"                                          {m['whole']:.3f} s   "
            f"= {m['whole'] / WHOLE_TARGET_SECONDS:.2f} x the {WHOLE_TARGET_SECONDS:g} s target ({whole_ok}), "
            f"{m['whole'] / m['r_start']:.2f} x a bare R start",
            f"inside R; data n = {m['n']}, d = {m['d']}, declared bounds",
            f"  library(dpstats)                        {m['library']:.3f} s",
            f"  first dp_sis() call                     {m['first']:.3f} s",
            f"  together                                {m['together']:.3f} s   (target <= {TARGET_SECONDS:g} s: {ok})",
            f"  second dp_sis() call                    {m['second']:.3f} s",
            "baselines (same run)",
            f"  Rscript -e 'library(stats)' (wall)      {m['r_start']:.3f} s",
            f"  python -c 'import numpy' (wall)         {m['python_numpy']:.3f} s",
            f"  python -c 'import pandas' (wall)        {m['python_pandas']:.3f} s",
            f"  python -c 'import dpstats.rpipe' (wall) {m['python_rpipe']:.3f} s",
            "one instrumented run: the first call's parts",
            f"  library {p['library']:.3f} s, start Python and import the channel's module {p['channel']:.3f} s, "
            f"the call (imports of dp_sis included) {p['call']:.3f} s",
        ]
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--d", type=int, default=2000)
    parser.add_argument("--mtcars", action="store_true", help="dp_sis(mpg ~ ., data = mtcars) instead")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dpstats_bench_r_") as tmp:
        install(Path(tmp))
        print(report(measure(Path(tmp), args.repeat, args.n, args.d, args.mtcars)))


if __name__ == "__main__":
    main()
