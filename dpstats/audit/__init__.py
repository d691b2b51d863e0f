"""Empirical privacy auditing (docs/architecture.md, "Testing"): a statistical lower bound on eps.

A mechanism claims (eps, delta)-DP.  The auditor runs it N times on each of two
neighbouring datasets D1, D2 (chosen by the caller to be worst-case: rows at the
bounds, a row that flips every score, ...), with independent randomness, and
reduces each output to membership in events:

* a scalar output (or a scalar ``statistic`` of it): events {x <= t} and
  {x > t} for thresholds t at pooled quantiles of the outputs;
* a categorical output (e.g. a selected set): events {output = c} for each
  category c.

The events are *chosen* on a held-out 20% of the runs (the candidates with the
largest held-out lower bound) and *tested* on the other 80%, so the choice does
not bias the test.  For each tested event E and both directions (D1 vs D2 and
D2 vs D1), one-sided Clopper–Pearson bounds p1⁻ <= P(M(D1) ∈ E) and
p2⁺ >= P(M(D2) ∈ E) give

    eps_lb   = ln((p1⁻ − delta) / p2⁺)          (= ln(p1⁻/p2⁺) when delta = 0)
    delta_lb = p1⁻ − e^eps · p2⁺ .

Every one-sided bound is taken at level alpha / (4 m) for m tested events
(Bonferroni over events, both directions and the two bounds of a ratio), so
with probability at least 1 − alpha the reported eps_lb is below the true eps
of the pair: an eps_lb above the claimed eps (equivalently delta_lb above the
claimed delta) refutes the claim.  With delta > 0 the pure ratio ln(p1⁻/p2⁺) may
exceed eps legitimately on rare events (the delta part), so the delta-adjusted
ratio is the test; both are reported.

What is exercised: the auditor runs mechanisms through their plain functions
(``dpstats.methods``, ``dpstats.privacy``) with *seeded numpy generators* —
vectorised over runs where the mechanism allows it — because OpenDP's
floating-point-safe samplers, used for unseeded releases, take about a second
per call and cannot be run 10⁵ times.  The audit therefore checks the
calibration (sensitivity, scale, budget split) and the sampling distribution of
the numpy path; the OpenDP path shares the same calibration and relies on
OpenDP's own proofs for the sampler.

Examples
--------
>>> import numpy as np
>>> from dpstats.audit import audit, laplace_case
>>> res = audit(laplace_case(eps=1.0), n_runs=20_000, random_state=0)
>>> res.passed, 0.5 < res.eps_lb <= 1.0
(True, True)
"""

from .auditor import (
    AuditCase,
    AuditResult,
    Event,
    Runner,
    audit,
    audit_outputs,
    candidate_events,
    clopper_pearson,
    format_table,
    repeat,
)
from .cases import (
    exact_distribution,
    exact_pair_eps,
    gaussian_case,
    l2_laplace_case,
    laplace_case,
    private_bh_case,
    quantile_case,
    shift_pair,
    sis_case,
    sis_centred_case,
    sis_centred_frames,
    sis_frames,
    standard_cases,
    topk_case,
    worst_binary_pair,
    worst_quantile_pair,
    worst_topk_pair,
)
from .methods import (
    METHOD_LABELS,
    felp_case,
    felp_frames,
    felp_overreach_frames,
    felp_sensitivity_check,
    felp_strict_worst_frames,
    gmm_end_to_end_case,
    gmm_frames,
    gmm_pca_case,
    gmm_radius_case,
    knockoff_case,
    knockoff_extreme_frames,
    knockoff_frames,
    method_cases,
    two_stage_case,
    vertical_coefficient_case,
    vertical_frames,
    vertical_worst_frames,
)

__all__ = [
    "AuditCase",
    "AuditResult",
    "Event",
    "Runner",
    "audit",
    "audit_outputs",
    "candidate_events",
    "clopper_pearson",
    "format_table",
    "repeat",
    "exact_distribution",
    "exact_pair_eps",
    "gaussian_case",
    "l2_laplace_case",
    "laplace_case",
    "private_bh_case",
    "quantile_case",
    "shift_pair",
    "sis_case",
    "sis_centred_case",
    "sis_centred_frames",
    "sis_frames",
    "worst_binary_pair",
    "standard_cases",
    "topk_case",
    "worst_quantile_pair",
    "worst_topk_pair",
    "METHOD_LABELS",
    "felp_case",
    "felp_frames",
    "felp_overreach_frames",
    "felp_sensitivity_check",
    "felp_strict_worst_frames",
    "gmm_end_to_end_case",
    "gmm_frames",
    "gmm_pca_case",
    "gmm_radius_case",
    "knockoff_case",
    "knockoff_extreme_frames",
    "knockoff_frames",
    "method_cases",
    "two_stage_case",
    "vertical_coefficient_case",
    "vertical_frames",
    "vertical_worst_frames",
]
