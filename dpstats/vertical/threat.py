"""What each party of a networked fit learns, in words: the notes a networked fit's privacy
statement carries, and the note its errors end with.  The README's "Parties over the network"
section is the long version (the threat model).
"""

from __future__ import annotations

TLS_NOTE = (
    "Channel: TLS 1.3 with one certificate per party, signed by the consortium's authority; the leader "
    "admitted only the parties named in the analysis (by their certificates) and every member checked the "
    "leader's certificate name. Someone on the network sees neither contents nor names, but sees traffic "
    "sizes and timing: message lengths reveal n, the number of sweeps and the parties' column counts."
)
PSK_NOTE = (
    "Channel: a pre-shared key (deprecated). Every party holds the same key, so any party, or anyone who "
    "obtains the key, can pose as the leader or another member, and can read recorded sessions (no forward "
    "secrecy)."
)
EXACT_NOTES = [
    "Who learns what (exact mode): the leader receives each member's exact linear predictor X_kβ_k every "
    "sweep; a member receives y and the exact sum of the other parties' linear predictors. Over the sweeps "
    "(and at once from the column bases with se='exact') these vectors span the senders' column spaces: "
    "a curious leader or member can compute, for every linear combination of the sender's columns, its "
    "values on every row, and so predict the sender's contribution to y, and with a few known rows or "
    "column ranges recover the columns themselves. As sharing cov(X) lets Alice predict x_b from x_a, "
    "the linear predictors let each party regress the others' predictors on its own columns.",
]
DP_NOTES = [
    "Who learns what (DP mode): each party clips and noises its own linear predictors and coefficients "
    "before they leave it, so the (eps, delta) guarantee protects every row of each party's covariates "
    "against a curious leader, curious members and coalitions of them that follow the protocol; y is sent "
    "in the clear and is not protected. Not covered: traffic analysis (sizes, timing, the number of inner "
    "iterations), and a party that deviates from the protocol: a party that adds no noise to its own "
    "releases, or a leader announcing a false plan (a member checks eps, delta, its own row-norm bound and "
    "refuses releases beyond the agreed sweeps, but cannot check the others' noise or the party count).",
]


def network_notes(channel: str, K: int, dp: bool) -> list[str]:
    """The channel and who-learns-what notes of a networked fit's privacy statement."""
    return [TLS_NOTE if channel == "tls" else PSK_NOTE] + (DP_NOTES if dp else EXACT_NOTES)


def failure_note(progress: dict, leader: bool) -> str:
    """What a stopped fit has released and the budget's state, appended to its error message."""
    sweeps, dp = int(progress.get("sweeps", 0)), bool(progress.get("dp"))
    if not progress.get("sent_setup"):
        sent = "no data had been sent"
    elif sweeps == 0:
        sent = "the setup (with y) had been sent, no linear predictor"
    else:
        sent = f"linear predictors of {sweeps} sweep(s) had been exchanged"
    if dp:
        budget = (
            "budget: no accountant is charged by a networked fit; the releases already made are covered "
            "by this fit's (eps, delta) - count it as spent if any sweep ran"
        )
    else:
        budget = "exact mode: no privacy budget, and what was exchanged is disclosed without a guarantee"
    return f"[no result released; {sent}; {budget}]"


__all__ = ["network_notes", "failure_note"]
