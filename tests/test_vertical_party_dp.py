"""DP mode of the networked vertical GLM (dpstats.vertical.Party) on 127.0.0.1, parties in threads.

Every party clips and noises its own linear predictor; the plan (ledger, σs) must be the in-process
``vertical_glm`` DP mode's.  Per-party noise sources cannot reproduce the single in-process noise stream,
so equality of the fits is checked at eps = 1e9 (noise σ ~ 1e-8) against the in-process fit and the
closed-form ridge fit, to 1e-3.  Every network wait is bounded (socket timeouts of 5 s, joins of 20 s).
"""

from __future__ import annotations

from dataclasses import replace

import math
import threading

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError
from dpstats.methods import privreg as m
from dpstats.privacy.calibration import gaussian_rho_from_eps_delta
from dpstats.privacy.randomness import NoiseSource
from dpstats.vertical import Party, ProtocolError, SecureChannel
from dpstats.vertical.threat import network_notes

# these tests exercise the deprecated pre-shared-key channel on purpose
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY = "5a" * 32
BOUNDS = {
    "x1": (-1, 1),
    "x2": (-1, 1),
    "x3": (-1, 1),
    "x4": (-1, 1),
    "x5": (-1, 1),
    "x6": (-1, 1),
    "y": (-3, 3),
}


def make_data(n: int = 1500, seed: int = 0, binary: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1.2, 1.2, (n, 6)), columns=[f"x{i}" for i in range(1, 7)])
    lin = 0.3 + df.x1 - df.x3 + 0.5 * df.x2 + 0.4 * df.x6
    df["y"] = (
        rng.binomial(1, 1 / (1 + np.exp(-lin))).astype(float)
        if binary
        else lin + 0.5 * rng.standard_normal(n)
    )
    df["id"] = [f"r{i}" for i in range(n)]
    return df


def two_parties(df):
    return [
        Party(df[["id", "y", "x1", "x2"]], KEY, name="A", formula="y ~ x1 + x2", row_id="id", timeout=5),
        Party(df[["id", "x3", "x4"]], KEY, name="B", formula="~ x3 + x4", row_id="id", timeout=5),
    ]


def run(parties, lead_kwargs, member_kwargs, timeout=20):
    """Leader and members in threads; returns (results, errors) by party name."""
    from test_vertical_network import run_threads

    return run_threads(parties, lead_kwargs, timeout=timeout, member_kwargs=member_kwargs)


DP = dict(family="gaussian", penalty="ridge", lam=0.1, rounds=5, eta_clip=2.0, coef_share=0.2)


@pytest.mark.filterwarnings(
    "ignore::dpstats.errors.ChanceWarning"
)  # the in-process DP fit warns sigma_eta > eta_clip (test_noise_dominated.py)
def test_ledger_and_statement_equal_the_in_process_dp_fit():
    df = make_data()
    results, errors = run(
        two_parties(df),
        dict(DP, eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=1),
        {"B": dict(eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=2)},
    )
    assert not errors, errors
    ref = dp.vertical_glm(
        "y ~ x1 + x2 + x3 + x4",
        df,
        parties=[["x1", "x2"], ["x3", "x4"]],
        eps=1.0,
        delta=1e-6,
        bounds=BOUNDS,
        random_state=3,
        **DP,
    )
    for name in "AB":
        st = results[name].privacy
        assert math.isclose(sum(e.eps for e in st.ledger), 1.0)
        assert math.isclose(sum(e.delta for e in st.ledger), 1e-6)
        assert [vars(e) for e in st.ledger] == [vars(e) for e in ref.privacy.ledger]
        assert (st.eps, st.delta, st.neighbouring) == (1.0, 1e-6, "replace")
        assert st.assumptions == ref.privacy.assumptions and st.sensitivities == ref.privacy.sensitivities
        # the same disclosure notes, minus the in-process "simulated" sentence, plus the channel's
        # and who-learns-what notes of a networked fit
        base = [s for s in ref.privacy.notes if "simulated" not in s]
        assert st.notes == base + network_notes("psk", 2, True)
        assert "clipped and with Gaussian noise" in " ".join(st.notes)
        assert results[name].iterations == 5 and results[name].coefficients["std_error"].isna().all()
    assert results["A"].coef() == results["B"].coef()


