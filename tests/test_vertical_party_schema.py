"""The networked vertical GLM's public schema (Party ``levels=``, fills, ``strict``), attacker-style.

DP mode over TLS on 127.0.0.1 (parties in threads, ``run_on_loopback``).  Two data sets that differ in
one row of one party (a text cell holding a level no other row has, or a missing numeric cell) must give
every party the same terms, privacy statement, warnings and errors; only released values may differ.
(Audit s12, findings N2 and N3: the frames were built without a schema, so a level read from one row
became a published term, and one missing cell stopped the fit and told the leader.)
"""

from __future__ import annotations

import json
import re
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from dpstats.errors import NonPrivateWarning
from dpstats.vertical import Party, run_on_loopback
from dpstats.vertical.pki import init_consortium

N = 120
LEAD_BOUNDS = {"x1": (-1, 1), "y": (-3, 3)}
MEMBER_BOUNDS = {"x2": (-1, 1)}


@pytest.fixture(scope="module")
def certs() -> str:
    where = tempfile.mkdtemp()
    init_consortium(["A", "B"], where)
    return where


def base_data() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"id": np.arange(N), "x1": rng.uniform(-1, 1, N), "x2": rng.uniform(-1, 1, N)})
    df["g"] = rng.choice(["a", "b"], N)
    df["h"] = rng.choice(["u", "v"], N)
    df["y"] = df.x1 + 0.5 * (df.g == "b") + rng.normal(0, 0.5, N)
    df["yb"] = np.where(rng.uniform(size=N) < 1 / (1 + np.exp(-2 * df.x1)), "yes", "no")  # binomial, as text
    return df


