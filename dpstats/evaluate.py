"""Evaluate private selectors against each other (the DP-SIS paper's §5 comparisons).

:func:`compare_selectors` runs several selection methods on the same data (or
on the same draws from a generator) across a grid of eps and k, and returns a
tidy DataFrame with one row per (method, eps, k, trial): top-k accuracy and the
TOP / GREAT / GOOD utility classes.  :func:`summarise` averages it with
standard errors, :func:`difference_table` pairs two methods trial by trial and
:func:`comparison_report` writes a self-contained HTML report (accuracy
against eps with standard errors, and a difference heatmap like the paper's
Figures 6–7).

Truth.  For a generator (synthetic data), the true support; for a fixed data
set, as in the paper: the top-k of a non-private lasso (λ = 0.1, standardized
columns) on the full data, ranked by |coefficient| and then by |x_jᵀy|.
Accuracy is measured against that truth.

TOP / GREAT / GOOD (:func:`dpstats.methods.sis.utility_class`).  As in the
paper (Swope et al. §5, Figure 8) they are measured against the order
statistics of each method's own NON-PRIVATE scores on the same data
(``classes_against="scores"``, the default): they say how well the private
selector recovers the ranking it was given.  ``classes_against="truth"`` ranks
the true support (or the lasso truth) first and then the remaining features
by their non-private |x_jᵀy|, as dpstats did before.

Run from a shell: ``python -m dpstats.evaluate --help``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .methods import sis as sis_m
from .methods import two_stage as ts_m
from .privacy.topk import SELECTORS
from .stats import cross_products

DEFAULT_EPS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)


# ----------------------------------------------------------------------------- methods
@dataclass(frozen=True)
class Method:
    """A selection method split into its non-private score and its private selector.

    ``scores(X, y, ks, rng)`` returns {k: scores}; ``sensitivity[neighbouring]``
    is the scores' l∞ sensitivity.  ``selector=None`` means a non-private
    top-k (a reference, eps is ignored).
    """

    name: str
    scores: Callable[[np.ndarray, np.ndarray, list[int], np.random.Generator], dict[int, np.ndarray]]
    sensitivity: dict[str, float]
    selector: str | None = "canonical_lipschitz"


def _sis_scores(X, y, ks, rng):
    s = sis_m.scores_maxabs_centered(cross_products(X, y))
    return {k: s for k in ks}


def _two_stage_scores(lam: float = 0.1):
    def scores(X, y, ks, rng):
        return ts_m.two_stage_counts(X, y, list(ks), ts_m.Votes(ts_m.Lasso(lam)), rng=rng)

    return scores


BASE_METHODS = {
    "dp_sis": (_sis_scores, sis_m.SENSITIVITY),
    "dp_two_stage": (_two_stage_scores(), ts_m.SENSITIVITY),
}


def resolve_method(spec: str | Method) -> Method:
    """``"dp_sis"``, ``"dp_two_stage"``, ``"dp_sis:joint"`` (any selector) or
    ``"sis_nonprivate"`` / ``"two_stage_nonprivate"``.

    Examples
    --------
    >>> resolve_method("dp_two_stage:peeling").selector
    'peeling'
    """
    if isinstance(spec, Method):
        return spec
    if spec.endswith("_nonprivate"):
        base = "dp_" + spec[: -len("_nonprivate")]
        if base not in BASE_METHODS:
            raise ValueError(f"unknown method {spec!r}")
        fn, sens = BASE_METHODS[base]
        return Method(spec, fn, sens, selector=None)
    base, _, selector = spec.partition(":")
    if base not in BASE_METHODS:
        raise ValueError(
            f"unknown method {spec!r}; use one of {sorted(BASE_METHODS)}, "
            "optionally with ':<selector>', or '<sis|two_stage>_nonprivate'"
        )
    selector = selector or "canonical_lipschitz"
    if selector not in SELECTORS:
        raise ValueError(f"unknown selector {selector!r} in {spec!r}; use one of {sorted(SELECTORS)}")
    fn, sens = BASE_METHODS[base]
    return Method(spec, fn, sens, selector=selector)


# ----------------------------------------------------------------------------- truth
def lasso_truth(X: np.ndarray, y: np.ndarray, lam: float = 0.1) -> list[int]:
    """Full ranking: non-private lasso |coef| (λ = lam, standardized), then |x_jᵀy|."""
    coef = np.abs(ts_m.block_lasso(X, y, lam))
    sis = sis_m.scores_maxabs_centered(cross_products(X, y))
    return np.lexsort((-sis, -coef)).tolist()


def support_truth(
    X: np.ndarray, y: np.ndarray, support: Sequence[int], beta: np.ndarray | None = None
) -> list[int]:
    """Support first (by |β| if given), then the other features by |x_jᵀy|."""
    support = list(support)
    if beta is not None:
        support.sort(key=lambda j: -abs(beta[j]))
    sis = sis_m.scores_maxabs_centered(cross_products(X, y))
    rest = [j for j in np.argsort(-sis, kind="stable").tolist() if j not in set(support)]
    return support + rest


def _draw(
    data_or_generator, response: str, rng
) -> tuple[np.ndarray, np.ndarray, list[int] | None, np.ndarray | None]:
    """(X, y, support or None, beta or None) from a frame, an (X, y[, support]) tuple or a generator."""
    obj = data_or_generator(rng) if callable(data_or_generator) else data_or_generator
    if isinstance(obj, pd.DataFrame):
        cols = [c for c in obj.columns if c != response]
        X = obj[cols].to_numpy(dtype=float)
        y = obj[response].to_numpy(dtype=float)
        support = obj.attrs.get("support")
        beta = obj.attrs.get("beta")
        idx = {c: j for j, c in enumerate(cols)}
        sup = [idx[s] for s in support] if support is not None else None
        b = np.array([beta[c] for c in cols]) if beta is not None else None
        return X, y, sup, b
    X, y, *rest = obj
    sup = list(rest[0]) if rest and rest[0] is not None else None
    return np.asarray(X, float), np.asarray(y, float), sup, None


# ----------------------------------------------------------------------------- scoring
def accuracy(selected: Iterable[int], truth_set: Sequence[int], k: int) -> float:
    """|S ∩ T| / min(k, |T|): the paper's top-k accuracy (T the true support or top-k)."""
    return len(set(selected) & set(truth_set)) / max(1, min(k, len(truth_set)))