def test_noise_scales_are_the_derived_sigmas(monkeypatch):
    """Three parties, binomial: each party's Gaussian releases use σ = Δ₂/√(2ρ_release) (to 1e-12)."""
    scales: list[float] = []
    lock = threading.Lock()
    orig = NoiseSource.gaussian

    def spy(self, value, scale):
        with lock:
            scales.append(float(scale))
        return orig(self, value, scale)

    monkeypatch.setattr(NoiseSource, "gaussian", spy)
    df = make_data(binary=True)
    parties = two_parties(df) + [
        Party(df[["id", "x5", "x6"]], KEY, name="C", formula="~ x5 + x6", row_id="id", timeout=5)
    ]
    T, K, share, lam, C, n = 3, 3, 0.25, 0.5, 1.5, len(df)
    kw = dict(eps=2.0, delta=1e-5, bounds=BOUNDS)
    results, errors = run(
        parties,
        dict(
            kw,
            family="binomial",
            penalty="ridge",
            lam=lam,
            rounds=T,
            eta_clip=C,
            coef_share=share,
            random_state=1,
        ),
        {"B": dict(kw, random_state=2), "C": dict(kw, random_state=3)},
    )
    assert not errors, errors
    rho = gaussian_rho_from_eps_delta(2.0, 1e-5)  # every release Gaussian: the exact conversion
    want = []
    for R in (math.sqrt(3.0), math.sqrt(2.0), math.sqrt(2.0)):  # the leader's row also holds the intercept
        d_eta, d_beta = m.binomial_ridge_sensitivities(n, R, lam, C)
        want += [d_eta / math.sqrt(2 * (1 - share) * rho / (K * T))] * T + [
            d_beta / math.sqrt(2 * share * rho / K)
        ]
    np.testing.assert_allclose(sorted(scales), sorted(want), rtol=1e-12)
    sens = results["C"].privacy.ledger[0].sensitivity
    for R in (math.sqrt(3.0), math.sqrt(2.0)):
        d_eta, d_beta = m.binomial_ridge_sensitivities(n, R, lam, C)
        assert f"Δ₂(η)={d_eta:.4g}, Δ₂(β)={d_beta:.4g}" in sens


def test_huge_eps_equals_in_process_and_ridge_fit():
    """eps = 1e9: networked = in-process DP fit = closed-form ridge on the clipped data, to 1e-3."""
    df = make_data()
    kw = dict(DP, rounds=40, eta_clip=4.0)
    results, errors = run(
        two_parties(df),
        dict(kw, eps=1e9, delta=1e-6, bounds=BOUNDS, random_state=1),
        {"B": dict(eps=1e9, delta=1e-6, bounds=BOUNDS, random_state=2)},
    )
    assert not errors, errors
    cols = ["x1", "x2", "x3", "x4"]
    ref = dp.vertical_glm(
        "y ~ x1 + x2 + x3 + x4",
        df,
        parties=[cols[:2], cols[2:]],
        eps=1e9,
        delta=1e-6,
        bounds=BOUNDS,
        random_state=3,
        **kw,
    )
    X = np.column_stack([np.ones(len(df)), df[cols].clip(-1, 1).to_numpy()])
    y, n = df.y.clip(-3, 3).to_numpy(), len(df)
    # (1/2n)·‖y − Xβ‖² + λ/2·‖β‖² (intercept penalized in DP mode): β = (XᵀX/n + λI)⁻¹Xᵀy/n
    ridge = np.linalg.solve(X.T @ X / n + 0.1 * np.eye(5), X.T @ y / n)
    terms = ["(Intercept)"] + cols
    net = np.array([results["A"].coef()[t] for t in terms])
    np.testing.assert_allclose(net, [ref.coef()[t] for t in terms], atol=1e-3)
    np.testing.assert_allclose(net, ridge, atol=1e-3)


