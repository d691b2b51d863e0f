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


# The places dpstats_python() (r_wrapper/R/python.R) consults, as each document names them: the
# option and environment variables by name, the two virtual environments by a phrase of their own
# (whitespace as one space).
WHERE_PYTHON = {  # document -> (start of its passage, the library's venv, a .venv above)
    "README.md": (
        "**Where Python comes from.**",
        "virtual environment that holds the R library",
        "a `.venv` in the working folder or above",
    ),
    "r_wrapper/man/install_dpstats.Rd": (
        r"\code{dpstats_python} names",
        "virtual environment this package is installed",
        r"\code{.venv} in the working directory or above",
    ),
    "r_wrapper/vignettes/dpstats.Rmd": (
        "It finds Python from",
        "virtual environment it is installed in",
        "a `.venv` in or above the working directory",
    ),
}


def _python_search_order() -> list[tuple[str, str]]:
    """(kind, name) of each place dpstats_python() consults, in its order, read from its code."""
    code = (PKG / "R" / "python.R").read_text(encoding="utf-8")
    start = code.index("dpstats_python <- function()")
    body = code[start : code.index("\n}\n", start)]
    option = re.search(r'opt <- getOption\("([^"]+)"\)', body).group(1)
    places = []
    for label, read in re.findall(r'list\("([^"]+)", (opt|Sys\.getenv\("[^"]+"\))\)', body):
        if read == "opt":
            assert label == f"option {option}", label
            places.append(("option", option))
        else:
            assert read == f'Sys.getenv("{label}")', (label, read)
            places.append(("variable", label))
    fallbacks = {
        'system.file(package = "dpstats")': [("venv", "library")],
        'file.path(dir, ".venv")': [("venv", "above")],
    }
    which = re.search(r"Sys\.which\(c\(([^)]*)\)\)", body)
    fallbacks[which.group(0)] = [("path", name) for name in re.findall(r'"([^"]+)"', which.group(1))]
    for marker in sorted(fallbacks, key=body.index):
        places += fallbacks[marker]
    return places


def test_documents_name_where_r_finds_python_in_the_order_the_code_looks():
    """README's R section, install_dpstats's help page and the vignette list the places in the order
    dpstats_python() consults them (RETICULATE_PYTHON among them, read though reticulate is not
    used), and README says that a set option or variable naming no file is an error."""
    places = _python_search_order()
    assert {kind for kind, _ in places} == {"option", "variable", "venv", "path"}, places
    for doc, (start, library_venv, venv_above) in WHERE_PYTHON.items():
        passage = _passage((ROOT / doc).read_text(encoding="utf-8"), start)
        position = 0
        for kind, name in places:
            if kind == "venv":
                pattern = re.escape(library_venv if name == "library" else venv_above)
            elif kind == "path":
                pattern = rf"[`{{]{name}[`}}]"
            else:
                pattern = rf"(?<![\w.]){re.escape(name)}(?!\w)"
            found = re.compile(pattern).search(passage, position)
            assert found, f"{doc}: {name} ({kind}) not named after {passage[:position][-80:]!r}"
            position = found.end()
    readme = _passage((ROOT / "README.md").read_text(encoding="utf-8"), WHERE_PYTHON["README.md"][0])
    assert "does not exist is an error" in readme
    r_code = "\n".join(path.read_text(encoding="utf-8") for path in (PKG / "R").glob("*.R"))
    assert not re.search(r"reticulate::|library\(reticulate|requireNamespace\(.reticulate", r_code)
    if ("variable", "RETICULATE_PYTHON") in places:  # read for users who set it, reticulate unused
        assert "neither needs nor loads reticulate" in readme


def _passage(text: str, start: str) -> str:
    """The paragraph of ``text`` that begins with ``start`` (up to a blank line or an Rd section's end),
    its line breaks read as spaces."""
    rest = text[text.index(start) :]
    return " ".join(re.split(r"\n\s*\n|\n\}", rest, maxsplit=1)[0].split())  # line breaks as spaces


def test_choices_read_as_r_prose_without_a_python_set_brace():
    """A numpydoc type such as '{"fill", "omit"}, optional' becomes 'one of "fill", "omit"': the help
    pages showed a stray closing brace ('one of "fill", "omit"\\}, optional')."""
    pages = {path.name: path.read_text(encoding="utf-8") for path in (PKG / "man").glob("*.Rd")}
    stray = sorted(name for name, text in pages.items() if re.search(r"one of [^.}]*\\\}", text))
    assert stray == []
    assert 'one of "fill", "omit". Missing values' in pages["dp_lm.Rd"]


