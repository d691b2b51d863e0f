#!/usr/bin/env bash
# One entry point for a fresh machine: set everything up, then run the demo or the tests.
#   bash scripts/dpstats.sh demo   # analyse bundled data, write HTML reports to reports/
#   bash scripts/dpstats.sh test   # the whole test suite (what .ci/run calls)
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
               r-cran-generics pandoc; do
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
        local extras="test"
        if command -v R >/dev/null 2>&1; then extras="test,r"; fi
        "$VENV/bin/pip" install -q -e ".[$extras]"
        touch "$stamp"
    fi
}

r_package() {
    if command -v R >/dev/null 2>&1 && [ -d r_wrapper ] && [ -f r_wrapper/DESCRIPTION ]; then
        mkdir -p "$VENV/R-library"
        R CMD INSTALL --no-test-load -l "$VENV/R-library" r_wrapper >/dev/null 2>&1 \
            || R CMD INSTALL -l "$VENV/R-library" r_wrapper
    fi
}

cmd="${1:-test}"; shift || true
system_packages
python_env
r_package
export DPSTATS_PYTHON="$VENV/bin/python"
export R_LIBS="$VENV/R-library${R_LIBS:+:$R_LIBS}"
case "$cmd" in
    demo) exec "$VENV/bin/dpstats" demo --out "${1:-reports}" ;;
    test) exec "$VENV/bin/python" -m pytest "$@" ;;
    *) echo "usage: scripts/dpstats.sh demo|test [args]" >&2; exit 2 ;;
esac
