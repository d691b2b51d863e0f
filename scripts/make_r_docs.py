"""Write the R package's help pages, exports and default wrappers for the analysis functions.

One source for both languages: each ``r_wrapper/man/<function>.Rd`` below is generated from
the numpydoc ``Parameters`` section of the Python function it wraps, and from the wrapper's
own signature in ``r_wrapper/R/*.R``. The wrapper's formal arguments are ``\\arguments``
items; every other Python argument (passed through ``...`` by its Python name) is an item of
the ``...`` entry. ``tests/test_r_docs.py`` checks that the committed pages equal what this
script writes and that every argument is documented.

From the catalog of methods (``dpstats/catalog.py``, the entries with ``r=``) it also writes the
block of ``r_wrapper/NAMESPACE`` that exports them, ``r_wrapper/R/required.R`` (each one's required
arguments) and ``r_wrapper/R/doors.R``: the wrapper of every such method that no other file of
``r_wrapper/R/`` defines by hand, ``name(<the leading Python arguments without a default or None>, ..., seed = NULL)``
handing its call to ``.dp_fit``.  A method that needs R of its own (argument conversions, as
``dp_bh`` or ``vertical_glm``) writes its wrapper by hand; any other needs only its catalog entry.

    python scripts/make_r_docs.py          # rewrite r_wrapper/man/<function>.Rd
    python scripts/make_r_docs.py --check  # exit 1 if a committed page differs
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpstats  # noqa: E402

MAN = ROOT / "r_wrapper" / "man"
R_SOURCES = ROOT / "r_wrapper" / "R"

# R function -> Python function it wraps: the methods' R functions from the catalog (dpstats/catalog.py),
# and the planner.
FUNCTIONS = {**dpstats.catalog.r_functions(), "dp_plan": "plan"}

# What R users pass differently from Python users (the R wrapper converts).
R_ARGUMENTS = {
    "formula": "an R formula, e.g. \\code{y ~ .}, read with "
    "\\code{model.matrix}'s semantics: \\code{.}, \\code{-}, \\code{0}, interactions, \\code{I()}, "
    "\\code{log()}, \\code{factor()}, \\code{poly()}, treatment contrasts for factors.",
    "data": "a data frame (or a numeric matrix with column names) whose columns may be numeric, integer, "
    "logical, factor, ordered or character; columns of other classes that the formula does not use are "
    "left out. Missing values (\\code{NA}, or a non-finite number) in a variable the formula uses follow "
    '\\code{na_action}: by default (\\code{"fill"} under \\code{neighbouring = "replace"}) no row is '
    "dropped and each missing value gets its public fill (the midpoint of the variable's declared "
    "\\code{bounds}, a factor's first level, \\code{FALSE}); rows missing a numeric variable without "
    'declared bounds are dropped. \\code{na.action = na.omit} (or \\code{na_action = "omit"}) drops every '
    "incomplete row, as \\code{lm} does.",
    "seed": "Python's \\code{random_state}: \\code{NULL} (fresh randomness from the operating system, for "
    'releases) or one whole number (reproducible runs; the privacy statement then says "seeded: for '
    "reproduction, not for release\"). The noise is drawn in Python, not from R's generator: "
    "\\code{set.seed()} has no effect on it, and two unseeded calls after the same \\code{set.seed(1)} "
    "give different results. Only \\code{seed =} reproduces a run (with a sampler meant for reproduction, "
    "not for release).",
    "family": "the GLM family: \\code{gaussian} (vertical_glm only), \\code{binomial} or \\code{poisson}, as a family object "
    '(\\code{binomial()}), the function (\\code{binomial}) or its name (\\code{"binomial"}); canonical '
    "links only. Another family (\\code{quasipoisson}, \\code{quasibinomial}, \\code{Gamma}, ...) or link is a "
    "\\code{dpstats_argument_error} naming the families offered, raised before anything is read or spent.",
    "parties": "a named list of character vectors, the columns each party holds, e.g. "
    '\\code{list(a = c("x1", "x2"), b = "x3")}.',
}

# Where each door's release needs the public number of rows read (its PublicN: a private fit then refuses
# na.action = na.omit under replace-one-row), and where it has a non-private mode, in which na.omit drops
# incomplete rows as lm does. The shared texts of data and na_action are made true per door from these.
PUBLIC_N = {
    "dp_lm": "dpstats.methods.lm:LMOptions",
    "dp_glm": "dpstats.methods.glm:GLMOptions",
    "dp_select_infer": "dpstats.methods.select_infer:SelectInferOptions",
    "vertical_glm": "dpstats.methods.privreg._settings:PrivregOptions",
    "dp_knockoff": "dpstats.methods.knockoff.options:KnockoffOptions",
    "dp_two_stage": "dpstats.methods.two_stage:TwoStageOptions",
    "dp_felp": "dpstats.methods.felp.options:FELPOptions",
    "dp_gmm": "dpstats.methods.gmm.options:GMMOptions",
}
NONPRIVATE_MODE = {
    "dp_lm": "at \\code{eps = Inf}",
    "dp_glm": "at \\code{eps = Inf}",
    "dp_pca": "at \\code{eps = Inf}",
    "dp_felp": "at \\code{eps = Inf}",
    "dp_knockoff": "at \\code{eps = Inf}",
    "vertical_glm": "in a fit without \\code{eps}",
}
NA_OMIT_SENTENCE = '\\code{na.action = na.omit} (or \\code{na_action = "omit"}) drops every incomplete row, as \\code{lm} does.'


def public_n(r_name: str):
    """The door's PublicN (why its release needs the public n), or None."""
    if r_name not in PUBLIC_N:
        return None
    module, cls = PUBLIC_N[r_name].split(":")
    return getattr(importlib.import_module(module), cls).PUBLIC_N