def score_ranking(scores: np.ndarray) -> list[int]:
    """Items by descending non-private score, ties by index: the paper's order statistics.

    Examples
    --------
    >>> score_ranking(np.array([0.5, 2.0, 0.5, 1.0]))
    [1, 3, 0, 2]
    """
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable").tolist()


def _classes(selected, ranking, k) -> dict[str, bool]:
    cls = sis_m.utility_class(list(selected), ranking, k)
    return {"TOP": cls == "TOP", "GREAT": cls in ("TOP", "GREAT"), "GOOD": cls in ("TOP", "GREAT", "GOOD")}


def compare_selectors(
    data_or_generator,
    methods: Sequence[str | Method] = ("dp_sis", "dp_two_stage"),
    eps_grid: Sequence[float] = DEFAULT_EPS,
    k: int | Sequence[int] = 8,
    trials: int = 100,
    *,
    response: str = "y",
    neighbouring: str = "replace",
    lam: float = 0.1,
    random_state: int | None = None,
    progress: bool = False,
    classes_against: str = "scores",
) -> pd.DataFrame:
    """Accuracy of private selectors across eps and k, on shared data draws.

    Parameters
    ----------
    data_or_generator : DataFrame, (X, y[, support]) or callable
        A fixed data set (truth: top-k of a non-private lasso on all of it),
        or ``generator(rng)`` returning a DataFrame with ``attrs["support"]``
        (e.g. ``lambda rng: dp.datasets.fan_lv(random_state=rng)``) or an
        ``(X, y, support)`` tuple; a new draw per trial, shared by all methods.
    methods : list of str or Method
        See :func:`resolve_method`.
    eps_grid : list of float
    k : int or list of int
    trials : int
    response : str
        Response column of a DataFrame.
    neighbouring : {"replace", "add_remove"}
        Sets each method's sensitivity (DP-SIS: 2 or 1; two-stage: 1 and 1).
    lam : float
        Lasso penalty of the truth for fixed data.
    random_state : int, optional
        Seed for the whole experiment (not for release).
    classes_against : {"scores", "truth"}
        Ranking for TOP/GREAT/GOOD: ``"scores"`` (default, the paper's
        definition) the order of the method's non-private scores on the same
        data; ``"truth"`` the true support (or lasso truth) first.

    Returns
    -------
    DataFrame with columns method, eps, k, trial, accuracy, TOP, GREAT, GOOD.

    Examples
    --------
    >>> import dpstats as dp
    >>> gen = lambda rng: dp.datasets.fan_lv(n=60, d=100, random_state=rng)
    >>> df = compare_selectors(gen, ["dp_sis"], [1.0, 10.0], k=8, trials=3, random_state=0)
    >>> sorted(df.columns)
    ['GOOD', 'GREAT', 'TOP', 'accuracy', 'eps', 'k', 'method', 'trial']
    """
    if classes_against not in ("scores", "truth"):
        raise ValueError(f"classes_against must be 'scores' or 'truth', got {classes_against!r}")
    ks = [int(k)] if isinstance(k, (int, np.integer)) else [int(v) for v in k]
    specs = [resolve_method(mm) for mm in methods]
    rng = np.random.default_rng(random_state)
    rows: list[dict] = []
    fixed = None
    if not callable(data_or_generator):
        X, y, sup, beta = _draw(data_or_generator, response, rng)
        fixed = (X, y, lasso_truth(X, y, lam) if sup is None else support_truth(X, y, sup, beta), sup)
    iterator = range(trials)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="compare_selectors")
    for t in iterator:
        if fixed is None:
            X, y, sup, beta = _draw(data_or_generator, response, rng)
            if sup is None:
                raise ValueError("a generator must give the true support (attrs['support'] or a third item)")
            ranking = support_truth(X, y, sup, beta)
        else:
            X, y, ranking, sup = fixed
        for method in specs:
            scores = method.scores(X, y, ks, rng)
            for kk in ks:
                truth_set = sup if sup is not None else ranking[:kk]
                order = score_ranking(scores[kk]) if classes_against == "scores" else ranking
                for eps in eps_grid:
                    chosen = _select(method, scores[kk], kk, eps, neighbouring, rng)
                    row = {
                        "method": method.name,
                        "eps": float(eps),
                        "k": kk,
                        "trial": t,
                        "accuracy": accuracy(chosen.tolist(), truth_set, kk),
                    }
                    row.update(_classes(chosen.tolist(), order, kk))
                    rows.append(row)
    out = pd.DataFrame(rows, columns=["method", "eps", "k", "trial", "accuracy", "TOP", "GREAT", "GOOD"])
    out.attrs.update(
        {
            "neighbouring": neighbouring,
            "classes_against": classes_against,
            "sensitivity": {mm.name: mm.sensitivity[neighbouring] for mm in specs if mm.selector is not None},
            "selector": {mm.name: mm.selector or "none (non-private)" for mm in specs},
        }
    )
    return out


