"""Unseeded releases draw real numbers only from floating-point safe samplers (issue 26; DESIGN §5).

* Every front door, called with ``random_state=None``, lists no numpy sampler in
  its privacy statement (numpy may still choose index sets, which are not listed),
  and every door that releases real numbers lists a floating-point safe one.
* :func:`~dpstats.privacy.randomness.snapped_l2_laplace` (FELP's L2-Laplace when
  unseeded) has the L2-Laplace law: KS tests of the norm against Gamma(d, s) and of
  projections of the direction against the sphere's law, on 1 500 draws from OS
  entropy (the sampler cannot be seeded).  Each KS test uses level 1e-4, so a
  correct sampler fails this file with probability below 5e-4; the same tests
  reject a 25% wrong scale (power check).
* Loading the samplers does not import ``opendp.extras`` or scikit-learn.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from front_door_calls import DOORS
from dpstats.privacy.randomness import SNAP_INFLATE, NoiseSource, snap_grid, snapped_l2_laplace

ROOT = Path(__file__).resolve().parents[1]
RELEASES_REALS = {
    "dp_knockoff",
    "dp_gmm",
    "dp_felp",
    "vertical_glm",
    "dp_pca",
    "dp_lm",
    "dp_glm",
    "dp_select_infer",
    "dp_bh (p-values)",
    "dp_bh (formula)",
}
LEVEL = 1e-4


@pytest.mark.parametrize("name", list(DOORS))
def test_unseeded_door_lists_no_numpy_sampler(name):
    fn, args, kwargs = DOORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fn(*args, random_state=None, **kwargs)
    samplers = fit.privacy.samplers
    assert not fit.privacy.seeded
    assert not any("numpy" in s.lower() for s in samplers), samplers
    if name in RELEASES_REALS:
        assert samplers and all("floating-point safe" in s for s in samplers), samplers


def test_seeded_felp_says_numpy_and_seeded():
    fn, args, kwargs = DOORS["dp_felp"]
    fit = fn(*args, random_state=3, **kwargs)
    assert fit.privacy.seeded and any("numpy" in s and "seeded" in s for s in fit.privacy.samplers)


def _draws(d: int, scale: float, n: int) -> np.ndarray:
    return np.array([snapped_l2_laplace(np.zeros(d), scale, eps=1.0, bound=1.0) for _ in range(n)])


def test_snapped_l2_laplace_has_the_l2_laplace_law():
    d, scale, n = 4, 0.7, 1500
    b = _draws(d, scale, n)
    s = scale * SNAP_INFLATE
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=s).cdf).pvalue > LEVEL
    # power: the same test rejects a 25% larger scale (KS distance 0.17 against a critical 0.057)
    assert stats.kstest(norms, stats.gamma(a=d, scale=1.25 * s).cdf).pvalue < LEVEL
    # for a uniform direction v on S^{d-1} and a unit u, (1 + u·v)/2 ~ Beta((d-1)/2, (d-1)/2)
    sphere = stats.beta((d - 1) / 2, (d - 1) / 2)
    for u in (np.eye(d)[0], np.ones(d) / math.sqrt(d)):
        assert stats.kstest((1 + (b / norms[:, None]) @ u) / 2, sphere.cdf).pvalue > LEVEL


def test_snapped_outputs_lie_on_the_public_grid_within_the_clamp():
    d, scale = 5, 0.3
    lam, bound_out = snap_grid(d, scale, 1.0, 1.0)
    w = np.array([0.1, -0.2, 5.0, 0.0, 1e-17])  # 5.0 is clamped to the bound 1 first
    y = np.array([snapped_l2_laplace(w, scale, eps=1.0, bound=1.0) for _ in range(50)])
    assert np.all(y / lam == np.round(y / lam)) and np.all(np.abs(y) <= bound_out)
    assert lam < 1e-6 * scale  # the grid is far below the noise (s.d. scale·√(d+1) per value)


def test_loading_the_samplers_imports_neither_sklearn_nor_opendp_extras():
    code = (
        "import json, sys, numpy as np\n"
        "from dpstats.privacy.randomness import NoiseSource\n"
        "src = NoiseSource(None)\n"
        "src.laplace(np.zeros(2), 1.0); src.gaussian(np.zeros(2), 1.0)\n"
        "src.l2_laplace(np.zeros(2), 1.0, eps=1.0, bound=1.0)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "opendp.measurements" in loaded
    assert not {m for m in loaded if m.startswith(("sklearn", "opendp.extras"))}


def test_secure_l2_laplace_needs_the_claimed_eps_and_a_bound():
    with pytest.raises(TypeError, match="eps= and bound="):
        NoiseSource(None).l2_laplace(np.zeros(3), 1.0)
