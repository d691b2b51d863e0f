"""The R package in r_wrapper/: installed into a temporary library, then its testthat
suite, an Rscript fitting every available method, the vignette and R CMD check.

Each test runs R in a subprocess with DPSTATS_PYTHON pointing to this interpreter and
DPSTATS_REQUIRE_PYTHON=true, so a missing Python side fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.r

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "r_wrapper"


def _env(lib: Path) -> dict:
    env = dict(os.environ)
    # the Python side is this checkout's dpstats, whatever the interpreter has installed
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(
        {
            "DPSTATS_PYTHON": sys.executable,
            "DPSTATS_REQUIRE_PYTHON": "true",
            "R_LIBS": f"{lib}{os.pathsep}{env['R_LIBS']}" if env.get("R_LIBS") else str(lib),
            "NOT_CRAN": "true",
            "LC_ALL": env.get("LC_ALL", "C.UTF-8"),
        }
    )
    env.pop("RETICULATE_PYTHON", None)
    return env


def _run(cmd: list[str], env: dict, cwd: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-6000:]}\n{res.stderr[-6000:]}"
        )
    return res


@pytest.fixture(scope="module")
def rlib(rscript, tmp_path_factory) -> Path:
    """The package installed into a fresh library (what scripts/dpstats.sh does with .venv/R-library)."""
    # reticulate: not used by the package, but test-channel.R compares the channel with it
    for pkg in ("reticulate", "jsonlite", "testthat", "generics", "broom"):
        ok = subprocess.run(
            [rscript, "-e", f"quit(status = !requireNamespace('{pkg}', quietly = TRUE))"], capture_output=True
        )
        if ok.returncode != 0:
            pytest.fail(f"R package {pkg} is missing (Debian: r-cran-{pkg})")
    lib = tmp_path_factory.mktemp("Rlib")
    r = shutil.which("R")
    _run([r, "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(PKG)], _env(lib), ROOT)
    return lib


def test_testthat_suite(rscript, rlib, tmp_path):
    """The testthat suite run on its own from the repository root, as a developer would:
    ``Rscript -e 'testthat::test_dir("r_wrapper/tests/testthat")'`` with no library() call
    (the helper attaches the package)."""
    code = (
        "res <- as.data.frame(testthat::test_dir('r_wrapper/tests/testthat', reporter = 'summary', "
        "stop_on_failure = TRUE)); "
        "cat(sprintf('\\nR-TESTS %d passed, %d failed, %d skipped\\n', "
        "sum(res$nb - res$failed - res$skipped), sum(res$failed), sum(res$skipped)))"
    )
    assert "library(" not in code
    res = _run([rscript, "-e", code], _env(rlib), ROOT, timeout=600)
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("R-TESTS")][-1]
    passed, failed = int(line.split()[1]), int(line.split()[3])
    assert failed == 0 and passed >= 150, res.stdout[-3000:]


def test_rscript_fits_each_available_method(rscript, rlib, tmp_path):
    script = PKG / "inst" / "scripts" / "fit_all.R"
    res = _run([rscript, str(script), str(tmp_path)], _env(rlib), tmp_path)
    out = res.stdout
    import dpstats
    from dpstats.rbridge import has_function

    expected = [
        m
        for m in (
            "dp_sis",
            "dp_two_stage",
            "dp_knockoff",
            "dp_gmm",
            "dp_pca",
            "dp_felp",
            "vertical_glm",
            "dp_lm",
            "dp_select_infer",
        )
        if has_function(m)
    ]
    assert "dp_sis" in expected, dpstats.__version__
    for m in expected:
        assert f"FITTED {m}" in out, out[-3000:]
        html = (tmp_path / f"{m}.html").read_text(encoding="utf-8")
        assert "<html" in html.lower() and len(html) > 2000
    assert "Privacy" in out and "Ledger" in out  # print() and summary() output


def test_vignette_renders(rscript, rlib, tmp_path):
    if shutil.which("pandoc") is None:
        pytest.fail("pandoc is needed to render the vignette (Debian: pandoc)")
    src = PKG / "vignettes" / "dpstats.Rmd"
    code = (
        f"rmarkdown::render('{src}', output_dir = '{tmp_path}', intermediates_dir = '{tmp_path}', "
        "quiet = TRUE, envir = new.env())"
    )
    _run([rscript, "-e", code], _env(rlib), tmp_path)
    html = (tmp_path / "dpstats.html").read_text(encoding="utf-8")
    assert "DP sure independence screening" in html  # the fit printed: chunks were evaluated
    assert "dpstats_formula_error" in html  # the classed error was shown
    assert "dpstats_privacy_parameter_error" not in html or "must be a positive" in html
    # R's data sets analysed with R's formulas: iris and mtcars, the design previewed, glm-like methods
    import html as _html
    import re

    text_only = _html.unescape(re.sub(r"<[^>]+>", "", html))
    for text in (
        "Sepal.Length ~ Petal.Length * Species",
        "mpg ~ log(hp) + wt",
        "poly(wt, 2, raw = TRUE)",
        "Speciesversicolor",
        "Wald, t quantiles",
        "dpstats_assumption_error",
        "dpstats privacy accountant",
        "Selected 3 of 10 candidate terms",
    ):
        assert text in text_only, text
    assert "Error in" not in text_only


LAZY_START = """
library(dpstats)
cat("AFTER-LIBRARY channel", is.null(dpstats:::.dp_env$channel), "reticulate", isNamespaceLoaded("reticulate"), "\\n")
fit <- dp_sis(Sepal.Length ~ ., data = iris[, 1:4], eps = 1, k = 2, bounds = c(0, 10), seed = 1)
ch <- dpstats:::.dp_env$channel
cat("AFTER-CALL reticulate", isNamespaceLoaded("reticulate"), "selected", length(fit$outputs$selected), "\\n")
cat("CHILD", ch$pid, ch$executable, "\\n")
if (nzchar(Sys.getenv("HOLD_CHANNEL"))) system("sleep 8 > /dev/null 2>&1 &")  # holds R's end of the channel
"""


def _child_of(out: str) -> tuple[int, str]:
    _, pid, executable = [ln for ln in out.splitlines() if ln.startswith("CHILD ")][-1].split()
    return int(pid), executable


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_library_starts_nothing_and_first_call_starts_the_chosen_python(rscript, rlib, tmp_path):
    """library(dpstats) starts nothing (no Python, no reticulate); the first call starts the chosen
    interpreter as a child process without loading reticulate; RETICULATE_PYTHON is still one of the
    places the interpreter is found; the child ends with R, even when a process R started holds the
    channel open."""
    env = _env(rlib)
    out = _run([rscript, "-e", LAZY_START], env, tmp_path).stdout
    assert "AFTER-LIBRARY channel TRUE reticulate FALSE" in out, out
    assert "AFTER-CALL reticulate FALSE selected 2" in out, out
    pid, executable = _child_of(out)
    assert executable == sys.executable
    assert _gone(pid, within=5), "Python outlived R"
    env.pop("DPSTATS_PYTHON")
    env["RETICULATE_PYTHON"] = sys.executable
    env["HOLD_CHANNEL"] = "1"
    out = _run([rscript, "-e", LAZY_START], env, tmp_path).stdout
    assert "AFTER-CALL reticulate FALSE selected 2" in out, out
    pid, executable = _child_of(out)
    assert executable == sys.executable
    assert _gone(pid, within=5), "Python outlived R while a process R started held the channel"


FIND_PYTHON = """
py <- dpstats_python()
cat("PYTHON", py, "\\n")
fit <- dp_sis(mpg ~ ., data = mtcars, eps = 1, k = 2, bounds = c(-500, 500), seed = 1)
cat("SELECTED", length(fit$outputs$selected), "\\n")
"""


def test_installed_package_finds_the_python_of_its_virtual_environment(rscript, tmp_path):
    """Installed as scripts/dpstats.sh installs it (a library inside the virtual environment),
    with no DPSTATS_PYTHON or RETICULATE_PYTHON and R started outside the checkout, the package
    finds the environment's own Python and fits."""
    if sys.prefix == sys.base_prefix:
        pytest.fail("the test suite runs in the virtual environment scripts/dpstats.sh makes")
    venv = Path(sys.prefix)
    lib = Path(tempfile.mkdtemp(prefix="R-library-test-", dir=venv))
    try:
        r = shutil.which("R")
        _run([r, "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(PKG)], _env(lib), ROOT)
        env = _env(lib)
        for name in ("DPSTATS_PYTHON", "RETICULATE_PYTHON", "PYTHONPATH"):
            env.pop(name, None)
        env["R_LIBS"] = str(lib)
        out = _run([rscript, "-e", "library(dpstats)" + FIND_PYTHON], env, tmp_path).stdout
    finally:
        shutil.rmtree(lib, ignore_errors=True)
    assert f"PYTHON {venv / 'bin' / 'python'}" in out, out
    assert "SELECTED 2" in out, out


def test_setup_installs_the_vignette(rscript, tmp_path):
    """scripts/dpstats.sh builds the package (rendering its vignette) and installs the tarball, so
    that vignette("dpstats", package = "dpstats") is found after the setup's install."""
    lib = tmp_path / "R-library"
    env = _env(lib)
    env["DPSTATS_R_LIBRARY"] = str(lib)
    _run(["bash", str(ROOT / "scripts" / "dpstats.sh"), "r-package"], env, ROOT, timeout=600)
    code = (
        "v <- vignette('dpstats', package = 'dpstats'); "
        "cat('VIGNETTE', class(v), file.exists(file.path(v$Dir, 'doc', v$PDF)), '\\n')"
    )
    out = _run([rscript, "-e", code], env, tmp_path).stdout
    assert "VIGNETTE vignette TRUE" in out, out


@pytest.mark.slow
def test_r_cmd_check(rlib, tmp_path):
    """R CMD check: no ERROR or WARNING. NOTEs allowed, explained in r_wrapper/README.md."""
    r = shutil.which("R")
    build = _run([r, "CMD", "build", "--no-build-vignettes", "--no-manual", str(PKG)], _env(rlib), tmp_path)
    tarball = next(tmp_path.glob("dpstats_*.tar.gz")), build
    env = _env(rlib)
    env["_R_CHECK_FORCE_SUGGESTS_"] = "false"
    res = subprocess.run(
        [
            r,
            "CMD",
            "check",
            "--no-manual",
            "--no-build-vignettes",
            "--ignore-vignettes",
            "--no-tests",
            str(tarball[0]),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = res.stdout
    assert res.returncode == 0, out[-5000:] + res.stderr[-2000:]
    status = [ln for ln in out.splitlines() if ln.startswith("Status:")]
    assert status and "ERROR" not in status[0] and "WARNING" not in status[0], out[-5000:]