# Python words an R user should not meet on a generated help page (the outside R audit): Python
# literals in examples ({"city": [...]}, ["a", "b"], (0, 1) as a pair), its type and class names.
PYTHON_ON_R_PAGES = re.compile(
    r"\\\{\"|\[['\"]|\bTrue\b|\bFalse\b|\bNone\b|\bdicts?\b|\btuples?\b|pandas|\bDataFrame\b|"
    r"Series'|NonPrivateWarning|AutoBounds|(?<![\w.])\(lo, hi\)|default to \(|tests/\w+\.py|\bcode\{\"[^\"]*~|"
    # words that point R users to Python: the Python function and its record, the repository's docs, Python
    # modules, classes, functions and result attributes, numpy, to_dict, the "front door", tuples of numbers
    r"Python function|py_call|docs/\w+\.md|Derivations|\bmethods\.\w|\(privreg[:;]|\bschema\b|\bresult\.\w|"
    r"\berrors\.\w|\bsimulate\.\w|\bdpstats\.\w|SessionPlan|eta_two_sided_z|\bnumpy\b|\bto_dict\b|"
    r"front doors?|:(?:data|func|mod|class|meth):|(?:default|paper's) \(-?[0-9]|\(\"[^\"]*~[^\"]*\""
)


def test_generated_help_pages_show_r_code_not_python_literals():
    script = _script()
    found = []
    for r_name in script.FUNCTIONS:
        text = (PKG / "man" / f"{r_name}.Rd").read_text(encoding="utf-8")
        body = text.split("\n", 1)[1]  # the first line says which Python docstring it came from
        found += [f"{r_name}: {m.group(0)!r}" for m in PYTHON_ON_R_PAGES.finditer(body)]
    assert found == []
    lm = (PKG / "man" / "dp_lm.Rd").read_text(encoding="utf-8")
    assert 'e.g. \\code{list(city = c("Leeds", "York"))}' in lm
    assert "also of the count, \\code{c(0, Y)}" in (PKG / "man" / "dp_glm.Rd").read_text(encoding="utf-8")
    assert "\\code{dpstats_non_private_warning}" in lm
    assert "\\code{list(bounds = 3)}" in (PKG / "man" / "dp_select_infer.Rd").read_text(encoding="utf-8")
    assert "\\code{list(power = 0.8)}" in (PKG / "man" / "dp_plan.Rd").read_text(encoding="utf-8")
    assert "formula such as \\code{y ~ .}" in (PKG / "man" / "dp_bh.Rd").read_text(encoding="utf-8")
    assert "\\code{dp_bh(y ~ ., data = df," in (PKG / "man" / "dp_bh.Rd").read_text(encoding="utf-8")
    assert "\\item{...}{further arguments, each by its name:" in lm
    assert '\\code{"peeling"}' in (PKG / "man" / "dp_sis.Rd").read_text(
        encoding="utf-8"
    )  # the selectors by name


def test_code_spans_become_r_code():
    """make_r_docs.r_code: Python literals as R's; what is not a literal keeps the word rewrites."""
    r_code = _script().r_code
    assert r_code('{"city": ["Leeds", "York"]}') == 'list(city = c("Leeds", "York"))'
    assert r_code("{'my col': (0, 1)}") == "list(`my col` = c(0, 1))"
    assert r_code("(0, 1)") == "c(0, 1)"
    assert r_code("[[1, 2], [3]]") == "list(c(1, 2), c(3))"
    assert r_code("levels={'flag': [False, True]}") == "levels = list(flag = c(FALSE, TRUE))"
    assert r_code('"y ~ ."') == "y ~ ."
    assert r_code("strict=True") == "strict = TRUE"
    assert r_code("random_state=None") == "seed = NULL"
    assert r_code("eta_two_sided_z(z_mean_delta(0, 1, 1.75e6, 0.5))") == (
        "eta_two_sided_z(z_mean_delta(0, 1, 1.75e6, 0.5))"
    )


