"""The R package's help pages: generated from the Python docstrings, and complete.

``scripts/make_r_docs.py`` writes ``r_wrapper/man/<function>.Rd`` for each analysis function
from its numpydoc ``Parameters``; the committed pages must equal what it writes (so R help and
Python docstrings cannot drift). Every formal argument of every exported R function and of
every registered S3 method is documented on a page that aliases it, and every argument of the
wrapped Python function is documented on the R page. No R needed (R CMD check's codoc runs in
tests/test_r_package.py).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import dpstats

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "r_wrapper"


def _script():
    spec = importlib.util.spec_from_file_location("make_r_docs", ROOT / "scripts" / "make_r_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> dict[str, tuple[set[str], set[str], str]]:
    """alias -> (aliases of its page, argument names documented there, page text)."""
    out = {}
    for path in (PKG / "man").glob("*.Rd"):
        text = path.read_text(encoding="utf-8")
        aliases = set(re.findall(r"^\\alias\{([^}]+)\}", text, re.M))
        args = set()
        for item in re.findall(r"^\\item\{([^}]+)\}", text, re.M):
            args.update(a.strip() for a in item.split(","))
        args.update(re.findall(r"\\item\{\\code\{([^}]+)\}\}", text))
        for alias in aliases:
            out[alias] = (aliases, args, text)
    return out


def _r_functions() -> dict[str, list[str]]:
    """Every top-level R function of the package and its formal arguments."""
    script = _script()
    funs = {}
    for path in (PKG / "R").glob("*.R"):
        for name, args in script.r_functions(path.read_text(encoding="utf-8")).items():
            funs[name] = [a.split("=")[0].strip() for a in script._split_top(args)]
    return funs


def test_committed_help_pages_equal_what_the_script_writes():
    assert _script().main(["--check"]) == 0, "run: python scripts/make_r_docs.py"


def test_every_formal_argument_of_every_exported_function_and_method_is_documented():
    namespace = (PKG / "NAMESPACE").read_text(encoding="utf-8")
    exported = re.findall(r"^export\((\w+)\)", namespace, re.M)
    methods = [
        f"{g.split('::')[-1]}.{c}"
        for g, c in re.findall(r"^S3method\(([\w:.]+), *([\w.]+)\)", namespace, re.M)
    ]
    funs, pages = _r_functions(), _pages()
    missing = []
    for name in exported + methods:
        if name not in funs:
            continue  # tidy/glance generics defined as tidy <- function(x, ...) are found; others are aliases
        if name not in pages:
            missing.append(f"{name}: no help page aliases it")
            continue
        missing += [f"{name}({a})" for a in funs[name] if a not in pages[name][1]]
    assert not missing, missing
    assert len(exported) >= 15


def test_every_python_argument_is_documented_in_r():
    script, pages = _script(), _pages()
    for r_name, py_name in script.FUNCTIONS.items():
        documented = pages[r_name][1]
        for p in inspect.signature(getattr(dpstats, py_name)).parameters:
            assert (p if p != "random_state" else "seed") in documented, f"?{r_name} lacks {p}"
    knockoff = pages["dp_knockoff"][2]
    for p in ("fdr", "sigma", "beta_norm", "c_min"):
        assert f"\\item{{\\code{{{p}}}}}" in knockoff
    assert (
        "\\item{\\code{penalty}}" in pages["vertical_glm"][2]
        and "\\item{\\code{lam}}" in pages["vertical_glm"][2]
    )
    assert "every other argument of the Python function}" not in "".join(p[2] for p in pages.values())
