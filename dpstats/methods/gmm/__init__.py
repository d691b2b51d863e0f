"""Private learning of a mixture of separated Gaussians (Kamath, Sheffet, Singhal & Ullman 2019).

Read top to bottom against the paper:

* :mod:`.budget` — the privacy plan (:func:`plan`): the ρ of every step of
  Algorithm 1 and of §6, composed in zCDP and converted once to (eps, delta),
  from public inputs only;
* :mod:`.pipeline` — the release (:func:`release`): step 0 (box, private
  radius), step 1 (private PCA, :mod:`dpstats.privacy.pca`), step 2 (PGLoc,
  :mod:`.cluster`), step 3 (PSGE, :mod:`.estimate`), and the
  sample-and-aggregate reduction of §6;
* :mod:`.cluster` — private location of one cluster at a time (Algorithm 5,
  after Nissim, Stemmer & Vadhan 2016);
* :mod:`.estimate` — private per-cluster estimation (Algorithm 6);
* :mod:`.model` — the released mixture as densities, posteriors and
  assignments (post-processing).

No printing, no I/O; progress through a callback.
"""

from .budget import GMMPlan, plan
from .pipeline import Released, default_groups, release

__all__ = ["GMMPlan", "Released", "default_groups", "plan", "release"]
