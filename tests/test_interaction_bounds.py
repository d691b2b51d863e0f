"""Bounds of interaction columns derived from public inputs (docs/architecture.md, "Privacy conventions").

A design column of an interaction is the elementwise product of its parts' columns (R's
``model.matrix``), so with a public bound for every part -- a numeric variable's declared (lo, hi),
a factor coding's range -- its bound is the product of their intervals. Checked against R's
``model.matrix`` through rpy2 on data spanning the corners of the declared box (every column lies
in the derived box, and the box is attained there), then through every door that takes per-column
bounds, and on neighbouring data sets.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ChanceWarning
from dpstats.formula import model_frame
from dpstats.geometry import derived_bounds, product_interval, resolve_box
from dpstats.privacy.bounds import design_box

BOUNDS = {"x1": (-1.0, 1.0), "x2": (0.0, 2.0), "x3": (-3.0, -0.5), "y": (-4.0, 4.0)}
LEVELS = {"city": ["A", "B", "C"], "g": ["u", "v"]}

# every corner of the numeric box, crossed with every level of each factor
R_CORNERS = r"""
df <- expand.grid(x1 = c(-1, 1), x2 = c(0, 2), x3 = c(-3, -0.5),
                  city = factor(c("A", "B", "C")), g = factor(c("u", "v")), KEEP.OUT.ATTRS = FALSE)
df$y <- 0
df
"""

FORMULAS = [
    "y ~ x1 * x2",  # numeric x numeric
    "y ~ x1 * city",  # numeric x treatment dummies
    "y ~ x1 * C(city, contr.sum)",  # numeric x contr.sum
    "y ~ x3 * C(city, contr.helmert)",  # numeric x another contrast's values
    "y ~ x2 * C(city, contr.poly)",
    "y ~ x1:city",  # no marginal: R codes city by indicators of all its levels
    "y ~ 0 + x3:city",
    "y ~ x1 * x2 * x3",  # three-way
    "y ~ x1 * x2 * city",
    "y ~ x3 * C(city, contr.sum) * g",
    "y ~ city * g",  # factor x factor (their codings' ranges, as before)
    "y ~ C(city, contr.sum) * g",
    "y ~ x1:x2:g + x3",
    # monotone functions and powers of one variable: the image of its declared bounds
    "y ~ exp(x1) + sqrt(x2) + log1p(x2) + expm1(x3)",
    "y ~ I(x3^2) + I(x1^3) + poly(x3, 3, raw = TRUE)",
    "y ~ exp(x3):x1 + sqrt(x2):city + I(x3^2):x2",
    # raw polynomials of several variables: column "a.b" is x^a z^b (outside audit F10: every column
    # was bounded as a power of the first variable)
    "y ~ poly(x2, x3, degree = 2, raw = TRUE)",
    "y ~ poly(x3, x2, degree = 3, raw = TRUE)",
    "y ~ poly(x3, x2, x1, raw = TRUE) + poly(x2, x3, degree = 2, raw = TRUE):x1",
    "y ~ poly(x2, x3, degree = 2, raw = TRUE):city",
]


def _r_design(ro, formula: str):
    res = ro.r(f"""
    local({{
      f <- {formula}
      mm <- model.matrix(f, model.frame(f, df_corners))
      list(names = colnames(mm), values = as.double(mm), n = nrow(mm))
    }})""")
    parts = dict(zip(res.names, res))
    names = list(parts["names"])
    return names, np.asarray(parts["values"]).reshape((int(parts["n"][0]), len(names)), order="F")


@pytest.fixture(scope="module")
def corners(rpy2_robjects):
    from dpstats.rbridge import to_pandas

    ro = rpy2_robjects
    rdf = ro.r(R_CORNERS)
    ro.globalenv["df_corners"] = rdf
    return ro, to_pandas(rdf)


def _random_rows(n: int = 50, seed: int = 5) -> pd.DataFrame:
    """Rows with nothing in common with the corners but the declared levels."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({k: rng.uniform(lo, hi, n) for k, (lo, hi) in BOUNDS.items()})
    for name, levels in LEVELS.items():
        df[name] = pd.Categorical(rng.choice(levels[:2], n), categories=levels)
    return df