def test_assume_is_the_named_list_r_users_pass_not_a_python_class():
    """dp_plan's ``assume`` (and dp_sis's and dp_knockoff's) on R's help pages: each model as the named list
    R users pass, its fields and defaults from the Python class; no class or Python function an R user
    cannot build or call (dpstats.simulate.Assume, FanLv, GLMModel, simulate.sis_trials)."""
    python_only = re.compile(r"\b(?:Assume|FanLv|GLMModel|FelpModel|KnockoffModel|MixtureModel)\b|simulate\.")
    pages = _pages()
    for name in ("dp_plan", "dp_sis", "dp_knockoff"):
        item = re.search(r"\\item\{(?:\\code\{)?assume\}?\}\{(.*)\}$", pages[name][2], re.M).group(1)
        assert not python_only.search(item), (name, python_only.search(item).group(0))
    plan = re.search(r"^\\item\{assume\}\{(.*)\}$", pages["dp_plan"][2], re.M).group(1)
    assert (
        "dp_sis, dp_two_stage: \\code{list(signals, strength, noise = 1, correlation = 0, bound_sds = 3)}"
        in plan
    )
    assert '\\code{list(model = "fan_lv", signals = 8, noise_var = 1.5, bound_sds = 3)}' in plan
    assert "dp_knockoff: \\code{list(signals = 15, amplitude = 4.5, noise = 1)}" in plan
    assert "dp_gmm: \\code{list(k = 2, separation = 8, weights = NULL)}" in plan
    assert "dp_glm: \\code{list(signals = 2, strength = NULL, intercept = NULL, correlation = 0," in plan
    assert "\\code{list(signals = s, strength = b, noise = σ)}" in pages["dp_knockoff"][2]


def test_the_r_vignette_explains_arguments_in_r_terms():
    """The vignette points to R's help pages, not to "the same arguments as in Python"."""
    text = (PKG / "vignettes" / "dpstats.Rmd").read_text(encoding="utf-8")
    assert "as in Python" not in text
    assert "?dp_knockoff" in text


def test_na_omit_and_na_action_help_is_true_per_door():
    """The shared data/na_action texts (outside R audit, item 13): dp_lm refuses na.omit under DP and offers
    no add_remove, so its help says na.omit works at eps = Inf only and names no add_remove default; a door
    with an add_remove route (dp_gmm) says where na.omit works; a door with no public-n need keeps lm's words."""
    import warnings

    import numpy as np
    import pandas as pd
    import pytest

    dp = dpstats
    make_r_docs = _script()
    lm_page = make_r_docs.page("dp_lm", "dp_lm")
    assert (
        "drops every incomplete row, as \\code{lm} does, at \\code{eps = Inf} only; a private fit refuses"
        in lm_page
    )
    assert 'default under \\code{"add_remove"}' not in lm_page
    gmm_page = make_r_docs.page("dp_gmm", "dp_gmm")
    assert (
        'under \\code{neighbouring = "add_remove"} only; a private fit under \\code{neighbouring = "replace"}'
        in gmm_page
    )
    assert 'default under \\code{"add_remove"}' in gmm_page
    assert "drops every incomplete row, as \\code{lm} does.}" in make_r_docs.page("dp_pca", "dp_pca")
    # what the dp_lm page says is what dp_lm does: na_action="omit" is refused at finite eps, taken at eps = inf
    df = pd.DataFrame({"x": [0.0, 1, 2, 3, np.nan, 5], "y": [1.0, 2, 2, 4, 5, 5]})
    with pytest.raises(dp.PrivacyParameterError, match='cannot use na_action="omit"'):
        dp.dp_lm("y ~ x", df, eps=1.0, delta=1e-5, bounds={"x": (0, 5), "y": (0, 6)}, na_action="omit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dp.dp_lm("y ~ x", df, eps=float("inf"), na_action="omit").n == 5


def test_description_names_every_analysis_function_and_the_planner():
    """DESCRIPTION's Description lists what the package does: each generated export (the analysis
    functions) and dp_plan / dp_accountant, written as calls (an outside audit found it naming five of eleven)."""
    description = (PKG / "DESCRIPTION").read_text(encoding="utf-8")
    text = " ".join(re.search(r"^Description:(.*?)^\S", description, re.M | re.S).group(1).split())
    namespace = (PKG / "NAMESPACE").read_text(encoding="utf-8")
    generated = namespace.split("# end of the generated exports")[0]
    names = re.findall(r"^export\((\w+)\)", generated, re.M) + ["dp_plan", "dp_accountant"]
    assert len(names) >= 10
    assert [nm for nm in names if f"{nm}()" not in text] == []
