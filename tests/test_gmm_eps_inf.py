"""dp_gmm has no eps = inf reference (outside R audit, item 9): the refusal says so and names the
non-private mixtures to use, before anything is read or spent, and the help says eps must be finite."""

from __future__ import annotations

import math

import pytest

import dpstats as dp
from dpstats.errors import PrivacyParameterError


def test_infinite_eps_is_refused_naming_the_non_private_mixtures_before_reading():
    class Unreadable:  # any access to the data would fail: the refusal comes from eps alone
        def __getattr__(self, name):
            raise AssertionError(f"the data was read ({name})")

    acc = dp.Accountant(eps=5.0, delta=1e-4)
    with pytest.raises(PrivacyParameterError) as err:
        dp.dp_gmm("~ .", Unreadable(), k=2, eps=math.inf, bounds=(0, 1), accountant=acc)
    msg = str(err.value)
    assert "no non-private reference at eps = inf" in msg
    assert (
        "mclust::Mclust(data, G = k)" in msg
        and "GaussianMixture" in msg
        and "Nothing was read or spent" in msg
    )
    assert acc.spent_eps == 0.0


def test_help_says_eps_must_be_finite_and_pca_that_inf_is_prcomp():
    assert "eps must be finite" in dp.dp_gmm.__doc__ and "mclust::Mclust" in dp.dp_gmm.__doc__
    assert "Where eps = inf is taken" not in dp.dp_gmm.__doc__
    assert "R's ``prcomp(x)``" in dp.dp_pca.__doc__
