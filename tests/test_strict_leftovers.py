"""Under strict=True a type comes from the declaration alone: the places session 15 left (its closing note).

Session 15 made every formula variable not declared categorical numeric by declaration under
``strict=True`` (:mod:`dpstats.schema`, "Types under strict=True"; tests/test_strict_global_bounds_schema.py).
Five places still depended on the rows, or did something wrong without a word:

1. dp_felp's response of numpy ``bool`` type was declared classes (False, True); one missing entry makes
   it an object column, whose classes strict refused: D released, its neighbour D' refused.  Under strict
   the declared boolean is pandas' nullable ``"boolean"`` (an R logical, which the bridge now always
   sends as one), or ``levels=``; a numpy ``bool`` response is refused as its neighbour is.
2. A networked vertical fit: each party's own ``strict`` decided its types, so a leader under strict with
   a member without it released D and refused D' (the member's column read as text, its levels a step).
   A mixed setting is now refused from the settings the parties exchange (the leader's welcome, the
   member's hello), before the member reads a row.
3. ``I(city == "York")`` with ``city`` numeric by declaration compared numbers with text: a constant
   column, released without a word.  Refused from the formula and the declared types.
4. Contrasts given through ``data.attrs`` (how R's ``contrasts =`` arrives) for a variable numeric by
   declaration were ignored.  Refused, naming the variable.
5. A binomial response without a declaration was read as numbers under strict: a text response
   ("yes"/"no") was all missing, filled with 0, and fitted (intercept near -12).  Under strict a binomial
   response must be declared: levels (two), a declared boolean, or numbers by a ``bounds=`` entry.

Each refusal is checked on neighbours (a row replaced, removed or added) for the same text, before any
spend.  The tests fail on the code before this change (each docstring says how), except four controls
that pass there and pin that only the undeclared is refused: strict at every party of a networked fit,
a comparison with text of a declared factor, contrasts of a declared factor, and a declared binomial
response's neighbours.
"""

from __future__ import annotations

import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.vertical import Party, run_on_loopback
from dpstats.vertical.pki import init_consortium
from neighbours import assert_same_view, reader_view, released_masked

N = 400
ROW = 5
LEVELS = {"city": ["Leeds", "York"]}