@pytest.mark.r
@pytest.mark.parametrize("formula", FORMULAS)
def test_derived_box_holds_every_model_matrix_column_and_is_attained_at_the_corners(corners, formula):
    ro, df = corners
    r_names, r_values = _r_design(ro, formula)
    mf = model_frame(formula, df, check_constant=False)
    assert mf.names == r_names
    keep = [j for j, nm in enumerate(r_names) if nm != "(Intercept)"]
    box = design_box(BOUNDS, mf, [r_names[j] for j in keep])
    values = r_values[:, keep]
    assert np.all(values >= box.lo - 1e-12) and np.all(values <= box.hi + 1e-12), formula
    np.testing.assert_allclose(values.min(axis=0), box.lo, rtol=0, atol=1e-12, err_msg=formula)
    np.testing.assert_allclose(values.max(axis=0), box.hi, rtol=0, atol=1e-12, err_msg=formula)
    # a function of the public inputs only: other rows with the same declared levels, the same box
    other = model_frame(formula, _random_rows(), check_constant=False)
    again = design_box(BOUNDS, other, [r_names[j] for j in keep])
    assert other.names == mf.names
    np.testing.assert_array_equal(again.lo, box.lo)
    np.testing.assert_array_equal(again.hi, box.hi)


def test_interval_products_by_hand():
    df = _random_rows()
    mf = model_frame("y ~ x1 * x2 * x3 + x2:C(city, contr.sum)", df)
    box = design_box(BOUNDS, mf, [nm for nm in mf.names if nm != "(Intercept)"])
    got = dict(zip([nm for nm in mf.names if nm != "(Intercept)"], zip(box.lo, box.hi)))
    assert got["x1:x2"] == (-2.0, 2.0)
    assert got["x2:x3"] == (-6.0, 0.0)
    assert got["x1:x2:x3"] == (-6.0, 6.0)
    assert got["x2:C(city, contr.sum)1"] == (-2.0, 2.0)
    assert product_interval([(2, 3), (-4, -1)]) == (-12.0, -2.0)


def test_contrasts_declared_on_the_data_bound_like_c():
    """The R package's ``contrasts(f) <- ...`` arrive as data.attrs["contrasts"]: same ranges as C()."""
    df = _random_rows()
    df.attrs["contrasts"] = {"city": "contr.sum"}
    mf = model_frame("y ~ x1 * city", df)
    names = [nm for nm in mf.names if nm != "(Intercept)"]
    box = design_box(BOUNDS, mf, names)
    assert names == ["x1", "city1", "city2", "x1:city1", "x1:city2"]
    assert box.lo.tolist() == [-1.0, -1.0, -1.0, -1.0, -1.0] and box.hi.tolist() == [1.0] * 5


def test_a_bound_declared_for_the_interaction_itself_wins():
    df = _random_rows()
    mf = model_frame("y ~ x1 * x2", df)
    names = ["x1", "x2", "x1:x2"]
    assert design_box(BOUNDS, mf, names).hi.tolist() == [1.0, 2.0, 2.0]
    box = design_box({**BOUNDS, "x1:x2": (-0.5, 0.5)}, mf, names)
    assert box.lo.tolist() == [-1.0, 0.0, -0.5] and box.hi.tolist() == [1.0, 2.0, 0.5]
    assert "x1:x2" not in derived_bounds({**BOUNDS, "x1:x2": (-0.5, 0.5)}, mf.interaction_parts)
    # one pair for all columns declares every column itself, the interaction's too (as before)
    assert resolve_box((-3, 3), names, parts=mf.interaction_parts).hi.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("formula", ["y ~ x1 + log(x1 + 2):x2", "y ~ x1 + I(2 * x1):x2", "y ~ x1 * w"])