def replace_only(params: dict) -> bool:
    """The door offers neighbouring = "replace" only."""
    return "add_remove" not in params.get("neighbouring", ("", ""))[0]


def private_replace_only(params: dict) -> bool:
    """A private fit of the door offers neighbouring = "replace" only (vertical_glm's DP mode: its
    docstring says so of the relation it otherwise takes both of)."""
    if "neighbouring" not in params:
        return False
    return replace_only(params) or '``"replace"`` only' in params["neighbouring"][1]


def subset_text(r_name: str, params: dict) -> str:
    """Where subset = selects rows for this door (R's methods.R, .refuse_private_subset), and why not elsewhere."""
    where = NONPRIVATE_MODE.get(r_name, "at \\code{eps = Inf}")
    text = f"{where}, where a factor keeps only the levels the rows analysed hold, as in \\code{{lm}}'s model frame"
    refused = "A private fit refuses it"
    if not private_replace_only(params):
        text += (
            ', or under \\code{neighbouring = "add_remove"}, where the number of rows kept stays private and is '
            "not shown (a private fit keeps the declared levels)"
        )
        refused = 'A private fit under \\code{neighbouring = "replace"} refuses it'
    return (
        f"{text}. {refused} before anything is read or spent: the rows it keeps are chosen by their values, so "
        "their number, released as n, would depend on the data (where the rows to analyse are public, pass them "
        "as \\code{data = d[rows, ]}). A private fit keeps each factor's levels as declared (\\code{levels =}, or "
        "the data frame's), also a level no row holds, where \\code{lm} drops it: an empty baseline level leaves "
        "the intercept and that factor's terms unidentified. Drop a level known to be empty before the call with "
        "\\code{factor(x, levels = c(...))}; \\code{droplevels()} does it too but reads the rows, so which "
        "levels remain is then a fact of the data the guarantee does not cover;"
    )


def na_omit_text(r_name: str, params: dict) -> str:
    """Where na.omit drops incomplete rows for this door, and why a private fit refuses it elsewhere."""
    need = public_n(r_name)
    if need is None:
        return NA_OMIT_SENTENCE
    where = [NONPRIVATE_MODE[r_name]] if r_name in NONPRIVATE_MODE else []
    if need.add_remove and not replace_only(params):  # n is private there, and the method is built for that
        where.append('under \\code{neighbouring = "add_remove"}')
    drops = NA_OMIT_SENTENCE.removesuffix(".") + (f", {' or '.join(where)} only" if where else "")
    under_add_remove = bool(need.add_remove) and not replace_only(params)
    private = 'a private fit under \\code{neighbouring = "replace"}' if under_add_remove else "a private fit"
    return (
        f"{drops}; {private} refuses it, since {rd_text(need.why)}: it needs the public number of rows read, "
        "which dropping rows would make private (declare bounds and keep the default fill instead)."
    )


def data_text(r_name: str, params: dict) -> str:
    """R_ARGUMENTS' data text with the door's own na.omit sentence."""
    return R_ARGUMENTS["data"].replace(NA_OMIT_SENTENCE, na_omit_text(r_name, params))


def na_action_text(text: str, params: dict) -> str:
    """The shared na_action text without the add_remove default where the door offers replace only."""
    if not replace_only(params):
        return text
    return text.replace(
        '(default under \\code{"add_remove"}, and at eps = inf, as', "(default at eps = inf, as"
    )


# Arguments the docstrings describe together by reference (random_state, accountant, strict, progress).
COMMON = {
    "accountant": "a \\code{\\link{dp_accountant}}: the spend is charged to it, and refused before any data "
    "is read when it does not fit.",
    "strict": "\\code{TRUE} refuses every data-dependent step (anything computed from the data to calibrate "
    "noise) before anything is spent, and reads as numbers every variable of the formula that is not declared "
    "categorical (\\code{levels =}, a factor): a character column is then numeric, its text entries missing "
    "(the privacy statement lists these variables); \\code{FALSE} (default) names the steps in the privacy "
    "statement and warns.",
    "progress": "not used from R (a progress callback for Python users); leave it out.",
    "diagnostics": "\\code{TRUE} attaches non-private diagnostics (rows dropped, values clipped), labelled "
    '"not private"; off by default, and no output shows them unless asked.',
}

