"""Which fits a SessionPlan's slots serve, as README says, and why the others are refused (outside audit
s15, F02).

README named dp_knockoff among the doors a Gaussian slot (``gaussian_fits``) serves, and ``"zcdp"`` slots
for dp_gmm; the session's accountant refused both at the slot's (eps, delta), with the advice "pass the
slot's eps and delta to the front door", which is what had been done.  The refusal is right: a Gaussian
slot is composed as a Gaussian at every eps, and dp_knockoff also has a delta-only step (its sensitivity
bound fails with probability δ₂), dp_gmm zCDP steps (module docstring of
:mod:`dpstats.privacy.session`).  README now lists the doors a Gaussian slot serves and sends the others
to an (eps, delta) slot, and the refusal says why and what to do.

Oracles: each door run in its slot through the public API; the Gaussian slots' total checked with the
analytic Gaussian of Balle & Wang (2018, Thm 8), written here from the paper.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import dpstats as dp
from dpstats.privacy import bounds as pb

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
DOOR = re.compile(r"\b(dp_\w+|vertical_glm)\b")


def readme_doors(opening: str) -> list[str]:
    """The door names in the README sentence that begins with ``opening`` (up to its first full stop)."""
    text = " ".join(README.split())
    start = text.index(opening) + len(opening)
    return DOOR.findall(text[start : text.index(". ", start)])


def gaussian_eps(delta: float, mu: float) -> float:
    """The least eps at which a Gaussian of mu = Δ/σ is (eps, delta)-DP: Balle & Wang (2018), Thm 8,
    δ(eps) = Φ(−eps/mu + mu/2) − e^eps·Φ(−eps/mu − mu/2)."""

    def excess(eps: float) -> float:
        return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta

    return optimize.brentq(excess, 0.0, 100.0, xtol=1e-12)


def rows(n: int = 20000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(rng.uniform(1, 9, (n, 3)), columns=["x1", "x2", "x3"])
    d["y"] = d.x1 - 0.5 * d.x2 + rng.normal(0, 1, n)
    d["yb"] = (d.x2 + rng.normal(0, 1, n) > 5).astype(float)
    return d


BOX = {"x1": (1, 9), "x2": (1, 9), "x3": (1, 9)}
F3 = "y ~ x1 + x2 + x3"
# every door README names, as call(data, eps, delta, accountant)
CALLS = {
    "dp_lm": lambda d, e, dl, a: dp.dp_lm(F3, d, eps=e, delta=dl, bounds=BOX | {"y": (-10, 15)}, accountant=a),
    "dp_glm": lambda d, e, dl, a: dp.dp_glm("yb ~ x1 + x2", d, eps=e, delta=dl, bounds=BOX, accountant=a),
    "dp_pca": lambda d, e, dl, a: dp.dp_pca("~ x1 + x2 + x3", d, k=1, eps=e, delta=dl, bounds=BOX, accountant=a),
    "vertical_glm": lambda d, e, dl, a: dp.vertical_glm(  # each round's noise is one draw per row: few of both
        F3, d.iloc[:500], parties=[["x1"], ["x2", "x3"]], eps=e, delta=dl, bounds=BOX | {"y": (-10, 15)},
        penalty="ridge", lam=1.0, rounds=2, accountant=a,
    ),
    "dp_knockoff": lambda d, e, dl, a: dp.dp_knockoff(
        F3, d, eps=e, delta=dl, bounds=16.0, sigma=1.0, beta_norm=1.2, random_state=1, accountant=a, oc_trials=0
    ),
    "dp_gmm": lambda d, e, dl, a: dp.dp_gmm(
        "~ x1 + x2", d, k=2, eps=e, delta=dl, bounds=BOX, random_state=1, accountant=a, oc_trials=0
    ),
}  # fmt: skip
GAUSSIAN_SLOT = readme_doors("A Gaussian slot serves the doors whose every step is Gaussian:")
OTHER_SLOT = readme_doors("It takes no analysis with any other step,")


def test_readme_names_every_door_once():
    assert sorted(GAUSSIAN_SLOT) == ["dp_glm", "dp_lm", "dp_pca", "vertical_glm"]
    assert sorted(OTHER_SLOT) == ["dp_gmm", "dp_knockoff"]


def test_every_door_readme_says_a_gaussian_slot_serves_runs_in_one():
    """One Gaussian slot each, at the slot's (eps, delta): all admitted, and the fits' Gaussian steps
    together cost at most the session's eps at its delta by the analytic Gaussian."""
    session = dp.SessionPlan(eps=6.0, delta=1e-5)
    slots = session.gaussian_fits(len(GAUSSIAN_SLOT))
    acc, data = session.accountant(), rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [CALLS[door](data, s.eps, s.delta, acc) for door, s in zip(GAUSSIAN_SLOT, slots)]
    assert [s.used_by for s in slots] == GAUSSIAN_SLOT
    leaves = [leaf for f in fits for e in f.privacy.ledger for leaf in e.event.flat()]
    assert {leaf.kind for leaf in leaves} == {"gaussian"}
    mu = math.sqrt(math.fsum(leaf.count / leaf.noise_multiplier**2 for leaf in leaves))
    assert gaussian_eps(1e-5, mu) <= 6.0 * (1 + 1e-6)