def test_a_part_without_a_public_bound_keeps_the_refusal(formula):
    df = _random_rows().assign(w=1.0)
    with pytest.raises(dp.PrivacyParameterError, match="bounds are missing") as caught:
        # dp_sis: dp_lm refuses the undeclared w earlier, as a variable without a public fill
        dp.dp_sis(formula, df, eps=1.0, k=1, bounds=BOUNDS, random_state=1, oc_trials=0)
    assert "product of its parts' bounds" in str(caught.value)


def test_the_refused_column_can_be_bounded_itself():
    df = _random_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ChanceWarning)  # whether the noise dominates is a released value
        fit = dp.dp_lm(
            "y ~ x2 + log(x1 + 2):x2",
            df,
            eps=1.0,
            delta=1e-6,
            bounds={**BOUNDS, "x2:log(x1 + 2)": (0.0, 2.2)},
            random_state=1,
            n_boot=100,
        )
    assert "x2:log(x1 + 2)" in str(fit)


def _data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(0, 2, n), "x3": rng.uniform(-3, -0.5, n)}
    )
    df["city"] = pd.Categorical(rng.choice(["A", "B", "C"], n), categories=["A", "B", "C"])
    df["y"] = df.x1 + 0.5 * df.x1 * df.x2 + rng.normal(0, 0.5, n)
    df["yb"] = (df.y > 0).astype(float)
    df["class"] = np.where(df.y > 0, "b", "a")
    return df


def _doors(df: pd.DataFrame):
    """One call of every door that takes per-column bounds, with an interaction and declared bounds."""
    b = BOUNDS
    f = "y ~ x1 * x2 + x3"
    return {
        "dp_lm": lambda: dp.dp_lm(f, df, eps=1.0, delta=1e-6, bounds=b, n_boot=100, random_state=1),
        "dp_glm": lambda: dp.dp_glm(
            "yb ~ x1 * x2",
            pd.concat([df] * 8),
            eps=2.0,
            delta=1e-5,
            bounds={**b, "yb": (0, 1)},
            random_state=1,
        ),
        "dp_select_infer": lambda: dp.dp_select_infer(
            f, df, eps=1.0, delta=1e-5, k=2, bounds=b, n_boot=100, random_state=1
        ),
        "dp_pca": lambda: dp.dp_pca("~ x1 * x2", df, k=1, eps=1.0, delta=1e-5, bounds=b, random_state=1),
        "dp_sis": lambda: dp.dp_sis(f, df, eps=1.0, k=2, bounds=b, random_state=1, oc_trials=0),
        "dp_two_stage": lambda: dp.dp_two_stage(
            f, df, eps=1.0, k=2, bounds=b, second_stage="private_ols", random_state=1, oc_trials=0
        ),
        "dp_gmm": lambda: dp.dp_gmm("~ x1 * x2", df, k=2, eps=1.0, delta=1e-5, bounds=b, random_state=1),
        "dp_felp": lambda: dp.dp_felp(
            "class ~ x1 * x2",
            df,
            eps=1.0,
            n_estimators=4,
            bounds=b,
            levels={"class": ["a", "b"]},
            random_state=1,
        ),
        "dp_bh": lambda: dp.dp_bh(
            f, data=df, q=0.1, eps=1.0, bounds=b, sigma=0.5, max_rejections=2, random_state=1
        ),
        "vertical_glm": lambda: dp.vertical_glm(
            "y ~ x1 * x2 + x3",
            df,
            parties=[["x1", "x2"], ["x3"]],
            eps=1.0,
            delta=1e-5,
            lam=0.1,
            penalty="ridge",
            bounds=b,
            random_state=1,
        ),
    }


