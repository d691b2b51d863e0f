"""R functions in formulas: arguments, errors that say what to do, offsets, and privacy.

Values are checked against R in ``test_formula_r_datasets.py``; this module
checks what R cannot: which terms are data-dependent steps (named in the
privacy statement, warned, refused under ``strict=True`` before any budget is
spent), ``offset()`` refused by the selection methods, and the errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DataWarning, FormulaError, NonPrivateWarning, PrivacyParameterError
from dpstats.formula import chunk_unsafe_terms, model_frame, refuse_offset


@pytest.fixture
def df():
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{i}" for i in range(1, 7)])
    frame["y"] = 0.8 * frame.x1 - 0.5 * frame.x2 + rng.normal(size=n)
    frame["a.b"] = rng.uniform(1, 3, size=n)
    frame["f"] = pd.Categorical(rng.choice(["u", "v", "w"], size=n))
    return frame


DATA_DEPENDENT = [
    ("scale(x1)", "scale(x1)"),
    ("poly(x1, 2)", "poly(x1, 2)"),
    ("splines::ns(x1, df = 3)", "ns(x1, df = 3)"),
    ("splines::bs(x1)", "bs(x1)"),
    ("splines::ns(x1, knots = 0)", "ns(x1, knots = 0)"),
    ("I(x1 - mean(x1))", "mean(x1)"),
    ("scale(x1, center = FALSE)", "scale(x1, center = FALSE)"),
    ("cut(x1, breaks = 3)", "cut(x1, breaks = 3)"),
    ("poly(x1, a.b, degree = 2)", "poly(x1, a.b, degree = 2)"),
]
ROW_WISE = [
    "poly(x1, 2, raw = TRUE)",
    "splines::ns(x1, knots = 0, Boundary.knots = c(-4, 4))",
    "splines::bs(x1, knots = c(-1, 1), Boundary.knots = c(-4, 4))",
    "scale(x1, center = 1, scale = 2)",
    "splines::ns(x1, Boundary.knots = c(-4, 4))",
    "log(a.b, base = 2)",
    "C(f, contr.sum)",
    "cut(x1, breaks = c(-5, 0, 5))",
    "cut(x1, c(-5, 0, 5), labels = FALSE)",
    "pmin(x1, 2) + pmax(x1, x2, -1)",
    "ifelse(x1 > 0, x1, 0)",
    "interaction(f, C(f, sum))",
    "poly(x1, a.b, degree = 2, raw = TRUE)",
    "C(f, contr.treatment(3, base = 2))",
    'factor(f, levels = c("u", "v", "w"), labels = c("a", "b", "b"))',
]


@pytest.mark.parametrize(("term", "named"), DATA_DEPENDENT)
def test_terms_from_the_data_as_a_whole_are_recorded(df, term, named):
    mf = model_frame(f"y ~ {term} + x2", df)
    ((step, fix),) = mf.data_dependent_terms
    assert named in step and fix


@pytest.mark.parametrize("term", ROW_WISE)
def test_row_wise_terms_are_not_data_dependent(df, term):
    assert model_frame(f"y ~ {term} + x2", df).data_dependent_terms == []


def test_the_textbook_iris_formula_and_dotted_names(df):
    mf = model_frame("y ~ x1 * f + log(a.b + 5) + I(a.b^2)", df)
    assert mf.names == ["(Intercept)", "x1", "fv", "fw", "log(a.b + 5)", "I(a.b^2)", "x1:fv", "x1:fw"]
    np.testing.assert_allclose(mf.X[:, 4], np.log(df["a.b"] + 5))


def test_keyword_arguments_are_arguments_not_columns(df):
    mf = model_frame("y ~ log(a.b, base = 2) + poly(x1, degree = 2, raw = TRUE)", df)
    assert mf.names == [
        "(Intercept)",
        "log(a.b, base = 2)",
        "poly(x1, degree = 2, raw = TRUE)1",
        "poly(x1, degree = 2, raw = TRUE)2",
    ]
    np.testing.assert_allclose(mf.X[:, 1], np.log2(df["a.b"]))
    assert mf.variables == ["y", "a.b", "x1"]


def test_offset_is_recorded_outside_the_design(df):
    mf = model_frame("y ~ x1 + offset(log(a.b)) + offset(x2)", df)
    assert mf.names == ["(Intercept)", "x1"]
    np.testing.assert_allclose(mf.offset, np.log(df["a.b"]) + df["x2"])
    with pytest.raises(FormulaError, match="dp_sis does not support offset"):
        refuse_offset(mf, "dp_sis")
    assert model_frame("y ~ x1", df).offset is None


def test_selection_methods_refuse_offset_by_name(df):
    with pytest.raises(FormulaError, match="dp_sis does not support offset.*vertical_glm"):
        dp.dp_sis("y ~ . + offset(x6)", data=df.drop(columns=["f"]), eps=1.0, k=2, bounds=(-5, 5))
    with pytest.raises(FormulaError, match="dp_knockoff does not support offset"):
        dp.dp_knockoff("y ~ x1 + x2 + x3 + offset(x6)", df, eps=0.5, delta=1e-5, bounds=12.0)


@pytest.mark.parametrize(
    "formula, message",
    [
        ("y ~ center(x1)", r"function 'center\(\)'.*not supported.*Supported functions: I\(\), log\(\)"),
        ("y ~ cummax(x1)", r"function 'cummax\(\)'.*not supported.*poly\(\).*ns\(\)"),
        ("y ~ x1 + x9", r"column 'x9'.*not in the data.*Did you mean"),
        ("y ~ log(x1, bas = 2)", r"log\(\) has no argument 'bas'.*x, base"),
        ("y ~ poly(x1, x2, degree = 2, coefs = 1)", r"coefs= is not supported.*raw = TRUE"),
        ("y ~ C(f, contr.foo)", r"contrasts must be one of contr.treatment"),
        # the levels are not listed: they may have been read from the rows (issue 26)
        ('y ~ relevel(f, ref = "z")', r"'z' is not a level of the factor; give one of its declared levels"),
        ("y ~ x1 + (x2", r"expected '\)'"),
        ("y ~ df$x1", r"'\$'.*name the column directly"),
        ("y ~ x1 + 2", r"'2'.*is not a term"),
        ("y ~ stats4::foo(x1)", r"only base, stats and splines"),
    ],
)
def test_errors_name_the_problem_and_the_fix(df, formula, message):
    with pytest.raises(FormulaError, match=message):
        model_frame(formula, df)


def test_chunked_engines_refuse_exactly_the_terms_that_need_all_rows():
    cols = ["y", "x", "g"]
    assert chunk_unsafe_terms("y ~ scale(x) + poly(x, 2) + splines::ns(x, df = 3) + mean(x)", cols) == [
        "scale(x)",
        "poly(x, 2)",
        "splines::ns(x, df = 3)",
        "mean(x)",
    ]
    assert (
        chunk_unsafe_terms(
            "y ~ poly(x, 2, raw = TRUE) + ns(x, knots = 1, Boundary.knots = c(0, 2)) "
            '+ factor(g, levels = c("a", "b")) + log(x)',
            cols,
        )
        == []
    )


def test_chunked_engines_refuse_cut_by_count_text_ifelse_and_interaction():
    cols = ["y", "x", "g", "h"]
    unsafe = chunk_unsafe_terms(
        "y ~ cut(x, 3) + cut(x, breaks = c(0, 1, 2)) + ifelse(x > 1, 'a', 'b') + ifelse(x > 1, x, 0) "
        "+ interaction(g, h) + pmin(x, 2)",
        cols,
    )
    assert unsafe == ["cut(x, 3)", 'ifelse(x > 1, "a", "b")', "interaction(g, h)"]


# ---------------------------------------------------------------- front doors
def test_strict_refuses_cut_with_a_number_of_breaks_before_spending(df):
    acc = dp.Accountant(eps=5)
    with pytest.raises(PrivacyParameterError, match=r"strict=True refuses.*cut\(x1, breaks = 3\)"):
        dp.dp_lm("y ~ cut(x1, breaks = 3) + x2", df, eps=1.0, bounds=(-5, 5), strict=True, accountant=acc)
    assert acc.spent_eps == 0
    with pytest.warns(NonPrivateWarning, match=r"cut\(x1, breaks = 3\)"):
        dp.dp_lm("y ~ cut(x1, breaks = 3) + x2", df, eps=1.0, bounds=(-5, 5), random_state=0)
    ok = dp.dp_lm(
        "y ~ cut(x1, breaks = c(-5, 0, 5)) + pmin(x2, 1)",
        df,
        eps=1.0,
        bounds=(-5, 5),
        strict=True,
        random_state=0,
    )
    assert ok.privacy.data_dependent_steps == []


def test_dp_sis_names_warns_and_strict_refuses_scale(df):
    data = df.drop(columns=["f"])
    with pytest.warns(NonPrivateWarning, match=r"scale\(x1\)"):
        fit = dp.dp_sis(
            "y ~ scale(x1) + x2 + x3 + x4",
            data=data,
            eps=1.0,
            k=2,
            bounds=(-5, 5),
            random_state=0,
            oc_trials=0,
        )
    assert any("scale(x1)" in s for s in fit.privacy.data_dependent_steps)
    acc = dp.Accountant(eps=5)
    with pytest.raises(PrivacyParameterError, match=r"strict=True refuses.*scale\(x1\)"):
        dp.dp_sis(
            "y ~ scale(x1) + x2 + x3 + x4",
            data=data,
            eps=1.0,
            k=2,
            bounds=(-5, 5),
            strict=True,
            accountant=acc,
        )
    assert acc.spent_eps == 0
    ok = dp.dp_sis(
        "y ~ poly(x1, 2, raw = TRUE) + x2 + x3",
        data=data,
        eps=1.0,
        k=2,
        bounds=(-30, 30),
        strict=True,
        random_state=0,
        oc_trials=0,
    )
    assert ok.privacy.data_dependent_steps == []


def test_dp_knockoff_strict_refuses_orthogonal_poly_before_spending(df):
    acc = dp.Accountant(eps=1.0, delta=1e-3)
    with pytest.raises(PrivacyParameterError, match=r"strict=True refuses.*poly\(x1, 2\)"):
        dp.dp_knockoff(
            "y ~ poly(x1, 2) + x2 + x3 + x4",
            df,
            eps=0.5,
            delta=1e-4,
            bounds=12.0,
            sigma=1.0,
            beta_norm=1.5,
            c_min=150.0,
            lambda_min=0.5,
            strict=True,
            accountant=acc,
        )
    assert acc.spent_eps == 0 and acc.spent_delta == 0


def test_vertical_glm_names_warns_and_strict_refuses_spline_knots(df):
    parties = [["x1", "x2"], ["x3", "x4"]]
    formula = "y ~ splines::ns(x1, df = 3) + x2 + x3 + x4"
    with pytest.warns(NonPrivateWarning, match=r"ns\(x1, df = 3\).*quantiles"):
        fit = dp.vertical_glm(formula, df, parties=parties)
    assert any("ns(x1, df = 3)" in s for s in fit.privacy.data_dependent_steps)
    with pytest.raises(PrivacyParameterError, match=r"strict=True refuses.*ns\(x1, df = 3\)"):
        dp.vertical_glm(formula, df, parties=parties, strict=True)


# --------------------------------------------------------------------------- issue 28: R users' functions
@pytest.mark.parametrize(
    ("term", "named"),
    [
        ('ifelse(x1 > 0, "up", "down")', 'ifelse(x1 > 0, "up", "down")'),
        ("interaction(f, x1 > 0)", "interaction(f, x1 > 0)"),
        ("interaction(f, f, drop = TRUE)", "drop = TRUE"),
        ('factor(f, labels = c("a", "b", "c"))', "factor(f"),
    ],
)
def test_levels_made_from_the_rows_are_schema_steps(df, term, named):
    """Text or levels a term reads from the rows are named like factor() without levels=: a schema
    step (public levels: declared breaks, declared levels, or this named step)."""
    from dpstats.schema import Schema

    mf = model_frame(f"y ~ {term} + x2", df, schema=Schema.declare(bounds=(-5, 5)), check_constant=False)
    assert any(named in step for step, _ in mf.schema_steps), mf.schema_steps
    assert mf.data_dependent_terms == []


def test_cut_names_its_levels_as_r_and_keeps_empty_intervals(df):
    mf = model_frame("y ~ cut(x1, breaks = c(-100, -50, -40, 1000))", df, check_constant=False)
    assert mf.names == [
        "(Intercept)",
        "cut(x1, breaks = c(-100, -50, -40, 1000))(-50,-40]",
        "cut(x1, breaks = c(-100, -50, -40, 1000))(-40,1e+03]",
    ]
    assert not mf.X[:, 1].any()  # no row in (-50, -40]: the declared level keeps its column, as in R


@pytest.mark.parametrize(
    "formula, message",
    [
        ("cbind(x1, x2) ~ x3", r"cbind\(x1, x2\)' on the left.*one row per trial with a 0/1 response"),
        ("y ~ cbind(x1, x2)", r"cbind\(\) is not supported as a term.*a \+ b"),
        ("y ~ cut(x1, breaks = c(0, 1, 1))", r"breaks are not unique"),
        ("y ~ cut(x1)", r"cut\(\) needs breaks"),
        ('y ~ cut(x1, c(0, 1, 2), labels = c("a"))', r"1 label\(s\) for 2 interval\(s\)"),
        ("y ~ ifelse(x1 > 0, f, f)", r"ifelse\(\) of factor values gives their integer codes"),
        ("y ~ C(f, contr.sum(4))", r"contrasts of C\(f, contr.sum\(4\)\) have 4 rows"),
        ("y ~ C(f, contr.treatment(3, base = 5))", r"base = 5 must be between 1"),
        ("y ~ C(f, contr.poly(3)[, 1])", r"unexpected '\['"),
        ('y ~ factor(f, labels = c("a", "b"))', r"labels= must give one label per level"),
        ("y ~ pmin(x1, na.rm = TRUE)", r"x1"),
    ],
)
def test_r_functions_refuse_with_the_function_and_a_fix(df, formula, message):
    if formula == "y ~ pmin(x1, na.rm = TRUE)":  # one argument: itself, as in R
        np.testing.assert_allclose(model_frame(formula, df).X[:, 1], df["x1"])
        return
    with pytest.raises(FormulaError, match=message):
        model_frame(formula, df)


def test_interaction_refuses_level_names_that_collide():
    d = pd.DataFrame(
        {
            "y": [1.0, 2, 3, 4],
            "a": pd.Categorical(["a", "a.b"] * 2),
            "b": pd.Categorical(["b.c", "c", "c", "b.c"]),
        }
    )
    with pytest.raises(FormulaError, match=r"same level name.*sep"):
        model_frame("y ~ interaction(a, b)", d)
    assert model_frame("y ~ interaction(a, b, sep = ':')", d).names[1:] == [
        'interaction(a, b, sep = ":")a.b:b.c',
        'interaction(a, b, sep = ":")a:c',
        'interaction(a, b, sep = ":")a.b:c',
    ]


def test_contrasts_argument_and_default_option(df):
    """R's lm(contrasts = list(f = ...)) and options(contrasts =): names, matrices, and their errors."""
    sum_ = model_frame("y ~ f", df, contrasts={"f": "contr.sum"})
    assert sum_.names == ["(Intercept)", "f1", "f2"]
    # kept on the frame, so that a fit can code new data the same way
    assert sum_.contrasts == {"f": "contr.sum"} and sum_.default_contrasts == (
        "contr.treatment",
        "contr.poly",
    )
    again = model_frame(
        "y ~ f", df.iloc[:5], contrasts=sum_.contrasts, default_contrasts=sum_.default_contrasts
    )
    np.testing.assert_array_equal(again.X, sum_.X[:5])
    assert sum_.X[df["f"].to_numpy() == "w"][:, 1:].tolist()[0] == [-1.0, -1.0]
    m = pd.DataFrame([[0.5, 0], [0, 1], [-0.5, -1]], index=["w", "u", "v"], columns=["A", "B"])
    named = model_frame("y ~ f", df, contrasts={"f": m})  # rows named by the levels: matched by name
    assert named.names == ["(Intercept)", "fA", "fB"]
    assert named.X[df["f"].to_numpy() == "u"][0, 1:].tolist() == [0.0, 1.0]
    df.attrs["contrasts"] = {"f": "contr.helmert"}  # what the R package sends for contrasts(f) <- ...
    assert model_frame("y ~ f", df).X[df["f"].to_numpy() == "w"][0, 1:].tolist() == [0.0, 2.0]
    df.attrs = {}
    assert model_frame("y ~ f", df, default_contrasts=("contr.SAS", "contr.poly")).names == [
        "(Intercept)",
        "fu",
        "fv",
    ]
    with pytest.raises(FormulaError, match=r"options\(contrasts =\): contrasts 'contr.sdif' are not one"):
        model_frame("y ~ f", df, default_contrasts=["contr.sdif", "contr.poly"])
    with pytest.raises(FormulaError, match=r"'x1', which is numeric.*factor\(x1\)"):
        model_frame("y ~ x1 + f", df, contrasts={"x1": "contr.sum"})
    one = model_frame("y ~ f", df, contrasts={"f": [[1.0], [0.0], [-1.0]]})  # as R: one column, as given
    assert one.names == ["(Intercept)", "f1"]
    with pytest.raises(FormulaError, match=r"2 column\(s\), fewer than the 3 asked for.*how.many"):
        model_frame("y ~ C(f, contr.sum(3), 3)", df)
    with pytest.warns(DataWarning, match="variable 'g' is absent"):
        model_frame("y ~ f", df, contrasts={"g": "contr.sum"})


