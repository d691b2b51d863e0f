"""A zCDP plan's ledger rows say what they are: a share of the budget, and each step's own guarantee.

Audit s12, finding N4: the rows of an all-Gaussian plan showed (eps·share, delta·share), which no step
has by itself (dp_pca's column sums "0.25" alone are eps 0.48 at delta 1e-6).  Each row now carries the
step's own ρ and its own eps at the plan's delta (``rho``, ``eps_alone``, ``delta_alone``), checked here
against dp_accounting's PLD accountant (an oracle nobody here wrote): a Gaussian of noise multiplier
1/√(2ρ), replace-one ("REPLACE_SPECIAL", sensitivity 1), value discretisation 1e-5, to 1e-3.  The shares
still sum to the charged total, and every text output names them as shares.
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402

BOUNDS = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-4, 4)}


def data(n: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.uniform(-1, 1, (n, 3)), columns=["x1", "x2", "x3"])
    d["y"] = d.x1 + rng.normal(0, 0.3, n)
    return d


def fits():
    d = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield (
            "dp_pca",
            dp.dp_pca("~ x1 + x2 + x3", d, k=2, eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=1),
        )
        yield "dp_lm", dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=1)
        yield "dp_glm", dp.dp_glm("y ~ x1 + x2", d, eps=2.0, delta=1e-5, bounds=BOUNDS, random_state=1)


FITS = dict(fits())


def pld_eps(noise_multiplier: float, delta: float) -> float:
    acc = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL,
        value_discretization_interval=1e-5,
    )
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("door", sorted(FITS))
def test_each_gaussian_steps_own_eps_is_the_pld_accountants(door):
    result = FITS[door]
    shares = [e for e in result.privacy.ledger if e.rho is not None]
    assert len(shares) >= 2, "a plan split over several Gaussian steps"
    for e in shares:
        assert e.delta_alone == result.privacy.delta
        assert e.privacy_event.noise_multiplier == pytest.approx(1 / math.sqrt(2 * e.rho), rel=1e-12)
        oracle = pld_eps(1.0 / math.sqrt(2.0 * e.rho), e.delta_alone)
        assert e.eps_alone == pytest.approx(oracle, abs=1e-3)
        assert e.eps_alone > e.eps  # the share is not the step's guarantee: hence the new columns


@pytest.mark.parametrize("door", sorted(FITS))
def test_totals_unchanged_and_the_shares_sum_to_them(door):
    st = FITS[door].privacy
    assert math.fsum(e.eps for e in st.ledger) == pytest.approx(st.eps, rel=1e-12)
    assert math.fsum(e.delta for e in st.ledger) == pytest.approx(st.delta, rel=1e-12)
    composed = dp.compose([FITS[door]], delta=st.delta)
    assert composed.eps <= st.eps * (1 + 1e-9)


def test_every_output_names_the_shares_and_the_steps_own_guarantee():
    result = FITS["dp_pca"]
    text = str(result.summary())
    ledger = text[text.index("Ledger:") : text.index("Events (")]
    assert "eps share" in ledger and "delta share" in ledger and "eps alone" in ledger
    assert "not of a step alone" in " ".join(ledger.split())
    table = result.ledger()
    assert {"rho", "eps_alone", "delta_alone"} <= set(table.columns)
    row = result.to_dict()["privacy"]["ledger"][1]
    assert row["eps_alone"] == pytest.approx(pld_eps(1 / math.sqrt(2 * row["rho"]), 1e-6), abs=1e-3)
    path = os.path.join(tempfile.mkdtemp(), "pca.html")
    dp.report(result, path)
    html = open(path, encoding="utf-8").read()
    assert "<th>eps share</th>" in html and "<th>eps alone</th>" in html and "not of a step alone" in html


def test_a_ledger_without_shares_keeps_its_columns():
    """A pure-DP (Laplace) ledger states each step's own (eps, delta): no share columns, no note."""
    d = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, bounds=BOUNDS, random_state=1)
    assert all(e.rho is None and e.eps_alone is None for e in result.privacy.ledger)
    text = str(result.summary())
    assert "eps share" not in text and "eps alone" not in text
