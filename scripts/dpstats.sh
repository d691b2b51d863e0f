#!/usr/bin/env bash
# One entry point for a fresh machine: set everything up, then run the demo or the tests.
#   bash scripts/dpstats.sh demo   # analyse bundled data, write HTML reports to reports/
#   bash scripts/dpstats.sh test   # the whole test suite (what .ci/run calls)
#   bash scripts/dpstats.sh r-package  # only (re)install the R package, vignette built, into
#                                      # $DPSTATS_R_LIBRARY (default .venv/R-library)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

system_packages() {
    # R (with the Bioconductor/CRAN packages Debian ships) and Chromium, when root and missing.
    local need=()
    command -v Rscript >/dev/null 2>&1 || need+=(r-base-core r-base-dev)
    command -v chromium >/dev/null 2>&1 || need+=(chromium chromium-driver)
    for pkg in r-cran-reticulate r-cran-testthat r-cran-mlbench r-bioc-all r-bioc-multtest \
               r-cran-glmnet r-cran-mclust r-cran-jsonlite r-cran-knitr r-cran-rmarkdown r-cran-broom \
               r-cran-generics r-cran-tibble pandoc; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
    done
    if [ "${#need[@]}" -eq 0 ]; then return 0; fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "dpstats: not root, cannot install ${need[*]}; R/browser tests need them" >&2
        return 0
    fi
    echo "dpstats: installing Debian packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
}

python_env() {
    if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV"; fi
    local stamp="$VENV/.dpstats-installed"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        "$VENV/bin/pip" install -q --upgrade pip >/dev/null
        local extras="test,bench,data"
        if command -v R >/dev/null 2>&1; then extras="test,bench,data,r"; fi
        "$VENV/bin/pip" install -q -e ".[$extras]"
        touch "$stamp"
    fi
}

r_package() {
    # Built first (R CMD build renders the vignette, with this environment's Python), then the
    # tarball installed, so that vignette("dpstats", package = "dpstats") is found. If the vignette
    # cannot be built, the package is installed from source without it, and the reason shown.
    if command -v R >/dev/null 2>&1 && [ -d r_wrapper ] && [ -f r_wrapper/DESCRIPTION ]; then
        local lib="${DPSTATS_R_LIBRARY:-$VENV/R-library}" build
        mkdir -p "$lib"
        local stamp="$lib/.dpstats-installed"  # reinstall only when r_wrapper/ changed since
        if [ -f "$stamp" ] && [ -z "$(find r_wrapper -newer "$stamp" -print -quit)" ]; then return 0; fi
        build="$(mktemp -d)"
        if (cd "$build" && R_LIBS="$lib${R_LIBS:+:$R_LIBS}" R CMD build --no-manual "$ROOT/r_wrapper" >build.log 2>&1); then
            R CMD INSTALL --no-test-load -l "$lib" "$build"/dpstats_*.tar.gz >/dev/null 2>&1 \
                || R CMD INSTALL -l "$lib" "$build"/dpstats_*.tar.gz
        else
            echo "dpstats: the R vignette could not be built; installing without it:" >&2
            tail -n 20 "$build/build.log" >&2
            R CMD INSTALL --no-test-load -l "$lib" r_wrapper >/dev/null 2>&1 || R CMD INSTALL -l "$lib" r_wrapper
        fi
        rm -rf "$build"
        touch "$stamp"
    fi
}

cmd="${1:-test}"; shift || true
export DPSTATS_PYTHON="${DPSTATS_PYTHON:-$VENV/bin/python}"
if [ "$cmd" = "r-package" ]; then r_package; exit 0; fi  # only (re)install the R package
system_packages
python_env
r_package
export R_LIBS="${DPSTATS_R_LIBRARY:-$VENV/R-library}${R_LIBS:+:$R_LIBS}"
case "$cmd" in
    demo) exec "$VENV/bin/dpstats" demo --out "${1:-reports}" ;;
    # one pytest worker per core (pytest-xdist): the statistical grids and the R package's checks run side by side
    test) exec "$VENV/bin/python" -m pytest -n "${DPSTATS_TEST_WORKERS:-auto}" --durations=15 "$@" ;;
    *) echo "usage: scripts/dpstats.sh demo|test|r-package [args]" >&2; exit 2 ;;
esac