def _select(method: Method, scores, k, eps, neighbouring, rng) -> np.ndarray:
    if method.selector is None:
        return ts_m.nonprivate_topk(scores, k, rng)
    options = {"gamma": 0.5} if method.selector == "canonical_lipschitz" else {}
    return SELECTORS[method.selector].select(
        np.asarray(scores) / method.sensitivity[neighbouring], k, float(eps), rng, **options
    )


# ----------------------------------------------------------------------------- summaries
def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean accuracy with its standard error and TOP/GREAT/GOOD rates per (method, k, eps).

    Examples
    --------
    >>> df = pd.DataFrame({"method": "a", "eps": 1.0, "k": 5, "trial": [0, 1],
    ...                    "accuracy": [0.4, 0.6], "TOP": False, "GREAT": False, "GOOD": True})
    >>> round(float(summarise(df)["accuracy_se"].iloc[0]), 3)
    0.1
    """
    g = results.groupby(["method", "k", "eps"], sort=True)
    out = g.agg(
        accuracy=("accuracy", "mean"),
        accuracy_sd=("accuracy", "std"),
        trials=("accuracy", "size"),
        TOP=("TOP", "mean"),
        GREAT=("GREAT", "mean"),
        GOOD=("GOOD", "mean"),
    ).reset_index()
    out["accuracy_se"] = out["accuracy_sd"] / np.sqrt(out["trials"])
    return out[["method", "k", "eps", "trials", "accuracy", "accuracy_se", "TOP", "GREAT", "GOOD"]]


def difference_table(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Paired difference of mean accuracy (a − b) per (k, eps), its SE and a z statistic.

    Trials share their data draw across methods, so the difference is paired
    by trial; |z| > 2 marks a difference beyond about two standard errors.
    """
    keys = ["k", "eps", "trial"]
    left = results[results["method"] == a].set_index(keys)["accuracy"]
    right = results[results["method"] == b].set_index(keys)["accuracy"]
    diff = (left - right).dropna().reset_index(name="diff")
    g = diff.groupby(["k", "eps"])["diff"]
    out = g.agg(["mean", "std", "size"]).reset_index()
    out["se"] = out["std"] / np.sqrt(out["size"])
    with np.errstate(divide="ignore", invalid="ignore"):
        out["z"] = np.where(out["se"] > 0, out["mean"] / out["se"], np.sign(out["mean"]) * np.inf)
    return out.rename(columns={"mean": "difference", "size": "trials"})[
        ["k", "eps", "trials", "difference", "se", "z"]
    ]


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """Wide table: one row per (k, eps), one 'mean (se)' column per method."""
    s = summarise(results)
    s["cell"] = [f"{a:.3f} ({e:.3f})" for a, e in zip(s["accuracy"], s["accuracy_se"])]
    wide = s.pivot(index=["k", "eps"], columns="method", values="cell")
    return wide.rename_axis(columns=None).reset_index()


