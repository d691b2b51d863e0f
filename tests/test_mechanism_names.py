"""Every door's ledger names its mechanisms as a statistician reads them, the same in every channel.

The methods record short codes ("canonical_lipschitz top-k", "Gaussian (zCDP)", "Laplace
AboveThreshold"); print, summary, ``ledger()`` (R's ``tidy(fit$ledger)``), ``to_dict()`` and the
report show the readable name ("canonical Lipschitz mechanism (top-k)", "Gaussian mechanism
(zCDP)", "AboveThreshold (sparse vector, Laplace noise)") from one mapping
(``dpstats.privacy.mechanism_names``).  Each door runs once, seeded (the golden cases and the doors
they do not cover: dp_glm, dp_lm with the Laplace mechanism, private bounds, dp_select_infer).
"""

from __future__ import annotations

import html
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from golden.cases import CASES

# a code: a selector's topk= value, a bare noise family, a family and a variant glued together, a "|"
CODE = re.compile(
    r"\b(?:canonical_lipschitz|oneshot_gumbel|peeling|joint) top-k\b|\||^chi-square tail$"
    r"|^(?:Gaussian|Laplace|exponential)(?: \(zCDP\)| AboveThreshold| peeling.*)?$"
)
# a readable name says which kind of step it is
KIND = re.compile(
    r"mechanism|AboveThreshold|Report Noisy Min|bound|none \(|post-processing|parallel composition"
)


def _regression(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    df["y"] = df.x1 - df.x2 + rng.uniform(-1, 1, n)
    return df


def _binary(n: int = 20_000, seed: int = 1) -> pd.DataFrame:
    df = _regression(n, seed)
    df["y"] = (df.y > 0).astype(int)
    return df


MORE = {
    "dp_glm": lambda: dp.dp_glm(
        "y ~ x1 + x2", _binary(), eps=8.0, delta=1e-6, bounds={"x1": (-1, 1), "x2": (-1, 1)}, random_state=2
    ),
    "dp_lm_laplace": lambda: dp.dp_lm(
        "y ~ .", _regression(), eps=2.0, bounds=(-3, 3), n_boot=200, random_state=3
    ),
    "dp_sis_auto_bounds": lambda: dp.dp_sis(
        "y ~ .", _regression(), eps=4.0, k=2, bounds="auto", random_state=4
    ),
    "dp_select_infer": lambda: dp.dp_select_infer(
        "y ~ .", _regression(4000), eps=2.0, delta=1e-6, k=2, bounds=(-3, 3), n_boot=200, random_state=5
    ),
}
RUNS = {**CASES, **MORE}


@pytest.fixture(scope="module")
def results():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: make() for name, make in RUNS.items()}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_ledger_mechanisms_are_named_in_words(results, name):
    r = results[name]
    for entry in r.privacy.ledger:
        for part in entry.mechanism.split("; "):
            assert not CODE.search(part) and KIND.search(part), f"{name}: mechanism {part!r} is a code"
    for mechanism in r.privacy.mechanisms:
        for part in mechanism.split("; "):
            assert not CODE.search(part) and KIND.search(part), f"{name}: statement mechanism {part!r}"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_same_names_in_print_tidy_dict_and_report(results, name, tmp_path):
    r = results[name]
    named = [e.mechanism for e in r.privacy.ledger]
    ledger = r.ledger()
    if "part" not in ledger:  # dp_select_infer's ledger() lists its parts' steps (checked below)
        assert list(ledger["mechanism"]) == named
    assert [e["mechanism"] for e in r.to_dict()["privacy"]["ledger"]] == named
    summary = str(r.summary())
    report = open(r.report(str(tmp_path / f"{name}.html")), encoding="utf-8").read()
    for mechanism in named:
        assert f"<td>{html.escape(mechanism)}</td>" in report, (
            f"{name}: {mechanism!r} not in the report's ledger"
        )
    for mechanism in ledger[
        "mechanism"
    ]:  # summary's ledger is ledger() (dp_select_infer's: its parts' steps)
        assert mechanism in summary, f"{name}: {mechanism!r} not in summary"
        assert f"<td>{html.escape(mechanism)}</td>" in report, f"{name}: {mechanism!r} not in the report"
    for mechanism in r.privacy.mechanisms:
        assert mechanism in str(r) or math_inf(r), f"{name}: {mechanism!r} not in print"


def math_inf(r) -> bool:
    """At eps = inf print says "Privacy: none (eps = inf)" and names no mechanism."""
    return r.privacy.eps == float("inf")


def test_known_doors_name_their_mechanisms(results):
    assert results["dp_sis_bounds"].privacy.mechanisms == ["canonical Lipschitz mechanism (top-k)"]
    assert results["dp_lm"].privacy.mechanisms == ["Gaussian mechanism (zCDP)"]
    assert results["dp_lm_laplace"].privacy.mechanisms == ["Laplace mechanism"]
    assert results["dp_knockoff_I"].privacy.mechanisms == [
        "Gaussian mechanism",
        "Laplace mechanism",
        "high-probability bound (chi-square tail)",
    ]
    auto = [e.mechanism for e in results["dp_sis_auto_bounds"].privacy.ledger]
    assert (
        auto[0].startswith("private quantile (bounds)") and auto[1] == "canonical Lipschitz mechanism (top-k)"
    )
    parts = results["dp_select_infer"].ledger()
    assert set(parts["mechanism"]) == {"canonical Lipschitz mechanism (top-k)", "Gaussian mechanism (zCDP)"}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_zcdp_steps_name_the_gaussian_mechanism_alike(results, name):
    """A step accounted in zCDP (its ρ in the ledger) names its Gaussian noise "Gaussian mechanism (zCDP)"
    in every door: dp_gmm's ledger said "Gaussian mechanism" where dp_lm, dp_glm and dp_pca said "(zCDP)"."""
    for entry in results[name].privacy.ledger:
        if entry.rho is not None:
            gaussian = [part for part in entry.mechanism.split("; ") if part.startswith("Gaussian")]
            assert all(part == "Gaussian mechanism (zCDP)" for part in gaussian), (
                f"{name}: {entry.mechanism!r}"
            )


def test_dp_gmm_names_its_gaussian_steps_as_zcdp(results):
    names = {part for e in results["dp_gmm"].privacy.ledger for part in e.mechanism.split("; ")}
    assert "Gaussian mechanism (zCDP)" in names and "Gaussian mechanism" not in names


def test_plans_name_mechanisms_as_results_do():
    pl = dp.plan("dp_lm", n=1000, p=3, eps=1.0, trials=2, random_state=0)
    assert pl.ledger["dp_lm"][0]["mechanism"] == "Laplace mechanism"
    assert "[Laplace mechanism]" in str(pl.summary())