def test_mismatched_eps_is_refused_before_any_data_is_sent(monkeypatch):
    sent: list[str] = []
    orig = SecureChannel.send

    def spy(self, msg):
        sent.append(msg.get("type"))
        return orig(self, msg)

    monkeypatch.setattr(SecureChannel, "send", spy)
    df = make_data(n=200)
    results, errors = run(
        two_parties(df),
        dict(DP, eps=1.0, delta=1e-6, bounds=BOUNDS),
        {"B": dict(eps=2.0, delta=1e-6, bounds=BOUNDS)},
    )
    assert not results
    assert isinstance(errors["A"], PrivacyParameterError)
    assert "disagree on the privacy budget" in str(errors["A"]) and "eps=2.0" in str(errors["A"])
    assert isinstance(errors["B"], ProtocolError) and "disagree on the privacy budget" in str(errors["B"])
    # the member's greeting, the leader's welcome (its strict), the member's hello: no setup (y), no linear
    # predictor, no coefficient
    assert set(sent) == {"ready", "welcome", "hello", "abort"}
    # a member that gives no eps to a DP leader is refused the same way
    sent.clear()
    results, errors = run(two_parties(df), dict(DP, eps=1.0, delta=1e-6, bounds=BOUNDS), {"B": {}})
    assert (
        not results
        and "no DP (eps=None)" in str(errors["A"])
        and set(sent) == {"ready", "welcome", "hello", "abort"}
    )


def test_unnoised_network_fit_keeps_its_leak_statement():
    df = make_data(n=300)
    results, errors = run(two_parties(df), dict(family="gaussian"), {"B": {}})
    assert not errors, errors
    st = results["B"].privacy
    assert math.isinf(st.eps) and "NO formal privacy guarantee" in " ".join(st.notes)
    assert "exact linear predictors shared every sweep" in st.ledger[0].step


def test_member_without_bounds_is_refused_before_connecting():
    with pytest.raises(PrivacyParameterError, match="bounds"):
        two_parties(make_data(n=50))[1].connect("127.0.0.1", 1, eps=1.0, delta=1e-6)


def test_member_refuses_a_sweep_beyond_the_agreed_plan(monkeypatch):
    """A leader that asks for one more sweep than the plan gets a refusal, not an extra release."""
    from dpstats.vertical import party as party_module

    orig = m.block_coordinate_descent

    def greedy(blocks, y, family, sweeps, **kwargs):
        return orig(blocks, y, family, replace(sweeps, max_iter=sweeps.max_iter + 1), **kwargs)

    monkeypatch.setattr(party_module.m, "block_coordinate_descent", greedy)
    results, errors = run(
        two_parties(make_data(n=200)),
        dict(DP, eps=1.0, delta=1e-6, bounds=BOUNDS),
        {"B": dict(eps=1.0, delta=1e-6, bounds=BOUNDS)},
    )
    assert not results
    assert isinstance(errors["B"], PrivacyParameterError) and "beyond the agreed DP plan" in str(errors["B"])
    assert isinstance(errors["A"], ProtocolError) and "beyond the agreed DP plan" in str(errors["A"])