# doors whose help shows their docstring's Returns text (what their tables hold)
RETURNS_IN_HELP = {"dp_lm", "dp_select_infer"}
LM_DETAILS = """\
As in \\code{lm}: \\code{subset =} selects rows (evaluated in \\code{data}) {subset_where}
\\code{weights =} is refused (case weights change the sensitivity of one row, and the \\code{eps = Inf}
fit is the private one's reference; for \\code{glm}'s proportions, \\code{y/n ~ x, weights = n}, write
\\code{cbind(successes, failures) ~ x});
\\code{na.action = na.omit} (as a function, its name or a variable holding it) is
\\code{na_action = "omit"}, and any other \\code{na.action} is refused naming \\code{na_action},
never ignored (at \\code{eps = Inf} \\code{na.fail} stops as in \\code{lm}, and \\code{dp_lm} and
\\code{dp_glm} take \\code{na.exclude} as \\code{lm} does);
\\code{contrasts = list(g = "contr.sum")} codes
factors as \\code{lm} does, and so do each factor's \\code{contrasts(f) <- ...} and
\\code{options(contrasts = ...)}, sent with the data. \\code{fit$call} is the call as written (data
passed as a value, as through \\code{do.call} or \\code{Map}, shows as \\code{`<data frame>`}, so that
printed output never carries the data; \\code{update(fit, ...)} then asks for \\code{data =}
again). Whole numbers may be written \\code{5} or \\code{5L}; \\code{bounds} as \\code{c(lo, hi)} for every column or a named list such as
\\code{list(y = c(0, 10), x = c(-1, 1))}. A misspelt or unknown argument, or a missing required
one, is a \\code{dpstats_argument_error} naming it (and the likely intended name). Unlike \\code{lm},
the formula's variables are taken from \\code{data} only, not from the formula's environment: a vector
outside the data frame is "not in the data"; add it as a column.

"""

# Every page's: how errors and warnings arrive in R.
CONDITIONS = """\
Errors arrive as R conditions of class \\code{dpstats_<kind>_error} and \\code{dpstats_error}
(e.g. \\code{dpstats_data_error}, \\code{dpstats_formula_error},
\\code{dpstats_privacy_parameter_error}); warnings as \\code{dpstats_<kind>_warning} (e.g.
\\code{dpstats_non_private_warning} for data-dependent steps)."""

