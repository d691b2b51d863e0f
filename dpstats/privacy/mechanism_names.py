"""The names of the privacy mechanisms as a statistician reads them, in one place.

The methods record a step's mechanism by a short code ("Gaussian (zCDP)", "canonical_lipschitz top-k",
"Laplace AboveThreshold"); a :class:`~dpstats.privacy.accountant.LedgerEntry` and a
:class:`~dpstats.privacy.statement.PrivacyStatement` turn it into its readable name here, so print,
summary, ``ledger()``, ``tidy()``, ``to_dict()`` and the report (and R's ledger) all show the same
words.  A step that uses several mechanisms lists them separated by "; ", each named.  A name that
is not a code here is shown as written (it already is a name).
"""

from __future__ import annotations

QUANTILE_BOUNDS = "private quantile (bounds): exponential mechanism on a public geometric grid (Smith 2011)"

NAMES: dict[str, str] = {
    "gaussian": "Gaussian mechanism",
    "gaussian (zcdp)": "Gaussian mechanism (zCDP)",
    "gaussian mechanism, zcdp composition": "Gaussian mechanism (zCDP)",
    "laplace": "Laplace mechanism",
    "laplace (sufficient-statistics perturbation)": "Laplace mechanism (sufficient-statistics perturbation)",
    "laplace abovethreshold": "AboveThreshold (sparse vector, Laplace noise)",
    "laplace peeling (report noisy min)": "Report Noisy Min with peeling (Laplace noise)",
    "l2-laplace output perturbation": "L2-Laplace mechanism (output perturbation)",
    "exponential": "exponential mechanism",
    "chi-square tail": "high-probability bound (chi-square tail)",
    "exponential mechanism over a public geometric grid (dp quantile, smith 2011)": QUANTILE_BOUNDS,
    # the top-k selectors, by the value of topk= that chooses them
    "canonical_lipschitz top-k": "canonical Lipschitz mechanism (top-k)",
    "oneshot_gumbel top-k": "one-shot Gumbel mechanism (top-k)",
    "peeling top-k": "peeling exponential mechanism (top-k)",
    "joint top-k": "joint exponential mechanism (top-k)",
}

GAUSSIAN = frozenset({NAMES["gaussian"], NAMES["gaussian (zcdp)"]})


def mechanism_name(mechanism: str) -> str:
    """The readable name of a mechanism code (each of a "; "-separated list); a name stays as it is.

    Examples
    --------
    >>> mechanism_name("canonical_lipschitz top-k")
    'canonical Lipschitz mechanism (top-k)'
    >>> mechanism_name("Gaussian; Laplace AboveThreshold")
    'Gaussian mechanism; AboveThreshold (sparse vector, Laplace noise)'
    >>> mechanism_name("Gaussian mechanism")
    'Gaussian mechanism'
    """
    return "; ".join(NAMES.get(part.strip().lower(), part) for part in mechanism.split("; "))