# --------------------------------------------------------------------------- `dpstats party` processes
def _party_processes(tmp_path, member_eps: str):
    """Leader and one member as real `dpstats party` processes in DP mode on 127.0.0.1."""
    import os
    import subprocess
    import sys
    import time

    from test_vertical_network import data

    df = data(n=400, seed=4)
    df[["id", "y", "x1", "x2"]].to_csv(tmp_path / "a.csv", index=False)
    df[["id", "x3", "x4"]].to_csv(tmp_path / "b.csv", index=False)
    (tmp_path / "bounds.json").write_text("[-4, 4]")
    cli = [sys.executable, "-m", "dpstats.cli", "party"]
    key = tmp_path / "psk.hex"
    subprocess.run([*cli, "keygen", "--out", str(key)], check=True, timeout=60, capture_output=True)
    env = dict(os.environ, TQDM_DISABLE="1")
    common = [
        "--key-file",
        str(key),
        "--row-id",
        "id",
        "--timeout",
        "20",
        "--delta",
        "1e-6",
        "--bounds",
        str(tmp_path / "bounds.json"),
    ]
    port_file = tmp_path / "port"
    lead = subprocess.Popen(
        [
            *cli,
            "lead",
            "--data",
            str(tmp_path / "a.csv"),
            "--formula",
            "y ~ x1 + x2",
            "--parties",
            "2",
            "--port-file",
            str(port_file),
            "--family",
            "binomial",
            "--penalty",
            "ridge",
            "--lam",
            "5",
            "--eps",
            "1",
            "--seed",
            "1",
            "--rounds",
            "6",
            "--json",
            str(tmp_path / "a.json"),
            *common,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not port_file.exists():
        assert time.monotonic() < deadline and lead.poll() is None, lead.stderr.read() if lead.poll() else ""
        time.sleep(0.05)
    member = subprocess.Popen(
        [
            *cli,
            "join",
            "--data",
            str(tmp_path / "b.csv"),
            "--name",
            "B",
            "--connect",
            f"127.0.0.1:{port_file.read_text()}",
            "--eps",
            member_eps,
            "--seed",
            "2",
            "--json",
            str(tmp_path / "b.json"),
            *common,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    return [
        lead.communicate(timeout=90) + (lead.returncode,),
        member.communicate(timeout=90) + (member.returncode,),
    ]


@pytest.mark.slow
def test_dp_fit_between_dpstats_party_processes(tmp_path):
    import json
    import math

    (lead_out, lead_err, lead_rc), (_, member_err, member_rc) = _party_processes(tmp_path, "1")
    assert lead_rc == 0 and member_rc == 0, lead_err + member_err
    for name in ("a", "b"):
        res = json.loads((tmp_path / f"{name}.json").read_text())
        privacy = res["privacy"]
        assert privacy["eps"] == 1 and privacy["delta"] == 1e-6
        assert math.isclose(sum(e["eps"] for e in privacy["ledger"]), 1.0, rel_tol=1e-12)
        assert privacy["seeded"] is True
    assert "(1, 1e-06)-DP" in lead_out


@pytest.mark.slow
def test_dpstats_party_processes_with_different_eps_stop_before_sending_data(tmp_path):
    (_, lead_err, lead_rc), (_, member_err, member_rc) = _party_processes(tmp_path, "2")
    assert lead_rc != 0 and member_rc != 0
    assert "disagree on the privacy budget" in lead_err + member_err
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "b.json").exists()


def test_missing_delta_at_finite_eps_is_refused_in_process_and_by_every_party():
    """No silent delta = 1e-6 any more (as every Gaussian door): vertical_glm, the leader's serve() and a
    member's connect() refuse eps without delta (or delta = 0) before reading or sending anything;
    eps = inf needs no delta."""
    from dpstats.errors import PrivacyParameterError

    df = make_data(200)
    acc = dp.Accountant(eps=10, delta=1e-3)
    for delta in ({}, {"delta": 0}):
        with pytest.raises(PrivacyParameterError, match="needs delta > 0 at finite eps"):
            dp.vertical_glm(
                "y ~ x1 + x2 + x3", df, parties=[["x1"], ["x2", "x3"]], eps=1.0, bounds=(-2, 2),
                penalty="ridge", lam=0.1, accountant=acc, **delta,
            )  # fmt: skip
        a, b = two_parties(df)
        with pytest.raises(PrivacyParameterError, match="needs delta > 0 at finite eps"):
            a.serve(parties=["B"], eps=1.0, bounds=(-2, 2), **DP, **delta)
        with pytest.raises(PrivacyParameterError, match="needs delta > 0 at finite eps"):
            b.connect(eps=1.0, bounds=(-2, 2), leader="A", retry_for=0.1, **delta)
    assert acc.charges == []
    dp.vertical_glm("y ~ x1 + x2 + x3", df, parties=[["x1"], ["x2", "x3"]], eps=float("inf"))


@pytest.mark.filterwarnings("ignore::dpstats.errors.ChanceWarning")
def test_networked_dp_fit_sends_and_shows_no_deviance_or_dispersion(monkeypatch):
    """Audit s15-attack8 F04, networked: the leader computed deviance(y, η̃) and the Gaussian dispersion
    from the raw y in DP mode, printed them and sent them (and each sweep's deviance in the trace) to
    every member, whose result printed them too.  Members hold y and could compute them, but every
    party's result is an output for readers: now no party's result or message holds them."""
    import dpstats.vertical.party as party_module

    sent: list[dict] = []
    original = party_module.result_message

    def spy(result):
        message = original(result)
        sent.append(message)
        return message

    monkeypatch.setattr(party_module, "result_message", spy)
    df = make_data(n=600)
    results, errors = run(
        two_parties(df),
        dict(DP, eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=1),
        {"B": dict(eps=1.0, delta=1e-6, bounds=BOUNDS, random_state=2)},
    )
    assert not errors, errors
    message = sent[0]
    assert np.isnan(np.asarray(message["trace"]).reshape(-1, 3)[:, 1:]).all()
    assert math.isnan(message["meta"]["deviance"]) and math.isnan(message["meta"]["dispersion"])
    for fit in results.values():
        assert fit.trace["deviance"].isna().all() and math.isnan(fit.deviance)
        assert "not released" in str(fit) and "Dispersion parameter" not in str(fit)