def test_factor_column_ranges_come_from_the_contrasts_not_the_rows(df):
    mf = model_frame("y ~ C(f, sum) * x1 + C(f, helmert):C(f, sum)", df)
    r = mf.factor_column_ranges
    assert r["C(f, sum)1"] == (-1.0, 1.0) and "C(f, sum)1:x1" not in r
    assert r["C(f, sum)w:C(f, helmert)2"] == (-1.0, 2.0)  # an indicator times a Helmert column
    assert model_frame("y ~ f", df).factor_column_ranges == {"fv": (0.0, 1.0), "fw": (0.0, 1.0)}


def test_dp_lm_keeps_sum_contrasts_under_declared_bounds():
    """A contr.sum column ranges over (-1, 1) by its coding: declared bounds do not clip its -1 to 0."""
    import warnings

    rng = np.random.default_rng(1)
    d = pd.DataFrame({"y": rng.normal(5, 1, 3000), "g": pd.Categorical(rng.choice(list("abc"), 3000))})
    d.loc[d.g == "c", "y"] += 2
    d.attrs["contrasts"] = {"g": "contr.sum"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = dp.dp_lm("y ~ g", d, eps=float("inf")).coef().to_numpy()
        private = dp.dp_lm("y ~ g", d, eps=1e4, bounds={"y": (0, 10)}, random_state=1).coef().to_numpy()
    np.testing.assert_allclose(private, exact, atol=0.1)


def test_predict_uses_the_fits_contrasts():
    """Predictions of a full-rank lm do not depend on the coding: a fit under contr.sum predicts
    new rows (which carry no contrasts of their own) as the treatment fit and statsmodels do."""
    import warnings

    import statsmodels.formula.api as smf

    rng = np.random.default_rng(4)
    d = pd.DataFrame({"g": pd.Categorical(rng.choice(list("abc"), 200)), "x": rng.normal(size=200)})
    d["y"] = 1 + d.x + (d.g == "c") * 2 + rng.normal(size=200)
    coded = d.copy()
    coded.attrs["contrasts"] = {"g": "contr.sum"}
    new = pd.DataFrame({"g": pd.Categorical(["a", "c", "b"], categories=list("abc")), "x": [0.0, 1.0, -1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        treatment = dp.dp_lm("y ~ g + x", d, eps=float("inf")).predict(new)
        fit = dp.dp_lm("y ~ g + x", coded, eps=float("inf"))
    assert any(":" not in nm and nm.startswith("g") and nm.endswith("1") for nm in fit.terms)  # sum coding
    oracle = smf.ols("y ~ g + x", d).fit().predict(new).to_numpy()
    np.testing.assert_allclose(np.asarray(fit.predict(new), float), oracle, rtol=1e-8)
    np.testing.assert_allclose(np.asarray(treatment, float), oracle, rtol=1e-8)