# ----------------------------------------------------------------------------- report
def _accuracy_plot(summary: pd.DataFrame, k: int):
    from .plotting import new_figure, to_plot

    fig, ax = new_figure()
    sub = summary[summary["k"] == k]
    for method, part in sub.groupby("method"):
        ax.errorbar(
            part["eps"], part["accuracy"], yerr=2 * part["accuracy_se"], marker="o", capsize=3, label=method
        )
    ax.set_xscale("log")
    ax.set_xlabel("eps (log scale)")
    ax.set_ylabel("mean top-k accuracy (± 2 s.e.)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(frameon=False)
    ax.set_title(f"Accuracy against eps, k = {k}")
    best = sub.loc[sub.groupby("method")["accuracy"].idxmax()]
    alt = (
        "Accuracy rises with eps; highest values: "
        + ", ".join(f"{r.method} {r.accuracy:.2f} at eps {r.eps:g}" for r in best.itertuples())
        + "."
    )
    return to_plot(fig, f"Accuracy against eps (k = {k})", alt)


def _heatmap(diff: pd.DataFrame, a: str, b: str):
    from .plotting import new_figure, to_plot

    ks = sorted(diff["k"].unique())
    eps = sorted(diff["eps"].unique())
    grid = np.full((len(ks), len(eps)), np.nan)
    z = np.zeros_like(grid)
    for r in diff.itertuples():
        grid[ks.index(r.k), eps.index(r.eps)] = r.difference
        z[ks.index(r.k), eps.index(r.eps)] = r.z
    fig, ax = new_figure(width=max(4.0, 0.9 * len(eps) + 2), height=1.0 * len(ks) + 1.6)
    lim = max(0.05, float(np.nanmax(np.abs(grid))))
    im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(len(ks)):
        for j in range(len(eps)):
            star = "*" if abs(z[i, j]) > 2 else ""
            ax.text(j, i, f"{grid[i, j]:+.2f}{star}", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(len(eps)), [f"{e:g}" for e in eps])
    ax.set_yticks(range(len(ks)), [str(k) for k in ks])
    ax.set_xlabel("eps")
    ax.set_ylabel("k")
    fig.colorbar(im, ax=ax, label=f"accuracy({a}) − accuracy({b})")
    ax.set_title(f"{a} minus {b} (* : |difference| > 2 paired s.e.)")
    alt = (
        f"Mean paired accuracy difference {a} minus {b}; positive in "
        f"{int(np.sum(grid > 0))} of {grid.size} cells, significant (|z| > 2) in "
        f"{int(np.sum(np.abs(z) > 2))}."
    )
    return to_plot(fig, f"Difference heatmap: {a} − {b}", alt)


def comparison_report(
    results: pd.DataFrame,
    path: str,
    *,
    title: str = "Comparison of private selectors",
    description: str = "",
    pair: tuple[str, str] | None = None,
) -> str:
    """Write an HTML report: accuracy-vs-eps curves per k, a difference heatmap, tables.

    Examples
    --------
    >>> import tempfile, os, dpstats as dp
    >>> gen = lambda rng: dp.datasets.fan_lv(n=60, d=80, random_state=rng)
    >>> res = compare_selectors(gen, ["dp_sis", "dp_two_stage"], [1, 10], k=5, trials=2, random_state=0)
    >>> p = comparison_report(res, os.path.join(tempfile.mkdtemp(), "cmp.html"))
    """
    import datetime as _dt

    from ._io import atomic_write
    from .report import software_versions, template_environment

    summary = summarise(results)
    methods = list(dict.fromkeys(results["method"]))
    plots = [_accuracy_plot(summary, int(k)) for k in sorted(summary["k"].unique())]
    fmt = lambda v: f"{v:.3f}"  # noqa: E731
    tables = [
        {
            "heading": "Mean accuracy (standard error)",
            "html": accuracy_table(results).to_html(index=False, classes="results-table", border=0),
        },
        {
            "heading": "Summary",
            "html": summary.to_html(index=False, float_format=fmt, classes="results-table", border=0),
        },
    ]
    if pair is None and len(methods) >= 2:
        pair = (methods[0], methods[1])
    if pair is not None:
        diff = difference_table(results, *pair)
        plots.append(_heatmap(diff, *pair))
        tables.append(
            {
                "heading": f"Paired differences ({pair[0]} − {pair[1]})",
                "html": diff.to_html(index=False, float_format=fmt, classes="results-table", border=0),
            }
        )
    page = (
        template_environment()
        .get_template("comparison.html.j2")
        .render(
            title=title,
            description=description,
            privacy_text=_privacy_text(results),
            plots=plots,
            tables=tables,
            versions=software_versions(),
            generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )
    atomic_write(path, page)
    return path


# ----------------------------------------------------------------------------- real data
def chiaretti_all() -> pd.DataFrame:
    """Chiaretti et al. (2004) ALL microarrays: 128 patients × 12 625 probes (Bioconductor ``ALL``).

    Loaded through rpy2 from the R package ``ALL`` (Debian ``r-bioc-all``).
    Response ``y``: the leukaemia's cell lineage from ``ALL$BT``, 1 for T-cell
    (33 patients) and 0 for B-cell (95); predictors are the RMA expression
    values, one column per probe (names such as ``1000_at``).

    Examples
    --------
    >>> df = chiaretti_all()            # doctest: +SKIP
    >>> df.shape                         # doctest: +SKIP
    (128, 12626)
    """
    ro = _r("suppressPackageStartupMessages({library(ALL); library(Biobase)}); data(ALL)")
    genes = list(ro.r("featureNames(ALL)"))
    X = np.asarray(ro.r("as.vector(exprs(ALL))"), dtype=float).reshape(-1, len(genes))
    lineage = [str(v) for v in ro.r("as.character(ALL$BT)")]
    return _frame(
        X,
        genes,
        [1.0 if v.startswith("T") else 0.0 for v in lineage],
        "Chiaretti ALL (Bioconductor ALL); y = 1 for T-cell, 0 for B-cell lineage",
    )


def golub() -> pd.DataFrame:
    """Golub et al. (1999) leukaemia microarrays: 38 patients × 3 051 genes (``multtest``).

    Loaded through rpy2 from the R package ``multtest`` (Debian
    ``r-bioc-multtest``).  Response ``y = golub.cl``: 1 for AML (11 patients),
    0 for ALL (27).  Columns are named ``g1 … g3051`` (row order of ``golub``).
    """
    ro = _r("suppressPackageStartupMessages(library(multtest)); data(golub)")
    # R stores golub (genes × samples) column-major: each block of 3051 values is one sample
    X = np.asarray(ro.r("as.vector(golub)"), dtype=float).reshape(38, -1)
    y = np.asarray(ro.r("golub.cl"), dtype=float)
    return _frame(
        X,
        [f"g{j + 1}" for j in range(X.shape[1])],
        y,
        "Golub leukaemia (multtest golub); y = 1 for AML, 0 for ALL",
    )


def _r(code: str):
    from .rbridge import import_robjects

    ro = import_robjects()

    ro.r(code)
    return ro


def _frame(X: np.ndarray, names: list[str], y, description: str) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "y", np.asarray(y, dtype=float))
    df.attrs["description"] = description
    return df


def _privacy_text(results: pd.DataFrame) -> str:
    relation = results.attrs.get("neighbouring", "replace").replace("_", "/")
    sens = results.attrs.get("sensitivity", {})
    sel = results.attrs.get("selector", {})
    parts = [f"{m}: {sel.get(m, '?')} top-k, score sensitivity {s:g}" for m, s in sens.items()]
    text = (
        f"Each private selection in this comparison is eps-differentially private, for the eps "
        f"of its row, with respect to {relation} one row ({'; '.join(parts) or 'no private methods'}). "
        "The comparison itself is NOT private: the truth, the non-private references and the "
        "accuracies use the data directly, so this report is for method evaluation, not release."
    )
    nonprivate = [m for m, s in sel.items() if s.startswith("none")]
    if nonprivate:
        text += f" Non-private references: {', '.join(nonprivate)}."
    return text


# ----------------------------------------------------------------------------- command
def main(argv: list[str] | None = None) -> int:
    """``python -m dpstats.evaluate``: compare selectors on the synthetic model and write a report."""
    from .simulate import fan_lv

    ap = argparse.ArgumentParser(prog="python -m dpstats.evaluate", description=main.__doc__)
    ap.add_argument("--methods", default="dp_sis,dp_two_stage")
    ap.add_argument("--eps", default=",".join(f"{e:g}" for e in DEFAULT_EPS))
    ap.add_argument("--k", default="5,8")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--d", type=int, default=2000)
    ap.add_argument("--neighbouring", default="replace", choices=["replace", "add_remove"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="compare_selectors.html")
    args = ap.parse_args(argv)
    res = compare_selectors(
        lambda rng: fan_lv(n=args.n, d=args.d, random_state=rng),
        args.methods.split(","),
        [float(e) for e in args.eps.split(",")],
        [int(v) for v in args.k.split(",")],
        args.trials,
        neighbouring=args.neighbouring,
        random_state=args.seed,
        progress=True,
    )
    print(accuracy_table(res).to_string(index=False))
    comparison_report(res, args.out, title=f"Selectors on the Fan-Lv model (n={args.n}, d={args.d})")
    print(f"report: {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