@pytest.mark.parametrize("door", OTHER_SLOT)
def test_a_gaussian_slot_refuses_what_readme_sends_elsewhere_and_says_why(door):
    """At a Gaussian slot's own (eps, delta) the fit is refused, nothing is charged, and the message names
    its non-Gaussian step and the (eps, delta) slot to declare instead; declared so, the fit runs there."""
    session = dp.SessionPlan(eps=6.0, delta=1e-5)
    slot = session.gaussian_fits(2)[0]
    acc, data = session.accountant(), rows(3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(dp.BudgetExceededError) as caught:
            CALLS[door](data, slot.eps, slot.delta, acc)
    said = str(caught.value)
    step = {"dp_knockoff": "delta-only", "dp_gmm": "zCDP"}[door]
    assert (
        f"a Gaussian slot takes only analyses whose every step is Gaussian, and this one also has {step}"
        in said
    )
    assert "Nothing was spent" in said and "SessionPlan.add(label, eps, delta)" in said
    assert "pass the slot's eps and delta" not in said  # the old advice, which the caller had followed
    assert acc.charges == [] and all(s.used_by is None for s in session.slots)

    other = dp.SessionPlan(eps=6.0, delta=1e-5)
    own = other.add(door, eps=1.0, delta=2e-6)  # (gaussian_fits would share the rest by PLD, slowly)
    acc = other.accountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = CALLS[door](data, own.eps, own.delta, acc)
    assert own.used_by == door and (fit.privacy.eps, fit.privacy.delta) == (1.0, 2e-6)


def test_the_other_refusals_say_their_own_reason():
    """Too little Gaussian noise for any unused Gaussian slot; too much budget for any unused (eps, delta)
    slot: each message says which, with the call's budget (public) and nothing else."""
    session = dp.SessionPlan(eps=6.0, delta=1e-5)
    slot = session.gaussian_fits(2)[0]
    acc, data = session.accountant(), rows()
    with pytest.raises(dp.BudgetExceededError, match="its Gaussian steps have less noise than any unused"):
        CALLS["dp_pca"](data, 2 * slot.eps, slot.delta, acc)
    other = dp.SessionPlan(eps=6.0, delta=1e-5)
    other.add("a small step", eps=0.5, delta=1e-6)
    with pytest.raises(dp.BudgetExceededError) as caught:
        CALLS["dp_pca"](data, 1.0, 1e-6, other.accountant())
    said = str(caught.value)
    assert "it costs (eps = 1, delta = 1e-06), more than any unused (eps, delta) slot takes" in said
    assert "Gaussian slot" not in said.split(". Nothing")[0]  # no Gaussian slot is left to explain


def test_private_bounds_are_refused_by_gaussian_slots_before_they_draw(monkeypatch):
    """bounds="auto" adds exponential mechanisms, which no Gaussian slot takes: refused before the
    quantiles are drawn from the rows (before, they were drawn, the spend refused, and the bounds'
    own charge refused too, so a release went uncharged while the error said nothing was spent)."""
    draws = []
    draw = pb.PrivateBounds._draw
    monkeypatch.setattr(
        pb.PrivateBounds, "_draw", lambda self, *a, **k: draws.append(1) or draw(self, *a, **k)
    )
    session = dp.SessionPlan(eps=6.0, delta=1e-5)
    slot = session.gaussian_fits(2)[0]
    acc = session.accountant()
    with pytest.raises(dp.BudgetExceededError, match="exponential-mechanism .bounded range. steps"):
        dp.dp_pca("~ x1 + x2", rows(), k=1, eps=slot.eps, delta=slot.delta, bounds="auto", accountant=acc)
    assert draws == [] and acc.charges == []
    # a call no unused (eps, delta) slot can pay is refused before the rows are read too (before, the
    # bounds drew and, the call refused, were charged alone into the slot, using it up)
    other = dp.SessionPlan(eps=6.0, delta=1e-5)
    small = other.add("a small step", eps=0.5, delta=1e-6)
    acc = other.accountant()
    with pytest.raises(dp.BudgetExceededError, match="it costs .eps = 1, delta = 1e-06."):
        dp.dp_pca("~ x1 + x2", rows(), k=1, eps=1.0, delta=1e-6, bounds="auto", accountant=acc)
    assert draws == [] and acc.charges == [] and small.used_by is None


@pytest.mark.parametrize("door", ["dp_knockoff", "dp_gmm"])
def test_the_planner_does_not_plan_them_at_a_gaussian_slots_share(door):
    """dp.plan(session=) gave them a Gaussian slot's (eps, delta), which the session does not admit (and
    ten knockoff fits at it compose to eps 3.2018 > 3.2 at 1e-5; ten dp_gmm fits, by zCDP, to 3.46)."""
    with pytest.raises(
        dp.PrivacyParameterError, match=r"is not all Gaussian .*a session declares as one \(eps, delta\) step"
    ):
        dp.plan(door, n=2000, p=4, session=(3.2, 1e-5), analyses=10, trials=2, random_state=1)