def base(n: int = N, seed: int = 2026) -> pd.DataFrame:
    """x1, x2 in [-1, 1]; a boolean flag; a text city; a binomial response as text (yb), as 0/1 numbers (y01)
    and as pandas' nullable boolean (yl); a numeric response y in [-2, 2]."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"id": np.arange(n), "x1": rng.uniform(-1, 1, n).round(4), "x2": rng.uniform(-1, 1, n)})
    df["flag"] = df.x1 + rng.normal(0, 0.3, n) > 0
    df["city"] = np.where(rng.uniform(size=n) < 0.4, "York", "Leeds")
    yes = rng.uniform(size=n) < 1 / (1 + np.exp(-(0.5 + 2 * df.x1)))
    df["yb"], df["y01"], df["yl"] = (
        np.where(yes, "yes", "no"),
        yes.astype(float),
        pd.array(yes, dtype="boolean"),
    )
    df["y"] = (0.5 * df.x1 - df.x2 + 0.8 * (df.city == "York") + rng.normal(0, 0.3, n)).clip(-2, 2)
    return df


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return base()


def neighbours(df: pd.DataFrame, column: str, value) -> dict[str, pd.DataFrame]:
    """``df`` and its neighbours: row ROW's ``column`` replaced by ``value`` (an object column when the value
    does not fit the dtype, as pandas makes it), row ROW removed, a copy of row 0 with that value added."""
    replaced = df.copy()
    if not isinstance(df[column].dtype, pd.BooleanDtype) and (value is None or isinstance(value, str)):
        replaced[column] = replaced[column].astype(object)
    replaced.loc[ROW, column] = value
    added = pd.concat([df, replaced.iloc[[ROW]]], ignore_index=True)
    return {
        "D": df,
        "replaced": replaced,
        "removed": df.drop(index=ROW).reset_index(drop=True),
        "added": added,
    }


def refusals(call, frames: dict[str, pd.DataFrame]) -> dict[str, tuple[str, str]]:
    """Each frame's refusal (type, text), with the accountant checked to be untouched."""
    said = {}
    for name, df in frames.items():
        acct = dp.Accountant(eps=100.0, delta=1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a refusal comes alone
            with pytest.raises(dp.DPStatsError) as err:
                call(df, acct)
        assert acct.spent_eps == 0 and acct.charges == [], name
        said[name] = (type(err.value).__name__, str(err.value))
    return said


def assert_one_refusal(said: dict, *needles: str) -> str:
    texts = set(said.values())
    assert len(texts) == 1, said
    kind, text = next(iter(texts))
    assert kind == "PrivacyParameterError", text
    for needle in needles:
        assert needle in text, text
    spent = (
        "Nothing was read or spent",
        "no data was read or sent",
        "strict=True refuses the data-dependent step",
    )
    assert any(words in text for words in spent), text  # before anything was spent (refusals checked it)
    return text


# ------------------------------------------------------------------------------- 1. dp_felp's boolean response
FELP = dict(eps=1.0, n_estimators=2, bounds=(-2, 2), strict=True, random_state=7, oc_trials=0)


def test_felp_numpy_bool_response_is_refused_as_its_neighbour_with_a_missing_entry(data):
    """Old code: D (numpy bool) released with classes False, True; D' (one None: an object column) refused.
    Now a numpy bool declares nothing under strict (its type is read from the rows): one refusal for every
    neighbour, naming the response and the declarations that serve."""
    frames = neighbours(data, "flag", None)

    def call(df, acct):
        dp.dp_felp("flag ~ x1 + x2", df, accountant=acct, **FELP)

    assert_one_refusal(
        refusals(call, frames),
        "the classes of the response 'flag'",
        "levels={'flag': [False, True]}",
        "the pandas nullable 'boolean' dtype",
    )


@pytest.mark.parametrize("declared", ["boolean dtype", "levels="])
def test_felp_declared_boolean_response_releases_alike_on_neighbours(declared, data):
    """A declared boolean (pandas' nullable "boolean", which a missing entry leaves boolean; or levels=)
    gives every neighbour the same view, classes False and True.  Old code: these pairs passed, but the
    numpy bool without a declaration (last line) was released where its object neighbour was refused."""
    if declared == "boolean dtype":
        df, extra = data.assign(flag=pd.array(data.flag, dtype="boolean")), {}
    else:
        df, extra = data, {"levels": {"flag": [False, True]}}
    views = {
        name: reader_view(dp.dp_felp, "flag ~ x1 + x2", d, warning_text=released_masked, **FELP, **extra)
        for name, d in neighbours(df, "flag", None).items()
        if name != "removed" and name != "added"  # dp_felp holds under replace-one-row only
    }
    assert_same_view(views["D"], views["replaced"], declared)
    assert views["D"]["fit"].classes == ["False", "True"]
    with pytest.raises(PrivacyParameterError, match="classes of the response 'flag'"):
        dp.dp_felp("flag ~ x1 + x2", data, **FELP)  # the numpy bool without a declaration: the old flip


def test_an_r_logical_crosses_as_a_declared_boolean_with_or_without_na():
    """The R bridge sends every logical as pandas' nullable boolean: an R logical's type is declared, and
    one NA must not change it (old code: numpy bool without NA, "boolean" with one; under strict the first
    would be refused and the second released)."""
    from dpstats.rbridge import frame_from_transport

    def frame(codes):
        return frame_from_transport(
            {"names": ["t"], "n": 3, "kinds": ["logical"], "codes": codes, "levels": [[]]}
        )

    full, gap = frame([1.0, 0.0, 1.0]), frame([1.0, float("nan"), 0.0])
    assert isinstance(full["t"].dtype, pd.BooleanDtype) and isinstance(gap["t"].dtype, pd.BooleanDtype)
    assert full["t"].tolist() == [True, False, True] and gap["t"].isna().tolist() == [False, True, False]


# ------------------------------------------------------------------------------- 2. the networked protocol
@pytest.fixture(scope="module")
def certs() -> str:
    where = tempfile.mkdtemp()
    init_consortium(["A", "B"], where)
    return where


def networked(certs, df, strict: dict, *, channel: str = "tls") -> dict:
    """One DP fit, leader A (y ~ x1) and member B (~ x2 + flag with a global bounds pair, the README's
    first form): every party's errors, warnings and released terms and statement."""
    key = "ab" * 32
    ident = {"tls": certs} if channel == "tls" else {"key": key}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parties = [
            Party(df[["id", "y", "x1"]], name="A", formula="y ~ x1", row_id="id", timeout=20, **ident),
            Party(
                df[["id", "x2", "flag"]], name="B", formula="~ x2 + flag", row_id="id", timeout=20, **ident
            ),
        ]
        budget = dict(eps=1.0, delta=1e-6)
        lead = dict(budget, bounds={"x1": (-1, 1), "y": (-2, 2)}, penalty="ridge", lam=1.0, random_state=1)
        member = dict(budget, bounds=(-1, 1), random_state=2, strict=strict.get("B", False))
        results, errors = run_on_loopback(
            parties, timeout=60, strict=strict.get("A", False), member_kwargs={"B": member}, **lead
        )
    return {
        "errors": {name: f"{type(e).__name__}: {e}" for name, e in errors.items()},
        "warnings": sorted(
            {f"{w.category.__name__}: {w.message}" for w in caught if w.category is not DeprecationWarning}
        ),
        "terms": {name: list(r.tidy()["term"]) for name, r in results.items()},
        "statements": {name: r.privacy.to_dict()["data_dependent_steps"] for name, r in results.items()},
    }


@pytest.mark.parametrize("strict_at", ["A", "B"])
def test_a_mixed_strict_setting_is_refused_from_the_settings_before_the_member_reads(certs, strict_at):
    """Old code, strict at the leader only: D (x2 numbers, flag a numpy bool) released; D' (one "?" in x2:
    an object column, the member's levels read from its rows) refused by the leader's strict, or, a None in
    flag, likewise.  Strict at the member only: released without the leader's refusal.  Now every
    neighbour is refused by the disagreement, named at both parties, before the member reads a row (so no
    warning of its own frame either)."""
    df = base(120)
    views = [networked(certs, d, {strict_at: True}) for d in (df, neighbours(df, "x2", "?")["replaced"],
                                                             neighbours(df, "flag", None)["replaced"])]  # fmt: skip
    assert views[0] == views[1] == views[2]
    said = (
        f"the parties disagree on strict: the leader has strict={strict_at == 'A'}, party 'B' has "
        f"strict={strict_at == 'B'}"
    )
    assert said in views[0]["errors"]["A"] and said in views[0]["errors"]["B"], views[0]
    assert "no data was read or sent" in views[0]["errors"]["B"] and not views[0]["terms"]
    assert views[0]["warnings"] == []


def test_the_same_strict_at_every_party_gives_neighbours_the_same_fit(certs):
    """strict at both parties: the member's x2 and flag are numeric by declaration whatever one row holds
    (old code gave the same, and is the control of the refusal above)."""
    df = base(120)
    views = [networked(certs, d, {"A": True, "B": True}) for d in (df, neighbours(df, "x2", "?")["replaced"],
                                                                   neighbours(df, "flag", None)["replaced"])]  # fmt: skip
    assert views[0] == views[1] == views[2]
    assert not views[0]["errors"]
    assert views[0]["terms"]["A"] == ["(Intercept)", "x1", "x2", "flag"]
    assert views[0]["statements"]["A"] == []


def test_the_pre_shared_key_channel_refuses_a_mixed_setting_too(certs):
    """The deprecated channel's leader now sends the welcome too, with its strict (old code: released)."""
    df = base(120)
    seen = networked(certs, df, {"A": True}, channel="psk")
    assert not seen["terms"]
    assert "the parties disagree on strict: the leader has strict=True" in seen["errors"]["B"]


# ------------------------------------------------------------------------------- 3. text compared with a number
LM = dict(eps=2.0, delta=1e-5, bounds=(-2, 2), n_boot=100, strict=True, random_state=7)


@pytest.mark.parametrize(
    "formula, door",
    [
        ('y ~ x1 + I(city == "York")', "dp_lm"),
        ("y ~ x1 + ifelse(city %in% c('York', 'Hull'), 1, 0)", "dp_lm"),
        ('y ~ x1 + x2 + I(city != "York")', "dp_sis"),
        ('I(yb == "yes") ~ x1', "dp_glm"),
    ],
)
def test_a_comparison_with_text_of_a_variable_numeric_by_declaration_is_refused(formula, door, data):
    """Old code: city (or yb) numeric by declaration, every entry missing and filled, so the comparison was
    the same in every row and was released (a constant term, or the response all 0)."""
    name = "yb" if door == "dp_glm" else "city"

    def call(df, acct):
        if door == "dp_lm":
            dp.dp_lm(formula, df, accountant=acct, **LM)
        elif door == "dp_sis":
            dp.dp_sis(formula, df, eps=2.0, k=1, bounds=(-2, 2), strict=True, accountant=acct, oc_trials=0)
        else:
            dp.dp_glm(formula, df, eps=4.0, delta=1e-5, bounds={"x1": (-1, 1)}, strict=True, accountant=acct)

    said = refusals(call, neighbours(data, name, "Zzyzx"))
    assert_one_refusal(
        said, f"under strict=True '{name}' is numeric by declaration", f"levels={{'{name}': [...]}}"
    )


def test_a_comparison_with_text_of_a_declared_factor_is_fitted():
    """With the levels declared the comparison is a 0/1 column of the rows (the control): its coefficient is
    statsmodels' OLS coefficient of the same rows within 0.1 (n = 5 000, eps = 2: a few noise standard
    errors)."""
    import statsmodels.api as sm

    df = base(5000, seed=5)
    fit = dp.dp_lm('y ~ x1 + I(city == "York")', df, levels=LEVELS, **LM)
    assert fit.terms == ["(Intercept)", "x1", 'I(city == "York")TRUE']
    X = sm.add_constant(np.column_stack([df.x1, (df.city == "York").astype(float)]))
    ols = sm.OLS(df.y.to_numpy(), X).fit().params
    assert abs(fit.coef()['I(city == "York")TRUE'] - ols[2]) < 0.1


# ------------------------------------------------------------------------------- 4. contrasts of a numeric variable
def with_contrasts(df: pd.DataFrame, contrasts: dict) -> pd.DataFrame:
    out = df.copy()
    out.attrs["contrasts"] = contrasts
    return out


@pytest.mark.parametrize("door", ["dp_lm", "dp_gmm"])
def test_contrasts_for_a_variable_numeric_by_declaration_are_refused(door, data):
    """Old code: the contrasts of city (numeric by declaration) were ignored without a word."""
    frames = {
        name: with_contrasts(d, {"city": "contr.sum"}) for name, d in neighbours(data, "city", None).items()
    }

    def call(df, acct):
        if door == "dp_lm":
            dp.dp_lm("y ~ x1 + city", df, accountant=acct, **LM)
        else:
            dp.dp_gmm(
                "~ x1 + city", df, k=2, eps=2.0, delta=1e-5, bounds=(-2, 2), strict=True, accountant=acct
            )

    assert_one_refusal(
        refusals(call, frames),
        "contrasts are given for 'city'",
        "numeric by declaration",
        "levels={'city': [...]}",
    )


def test_contrasts_for_a_declared_factor_are_applied(data):
    """The control: with declared levels, contr.sum codes city as R's model.matrix does (Leeds 1, York -1)."""
    fit = dp.dp_lm("y ~ x1 + city", with_contrasts(data, {"city": "contr.sum"}), levels=LEVELS, **LM)
    assert fit.terms == ["(Intercept)", "x1", "city1"]


# ------------------------------------------------------------------------------- 5. a binomial response
GLM = dict(family="binomial", eps=4.0, delta=1e-5, strict=True, random_state=3)
VERTICAL = dict(family="binomial", eps=2.0, delta=1e-6, penalty="ridge", lam=1.0, strict=True, random_state=3)


@pytest.mark.parametrize("response", ["yb", "y01", "flag"])
@pytest.mark.parametrize("door", ["dp_glm", "vertical_glm", "dp_select_infer"])
def test_an_undeclared_binomial_response_is_refused_whatever_its_type(door, response, data):
    """Old code: yb ("yes"/"no") was read as numbers, every entry missing and filled by 0, and fitted: a
    wrong fit with no error (dp_glm's intercept near -12 at n = 20 000).  Now a binomial response without
    levels, a declared boolean or a bounds= entry is refused, whatever its dtype (a numpy bool, 0/1 floats,
    text) and whatever one row holds."""
    bounds = {"x1": (-1, 1), "x2": (-1, 1)}

    def call(df, acct):
        if door == "dp_glm":
            dp.dp_glm(f"{response} ~ x1", df, bounds=bounds, accountant=acct, **GLM)
        elif door == "vertical_glm":
            parties = {"A": ["x1"], "B": ["x2"]}
            dp.vertical_glm(
                f"{response} ~ x1 + x2", df, parties=parties, bounds=bounds, accountant=acct, **VERTICAL
            )
        else:
            dp.dp_select_infer(f"{response} ~ x1 + x2", df[[response, "x1", "x2"]], eps=2.0, delta=1e-6, k=1,
                               infer="glm", bounds=bounds, strict=True, accountant=acct)  # fmt: skip

    value = {"yb": "Zzyzx", "y01": "?", "flag": None}[response]
    said = refusals(call, neighbours(data, response, value))
    needles = [f"family='binomial' under strict=True needs its response '{response}' declared"]
    needles += [f"bounds={{'{response}': (0, 1)}}"]
    if door == "dp_select_infer":  # part B reads its response as numbers: only a bounds entry serves
        needles += ["declared as numbers 0/1", "levels do not serve"]
    else:
        needles += [f"levels={{'{response}': [...]}}", "the pandas nullable 'boolean' dtype"]
    assert_one_refusal(said, *needles)


def test_dp_select_infer_takes_a_binomial_response_declared_by_its_bounds_entry():
    """Part B reads its response as numbers: a bounds entry declares it, and neighbours (a text cell, read
    as a missing value and filled) see the same terms and statement; levels= does not serve it and is
    refused from the declaration (old code: the same neighbours, but the text response with levels= was
    refused only by the frame, "a numeric response is needed", after reading)."""
    kwargs = dict(eps=2.0, delta=1e-6, k=1, infer="glm", strict=True, random_state=1)
    kwargs["bounds"] = {"x1": (-1, 1), "x2": (-1, 1), "y01": (0, 1)}
    data = base(3000)  # part B's dp_glm refuses fewer rows at eps = 2 as too noisy
    frames = neighbours(data[["y01", "x1", "x2"]], "y01", "?")
    one, other = (
        reader_view(dp.dp_select_infer, "y01 ~ x1 + x2", frames[k], **kwargs) for k in ("D", "replaced")
    )
    assert_same_view(one, other, "dp_select_infer")
    with pytest.raises(PrivacyParameterError, match="declared as numbers 0/1"):
        dp.dp_select_infer("yb ~ x1 + x2", data, levels={"yb": ["no", "yes"]}, **kwargs)


def declared_fits(df: pd.DataFrame) -> dict:
    bounds = {"x1": (-1, 1)}
    return {
        "levels": dp.dp_glm("yb ~ x1", df, bounds=bounds, levels={"yb": ["no", "yes"]}, **GLM),
        "factor(levels =)": dp.dp_glm("factor(yb, levels = c('no', 'yes')) ~ x1", df, bounds=bounds, **GLM),
        "bounds entry": dp.dp_glm("y01 ~ x1", df, bounds={**bounds, "y01": (0, 1)}, **GLM),
        "boolean dtype": dp.dp_glm("yl ~ x1", df, bounds=bounds, **GLM),
    }


def test_a_declared_binomial_response_is_fitted_as_r_glm_codes_it():
    """Each declaration gives the same release (same seed; the first level, "no", coded 0 as R's glm codes a
    factor), close to statsmodels' binomial GLM of the same rows (n = 20 000, eps = 4; tolerance 0.15, about
    three standard errors of the slope); old code fitted the undeclared text response with an intercept near
    -12 and no error (tests above)."""
    import statsmodels.api as sm

    df = base(20_000, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-run note
        fits = declared_fits(df)
    coefs = {name: fit.coef().to_numpy() for name, fit in fits.items()}
    for name, coef in coefs.items():
        np.testing.assert_allclose(coef, coefs["levels"], rtol=1e-9, err_msg=name)
    oracle = sm.GLM(df.y01, sm.add_constant(df.x1), family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(coefs["levels"], oracle.params.to_numpy(), atol=0.15)
    with pytest.raises(PrivacyParameterError, match="needs its response 'yb' declared"):
        dp.dp_glm("yb ~ x1", df, bounds={"x1": (-1, 1)}, **GLM)  # old code: intercept near -12, no error


def test_a_declared_binomial_response_gives_neighbours_the_same_view(data):
    """A text cell outside the declared levels, or a missing boolean, is filled by the public rule: neighbours
    see the same (the control of the refusals above)."""
    for response, value, extra in (("yb", "Zzyzx", {"levels": {"yb": ["no", "yes"]}}), ("yl", pd.NA, {})):
        frames = neighbours(data, response, value)
        one, other = (
            reader_view(dp.dp_glm, f"{response} ~ x1", frames[k], bounds={"x1": (-1, 1)}, **GLM, **extra)
            for k in ("D", "replaced")
        )
        assert_same_view(one, other, response)


def test_a_networked_leaders_undeclared_binomial_response_is_refused(certs):
    """The leader's own response (Party, DP mode, strict at both parties): refused from its declaration
    before it listens, naming the party (old code: read as numbers and fitted)."""
    df = base(120)
    for d in (df, neighbours(df, "yb", "Zzyzx")["replaced"]):
        parties = [
            Party(d[["id", "yb", "x1"]], name="A", tls=certs, formula="yb ~ x1", row_id="id", timeout=20),
            Party(d[["id", "x2"]], name="B", tls=certs, formula="~ x2", row_id="id", timeout=5),
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, errors = run_on_loopback(
                parties,
                timeout=60,
                family="binomial",
                eps=1.0,
                delta=1e-6,
                bounds={"x1": (-1, 1)},
                penalty="ridge",
                lam=1.0,
                strict=True,
                member_kwargs={"B": dict(eps=1.0, delta=1e-6, bounds={"x2": (-1, 1)}, strict=True)},
            )
        assert isinstance(errors["A"], PrivacyParameterError), errors
        assert str(errors["A"]).startswith(
            "party 'A': family='binomial' under strict=True needs its response 'yb' declared"
        )


def test_the_leader_checks_every_hellos_strict_too():
    """A member whose hello gives another strict (or none: an older member, read as False) is refused by
    the leader from the settings alone, before its row count, terms or steps are read."""
    from dpstats.vertical.party import check_strict

    check_strict(True, [{"name": "B", "strict": True}])
    check_strict(False, [{"name": "B"}])
    with pytest.raises(PrivacyParameterError, match="the leader has strict=True, party 'B' has strict=False"):
        check_strict(True, [{"name": "B", "n": "not read"}])
