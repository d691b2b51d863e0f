"""The wheel ships the report templates: build it, install it apart from the source tree, render.

The templates live in the repository's top-level ``templates/`` folder and ``setup.py`` maps it to
the package ``dpstats.templates``.  This builds the wheel offline (``--no-build-isolation`` with this
interpreter's setuptools, which must be >= 77 for pyproject.toml's SPDX ``license``: the ``test``
extra requires it), installs it with ``--no-deps`` into a fresh virtual environment (numpy and the
rest reach it through a path to this interpreter's site-packages) and, from a temporary working
directory, renders a report with that environment's Python, checking that dpstats and its templates
were read from the installed copy and not from the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "dpstats", "templates")

RENDER = """
import json, os, sys
import dpstats as dp
from dpstats.report import templates_dir

df = dp.datasets.fan_lv(n=60, d=30, random_state=3)
fit = dp.dp_sis("y ~ .", data=df, eps=1.0, k=3, bounds=(-4, 4), random_state=1, oc_trials=0)
knock = dp.datasets.fan_lv(n=3000, d=40, random_state=3)
kfit = dp.dp_knockoff("y ~ .", knock, eps=1.0, delta=1e-6, bounds=4.0, sigma=1.0, beta_norm=1.0, random_state=1)
path = dp.report([fit, kfit], os.path.join(os.getcwd(), "from_wheel.html"))
print(json.dumps({"dpstats": dp.__file__, "templates": str(templates_dir()), "report": path}))
"""


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except PackageNotFoundError:
        return 0


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    return res


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if _setuptools_major() < 77:
        from conftest import _missing

        _missing("setuptools >= 77 (the test extra) to build the wheel offline")
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        item = ROOT / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(item, src / name)
    out = tmp_path_factory.mktemp("dist")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    _run([*pip_wheel, "-w", str(out), str(src)], cwd=src)
    (built,) = out.glob("dpstats-*.whl")
    return built


def test_wheel_holds_every_template_and_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*.j2"))
    assert templates, "no templates in templates/"
    missing = [t for t in templates if f"dpstats/{t}" not in names]
    assert not missing, f"templates not shipped in the wheel: {missing}"
    packages = sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "dpstats").rglob("__init__.py"))
    missing = [p for p in packages if f"{p}/__init__.py" not in names]
    assert not missing, f"packages not shipped in the wheel: {missing}"
    typed = {"dpstats/py.typed", "dpstats/__init__.pyi"}  # PEP 561: type checkers read the installed package
    assert typed <= names, f"not shipped in the wheel: {sorted(typed - names)}"


def _fresh_venv(where: Path) -> Path:
    """A new virtual environment whose only extra path is this interpreter's site-packages (for numpy,
    pandas and the rest: no network here).  A plain path line in a ``.pth`` file adds the folder but
    does not run its own ``.pth`` files, so the checkout's editable install of dpstats stays invisible."""
    import sysconfig

    _run([sys.executable, "-m", "venv", "--without-pip", str(where)], cwd=where.parent)
    python = where / "bin" / "python"
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(fresh_site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def test_installed_wheel_renders_a_report_from_its_own_templates(wheel, tmp_path):
    python = _fresh_venv(tmp_path / "venv")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        cwd=tmp_path,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = _run([str(python), "-c", RENDER], cwd=work, env=env)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    venv = (tmp_path / "venv").resolve()
    assert Path(found["dpstats"]).resolve().is_relative_to(venv), found
    assert Path(found["templates"]).resolve() == Path(found["dpstats"]).resolve().parent / "templates", found
    html = Path(found["report"]).read_text(encoding="utf-8")
    assert 'class="privacy-statement"' in html and html.count('class="result"') == 2
    assert '-knockoff-h">Knockoff selection' in html, (
        "the method template templates/methods/dp_knockoff.html.j2 was not rendered"
    )
