"""DP fixed-X knockoff filter: Methods I and II of Pournaderi & Xiang.

The paper (``/work/shared/papers/dp_knockoff_pournaderi_xiang.txt``),
"Differentially Private Variable Selection via the Knockoff Filter", read in
three modules:

* :mod:`~dpstats.methods.knockoff.filter`: the fixed-X knockoff filter of
  Section 2 from sufficient statistics: column normalisation (X′, Σ′),
  knockoffs with S = sI (eq. (4), Lemma 1, Remark 1), the statistics LCD
  (eq. (6)) and CSM (eq. (7)), the knockoff(+) threshold;
* :mod:`~dpstats.methods.knockoff.planning`: the privacy plan, computed before any
  noise is drawn: Assumption 3's row bound, Remark 2's σ and ‖β‖, the design
  quantities of the sensitivities, the budget split of Theorem 3 (Method I) or
  Theorem 5 (Method II), the noise scales and the ledger;
* :mod:`~dpstats.methods.knockoff.mechanism`: the sensitivities (Theorem 5,
  eq. (10)) and the release: the noisy Gram matrix and cross-products of
  eq. (9) (Method I) or the noisy OLS coefficients (Method II).

The requested (non-private) diagnostics of a release, the FDP and TPP against a simulation's truth
among them, are :mod:`~dpstats.methods.knockoff.diagnostics`.

The call's options are one frozen record, :class:`KnockoffOptions`
(:mod:`~dpstats.methods.knockoff.options`), checked once from the front door's
arguments.  The two verbs every method exposes are :func:`plan` (``plan(options,
statistics, B, dd)``) and :func:`release` (``release(statistics, plan, noise)``).
"""

from .mechanism import release
from .options import KnockoffOptions
from .planning import KnockoffPlan, plan

__all__ = ["KnockoffOptions", "KnockoffPlan", "plan", "release"]