@pytest.mark.parametrize("door", list(_doors(_data())))
def test_every_door_with_per_column_bounds_accepts_an_interaction(door):
    df = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", dp.errors.NonPrivateWarning)
        warnings.simplefilter("ignore", dp.errors.DataWarning)  # dp_gmm's k = 2 on one cloud: a poor fit
        fit = _doors(df)[door]()
    assert any("x1:x2" in note for note in fit.privacy.notes), fit.privacy.notes


def _neighbour(df: pd.DataFrame) -> pd.DataFrame:
    b = df.copy()
    b.loc[3, ["x1", "x2", "city", "y"]] = [0.99, 1.99, "C", 3.5]
    return b


def test_neighbours_read_the_same_statement_and_the_same_refusal():
    a = _data()
    b = _neighbour(a)
    kw = dict(eps=1.0, delta=1e-6, bounds=BOUNDS, n_boot=100, random_state=1)
    statements = [dp.dp_lm("y ~ x1 * x2 * city", d, **kw).privacy.to_dict() for d in (a, b)]
    assert statements[0] == statements[1]
    assert any("'x1:x2', 'x1:city', 'x2:city', 'x1:x2:city'" in n for n in statements[0]["notes"])
    messages = []
    for d in (a, b):
        with pytest.raises(dp.PrivacyParameterError) as caught:
            dp.dp_lm("y ~ x1 + log(x1 + 2):city", d, **kw)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_levels_read_from_the_rows_name_terms_in_the_note():
    """Text levels read from the rows (a named step): the neighbour alone holds the level 'Zurich';
    the note names the term x1:city, never a column holding a level, and reads the same."""
    a = _data().assign(town=lambda d: np.where(d.x1 > 0, "Leeds", "York"))
    b = a.copy()
    b.loc[7, "town"] = "Zurich"
    notes = []
    for d in (a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_lm("y ~ x1 * town", d, eps=1.0, delta=1e-6, bounds=BOUNDS, n_boot=100, random_state=1)
        notes.append([n for n in fit.privacy.notes if "interaction" in n])
    assert notes[0] == notes[1] and "'x1:town'" in notes[0][0]
    assert "York" not in notes[0][0] and "Zurich" not in notes[1][0]


@pytest.mark.parametrize(
    "formula",
    ["y ~ x1 * x2 + x1:city", "y ~ x1 * C(city, contr.sum)", "y ~ poly(x1, x2, degree = 2, raw = TRUE)"],
)
def test_streamed_data_bound_like_data_in_memory(formula, tmp_path):
    """The chunked engines' frame carries the parts and the codings' ranges: the same release as in
    memory (a contr.sum column is no longer clipped from -1 to a dummy's 0 when streamed)."""
    df = _data()[["x1", "x2", "x3", "city", "y"]]
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    kw = dict(eps=1.0, delta=1e-6, bounds=BOUNDS, n_boot=100, random_state=1, levels={"city": LEVELS["city"]})
    fits = [dp.dp_lm(formula, d, **kw) for d in (df, dp.engines.stream(str(path), chunk_rows=150))]
    np.testing.assert_allclose(fits[0].coef(), fits[1].coef(), rtol=0, atol=1e-10)
    notes = [[n for n in fit.privacy.notes if "interaction" in n] for fit in fits]
    assert notes[0] == notes[1] and len(notes[0]) == 1


def test_each_column_of_a_raw_polynomial_in_two_variables_has_its_own_bound():
    """Outside audit F10 (audit/poly_multivariate_bounds.py): with x in [0, 1] and z in [0, 100], the
    columns x, x², z, xz, z² (R's 1.0, 2.0, 0.1, 1.1, 0.2) were bounded as x, x², x³, x⁴, x⁵, so z, xz
    and z² were clipped to [0, 1]; with the arguments swapped the bounds reached 1e10."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 50), "z": rng.uniform(0, 100, 50), "y": rng.uniform(0, 1, 50)})
    bounds = {"x": (0, 1), "z": (0, 100), "y": (0, 1)}
    for formula, hi in [
        ("y ~ poly(x, z, degree = 2, raw = TRUE)", [1, 1, 100, 100, 1e4]),
        ("y ~ poly(z, x, degree = 2, raw = TRUE)", [100, 1e4, 1, 100, 1]),
    ]:
        mf = model_frame(formula, df)
        box = design_box(bounds, mf, mf.names[1:])
        assert box.lo.tolist() == [0.0] * 5 and box.hi.tolist() == hi, formula
        assert np.all(mf.X[:, 1:] <= box.hi) and np.all(mf.X[:, 1:] >= box.lo)
    # a signed interval: x in [-2, 1], z in [-1, 3]: x·z in [-6, 3], x²·z in [-4, 12]
    mf = model_frame("y ~ poly(x, z, degree = 3, raw = TRUE)", df)
    box = design_box(
        {"x": (-2, 1), "z": (-1, 3)},
        mf,
        ["poly(x, z, degree = 3, raw = TRUE)1.1", "poly(x, z, degree = 3, raw = TRUE)2.1"],
    )
    assert box.lo.tolist() == [-6.0, -4.0] and box.hi.tolist() == [3.0, 12.0]


def test_an_overflowing_or_single_point_product_is_left_to_declare():
    parts = {"x:z": ("x", "z"), "x:g0": ("x", (0.0, 0.0)), "z:g": ("z", (0.0, 1.0))}
    huge = {"x": (-1e200, 1e200), "z": (-1e200, 1e200)}
    assert derived_bounds(huge, parts) == {"z:g": (-1e200, 1e200)}
    with pytest.raises(dp.PrivacyParameterError, match="'x:z', 'x:g0'"):
        resolve_box(huge, ["x:z", "x:g0", "z:g"], parts=parts)


def _with_huge_row(df: pd.DataFrame) -> pd.DataFrame:
    """A neighbour whose row 7 holds finite values whose product overflows, times a 0 (∞·0 = NaN)."""
    out = df.copy()
    out.loc[7, ["x1", "x2", "x3"]] = [1e308, 1e308, 0.0]
    return out


def test_an_overflowing_interaction_row_is_clipped_like_any_other_and_warns_nothing():
    """The outside privacy audit: x1·x2·x3 of (1e308, 1e308, 0) was NaN, which clipping keeps, so one
    row decided dp_sis's selection and broke dp_lm, with numpy's overflow warnings on that neighbour
    only.  The exact product is 0; an overflow is ±inf, clipped to the derived bounds."""
    rng = np.random.default_rng(0)
    a = pd.DataFrame(rng.uniform(-1, 1, (600, 3)), columns=["x1", "x2", "x3"])
    a["y"] = 0.5 * a.x1 + rng.normal(0, 0.3, 600)
    b = _with_huge_row(a)
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-1, 1)}
    views = []
    for data in (a, b):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            chosen = [
                dp.dp_sis(
                    "y ~ x1 + x2 + x1:x2:x3",
                    data,
                    eps=2.0,
                    k=1,
                    bounds=bounds,
                    oc_trials=0,
                    random_state=seed,
                    strict=True,
                ).selected
                for seed in range(10)
            ]
            fit = dp.dp_lm(
                "y ~ x1 + x2 + x1:x2 + x1:x2:x3",
                data,
                eps=2.0,
                delta=1e-5,
                bounds=bounds,
                strict=True,
                random_state=1,
                n_boot=100,
            )
        views.append((chosen, [str(w.message) for w in caught], fit.tidy()["term"].tolist()))
        assert np.isfinite(fit.coef().to_numpy()).all()
    assert views[0] == views[1]
    mf = model_frame("y ~ x1:x2 + x1:x2:x3", b)
    assert mf.X[7].tolist() == [1.0, np.inf, 0.0]  # overflow keeps its sign; ∞·0 is the exact 0


def test_formula_functions_raise_no_numpy_warning_whatever_the_rows():
    """log of a negative value or a raw power that overflows is filled by the public rule; numpy's
    RuntimeWarning about it would say which neighbour holds such a row."""
    df = pd.DataFrame({"x": [1e200, 2.0, -1.0, 3.0], "y": [1.0, 2.0, 3.0, 4.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model_frame("y ~ poly(x, 2, raw = TRUE) + log(x) + I(x^3) + sqrt(x)", df)


def test_functions_of_one_variable_are_bounded_from_its_bounds_and_their_domain():
    """log(wt) with wt in (1, 6) is bounded by (0, log 6), an even power of an interval across 0 from
    0; a variable whose bounds leave the function's domain (log of (0, 2)), or an expression of
    several variables (log(x1 + x2)), keeps the refusal, which shows how to name the column (and, for
    the domain, names the variable's bounds that leave it)."""
    df = _random_rows().assign(wt=np.linspace(1, 6, 50))
    mf = model_frame("y ~ log(wt) + I(x1^2) + sqrt(wt):x1", df)
    names = [nm for nm in mf.names if nm != "(Intercept)"]
    box = design_box({**BOUNDS, "wt": (1.0, 6.0)}, mf, names)
    got = dict(zip(names, zip(box.lo.tolist(), box.hi.tolist())))
    assert got["log(wt)"] == (0.0, pytest.approx(np.log(6)))
    assert got["I(x1^2)"] == (0.0, 1.0)
    assert got["sqrt(wt):x1"] == (pytest.approx(-np.sqrt(6)), pytest.approx(np.sqrt(6)))
    with pytest.raises(
        dp.PrivacyParameterError,
        match=r"bounds for 'x2' are \(0.0, 2.0\).*domain of log\(\).*bounds=\{'log\(x2\)': \(lo, hi\)\}",
    ):
        design_box(BOUNDS, model_frame("y ~ log(x2)", df.assign(x2=df.x2 + 1)), ["log(x2)"])
    with pytest.raises(dp.PrivacyParameterError, match=r"bounds=\{'log\(x1 \+ x2\)': \(lo, hi\)\}"):
        design_box(BOUNDS, model_frame("y ~ log(x1 + x2)", df.assign(x1=df.x1 + 2)), ["log(x1 + x2)"])
    declared = design_box(
        {**BOUNDS, "log(x2)": (-5.0, 1.0)}, model_frame("y ~ log(x2)", df.assign(x2=df.x2 + 1)), ["log(x2)"]
    )
    assert declared.lo.tolist() == [-5.0]  # the column's own bound wins


def test_dp_lm_fits_log_wt_from_the_bounds_of_wt_as_r_users_write_it():
    """The outside R audit: dp_lm(mpg ~ log(wt), mtcars, bounds = list(wt = c(1, 6), mpg = c(10, 35)))
    asked for a bound on 'log(wt)'.  Neighbouring data sets give the same statement."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"wt": rng.uniform(1.5, 5.5, 20000)})
    df["mpg"] = 38 - 9 * np.log(df.wt) + rng.normal(0, 1, 20000)
    bounds = {"wt": (1, 6), "mpg": (10, 35)}
    fit = dp.dp_lm("mpg ~ log(wt)", df, eps=1.0, delta=1e-6, bounds=bounds, random_state=1, n_boot=200)
    assert fit.coef()["log(wt)"] == pytest.approx(-9, abs=0.5)
    other = df.copy()
    other.loc[0, "wt"] = -3.0  # log of a negative value: filled by the public rule, no message
    again = dp.dp_lm("mpg ~ log(wt)", other, eps=1.0, delta=1e-6, bounds=bounds, random_state=1, n_boot=200)
    assert again.privacy.to_dict() == fit.privacy.to_dict()
    assert any("log(x), sqrt(x)" in note for note in fit.privacy.notes)
