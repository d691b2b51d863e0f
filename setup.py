"""Packaging beyond pyproject.toml: the report templates live in the repository's top-level
``templates/`` folder and are installed as the package data of ``dpstats.templates``.

pyproject.toml cannot combine package discovery with a package mapped from another folder,
so the package list is built here: every ``dpstats*`` package, plus ``dpstats.templates`` and its ``methods`` folder.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["dpstats*"]), "dpstats.templates", "dpstats.templates.methods"],
    package_dir={"dpstats.templates": "templates"},
)
