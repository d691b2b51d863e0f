"""Private learning of a mixture of separated Gaussians (Kamath, Sheffet, Singhal & Ullman 2019).

Read top to bottom against the paper:

* :mod:`.options` — the options record (:class:`GMMOptions`), checked once from the
  public call, and resolved for the frame (:func:`resolve`: k against a public n, the
  number of groups);
* :mod:`.budget` — the privacy plan (:func:`plan`): the ρ of every step of
  Algorithm 1 and of §6, composed in zCDP and converted once to (eps, delta),
  from public inputs only;
* :mod:`.pipeline` — the release (:func:`release`): step 0 (box, :func:`clip_box`; private
  radius), step 1 (private PCA, :mod:`dpstats.privacy.pca`), step 2 (PGLoc,
  :mod:`.cluster`), step 3 (PSGE, :mod:`.estimate`), and the
  sample-and-aggregate reduction of §6; the requested (non-private) :func:`diagnostics`;
* :mod:`.cluster` — private location of one cluster at a time (Algorithm 5,
  after Nissim, Stemmer & Vadhan 2016);
* :mod:`.estimate` — private per-cluster estimation (Algorithm 6);
* :mod:`.accuracy` — the accuracy rate of Theorem 1.1 and the public rule that it is
  vacuous at this n, eps (:func:`vacuous_warning`, before anything is spent), and the rule that the
  clustering step cannot locate the components (:func:`location_warning`, also before);
* :mod:`.model` — the released mixture as densities, posteriors and
  assignments (post-processing).

The two verbs a front door uses: :func:`plan` (options, d, the public box) and
:func:`release` (rows, plan, noise).  Neither needs a row: under add/remove-one-row
(n private) a data set of 0, 1 or 2 rows is released from the noise alone, by
construction.  No printing, no I/O; progress through a callback.
"""

from .accuracy import location_warning, pre_spend_warnings, theorem_accuracy, vacuous_warning
from .budget import GMMPlan, plan
from .options import (
    METHODS,
    ROWS_PER_COMPONENT,
    GMMOptions,
    assumption_holds,
    check_columns,
    default_groups,
    refuse_infinite_eps,
    resolve,
)
from .pipeline import Released, clip_box, diagnostics, release

__all__ = [
    "GMMOptions",
    "GMMPlan",
    "METHODS",
    "ROWS_PER_COMPONENT",
    "Released",
    "assumption_holds",
    "check_columns",
    "clip_box",
    "default_groups",
    "diagnostics",
    "plan",
    "refuse_infinite_eps",
    "release",
    "resolve",
    "location_warning",
    "pre_spend_warnings",
    "theorem_accuracy",
    "vacuous_warning",
]
