"""The README's first example runs as written and does what its comments say: on the bundled
Fan & Lv (2008) data it selects the 8 predictors that matter at eps = 1 (30 of 30 seeded runs did
when it was chosen; the n = 100, d = 2000 of the paper's table selected none at eps = 1)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_first_example_selects_the_support(tmp_path, monkeypatch):
    block = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)[1]
    monkeypatch.chdir(tmp_path)  # fit.report("sis.html") writes here
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its printed output is not under test here
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 (the README's own code)
    fit, df = scope["fit"], scope["df"]
    assert sorted(fit.selected) == sorted(df.attrs["support"])
    assert (tmp_path / "sis.html").stat().st_size > 10_000