def fit(  # noqa: PLR0913 (the pair's varying arguments)
    certs,
    df,
    *,
    lead_formula="y ~ x1",
    member_formula="~ x2 + g",
    lead=None,
    member=None,
    strict=None,
    **fit_args,
):
    """One networked DP fit; every channel a party or the analyst sees, released values left out."""
    lead, member, strict = lead or {}, member or {}, strict or {}
    parties = [
        Party(
            df[["id", "y", "yb", "x1", "h"]],
            name="A",
            tls=certs,
            formula=lead_formula,
            row_id="id",
            timeout=20,
            **lead,
        ),
        Party(
            df[["id", "x2", "g"]],
            name="B",
            tls=certs,
            formula=member_formula,
            row_id="id",
            timeout=20,
            **member,
        ),
    ]
    dp_args = dict(eps=1.0, delta=1e-6)
    fit_args = dict(dict(penalty="ridge", lam=1.0), **fit_args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results, errors = run_on_loopback(
            parties,
            timeout=60,
            **dp_args,
            bounds=LEAD_BOUNDS,
            random_state=1,
            strict=strict.get("A", False),
            **fit_args,
            member_kwargs={
                "B": dict(dp_args, bounds=MEMBER_BOUNDS, random_state=2, strict=strict.get("B", False))
            },
        )
    seen = {name: _channels(r) for name, r in results.items()}
    return {
        "results": seen,
        "errors": {name: f"{type(e).__name__}: {e}" for name, e in errors.items()},
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
    }


def _channels(result) -> dict:
    statement = result.privacy.to_dict()
    statement.pop("seeded", None)
    return {
        "terms": list(result.tidy()["term"]),
        "party_terms": result.party_terms,
        "statement": statement,
        "n": result.n,
        "response_note": result.response_note,
    }


def one_row(df: pd.DataFrame, column: str, value) -> pd.DataFrame:
    out = df.copy()
    out[column] = out[column].astype(object) if isinstance(value, str) else out[column]
    out.loc[0, column] = value
    return out


def test_member_declared_levels_neighbours_see_the_same(certs):
    """A member's text cell holding an undeclared level: it is filled by the first level, no term names it."""
    d0 = base_data()
    d1 = one_row(d0, "g", "secret")
    member = {"levels": {"g": ["a", "b"]}}
    seen0, seen1 = fit(certs, d0, member=member), fit(certs, d1, member=member)
    assert seen0 == seen1
    assert not seen0["errors"]
    assert seen0["results"]["A"]["terms"] == ["(Intercept)", "x1", "x2", "gb"]
    assert seen0["results"]["A"]["statement"]["data_dependent_steps"] == []
    assert 'na_action="fill"' in seen0["results"]["A"]["statement"]["missing_values"]
    assert not any("secret" in str(v) for v in seen1.values())


def test_leader_declared_levels_neighbours_see_the_same(certs):
    d0 = base_data()
    d1 = one_row(d0, "h", "secret")
    lead = {"levels": {"h": ["u", "v"]}, "na_action": "fill"}
    member = {"levels": {"g": ["a", "b"]}}
    seen0 = fit(certs, d0, lead_formula="y ~ x1 + h", lead=lead, member=member)
    seen1 = fit(certs, d1, lead_formula="y ~ x1 + h", lead=lead, member=member)
    assert seen0 == seen1
    assert seen0["results"]["B"]["terms"] == ["(Intercept)", "x1", "hv", "x2", "gb"]


def test_levels_read_from_the_rows_are_a_named_step_in_every_copy(certs):
    """Without declared levels: the step is named (with the party) in both parties' statements and warned."""
    seen = fit(certs, base_data())
    step = "party 'B': the levels of 'g' were read from the rows"
    for name in ("A", "B"):
        steps = seen["results"][name]["statement"]["data_dependent_steps"]
        assert len(steps) == 1 and steps[0].startswith(step)
    assert any(
        w.startswith(f"{NonPrivateWarning.__name__}: data-dependent step") and step in w
        for w in seen["warnings"]
    )


# strict must be the same at every party (session 16): a mixed setting is refused from the settings the
# parties exchange (the leader's welcome, the member's hello) before the member reads its rows, and the
# member refuses (its check), the leader names it; strict at both: the member's g, without declared levels,
# is numeric by declaration (audit s15-attack8 F01), and its missing bounds are refused from the names alone
MIXED = "the parties disagree on strict: the leader has strict={A}, party 'B' has strict={B}"
STRICT_REFUSAL = "DP mode needs declared bounds for every numeric variable of the formula"


@pytest.mark.parametrize("where", ["A", "B"])
def test_strict_at_one_party_only_is_refused_from_the_settings(certs, where):
    """strict at the leader or at the member only: refused before any data is sent, the same text on
    neighbours (before session 16 each party's own strict decided its types, tests/test_strict_leftovers.py)."""
    d0 = base_data()
    seen0 = fit(certs, d0, strict={where: True})
    seen1 = fit(certs, one_row(d0, "g", "secret"), strict={where: True})
    assert seen0 == seen1
    assert not seen0["results"]
    mixed = MIXED.format(A=where == "A", B=where == "B")
    assert mixed in seen0["errors"]["A"] and mixed in seen0["errors"]["B"]
    assert "no data was read or sent" in seen0["errors"]["B"]


def test_strict_at_every_party_refuses_a_members_undeclared_text_column(certs):
    """strict at both parties: the member's g is numeric by declaration, without bounds: refused before any
    data is sent (its levels are not read), the same text on neighbours."""
    d0 = base_data()
    both = {"A": True, "B": True}
    seen0, seen1 = fit(certs, d0, strict=both), fit(certs, one_row(d0, "g", "secret"), strict=both)
    assert seen0 == seen1
    assert not seen0["results"]
    assert STRICT_REFUSAL in seen0["errors"]["B"] and "none for 'g'" in seen0["errors"]["B"]
    assert f"party 'B' stopped the fit: {STRICT_REFUSAL}" in seen0["errors"]["A"]
    assert "Nothing was read or sent" in seen0["errors"]["B"]


def test_strict_refuses_the_leaders_own_levels_read_from_the_rows(certs):
    """The leader's h without declared levels under its strict=True: numeric by declaration (audit
    s15-attack8 F01; before, the step of reading its levels), its missing bounds refused from the names
    alone, the same on neighbours."""
    own = [
        fit(certs, d, lead_formula="y ~ x1 + h", member={"levels": {"g": ["a", "b"]}}, strict={"A": True})
        for d in (base_data(), one_row(base_data(), "h", "secret"))
    ]
    assert own[0] == own[1] and not own[0]["results"]
    assert "party 'A': DP mode needs declared bounds for every numeric variable" in own[0]["errors"]["A"]
    assert "none for 'h'" in own[0]["errors"]["A"]


def test_a_members_missing_cell_is_filled_not_reported(certs):
    """N3: one missing x2 at the member: the fit runs on both neighbours and every channel is the same."""
    d0 = base_data()
    d2 = one_row(d0, "x2", np.nan)
    member = {"levels": {"g": ["a", "b"]}}
    seen0, seen2 = fit(certs, d0, member=member), fit(certs, d2, member=member)
    assert seen0 == seen2
    assert not seen2["errors"] and set(seen2["results"]) == {"A", "B"}


def test_a_leaders_missing_response_is_filled_not_reported(certs):
    d0 = base_data()
    member = {"levels": {"g": ["a", "b"]}}
    assert fit(certs, d0, member=member) == fit(certs, one_row(d0, "y", np.nan), member=member)


def test_a_variable_without_bounds_is_refused_from_the_names_whatever_the_rows(certs):
    """A member's numeric variable without declared bounds has no public fill: refused by a public rule,
    with the same text whether or not a cell of it is missing."""
    d0 = base_data()
    d0["x3"] = d0.x2 / 2
    d2 = one_row(d0, "x3", np.nan)

    def refused(df):
        parties = [
            Party(df[["id", "y", "x1"]], name="A", tls=certs, formula="y ~ x1", row_id="id", timeout=20),
            Party(df[["id", "x2", "x3"]], name="B", tls=certs, formula="~ x2 + x3", row_id="id", timeout=20),
        ]
        kw = dict(eps=1.0, delta=1e-6)
        _, errors = run_on_loopback(
            parties,
            timeout=60,
            **kw,
            bounds=LEAD_BOUNDS,
            penalty="ridge",
            lam=1.0,
            member_kwargs={"B": dict(kw, bounds=MEMBER_BOUNDS)},
        )
        return {name: str(e) for name, e in errors.items()}

    e0, e2 = refused(d0), refused(d2)
    assert e0 == e2
    assert "DP mode needs declared bounds for every numeric variable" in e0["B"] and "'x3'" in e0["B"]
    assert "party 'B' stopped the fit: DP mode needs declared bounds" in e0["A"]  # named once, not twice


def test_na_action_omit_is_refused_from_the_arguments(certs):
    from dpstats.errors import PrivacyParameterError

    with pytest.raises(PrivacyParameterError, match="every party must keep all shared rows"):
        Party(base_data()[["id", "x2"]], name="B", tls=certs, formula="~ x2", row_id="id", na_action="omit")


# --------------------------------------------------------------------------- a binomial factor response
BINOMIAL = dict(family="binomial", penalty="ridge", lam=1.0)
DECLARED_G = {"levels": {"g": ["a", "b"]}}


def test_leaders_factor_response_with_declared_levels_neighbours_see_the_same():
    """A text response of a binomial fit at the leader goes through its schema, as vertical_glm's: with
    declared levels a value outside them (or a missing one) is filled by the first level, and every
    channel of every party is the same on both neighbours; the note says which level is modelled."""
    certs = _certs()
    d0 = base_data()
    lead = {"levels": {"yb": ["no", "yes"]}}
    seen = [
        fit(certs, d, lead_formula="yb ~ x1", lead=lead, member=DECLARED_G, **BINOMIAL)
        for d in (d0, one_row(d0, "yb", "secret"), one_row(d0, "yb", np.nan))
    ]
    assert seen[0] == seen[1] == seen[2]
    assert not seen[0]["errors"] and seen[0]["results"]["A"]["statement"]["data_dependent_steps"] == []
    for name in ("A", "B"):
        assert (
            seen[0]["results"][name]["response_note"]
            == "P(yb = 'yes') is modelled (first level 'no' coded 0)"
        )
    assert "secret" not in str(seen[1])


def test_leaders_factor_response_levels_read_from_the_rows_are_a_named_step():
    seen = fit(_certs(), base_data(), lead_formula="yb ~ x1", member=DECLARED_G, **BINOMIAL)
    step = "party 'A': the levels of 'yb' were read from the rows"
    for name in ("A", "B"):
        steps = seen["results"][name]["statement"]["data_dependent_steps"]
        assert len(steps) == 1 and steps[0].startswith(step)
    assert any(step in w for w in seen["warnings"])


def test_strict_refuses_the_leaders_undeclared_binomial_response_whatever_the_rows():
    """Under strict=True the leader's binomial response without declared levels is refused from its
    declaration, the same on both neighbours (session 16; before, it was numeric by declaration and a text
    response was read as missing values, each filled: a wrong fit).  Declared levels fit alike."""
    certs, d0 = _certs(), base_data()
    both = {"A": True, "B": True}
    seen0, seen1 = (
        fit(certs, d, lead_formula="yb ~ x1", member=DECLARED_G, strict=both, **BINOMIAL)
        for d in (d0, one_row(d0, "yb", "secret"))
    )
    assert seen0 == seen1 and not seen0["results"]
    assert (
        "party 'A': family='binomial' under strict=True needs its response 'yb' declared"
        in seen0["errors"]["A"]
    )
    lead = {"levels": {"yb": ["no", "yes"]}}
    declared0, declared1 = (
        fit(certs, d, lead_formula="yb ~ x1", lead=lead, member=DECLARED_G, strict=both, **BINOMIAL)
        for d in (d0, one_row(d0, "yb", "secret"))
    )
    assert declared0 == declared1 and not declared0["errors"]
    assert "'x1' is numeric by declaration" in declared0["results"]["A"]["statement"]["missing_values"]


def test_exact_fit_of_a_factor_response_equals_statsmodels_glm():
    """Without DP the leader's text response is coded as R's glm codes it (first level 0): the networked
    fit equals statsmodels' binomial GLM of (yb == "yes") on x1, x2, g (IRLS to convergence, tol 1e-6)."""
    import statsmodels.api as sm

    df = base_data()
    parties = [
        Party(df[["id", "yb", "x1"]], name="A", tls=_certs(), formula="yb ~ x1", row_id="id", timeout=20),
        Party(df[["id", "x2", "g"]], name="B", tls=_certs(), formula="~ x2 + g", row_id="id", timeout=20),
    ]
    results, errors = run_on_loopback(parties, timeout=60, family="binomial")
    assert not errors
    X = sm.add_constant(np.column_stack([df.x1, df.x2, (df.g == "b").astype(float)]))
    oracle = sm.GLM((df.yb == "yes").astype(float), X, family=sm.families.Binomial()).fit(tol=1e-12)
    table = results["B"].tidy()
    assert list(table["term"]) == ["(Intercept)", "x1", "x2", "gb"]
    np.testing.assert_allclose(table["estimate"], oracle.params, atol=1e-6)
    np.testing.assert_allclose(table["std_error"], oracle.bse, atol=1e-5)


_CERTS: list[str] = []


def _certs() -> str:
    """The module's consortium (A, B), for tests that take no fixture."""
    if not _CERTS:
        where = tempfile.mkdtemp()
        init_consortium(["A", "B"], where)
        _CERTS.append(where)
    return _CERTS[0]


@pytest.mark.parametrize("door", ["dp_glm", "vertical_glm"])
def test_strict_refuses_a_factor_response_in_one_process_whatever_its_levels(door):
    """The same rule in one process: the response's levels read from the rows are refused before their
    number is checked, so a third level in one row does not turn the refusal into another.  Under
    strict=True a plain ``yb`` without declared levels is numeric by declaration (audit s15-attack8 F01),
    so the levels are asked for by ``factor(yb)``, refused from the arguments alone (it would read them)."""
    import dpstats as dp

    d0 = base_data()
    args = dict(family="binomial", eps=1.0, delta=1e-6, bounds={"x1": (-1, 1)}, strict=True)
    if door == "vertical_glm":
        args.update(
            parties={"A": ["x1"], "B": ["x2"]},
            penalty="ridge",
            lam=1.0,
            bounds={"x1": (-1, 1), "x2": (-1, 1)},
        )
    formula = "factor(yb) ~ x1" if door == "dp_glm" else "factor(yb) ~ x1 + x2"
    errors = []
    for d in (d0, one_row(d0, "yb", "secret")):
        with pytest.raises(dp.DPStatsError) as info:
            getattr(dp, door)(formula, d.drop(columns=["id"]), **args)
        errors.append(f"{type(info.value).__name__}: {info.value}")
    assert errors[0] == errors[1]
    assert "factor(yb) needs declared levels: levels={'yb': [...]}" in errors[0]


# --------------------------------------------------------------------------- the command line
def cli_fit(certs, tmp, df, *, member_args=(), lead_args=()) -> dict:
    """``dpstats party lead`` (A) and ``join`` (B) in forked processes, DP mode over TLS on 127.0.0.1.

    Returns each party's exit code, stderr (the port masked), and its ``--json`` result without the
    released values (terms, n, call, privacy statement, warnings)."""
    from test_vertical_tls import finish

    tmp.mkdir(parents=True, exist_ok=True)
    df[["id", "y", "x1", "h"]].to_csv(tmp / "a.csv", index=False)
    df[["id", "x2", "g"]].to_csv(tmp / "b.csv", index=False)
    for name, value in (
        ("a_bounds", LEAD_BOUNDS),
        ("b_bounds", MEMBER_BOUNDS),
        ("b_levels", {"g": ["a", "b"]}),
    ):
        (tmp / f"{name}.json").write_text(json.dumps(value))
    with warnings.catch_warnings():  # the processes warn as the command does (pytest's config raises)
        warnings.simplefilter("default")
        procs = _lead_and_join(certs, tmp, lead_args, member_args)
    seen = {}
    for name, proc in procs:
        code, _, err = finish(proc)
        released = tmp / f"{name}.json"
        out = json.loads(released.read_text()) if released.exists() else None
        if out is not None:
            out = {k: out[k] for k in ("terms", "n", "call", "privacy", "warnings")}
        err = re.sub(r"listening on 127\.0\.0\.1:\d+", "listening on 127.0.0.1:PORT", err)
        seen[name] = {"code": code, "stderr": err, "result": out}
    return seen


def _lead_and_join(certs, tmp, lead_args, member_args):
    from test_vertical_tls import WAIT, Forked

    common = ["--eps", "1", "--delta", "1e-6", "--tls-dir", str(certs), "--row-id", "id", "--timeout", "20"]
    port_file = tmp / "port"
    lead = Forked(
        ["lead", "--data", str(tmp / "a.csv"), "--name", "A", "--formula", "y ~ x1", "--parties", "A,B",
         "--port-file", str(port_file), "--bounds", str(tmp / "a_bounds.json"), "--penalty", "ridge",
         "--lam", "1", "--seed", "1", "--json", str(tmp / "A.json"), *common, *lead_args],
        tmp, "A",
    )  # fmt: skip
    deadline = time.monotonic() + WAIT
    while not port_file.exists():
        assert time.monotonic() < deadline and lead.poll() is None, lead.communicate(timeout=WAIT)
        time.sleep(0.02)
    member = Forked(
        ["join", "--data", str(tmp / "b.csv"), "--name", "B", "--leader", "A", "--formula", "~ x2 + g",
         "--connect", f"127.0.0.1:{port_file.read_text()}", "--bounds", str(tmp / "b_bounds.json"),
         "--seed", "2", "--json", str(tmp / "B.json"), *common, *member_args],
        tmp, "B",
    )  # fmt: skip
    return [("B", member), ("A", lead)]


def test_cli_party_declared_levels_neighbours_see_the_same(certs, tmp_path):
    """``--levels`` reaches the member's Party: a text cell outside the declared levels is filled, no term
    or step names it, and every party prints the same on both neighbours."""
    d0 = base_data()
    seen0, seen1 = (
        cli_fit(certs, tmp_path / d, df, member_args=["--levels", str(tmp_path / d / "b_levels.json"),
                                                      "--na-action", "fill"])
        for d, df in (("d0", d0), ("d1", one_row(d0, "g", "secret")))
    )  # fmt: skip
    assert seen0 == seen1
    assert seen0["A"]["code"] == seen0["B"]["code"] == 0, seen0
    assert seen0["B"]["result"]["terms"] == ["(Intercept)", "x1", "x2", "gb"]
    assert seen0["A"]["result"]["privacy"]["data_dependent_steps"] == []
    assert "secret" not in str(seen1)


@pytest.mark.parametrize("where", ["A", "B", "both"])
def test_cli_party_strict_refuses_a_mixed_setting_or_an_undeclared_column(certs, tmp_path, where):
    """``--strict`` at one party only: refused from the settings (the member's check, exit 2; the leader
    names it, exit 3); at both: the member's g without declared levels is numeric by declaration and its
    missing bounds are refused (exit 2, the leader 3).  Before any data is sent, the same on both neighbours."""
    d0 = base_data()
    flag = {
        "lead_args": ["--strict"] if where in ("A", "both") else [],
        "member_args": ["--strict"] if where in ("B", "both") else [],
    }
    seen0 = cli_fit(certs, tmp_path / "d0", d0, **flag)
    seen1 = cli_fit(certs, tmp_path / "d1", one_row(d0, "g", "secret"), **flag)
    assert seen0 == seen1
    assert seen0["B"]["code"] == 2 and seen0["A"]["code"] == 3, seen0
    assert seen0["A"]["result"] is seen0["B"]["result"] is None
    refused = STRICT_REFUSAL if where == "both" else MIXED.format(A=where == "A", B=where == "B")
    assert refused in seen0["B"]["stderr"] and refused in seen0["A"]["stderr"]
    assert "no data had been sent" in seen0["B"]["stderr"]
