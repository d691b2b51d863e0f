"""A file its reader cannot parse is a DataError (exit 2 on the command line) naming the file, never a row.

Audit s15-attack8 F02: ``dpstats run ... --stream`` printed pyarrow's "CSV parse error: Expected 4
columns, got 5: <the whole raw row>" as a traceback with exit 1; in memory pandas' ParserError named
the line, and a latin-1 byte gave a UnicodeDecodeError with its byte position.  Neighbour pairs here
hold the fault in different rows with different values: the message and exit code must be the same,
and no value, line number or byte position of the file may appear.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.cli import main
from dpstats.errors import DataError

ROOT = Path(__file__).resolve().parents[1]
N = 3000
SIS = dict(eps=2.0, k=1, bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-2, 2)}, random_state=1)
LEVELS = {"city": ["A", "B", "C"]}


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n).round(4), "x2": rng.uniform(-1, 1, n).round(4)})
    df["y"] = (0.5 * df.x1 - df.x2 + rng.normal(0, 0.3, n)).clip(-2, 2).round(4)
    df["city"] = rng.choice(["A", "B", "C"], n)
    return df


def _with(row: int, change, n: int = N) -> bytes:
    lines = _frame(n).to_csv(index=False).encode().splitlines()
    lines[row] = change(lines[row])
    return b"\n".join(lines) + b"\n"


# each kind of fault in two rows (one early, in the first block the reader reads; one late), with
# different values: a field too many (its text holding "column #1", which the old code read as a
# column index), a latin-1 byte in a text field.  A field too few is no fault: the fields a row
# lacks are missing values (test_a_row_with_fields_too_few_has_missing_values_on_every_route)
FAULTS = {
    "extra field": [_with(6, lambda r: r + b",Leeds"), _with(2500, lambda r: r + b",column #1 of York")],
    "latin-1 byte": [_with(6, lambda r: r[:-1] + b"Jos\xe9"), _with(2700, lambda r: r[:-1] + b"G\xf6ran")],
}
CASES = [(kind, i) for kind in FAULTS for i in (0, 1)]


def _write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "d.csv"
    path.write_bytes(content)
    return path


def _quotes_the_file(text: str, content: bytes) -> bool:
    """Whether ``text`` shows a row of the file, a field of the faulty rows, a line or row number, a
    byte or its position, or a count of fields."""
    rows = [r.decode("latin-1") for r in content.splitlines()[1:]]
    fields = ("Leeds", "York", "Jos", "G\xf6ran", "column #")
    numbered = r"(line|row|position|byte|got|expected|fields in) #?\d|0x[0-9a-f]"
    return any(r in text for r in rows) or any(f in text for f in fields) or bool(re.search(numbered, text))


def _alone_in_traceback(err: BaseException) -> bool:
    """Whether a printed traceback of ``err`` shows no other exception (the reader's, with its text)."""
    text = "".join(traceback.format_exception(err))
    return "During handling" not in text and "direct cause" not in text


@pytest.mark.parametrize("kind", list(FAULTS))
def test_streamed_reader_errors_name_the_file_and_the_fix_never_a_row(tmp_path, kind):
    texts = []
    for content in FAULTS[kind]:
        path = _write(tmp_path, content)
        accountant = dp.Accountant(eps=10)
        src = dp.engines.stream(path, chunk_rows=500)
        with pytest.raises(DataError) as err:
            dp.dp_sis("y ~ x1 + x2 + city", data=src, levels=LEVELS, accountant=accountant, **SIS)
        text = str(err.value)
        assert "d.csv" in text and "could not be parsed as CSV" in text and "UTF-8" in text
        assert not _quotes_the_file(text, content), text
        # the reader's text is not in the traceback either, and nothing was spent or kept
        assert _alone_in_traceback(err.value)
        assert accountant.spent_eps == 0 and src.text_columns == set()
        texts.append(text)
    assert texts[0] == texts[1]


def test_a_fault_in_a_later_block_leaves_the_stream_as_it_was(tmp_path):
    """Blocks of about 2 600 rows: a "?" in x1 in the second block makes the pass read x1 as text
    and start again (x1 is declared by no bounds= entry); the third block's row with a field too many
    then fails the call, which leaves the stream reading x1 as it did before, not as text, for the
    next call on the mended file; and nothing is spent."""
    content = _with(4000, lambda r: b"?" + r[r.index(b",") :], n=9000)
    lines = content.splitlines()
    lines[8000] += b",extra"
    path = _write(tmp_path, b"\n".join(lines) + b"\n")
    src, accountant = dp.engines.stream(path, chunk_rows=500), dp.Accountant(eps=10)
    kw = dict(eps=2.0, k=1, bounds=(-2, 2), random_state=1, accountant=accountant)
    with pytest.raises(DataError, match="could not be parsed as CSV"):
        dp.dp_sis("y ~ x2 + city + x1", data=src, levels=LEVELS, **kw)
    assert src.text_columns == set() and accountant.spent_eps == 0


@pytest.mark.parametrize("kind,which", CASES)
def test_cli_in_memory_and_streamed_exit_2_with_one_message(tmp_path, capsys, kind, which):
    content = FAULTS[kind][which]
    path = _write(tmp_path, content)
    (tmp_path / "b.json").write_text(json.dumps(SIS["bounds"]))
    (tmp_path / "l.json").write_text(json.dumps(LEVELS))
    args = ["run", "sis", "--data", str(path), "--formula", "y ~ x1 + x2 + city", "--eps", "2"]
    args += ["--bounds", str(tmp_path / "b.json"), "--levels", str(tmp_path / "l.json")]
    args += ["--arg", "k=1", "--arg", "strict=True", "--seed", "1", "--quiet"]
    for extra in ([], ["--stream"]):
        assert main(args + extra) == 2
        out = capsys.readouterr()
        assert out.out == "" and out.err.startswith("dpstats: error: data file '")
        assert "could not be parsed as CSV" in out.err and not _quotes_the_file(out.err, content)


def test_cli_messages_of_neighbours_are_equal_and_no_traceback(tmp_path):
    """Through a subprocess, as the audit ran it: exit 2, one line, the same for both neighbours."""
    (tmp_path / "b.json").write_text(json.dumps(SIS["bounds"]))
    seen = []
    for content in FAULTS["extra field"]:
        path = _write(tmp_path, content)
        cmd = [sys.executable, "-m", "dpstats", "run", "sis", "--data", str(path), "--stream"]
        cmd += ["--formula", "y ~ x1 + x2", "--eps", "2", "--bounds", str(tmp_path / "b.json")]
        cmd += ["--arg", "k=1", "--seed", "1", "--quiet"]
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        seen.append(out.stderr)
    assert seen[0] == seen[1]


def test_a_file_that_is_not_parquet(tmp_path, capsys):
    path = tmp_path / "d.parquet"
    path.write_bytes(FAULTS["extra field"][0])
    with pytest.raises(DataError, match=r"'d.parquet' could not be read as Parquet"):
        dp.dp_sis("y ~ x1 + x2", data=dp.engines.stream(path), **SIS)
    assert main(["run", "sis", "--data", str(path), "--formula", "y ~ x1 + x2", "--eps", "1"]) == 2
    assert "could not be read as Parquet" in capsys.readouterr().err


def test_a_party_data_file_and_dask(tmp_path):
    from dpstats.vertical import _read

    texts = []
    for content in FAULTS["extra field"]:
        path = _write(tmp_path, content)
        with pytest.raises(DataError) as err:
            _read(str(path))
        assert _alone_in_traceback(err.value)
        texts.append(str(err.value))
    assert texts[0] == texts[1] and "could not be parsed as CSV" in texts[0]
    pytest.importorskip("dask.dataframe")
    for content in FAULTS["extra field"]:
        path = _write(tmp_path, content)
        with pytest.raises(DataError) as err:
            dp.dp_sis("y ~ x1 + x2 + city", data=dp.engines.on_dask(str(path)), levels=LEVELS, **SIS)
        assert "could not be parsed as CSV" in str(err.value)
        assert not _quotes_the_file(str(err.value), content)


def _short_rows() -> bytes:
    """Rows with fields too few: the last field of rows in the first block and in a late one, the last
    two of another, with CRLF line ends."""
    lines = _frame(N).to_csv(index=False).encode().splitlines()
    for row in (7, 1500, 2600, 2999):
        lines[row] = lines[row].rsplit(b",", 1)[0]
    lines[20] = lines[20].rsplit(b",", 2)[0]
    return b"\r\n".join(lines) + b"\r\n"


R_CROSSPRODUCTS = """
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(file.path(args[1], "d.csv"))
d$city <- factor(d$city, levels = c("A", "B", "C"))
X <- model.matrix(y ~ x1 + x2 + city, d)  # na.omit: the rows with a missing value are left out
y <- d$y[as.integer(rownames(X))]
out <- list(na = as.list(colSums(is.na(d))), names = colnames(X), n = nrow(X), xtx = crossprod(X), xty = drop(crossprod(X, y)))
writeLines(jsonlite::toJSON(out, digits = NA), file.path(args[1], "r.json"))
"""


def test_a_row_with_fields_too_few_has_missing_values_on_every_route(tmp_path, rscript):
    """R's read.csv (fill = TRUE) reads the fields a row lacks as missing values, and so did pandas (the
    command line in memory) and Dask; the stream refused the file.  Oracle: R's model.matrix on what
    read.csv read; every route gives its complete rows' XᵀX and Xᵀy, and the command line runs on it."""
    from r_oracle import run_r_json

    from dpstats import engines
    from dpstats.engines.files import read_frame

    content = _short_rows()
    path = _write(tmp_path, content)
    r = run_r_json(rscript, tmp_path, R_CROSSPRODUCTS)
    memory = read_frame(path, "csv")
    assert (
        memory.isna().sum().to_dict()
        == {k: v[0] for k, v in r["na"].items()}
        == {"x1": 0, "x2": 0, "y": 1, "city": 5}
    )
    routes = {"memory": memory, "stream": engines.stream(path, chunk_rows=500, levels=LEVELS)}
    if importlib.util.find_spec("dask") is not None:
        routes["dask"] = engines.on_dask(str(path), levels=LEVELS)
    for route, data in routes.items():
        mf, st = engines.sufficient_statistics("y ~ x1 + x2 + city", data, gram=True, drop_intercept=False)
        assert list(mf.names) == r["names"] and mf.n == r["n"][0], route
        np.testing.assert_allclose(st.cross.xtx, r["xtx"], rtol=1e-12, err_msg=route)
        np.testing.assert_allclose(st.cross.xty, r["xty"], rtol=1e-12, err_msg=route)
    (tmp_path / "b.json").write_text(json.dumps(SIS["bounds"]))
    (tmp_path / "l.json").write_text(json.dumps(LEVELS))
    args = ["run", "sis", "--data", str(path), "--formula", "y ~ x1 + x2 + city", "--eps", "2", "--quiet"]
    args += ["--bounds", str(tmp_path / "b.json"), "--levels", str(tmp_path / "l.json"), "--arg", "k=1"]
    assert main(args) == 0 and main(args + ["--stream"]) == 0
