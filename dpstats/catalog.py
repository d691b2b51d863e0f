"""The catalog of methods: one entry per public analysis function, read by every registry.

A method's front door, result class, command-line name, demo, planner support and R
function were once listed in five places (the package's lazy names, the planner's method
table, the demo order, the command line's name mapping, the R help generator).  They now
read this table, and ``tests/test_catalog.py`` checks that every entry resolves and that no
other module keeps a list of its own.

The catalog is plain data (names and module paths as strings) and imports nothing of
dpstats, so it sits with the leaves of the layer contract (``pyproject.toml``) and every
layer may read it; whoever needs the objects imports the paths it names.

Examples
--------
>>> from dpstats import catalog
>>> catalog.get("dp_sis").front_door
'dpstats.api.sis'
>>> catalog.by_cli("two_stage").name
'dp_two_stage'
>>> [m.name for m in catalog.METHODS if m.planner][:3]
['dp_sis', 'dp_two_stage', 'dp_knockoff']
"""

from __future__ import annotations

from typing import NamedTuple


class Method(NamedTuple):
    """One public analysis function and where each layer finds its parts.

    name
        The public name, ``dpstats.<name>`` (Python) and, where ``r`` is set, the R function.
    front_door
        The module that defines the public function (``api/``).
    result
        The result class, ``"module:Class"`` (``results/``).
    method
        The algorithm's module or subpackage (``methods/``).
    cli
        The name of ``dpstats run NAME`` (and ``dpstats plan NAME``), or None when the
        command line does not offer it.
    demo
        The module of ``dpstats.demos`` that shows it, or None.
    planner
        The module of ``dpstats.planner`` whose ``setup(p, options)`` builds its simulators for
        :func:`dpstats.plan`, or None when the planner does not predict it.
    r
        The R wrapper's function name (``r_wrapper/R/``), or None when R does not offer it;
        ``scripts/make_r_docs.py`` writes the wrapper (``R/doors.R``) unless ``R/`` defines it by hand.
    """

    name: str
    front_door: str
    result: str
    method: str
    cli: str | None
    demo: str | None
    planner: str | None
    r: str | None


METHODS: tuple[Method, ...] = (
    Method(
        name="dp_sis",
        front_door="dpstats.api.sis",
        result="dpstats.results.sis:SISResult",
        method="dpstats.methods.sis",
        cli="sis",
        demo="sis",
        planner="dpstats.planner.sis",
        r="dp_sis",
    ),
    Method(
        name="dp_two_stage",
        front_door="dpstats.api.two_stage",
        result="dpstats.results.two_stage:TwoStageResult",
        method="dpstats.methods.two_stage",
        cli="two_stage",
        demo="two_stage",
        planner="dpstats.planner.two_stage",
        r="dp_two_stage",
    ),
    Method(
        name="dp_knockoff",
        front_door="dpstats.api.knockoff",
        result="dpstats.results.knockoff:KnockoffResult",
        method="dpstats.methods.knockoff",
        cli="knockoff",
        demo="knockoff",
        planner="dpstats.planner.knockoff",
        r="dp_knockoff",
    ),
    Method(
        name="dp_gmm",
        front_door="dpstats.api.gmm",
        result="dpstats.results.gmm:GMMResult",
        method="dpstats.methods.gmm",
        cli="gmm",
        demo="gmm",
        planner="dpstats.planner.gmm",
        r="dp_gmm",
    ),
    Method(
        name="dp_felp",
        front_door="dpstats.api.felp",
        result="dpstats.results.felp:FELPResult",
        method="dpstats.methods.felp",
        cli="felp",
        demo="felp",
        planner="dpstats.planner.felp",
        r="dp_felp",
    ),
    Method(
        name="vertical_glm",
        front_door="dpstats.api.vertical_glm",
        result="dpstats.results.vertical_glm:VerticalGLMResult",
        method="dpstats.methods.privreg",
        cli="vertical_glm",
        demo="vertical",
        planner="dpstats.planner.vertical",
        r="vertical_glm",
    ),
    Method(
        name="dp_pca",
        front_door="dpstats.api.pca",
        result="dpstats.results.pca:PCAResult",
        method="dpstats.methods.pca",
        cli="pca",
        demo=None,
        planner=None,
        r="dp_pca",
    ),
    Method(
        name="dp_lm",
        front_door="dpstats.api.lm",
        result="dpstats.results.lm:LMResult",
        method="dpstats.methods.lm",
        cli="lm",
        demo="lm",
        planner="dpstats.planner.lm",
        r="dp_lm",
    ),
    Method(
        name="dp_glm",
        front_door="dpstats.api.glm",
        result="dpstats.results.glm:GLMResult",
        method="dpstats.methods.glm",
        cli="glm",
        demo=None,
        planner="dpstats.planner.glm",
        r="dp_glm",
    ),
    Method(
        name="dp_select_infer",
        front_door="dpstats.api.select_infer",
        result="dpstats.results.select_infer:SelectInferResult",
        method="dpstats.methods.select_infer",
        cli="select_infer",
        demo=None,
        planner=None,
        r="dp_select_infer",
    ),
    Method(
        name="dp_bh",
        front_door="dpstats.api.bh",
        result="dpstats.results.bh:BHResult",
        method="dpstats.methods.bh",
        cli=None,
        demo="bh",
        planner=None,
        r="dp_bh",
    ),
)


def names() -> list[str]:
    """The public names of every method, in catalog order."""
    return [m.name for m in METHODS]


def get(name: str) -> Method:
    """The entry of the public name ``name``; KeyError if there is none."""
    for m in METHODS:
        if m.name == name:
            return m
    raise KeyError(name)


def by_cli(cli: str) -> Method:
    """The entry whose command-line name is ``cli``; KeyError if there is none."""
    for m in METHODS:
        if m.cli is not None and m.cli == cli:
            return m
    raise KeyError(cli)


def by_front_door(module: str) -> Method:
    """The entry whose front door is the module ``module``; KeyError if there is none."""
    for m in METHODS:
        if m.front_door == module:
            return m
    raise KeyError(module)


def front_doors() -> dict[str, str]:
    """Public name -> module of its front door (the package's lazy attributes)."""
    return {m.name: m.front_door for m in METHODS}


def cli_names() -> dict[str, str]:
    """Command-line name -> public name, for the methods the command line offers."""
    return {m.cli: m.name for m in METHODS if m.cli is not None}


def planner_names() -> tuple[str, ...]:
    """The public names the planner predicts, in catalog order."""
    return tuple(m.name for m in METHODS if m.planner is not None)


def demo_order() -> list[str]:
    """The demo modules, in catalog order (the order the demo runs them)."""
    return [m.demo for m in METHODS if m.demo is not None]


def r_functions() -> dict[str, str]:
    """R function -> Python public name, for the methods the R package wraps."""
    return {m.r: m.name for m in METHODS if m.r is not None}
