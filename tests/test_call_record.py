"""A result's ``call`` shows every argument the user gave, ``random_state`` too, as R's ``match.call()``
shows ``seed = 7`` (and leaves out an argument not given)."""

from __future__ import annotations

import warnings

import pytest

from front_door_calls import DOORS


@pytest.mark.parametrize("door", sorted(DOORS))
def test_the_call_shows_random_state_when_given(door):
    fn, args, kwargs = DOORS[door]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(*args, **kwargs, random_state=7)
    assert res.call["random_state"] == 7
    assert res.call_text().endswith("random_state = 7)") or ", random_state = 7" in res.call_text()
    assert "random_state = 7" in str(res).split("\n\n")[1]  # the printed Call: block


def test_the_call_leaves_random_state_out_when_not_given():
    fn, args, kwargs = DOORS["dp_sis"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(*args, **kwargs)
    assert "random_state" not in res.call and "random_state" not in res.call_text()