EXAMPLES = {
    "dp_sis": """\
if (dpstats_available()) {
  set.seed(1)
  df <- data.frame(matrix(rnorm(100 * 10), 100))
  df$y <- 2 * df$X1 + rnorm(100)
  fit <- dp_sis(y ~ ., data = df, eps = 2, k = 2, bounds = c(-5, 5), seed = 1)
  fit
  tidy(fit)
}""",
    "dp_lm": """\
if (dpstats_available()) {
  fit <- dp_lm(mpg ~ wt + hp, data = mtcars, eps = 5, delta = 1e-5,
               bounds = list(wt = c(1, 6), hp = c(50, 350), mpg = c(10, 35)), seed = 1)
  summary(fit)
  confint(fit)
}""",
    "dp_bh": """\
if (dpstats_available()) {
  p <- c(a = 1e-9, b = 2e-8, c = 0.04, d = 0.3, e = 0.8)
  fit <- dp_bh(p, q = 0.1, eps = 1, eta = 0.01, seed = 1)
  fit$outputs$rejected
}""",
    "dp_plan": """\
if (dpstats_available()) {
  pl <- dp_plan("dp_sis", n = 100, p = 200, eps = c(1, 5), k = 8, trials = 20,
                assume = list(signals = 8, strength = 0.5), seed = 1)
  tidy(pl)
}""",
    "dp_glm": """\
if (dpstats_available()) {
  # A simulated logistic model with n = 20000 rows: at this n, eps = 1 gives intervals.
  # On small data sets (mtcars, infert: n < 300) eps = 1 is refused before anything is
  # spent, since the noise would swamp the estimates; dp_plan() tells how large n must be.
  set.seed(1)
  n <- 20000
  df <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  df$y <- rbinom(n, 1, plogis(-0.5 + 1.5 * df$x1 - df$x2))
  fit <- dp_glm(y ~ x1 + x2, data = df, eps = 1, delta = 1e-6, family = binomial,
                bounds = list(x1 = c(-1, 1), x2 = c(-1, 1)), seed = 1)
  summary(fit)
  confint(fit)
  coef(glm(y ~ x1 + x2, family = binomial, data = df))  # the non-private estimates
}""",
    "dp_gmm": """\
if (dpstats_available()) {
  # two well separated clusters of 2000 simulated points each
  set.seed(1)
  df <- data.frame(x1 = c(rnorm(2000, -3), rnorm(2000, 3)), x2 = c(rnorm(2000, -3), rnorm(2000, 3)))
  fit <- dp_gmm(~ x1 + x2, data = df, k = 2, eps = 2, delta = 1e-5, bounds = c(-8, 8), seed = 1)
  fit
  coef(fit)
  table(predict(fit, newdata = df))
}""",
    "dp_knockoff": """\
if (dpstats_available()) {
  # 6 signals among 12 predictors, n = 20000; the public assumptions (sigma, beta_norm, c_min,
  # lambda_min) are declared, so no data-dependent step is taken. Knockoff+ needs a large
  # budget here: at eps = 1 it usually selects nothing.
  set.seed(1)
  n <- 20000
  df <- data.frame(matrix(runif(n * 12, -1, 1), n))
  df$y <- drop(as.matrix(df[, 1:6]) \\%*\\% rep(1, 6)) + rnorm(n)
  fit <- dp_knockoff(y ~ ., data = df, eps = 8, delta = 1e-5, fdr = 0.2, bounds = sqrt(12),
                     sigma = 1.5, beta_norm = 3, c_min = 75, lambda_min = 0.8, seed = 1)
  fit
  tidy(fit)
}""",
    "dp_pca": """\
if (dpstats_available()) {
  # two correlated columns and one independent one, n = 5000 simulated rows
  set.seed(1)
  n <- 5000
  z <- rnorm(n)
  df <- data.frame(a = z + rnorm(n, sd = 0.3), b = z + rnorm(n, sd = 0.3), c = rnorm(n))
  fit <- dp_pca(~ a + b + c, data = df, k = 2, eps = 1, delta = 1e-5, bounds = c(-4, 4), seed = 1)
  fit
  tidy(fit, matrix = "eigenvalues")
  prcomp(df)$rotation[, 1:2]  # the non-private loadings (signs may differ)
}""",
    "dp_select_infer": """\
if (dpstats_available()) {
  # select 2 of 8 predictors on one half of the rows, fit them with intervals on the other
  set.seed(1)
  n <- 4000
  df <- data.frame(matrix(runif(n * 8, -1, 1), n))
  df$y <- 2 * df$X1 - 2 * df$X2 + rnorm(n, sd = 0.5)
  fit <- dp_select_infer(y ~ ., data = df, eps = 2, delta = 1e-5, k = 2, bounds = c(-4, 4), seed = 1)
  fit
  confint(fit)
}""",
    "dp_two_stage": """\
if (dpstats_available()) {
  set.seed(1)
  n <- 1000
  df <- data.frame(matrix(rnorm(n * 10), n))
  df$y <- 2 * df$X1 - 2 * df$X2 + rnorm(n)
  fit <- dp_two_stage(y ~ ., data = df, eps = 2, k = 2, bounds = c(-5, 5), seed = 1)
  fit
  tidy(fit)
}""",
    "dp_felp": """\
if (dpstats_available()) {
  # a two-class response driven by X1 and X2; the released feature weights and the top 2 by weight
  set.seed(1)
  n <- 2000
  df <- data.frame(matrix(rnorm(n * 6), n))
  df$y <- factor(df$X1 - df$X2 + rnorm(n, sd = 0.5) > 0)
  fit <- dp_felp(y ~ ., data = df, eps = 1, select = 2, bounds = c(-4, 4), seed = 1)
  fit  # 100 learners (one per 20 rows), each normalised to norm 1: X1 and X2 come first at eps = 1
  tidy(fit)
  # 5 learners: the noise s.d. per weight exceeds any weight; a ChanceWarning and print say so
  dp_felp(y ~ ., data = df, eps = 1, n_estimators = 5, select = 2, bounds = c(-4, 4), seed = 1)
}""",
    "vertical_glm": """\
if (dpstats_available()) {
  # party a holds wt, party b holds hp; without eps the fit is glm's (not private)
  fit <- vertical_glm(am ~ wt + hp, data = mtcars, parties = list(a = "wt", b = "hp"), family = binomial)
  summary(fit)
  coef(glm(am ~ wt + hp, family = binomial, data = mtcars))
}""",
}


# ----------------------------------------------------------------------- reading the sources
def r_functions(text: str) -> dict[str, str]:
    """Top-level ``name <- function(args)`` definitions of R source: name -> args (one line)."""
    out = {}
    for m in re.finditer(r"^([\w.]+) <- function\(", text, re.M):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        out[m.group(1)] = " ".join(text[m.end() : i - 1].split())
    return out


def r_signature(name: str) -> tuple[str, list[str]]:
    """The wrapper's usage line and formal argument names, read from r_wrapper/R/*.R."""
    for path in sorted(R_SOURCES.glob("*.R")):
        args = r_functions(path.read_text(encoding="utf-8")).get(name)
        if args is not None:
            return f"{name}({args})", [a.split("=")[0].strip() for a in _split_top(args)]
    raise SystemExit(f"no R function {name} in {R_SOURCES}")


