"""benchmarks/bench_table.py: the table's formatting, the README splice and the command line, on
fake rows (no timing is run or asserted here)."""

from __future__ import annotations

import datetime
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_table  # noqa: E402

FAKE = [
    {
        "work": "model_frame",
        "seconds": 0.3,
        "baseline": "to_numpy",
        "baseline_seconds": 0.2,
        "ratio": 1.5,
        "target": 2.0,
    },
    {
        "work": "front door",
        "seconds": 0.5,
        "baseline": "mechanism",
        "baseline_seconds": 0.1,
        "ratio": 5.0,
        "target": 3.0,
    },
    {
        "work": "R first call",
        "seconds": 2.5,
        "baseline": "Rscript | python",
        "baseline_seconds": 0.2,
        "ratio": 12.5,
        "target": None,
        "target_seconds": 2.0,
    },
    {"work": "streamed peak", "peak_mb": 300.4, "target_mb": 350.0},
    {"work": "streamed peak, oc_trials=0", "peak_mb": 400.0, "target_mb": None},
    {
        "work": "dask",
        "seconds": 1.0,
        "baseline": "1 worker",
        "baseline_seconds": 1.8,
        "ratio": 1 / 1.8,
        "target": None,
        "speed_up": 1.8,
    },
    {"work": "r: not measured", "error": "RuntimeError: R is not installed"},
]


def _table_lines(text: str) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", ln.strip()[1:-1])] for ln in lines]


def test_markdown_table_is_well_formed_and_says_whether_each_target_is_met():
    text = bench_table.markdown_table(FAKE)
    lines = text.splitlines()
    assert len(lines) == 2 + len(FAKE)
    assert all(ln.startswith("| ") and ln.endswith(" |") for ln in lines if ln != lines[1])
    assert lines[1] == "|" + "---|" * 7
    widths = {ln.replace("\\|", "").count("|") for ln in lines}
    assert widths == {8}, widths  # 7 columns everywhere ("|" inside a cell is escaped)
    cells = {r[0]: r for r in _table_lines(text.replace("\\|", "/"))[2:]}
    assert cells["model_frame"][4:] == ["1.50x", "≤ 2x", "yes"]
    assert cells["front door"][4:] == ["5.00x", "≤ 3x", "no"]
    assert cells["R first call"][1] == "2.500 s" and cells["R first call"][5:] == ["≤ 2 s", "no"]
    assert cells["streamed peak"][1:] == ["300 MB peak", "-", "-", "-", "≤ 350 MB", "yes"]
    assert cells["streamed peak, oc_trials=0"][5:] == ["reference", "-"]
    assert cells["dask"][5].startswith("speed-up 1.80x")
    assert cells["r: not measured"][-1] == "RuntimeError: R is not installed"


def test_document_names_machine_date_and_command():
    when = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.timezone.utc)
    text = bench_table.document(FAKE[:1], "python benchmarks/bench_table.py --quick", when)
    first = text.splitlines()[0]
    assert first.startswith("Measured 2026-11-23 12:00 UTC on ") and "cores" in first
    assert "`python benchmarks/bench_table.py --quick`" in first
    assert bench_table.markdown_table(FAKE[:1]) in text


def test_readme_splice_keeps_markers_and_surroundings_and_is_idempotent():
    readme = f"# x\n\n## Performance\n\nintro\n\n{bench_table.BEGIN}\nold table\n{bench_table.END}\n\n## Next\ntail\n"
    body = bench_table.document(FAKE, "cmd")
    once = bench_table.splice_readme(readme, body)
    assert bench_table.splice_readme(once, body) == once
    assert once.count(bench_table.BEGIN) == once.count(bench_table.END) == 1
    assert "old table" not in once and bench_table.markdown_table(FAKE) in once
    head, rest = once.split(bench_table.BEGIN)
    assert head == readme.split(bench_table.BEGIN)[0]
    assert rest.split(bench_table.END)[1] == readme.split(bench_table.END)[1]
    other = bench_table.splice_readme(once, bench_table.document(FAKE[:2], "cmd"))
    assert bench_table.splice_readme(other, body) == once


@pytest.mark.parametrize(
    "text",
    [
        "no markers",
        f"{bench_table.END} {bench_table.BEGIN}",
        f"{bench_table.BEGIN}{bench_table.BEGIN}{bench_table.END}",
    ],
)
def test_readme_splice_refuses_missing_or_misplaced_markers(text):
    with pytest.raises(ValueError, match="perf:begin"):
        bench_table.splice_readme(text, "body")


def test_a_failing_section_gives_a_row_saying_why_and_keeps_the_others():
    def measure(name, quick, dask_rows):
        if name == "r":
            raise RuntimeError("R is not installed")
        return [dict(FAKE[0], work=f"{name} {quick} {dask_rows}")]

    rows = bench_table.collect(("scale", "r", "dask"), quick=True, dask_rows=10, measure=measure)
    assert [r["work"] for r in rows] == ["scale True 10", "r: not measured", "dask True 10"]
    assert rows[1]["error"] == "RuntimeError: R is not installed"


def test_main_writes_results_and_splices_the_readme(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{bench_table.BEGIN}\n{bench_table.END}\nend\n", encoding="utf-8")
    monkeypatch.setattr(bench_table, "README", readme)
    monkeypatch.setattr(
        bench_table, "_section_rows", lambda name, quick, dask_rows: [dict(FAKE[0], work=name)]
    )
    out = tmp_path / "results" / "table.md"
    bench_table.main(["--skip", "dask,r", "--out", str(out)])
    results = out.read_text(encoding="utf-8")
    assert [r[0] for r in _table_lines(results)[2:]] == ["scale", "knockoff", "import"]
    assert "--skip dask,r" in results.splitlines()[0]
    bench_table.main(["--out", str(out), "--readme"])
    results = out.read_text(encoding="utf-8")
    assert [r[0] for r in _table_lines(results)[2:]] == list(bench_table.SECTIONS)
    assert results.strip() in readme.read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        bench_table.main(["--skip", "gpu", "--out", str(out)])


def test_readme_is_never_spliced_from_a_table_with_sections_left_out(tmp_path, monkeypatch, capsys):
    readme = tmp_path / "README.md"
    before = f"intro\n{bench_table.BEGIN}\n| old whole table |\n{bench_table.END}\nend\n"
    readme.write_text(before, encoding="utf-8")
    monkeypatch.setattr(bench_table, "README", readme)
    monkeypatch.setattr(bench_table, "_section_rows", lambda *a: pytest.fail("nothing is measured"))
    with pytest.raises(SystemExit):
        bench_table.main(["--skip", "r", "--out", str(tmp_path / "t.md"), "--readme"])
    assert "without --skip" in capsys.readouterr().err
    assert readme.read_text(encoding="utf-8") == before


def test_the_repository_readme_has_one_performance_section_between_markers():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(bench_table.BEGIN) == 1 and text.count(bench_table.END) == 1
    section = text.split(bench_table.BEGIN)[1].split(bench_table.END)[0]
    assert text.split(bench_table.BEGIN)[0].rsplit("\n## ", 1)[-1].startswith("Performance\n")
    rows = _table_lines(section)
    assert not rows or {len(r) for r in rows} == {7}
    assert not rows or set(rows[1]) == {"---"}
