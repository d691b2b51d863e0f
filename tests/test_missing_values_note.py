"""Print's note on missing values is one line (audit s16-rusers3, F09).

It was two lines, the second starting after a semicolon: R wrapped the first to the console and left the
second at column 0, so the note read as two sentences glued with a line break."""

from __future__ import annotations

import numpy as np

import dpstats as dp


def test_print_states_the_fill_rule_in_one_line_where_it_was_split_in_two():
    """A private dp_lm under na_action="fill" (the default with bounds): one line, which R wraps as one
    paragraph, then the privacy line."""
    rng = np.random.default_rng(0)
    data = {"x": rng.uniform(-1, 1, 500), "y": rng.uniform(-1, 1, 500)}
    fit = dp.dp_lm("y ~ x", data, eps=3.0, delta=1e-6, bounds=(-1, 1), random_state=1)
    lines = str(fit).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("Missing values"))
    assert lines[i].endswith(
        "the count is not released): filled values pull the estimates towards the fills."
    )
    assert lines[i + 1].startswith("Privacy: ")
