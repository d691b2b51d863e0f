"""One working call of every front door, on small public-looking data (shared by tests).

``DOORS`` maps a door's name to ``(function, positional arguments, keyword
arguments)`` of a call that succeeds; tests vary one argument at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import dpstats as dp

N = 1200
_rng = np.random.default_rng(26)
REG = pd.DataFrame(_rng.uniform(-1, 1, (N, 6)), columns=[f"x{j}" for j in range(1, 7)])
REG["y"] = REG.x1 - REG.x2 + 0.3 * _rng.standard_normal(N)
REG["txt"] = np.where(_rng.random(N) < 0.5, "red", "blue")
CLS = REG.drop(columns="y").assign(
    **{"class": np.where(REG.x1 + 0.3 * _rng.standard_normal(N) > 0, "b", "a")}
)
MIX = pd.DataFrame(
    np.r_[_rng.normal(-6, 1, (N // 2, 3)), _rng.normal(6, 1, (N // 2, 3))], columns=["a", "b", "c"]
).assign(txt=REG.txt.values)
P_VALUES = pd.Series(np.r_[np.full(5, 1e-9), _rng.uniform(0, 1, 35)], index=[f"gene{j}" for j in range(40)])
KO = dp.datasets.fan_lv(n=2000, d=40, random_state=3).assign(txt="a")  # knockoffs need p > 2 ln(2/δ₂)
X6 = "x1 + x2 + x3 + x4 + x5 + x6"
B = (-3, 3)

# door -> (function, positional arguments, keyword arguments) of a call that succeeds
DOORS: dict[str, tuple[Callable[..., Any], tuple, dict[str, Any]]] = {
    "dp_sis": (dp.dp_sis, (f"y ~ {X6}", REG), {"eps": 1.0, "k": 2, "bounds": B}),
    "dp_two_stage": (dp.dp_two_stage, (f"y ~ {X6}", REG), {"eps": 1.0, "k": 2, "bounds": B, "oc_trials": 0}),
    "dp_knockoff": (
        dp.dp_knockoff,
        ("y ~ . - txt", KO),
        {"eps": 1.0, "delta": 1e-5, "bounds": 8.0, "sigma": 1.0, "beta_norm": 5.0, "lambda_min": 0.5},
    ),
    "dp_gmm": (dp.dp_gmm, ("~ a + b + c", MIX), {"k": 2, "eps": 1.0, "delta": 1e-5, "bounds": (-12, 12)}),
    "dp_felp": (
        dp.dp_felp,
        (f"class ~ {X6}", CLS),
        {"eps": 1.0, "n_estimators": 4, "bounds": B, "levels": {"class": ["a", "b"]}},
    ),
    "vertical_glm": (
        dp.vertical_glm,
        ("y ~ x1 + x2 + x3 + x4", REG),
        {
            "parties": [["x1", "x2"], ["x3", "x4"]],
            "eps": 1.0,
            "delta": 1e-5,
            "lam": 0.1,
            "penalty": "ridge",
            "bounds": B,
        },
    ),
    "dp_pca": (dp.dp_pca, ("~ a + b + c", MIX), {"k": 2, "eps": 1.0, "delta": 1e-5, "bounds": (-12, 12)}),
    "dp_lm": (dp.dp_lm, (f"y ~ {X6}", REG), {"eps": 1.0, "delta": 1e-5, "bounds": B, "n_boot": 100}),
    "dp_glm": (dp.dp_glm, ("y ~ x1 + x2", REG), {"eps": 2.0, "delta": 1e-5, "bounds": B}),
    "dp_select_infer": (
        dp.dp_select_infer,
        (f"y ~ {X6}", REG),
        {"eps": 1.0, "delta": 1e-5, "k": 2, "bounds": B, "n_boot": 100},
    ),
    "dp_bh (p-values)": (dp.dp_bh, (P_VALUES,), {"q": 0.1, "eps": 1.0, "eta": 0.01, "max_rejections": 5}),
    "dp_bh (formula)": (
        dp.dp_bh,
        (f"y ~ {X6}",),
        {"data": REG, "q": 0.1, "eps": 1.0, "bounds": B, "sigma": 0.5, "max_rejections": 3},
    ),
}