def _split_top(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    return [a for a in (out + [cur]) if a.strip()]


def numpydoc(fn) -> tuple[str, str, dict[str, tuple[str, str]]]:
    """Title, description and {parameter: (type, text)} of a numpydoc docstring."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    title, _, rest = doc.partition("\n")
    sections = re.split(r"\n(\w[\w ]*)\n-{3,}\n", "\n" + rest)
    description = sections[0].strip()
    params: dict[str, tuple[str, str]] = {}
    for head, body in zip(sections[1::2], sections[2::2]):
        if head.strip() != "Parameters":
            continue
        for m in re.finditer(r"^(\S[^\n]*)\n((?:[ \t]+[^\n]*\n?|\n(?=[ \t]))*)", body, re.M):
            text = " ".join(m.group(2).split())
            # "a : T", "a, b : T" or "a : T1, b : T2"; a line with no " : " names its arguments only
            header = m.group(1) if " : " in m.group(1) else m.group(1) + " : "
            for names, kind in re.findall(r"([\w, ]+?) : (.*?)(?=, \w+ : |$)", header):
                for nm in names.split(","):
                    params[nm.strip()] = (kind.strip(), text)
    return title.strip(), description, params


def returns_text(fn) -> str:
    """The text of a numpydoc docstring's Returns section (its type line left out), one paragraph."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    sections = re.split(r"\n(\w[\w ]*)\n-{3,}\n", "\n" + doc.partition("\n")[2])
    for head, body in zip(sections[1::2], sections[2::2]):
        if head.strip() == "Returns":
            return " ".join(line.strip() for line in body.splitlines()[1:] if line.strip())
    return ""


# ----------------------------------------------------------------------- writing Rd
# Prose that names a Python type or class, in R's words (the R wrapper converts: a named vector or
# named list arrives as a dict, c(lo, hi) as a pair; an R user cannot build a dpstats.AutoBounds).
PROSE = (
    (r"names from a Series' index or a dict's keys", "names from a named vector or list"),
    (r" \(or an? :class:`(?:dpstats\.)?AutoBounds`\)", ""),
    (r":class:`~?(?:dpstats\.)?(?:errors\.)?NonPrivateWarning`", "``dpstats_non_private_warning``"),
    (r"\bNonPrivateWarning\b", "``dpstats_non_private_warning``"),
    (
        r":class:`~?(?:dpstats\.)?(?:errors\.)?ChanceWarning`|\b(?:errors\.)?ChanceWarning\b",
        "``dpstats_chance_warning``",
    ),
    (r"(?<![\w.`])\(lo, hi\)", "``c(lo, hi)``"),
    (r"\b(default to) \((-?[0-9.]+), (-?[0-9.]+)\)", r"\1 ``c(\2, \3)``"),
    (r"(?<=, )\((0), ([A-Z])\)(?=[;.,])", r"``c(\1, \2)``"),  # dp_glm's count bounds (0, Y)
    (r"[ \t]*\n?[ \t]*\(``tests/[\w/]+\.py``\)", ""),  # the Python test suite is not in the R package
    # a Python function an R user cannot call, cited for how a number is simulated; an Assume is a named list
    (r"; :func:`~?(?:dpstats\.)?simulate\.[\w.]+`\)", ")"),
    (r"``Assume\(", "``list("),
    # references R users cannot follow: the repository's docs, Python modules, classes and functions,
    # attributes of the Python result. R's help says it in words or points to what R has.
    (r"\s*\(``docs/[\w/]+\.md``(?:, \"[^\"]*\")?\)|\s*\(docs/[\w/]+\.md(?:, \"[^\"]*\")?\)", ""),
    (r"\s*Derivations:\s+:mod:`[^`]+`\.", ""),
    (r"\s*\((?:see |derivations(?:\s+in|:)\s+)?:(?:mod|func|meth|class|data):`~?(?:dpstats\.)?[\w.]+`\)", ""),
    (r",\s*:mod:`~?dpstats\.[\w.]+`(?=\))", ""),  # (``calibrated_estimates``, :mod:`dpstats.methods.lm`)
    (r"\s*Sensitivities:\s+:func:`[^`]+`\s+and\s+:func:`[^`]+`\.", ""),
    (
        r"\(:mod:`~?dpstats\.schema`, which also says which types\s+are declared by themselves and why reading "
        r"levels from the rows is a named step\)",
        "(reading the levels from the rows instead is a data-dependent step, named in the privacy statement)",
    ),
    (
        r"\s*\(derive it with\s+:func:`~?dpstats\.(?:methods\.bh\.)?eta_two_sided_z` for z-tests on bounded data\)",
        " (derive it from a public bound on how far one row can move each test statistic; for a formula it is derived)",
    ),
    (r"\s*\(``eta_two_sided_z\([^`]*\)``\)", ""),
    (
        r"so η = eta_two_sided_z\(Δz, ν\) is\s+derived",
        "so η, the largest change of the log p-value of a\n"
        "two-sided z-test whose statistic moves by at most Δz (p-values truncated at ν), is derived",
    ),
    (r"\(:class:`~?(?:dpstats\.)?SessionPlan`, composed by PLD\)", "(composed by PLD)"),
    (r",? planned through :data:`AUTO_BOUNDS`", ""),
    (
        r"\s*\(``dpstats\.privacy\.randomness\.snapped_l2_laplace``\); seeded, numpy\s+draws it",
        "; seeded, a seeded generator draws it",
    ),
    (
        r"matrix is kept in ``result\.knockoffs_nonprivate`` \(not private\)",
        "matrix is kept with the Python result only (it is not private, and R's fit does not carry it)",
    ),
    (
        r"``result\.collapsed`` lists such components, a :class:`~?(?:dpstats\.)?(?:errors\.)?DataWarning` is raised",
        "``fit$outputs$collapsed`` lists such components, a ``dpstats_data_warning`` is raised",
    ),
    (r"\(privreg: ", "(the reference implementation's: "),
    (r"\(privreg; ", "("),
    # a pointer to the Python module's docstring, which R's help does not show
    (r",\s*module docstring\)", ")"),
    (r"\bto_dict\b", "the result's fields"),
    (r"\bas at the front door\b", "as the method takes it"),
    (r"\b([Tt])he front doors'", r"\1he methods'"),
    (r"\b([Tt])he front door\b", r"\1he method"),
    (r"\bfront doors?\b", "method"),
    (r"\b(default|paper's) \((-?[0-9.]+(?:, -?[0-9.]+)+)\)", r"\1 ``c(\2)``"),
    (r"\ba dict\b", "a named list"),
    (r"\bdicts?\b", "named list"),
    (r"\ba tuple\b", "a vector"),
)


def rd_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("{", "\\{").replace("}", "\\}")


def rd_text(text: str) -> str:
    """Docstring prose (reST, Python words) as Rd text in R's words: code spans through :func:`r_code`
    (Python literals as R's), the rest escaped for Rd."""
    selectors = list(dpstats.privacy.SELECTORS)  # the top-k selectors by the names R passes
    text = text.replace(
        "one of ``dpstats.privacy.SELECTORS``",
        "one of " + ", ".join(f'``"{n}"``' for n in selectors[:-1]) + f' or ``"{selectors[-1]}"``',
    )
    for pattern, replacement in PROSE:
        text = re.sub(pattern, replacement, text)
    parts = re.split(r"(``[^`]+``)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append("\\code{" + rd_escape(r_code(part[2:-2])) + "}")
            continue
        part = rd_escape(part)
        part = re.sub(r":(?:func|class|mod|meth|attr):`~?(?:dpstats\.)?([^`]+)`", r"\\code{\1}", part)
        part = re.sub(r"\*\*([^*]+)\*\*", r"\\strong{\1}", part)
        out.append(re.sub(r"\brandom_state\b", "seed", re.sub(r"\bmath\.inf\b", "Inf", part)))
    return "".join(out)


def r_code(code: str) -> str:
    """A code span in R's spelling: Python literals (dicts, lists, tuples, strings, True/False/None)
    as R's (``list(city = c("Leeds", "York"))``, ``c(0, 1)``), a formula string as a formula,
    ``name = value``, seed."""
    literal = r_literal(code)
    if literal is not None:
        return literal
    keyword = re.fullmatch(r"(\w+)\s*=\s*(.+)", code)
    if keyword and (literal := r_literal(keyword.group(2))) is not None:
        return f"{r_spelling(keyword.group(1))} = {literal}"
    return r_spelling(code)


def r_spelling(code: str) -> str:
    """Code in R's spelling, word by word: TRUE/FALSE/NULL/Inf, ``name = value``, seed."""
    code = re.sub(r"\bmath\.inf\b|(?<![\w.])inf\b", "Inf", code)
    for py, r in (("True", "TRUE"), ("False", "FALSE"), ("None", "NULL"), ("random_state", "seed")):
        code = re.sub(rf"\b{py}\b", r, code)
    code = re.sub(r'"([^"]*~[^"]*)"', r"\1", code)  # a formula string inside code: the formula R users write
    return re.sub(r"(\w)=(?!=)", r"\1 = ", code)


def r_literal(code: str) -> str | None:
    """A Python literal written as R code, or None when ``code`` is not a literal. A string holding a
    formula (``"y ~ ."``) is the formula R users write."""
    try:
        value = ast.literal_eval(code.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, str) and "~" in value:
        return value
    return r_value(value) if _plain(value) else None


def _plain(value) -> bool:
    """Values :func:`r_value` writes as R code: scalars, and lists, tuples and dicts of them."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in value.items())
    return value is None or value is Ellipsis or isinstance(value, (bool, int, float, str))


def _r_name(key) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z.][A-Za-z0-9._]*", key) else f"`{key}`"


def r_value(value) -> str:
    """A Python default as R code."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isinf(value):
            return "Inf" if value > 0 else "-Inf"
        return f"{value:g}"
    if isinstance(value, (int, str)):
        return f'"{value}"' if isinstance(value, str) else str(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, dict):
        return "list(" + ", ".join(f"{_r_name(k)} = {r_value(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (tuple, list)):
        nested = any(isinstance(v, (tuple, list, dict)) for v in value)
        return ("list(" if nested else "c(") + ", ".join(r_value(v) for v in value) + ")"
    return rd_text(repr(value))


# The planner's models are Python classes an R user cannot build (dpstats.simulate.Assume, FanLv,
# GLMModel, ...): from R, assume is a named list, read as the fields of the one model each method's planner
# makes of a list. The page writes each model as that list, from the class's fields and defaults.
def _r_model(cls, model: str | None = None) -> str:
    fields = [f'model = "{model}"'] if model else []
    for f in dataclasses.fields(cls):
        fields.append(f.name if f.default is dataclasses.MISSING else f"{f.name} = {r_value(f.default)}")
    return "``list(" + ", ".join(fields) + ")``"


def r_assume(text: str) -> str:
    """dp_plan's ``assume`` in R's words: each model as the named list R users pass."""
    from dpstats.planner import models
    from dpstats.simulate import Assume

    assume = _r_model(Assume)
    rewrites = (
        (
            "The stated model of the data, printed with every number.",
            "The stated model of the data, printed with every number: a named list of the model's fields, "
            "where a field shown with a value may be left out (it keeps that default).",
        ),
        (
            ":class:`dpstats.simulate.Assume` or :class:`FanLv`",
            f"{assume} or {_r_model(models.FanLv, 'fan_lv')}",
        ),
        (":class:`KnockoffModel` or an uncorrelated Assume", _r_model(models.KnockoffModel)),
        (":class:`MixtureModel` or a dict of its fields", _r_model(models.MixtureModel)),
        (":class:`FelpModel` or a dict of its fields", _r_model(models.FelpModel)),
        ("vertical_glm, dp_lm: an Assume", f"vertical_glm, dp_lm: {assume}"),
        (":class:`GLMModel` or a dict of its fields", _r_model(models.GLMModel)),
        (", or an Assume (its signals, strength, correlation and bound_sds)", ""),
    )
    for python, r in rewrites:
        if python not in text:
            raise SystemExit(f"dp_plan's assume: the docstring no longer says {python!r}; update r_assume")
        text = text.replace(python, r)
    return text


def describe(
    name: str, params: dict, sig: inspect.Signature, *, inner: bool, together: dict[str, str] | None = None
) -> str:
    """The Rd text of argument ``name``. ``together`` maps a docstring entry's text to the first argument
    of the page that showed it: an entry written for several arguments at once (``eps, delta : float``)
    is printed with the first of them, and the others point to it rather than repeat the paragraph."""
    kind, text = params.get(name, ("", ""))
    if together is not None and text and not text.startswith("See docs/"):
        if text in together:
            return f"see \\code{{{together[text]}}} above: its description covers this argument too."
        together[text] = name
    text = rd_text(text) if text and not text.startswith("See docs/") else COMMON.get(name, "")
    choices = re.match(r"\{([^{}]*)\}", kind)  # '{"fill", "omit"}, optional': the choices alone
    one_of = f"one of {r_spelling(rd_text(choices.group(1)))}" if choices else ""
    if not text and kind:
        text = one_of or rd_text(kind)
    elif one_of:
        text = f"{one_of}. {text}"
    if not text:
        raise SystemExit(f"{name}: no description in the docstring and none in COMMON")
    p = sig.parameters.get(name)
    if inner and p is not None and p.default is not inspect.Parameter.empty:
        text = f"(default \\code{{{r_value(p.default)}}}) {text}"
    return text


def inner_text(p: str, params: dict, sig, together: dict) -> str:
    """An argument passed through ``...``: its docstring text (na_action's made true for the door)."""
    text = describe(p, params, sig, inner=True, together=together)
    return na_action_text(text, params) if p == "na_action" else text


def page(r_name: str, py_name: str) -> str:
    fn = getattr(dpstats, py_name)
    sig = inspect.signature(fn)
    title, description, params = numpydoc(fn)
    usage, formals = r_signature(r_name)
    items = []
    together: dict[str, str] = {}
    for arg in formals:
        if arg == "...":
            passed = [p for p in sig.parameters if p not in formals and p != "random_state"]
            inner = "\n".join(
                f"    \\item{{\\code{{{p}}}}}{{{inner_text(p, params, sig, together)}}}" for p in passed
            )
            items.append(
                f"\\item{{...}}{{further arguments, each by its name:\n  \\describe{{\n{inner}\n  }}}}"
            )
        elif arg in R_ARGUMENTS:
            text = R_ARGUMENTS[arg]
            if arg == "formula" and params.get(arg, ("", ""))[1].startswith("One-sided"):  # dp_gmm, dp_pca
                text = text.replace("\\code{y ~ .}", "\\code{~ .} (one-sided: no response)")
            if arg == "data":
                text = data_text(r_name, params)
            items.append(f"\\item{{{arg}}}{{{text}}}")
        elif r_name == "dp_plan" and arg == "assume":
            kind, text = params["assume"]
            items.append(
                f"\\item{{{arg}}}{{{describe(arg, {arg: (kind, r_assume(text))}, sig, inner=False)}}}"
            )
        else:
            items.append(f"\\item{{{arg}}}{{{describe(arg, params, sig, inner=False, together=together)}}}")
    klass = "dp_plan" if r_name == "dp_plan" else f'c("{"dp_" + r_name.removeprefix("dp_")}", "dp_result")'
    value = (
        f"An object of class \\code{{{klass}}}: \\code{{print}}, \\code{{summary}}, \\code{{tidy}}, "
        "\\code{glance}, \\code{report}; see \\code{\\link{dp_result}}."
    )
    if r_name in RETURNS_IN_HELP:  # what the Python docstring says of the result's tables
        value += " " + rd_text(returns_text(fn))
    out = [
        "% Generated by scripts/make_r_docs.py from the Python docstring of "
        f"dpstats.{py_name}: edit the docstring, not this file.",
        f"\\name{{{r_name}}}",
        f"\\alias{{{r_name}}}",
        f"\\title{{{rd_text(title.rstrip('.'))}}}",
        f"\\description{{\n{rd_text(description or title)}\n}}",
        f"\\usage{{\n{usage}\n}}",
        "\\arguments{\n" + "\n".join(items) + "\n}",
        f"\\value{{\n{value}\n}}",
    ]
    if r_name == "dp_bh":  # p-values, not a data frame: lm's subset/weights/contrasts do not apply
        out.append(f"\\details{{\n{CONDITIONS}\n}}")
    elif r_name != "dp_plan":
        lm_details = LM_DETAILS.replace("{subset_where}", subset_text(r_name, params))
        out.append(f"\\details{{\n{lm_details}{CONDITIONS}\n}}")
    if r_name in EXAMPLES:
        out.append(f"\\examples{{\n{EXAMPLES[r_name]}\n}}")
    return "\n".join(out) + "\n"


REQUIRED = ROOT / "r_wrapper" / "R" / "required.R"


def required_arguments() -> str:
    """``r_wrapper/R/required.R``: each wrapped function's arguments without a default, read from the
    Python signature (R refuses a missing one with R's own words before Python is called), and the
    functions that offer ``neighbouring = "replace"`` only (R's refusal of ``subset =`` in a private fit
    names ``"add_remove"`` only where it is offered)."""
    lines, only = [], []
    for r_name, py_name in dpstats.catalog.r_functions().items():
        fn = getattr(dpstats, py_name)
        params = inspect.signature(fn).parameters.items()
        names = ", ".join(f'"{n}"' for n, par in params if par.default is par.empty)
        lines.append(f"  {r_name} = c({names})")
        if private_replace_only(numpydoc(fn)[2]):
            only.append(f'"{r_name}"')
    return (
        "# Generated by scripts/make_r_docs.py from dpstats/catalog.py and the Python signatures: do not edit.\n"
        "# The arguments each wrapper needs (those without a default in Python).\n"
        ".required <- list(\n" + ",\n".join(lines) + "\n)\n\n"
        '# The wrappers whose method offers neighbouring = "replace" only (its docstring\'s neighbouring type).\n'
        f".replace_only <- c({', '.join(only)})\n"
    )


DOORS = R_SOURCES / "doors.R"


def hand_written() -> set[str]:
    """The functions ``r_wrapper/R/*.R`` defines by hand (every file but the generated ``doors.R``)."""
    names: set[str] = set()
    for path in sorted(R_SOURCES.glob("*.R")):
        if path != DOORS:
            names.update(r_functions(path.read_text(encoding="utf-8")))
    return names


def leading_formals(signature: inspect.Signature) -> dict[str, str | None]:
    """The leading positional parameters that are required (value ``None``) or default to ``None``
    (value ``"NULL"``), up to the first other one."""
    out: dict[str, str | None] = {}
    for p in signature.parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD or p.default not in (p.empty, None):
            break
        out[p.name] = None if p.default is p.empty else "NULL"
    return out


def default_wrappers() -> str:
    """``r_wrapper/R/doors.R``: a wrapper for each of the catalog's R functions without one written by hand.

    Its formals are the Python function's leading positional arguments without a default or with the
    default ``None`` (R's ``NULL``: dp_pca's delta, needed only at finite eps), in order (so that R calls
    them positionally as Python does), then ``...`` (every other argument, by its Python name) and ``seed``
    (Python's ``random_state``); ``.dp_fit`` does the rest, as for the hand-written wrappers of
    ``methods.R``."""
    out = [
        "# Generated by scripts/make_r_docs.py from dpstats/catalog.py and the Python signatures: do not edit.",
        "# The wrapper of each method the catalog gives an R function that no other file of R/ defines:",
        "# its leading positional arguments (required, or NULL by default), then `...` (the others, by their",
        "# Python names) and seed.",
    ]
    hand = hand_written()
    for r_name, py_name in dpstats.catalog.r_functions().items():
        if r_name in hand:
            continue
        formals = leading_formals(inspect.signature(getattr(dpstats, py_name)))
        quoted = ", ".join(f'"{name}"' for name in formals)
        written = [name if default is None else f"{name} = {default}" for name, default in formals.items()]
        out += [
            "",
            f"{r_name} <- function({', '.join(written)}, ..., seed = NULL) {{",
            f'  .dp_fit("{py_name}", match.call(), environment(), c({quoted}), parent.frame())',
            "}",
        ]
    return "\n".join(out) + "\n"


NAMESPACE = ROOT / "r_wrapper" / "NAMESPACE"
EXPORTS_START = (
    "# the analysis functions: generated by scripts/make_r_docs.py from dpstats/catalog.py; do not edit"
)
EXPORTS_END = "# end of the generated exports"


def namespace() -> str:
    """``r_wrapper/NAMESPACE`` with its block of the catalog's R functions' exports rewritten (the rest,
    the helpers and S3 methods, is written by hand)."""
    text = NAMESPACE.read_text(encoding="utf-8")
    start, end = text.index(EXPORTS_START), text.index(EXPORTS_END)
    exports = "".join(f"export({name})\n" for name in dpstats.catalog.r_functions())
    return text[:start] + EXPORTS_START + "\n" + exports + text[end:]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    outputs = [
        (MAN / f"{r_name}.Rd", lambda r=r_name, p=py_name: page(r, p))
        for r_name, py_name in FUNCTIONS.items()
    ]
    generated = [(DOORS, default_wrappers), (REQUIRED, required_arguments), (NAMESPACE, namespace)]
    for path, make in generated + outputs:  # the wrappers first: each page reads its wrapper's signature
        text = make()
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python scripts/make_r_docs.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
