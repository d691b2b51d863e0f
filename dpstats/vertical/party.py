"""One party of a vertically partitioned GLM fit, in its own process, over TCP.

Topology: a star.  The leader holds y, the intercept and its own columns; it
listens (:meth:`Party.serve`), and every other party (a member) connects to it
(:meth:`Party.connect`).  The leader runs the sweeps of
:func:`dpstats.methods.privreg.block_coordinate_descent`: it sends each
member the sum of the other parties' current linear predictors, and the
member answers with its own, on its columns centred (outside DP mode also
the shift c_kᵀβ_k that centring took out; :class:`dpstats.methods.privreg.LocalBlock`).  At the end each
member sends its coefficients and standard errors, and the leader sends the
full coefficient table to everyone.  Any failure (a party disconnects, times
out, sends a tampered frame, or has bad data) stops the fit everywhere with
a :class:`ProtocolError` or :class:`~dpstats.errors.DataError`; no partial
result is returned.
"""

from __future__ import annotations

import math
import socket
import ssl
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import DataError, DPStatsError, PrivacyParameterError
from ..formula import ModelFrame, model_frame, with_formula_declarations
from ..methods import privreg as m
from ..privacy.randomness import NoiseSource
from ..privacy.statement import DataDependence
from ..validation import check_eps, check_gaussian_delta
from ..results.vertical_glm import VerticalGLMResult, assemble_result, coefficient_table
from ..schema import Schema
from .channel import DEFAULT_MAX_MESSAGE, ProtocolError, SecureChannel, load_key
from .pki import TLSCredentials
from .threat import failure_note, network_notes
from .tls import TLSChannel, client_context, describe_tls_error, peer_names, server_context


HANDSHAKE_TIMEOUT = 10.0  # seconds for one TLS handshake during admission (connections are taken in turn)


class Party:
    """One data holder in a vertically partitioned GLM.

    Parameters
    ----------
    data : DataFrame
        This party's columns (and, for the leader, the response), one row per
        shared row id.
    key : bytes or hex str, optional
        Deprecated channel: a pre-shared key (≥ 32 bytes), the same for all
        parties (``channel="psk"``).  Any holder can pose as any party and a
        leaked key opens every past and future session; use ``tls=``.
    name : str
        This party's name (unique); with ``tls=`` it must be a name in this
        party's certificate.
    tls : TLSCredentials or directory, optional
        This party's TLS identity (``channel="tls"``): the consortium's
        authority, this party's certificate and key.  A directory written by
        ``dpstats party init`` is read as ``ca.crt``, ``<name>.crt``,
        ``<name>.key``.
    formula : str, optional
        Leader: two-sided, e.g. ``"y ~ x1 + x2"`` (its own columns; the
        intercept goes here).  Member: one-sided, e.g. ``"~ x3 + x4"``
        (no intercept).  Default: all columns except ``row_id`` (the leader
        needs ``response=`` then).
    row_id : str, optional
        Column with the shared row ids (default: the index).  Only a hash of
        the ordered ids is sent.
    levels : dict, optional
        Declared levels of this party's categorical columns (``{"g": ["a", "b"]}``), as
        :func:`dpstats.vertical_glm`'s: the design's columns, hence the terms this party sends,
        are then those levels whatever the rows hold (a value outside them is missing).  The leader's
        may declare a binomial fit's two-level text response (the first level coded 0).  In DP
        mode the levels of a text column without declared levels are read from the rows: a
        named data-dependent step (warned, listed in every party's statement, refused under
        ``strict=True``).
    na_action : {None, "fill"}
        Both mean the one rule a party has (no party may drop a shared row, so ``"omit"`` is
        refused): in DP mode a missing value is always filled with its public fill (the midpoint
        of this party's declared bounds, a factor's first level), as in-process ``vertical_glm``;
        every numeric variable needs declared bounds (checked from the names, before any row is
        read).  Without DP a row with a missing value stops the fit.
    timeout : float
        Seconds to wait for a connection or a message.
    max_message_bytes : int
        Largest accepted message.

    Examples
    --------
    >>> import tempfile, numpy as np, pandas as pd
    >>> from dpstats.vertical.pki import init_consortium
    >>> certs = tempfile.mkdtemp()
    >>> _ = init_consortium(["A", "B"], certs)
    >>> p = Party(pd.DataFrame({"x": [1.0, 2.0, 4.0]}), name="B", tls=certs)
    >>> p.name, p.channel
    ('B', 'tls')
    """

    def __init__(
        self,
        data: pd.DataFrame,
        key: bytes | str | None = None,
        *,
        name: str,
        tls: TLSCredentials | str | None = None,
        formula: str | None = None,
        response: str | None = None,
        row_id: str | None = None,
        levels: dict | None = None,
        na_action: str | None = None,
        timeout: float = 60.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE,
    ) -> None:
        if not isinstance(data, pd.DataFrame):
            raise DataError("Party data must be a pandas DataFrame.")
        if row_id is not None and row_id not in data.columns:
            raise DataError(f"row_id {row_id!r} is not a column of party {name!r}'s data.")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise DataError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        self.data, self.name, self.row_id = data, str(name), row_id
        self.formula, self.response = formula, response
        if na_action not in (None, "fill"):
            raise PrivacyParameterError(
                f"party {self.name!r}: na_action must be 'fill' (or None): every party must keep all shared "
                f"rows, so none can be omitted; got {na_action!r}."
            )
        self.levels = Schema.declare(levels=levels).levels  # checked now, before any connection
        if (key is None) == (tls is None):
            raise DataError(
                f"party {self.name!r}: give tls= (this party's certificate, key and the consortium's "
                "authority; see `dpstats party init`) or, deprecated, a pre-shared key; not both, not neither."
            )
        self.key, self.tls = None, None
        if tls is not None:
            self.tls = tls if isinstance(tls, TLSCredentials) else TLSCredentials.from_dir(tls, self.name)
            self.tls.check()
            _check_own_name(self.tls, self.name)
            self.channel = "tls"
        else:
            warnings.warn(
                "the pre-shared-key channel (channel='psk') is deprecated: every holder of the key can pose "
                "as any party and a leaked key opens every past and future session. Use tls= with one "
                "certificate per party (`dpstats party init`).",
                DeprecationWarning,
                stacklevel=2,
            )
            self.key = load_key(key)
            self.channel = "psk"
        self.refused: list[str] = []  # leader: connections refused during admission (TLS)
        self.traffic: dict[str, tuple[int, int]] = {}  # leader: bytes (sent, received) per member
        self._progress = {"sent_setup": False, "sweeps": 0, "dp": False}
        self._strict = False  # leader: the fit's strict, sent in every welcome (serve)
        self.timeout, self.max_message = float(timeout), int(max_message_bytes)
        ids = data[row_id].tolist() if row_id is not None else data.index.tolist()
        self.row_hash = m.row_id_hash(ids)

    # ------------------------------------------------------------------ model frames
    def _frame(
        self, leader: bool, *, dp: bool = False, bounds=None, family: str = "gaussian", strict: bool = False
    ) -> tuple[ModelFrame, DataDependence, str]:
        """This party's model frame under its public schema, its named data-dependent steps, and (leader)
        the note on a factor response (which level is modelled; ``""`` otherwise).

        DP mode: levels from ``levels=`` (or a Categorical's dtype), else read from the rows as a named
        step, a binomial factor response's as the predictors'; missing values filled from the declared
        bounds (a variable without bounds is refused from the names alone).  Without DP rows with a missing value stop the fit.
        """
        data = self.data.drop(columns=[self.row_id]) if self.row_id is not None else self.data
        formula = self._formula(leader)
        schema = self._schema(formula, dp, bounds, family, strict)
        if dp:
            self._refuse_unfilled(data, formula, schema)
        dd = DataDependence(strict)
        dd.hold_warnings()  # an error of the frame comes before any warning, and says the steps named
        try:
            mf, note = self._model_frame(leader, formula, data, schema, family, dd if dp else None)
        except DPStatsError as err:
            raise dd.refusal(err) from None
        if dp:  # every step named with this party's name: the statement of the fit lists all parties'
            mf.schema_steps = [(f"party {self.name!r}: {step}", fix) for step, fix in mf.schema_steps]
            mf.data_dependent_terms = [
                (f"party {self.name!r}: {s}", fix) for s, fix in mf.data_dependent_terms
            ]
            dd.name_frame_steps(mf)
        dd.release_warnings()
        if mf.n_dropped:  # without DP only: in DP mode every missing value has a public fill
            raise DataError(
                f"party {self.name!r}: some rows have missing values; every party "
                "must keep all shared rows (impute or remove them from all parties first)."
            )
        return mf, dd, note

    def _model_frame(  # noqa: PLR0913 (the frame's inputs, as _frame holds them)
        self, leader: bool, formula: str, data: pd.DataFrame, schema: Schema, family: str, dd
    ) -> tuple[ModelFrame, str]:
        """The leader's frame (a binomial fit's two-level factor response coded 0/1 under the schema, as
        vertical_glm's, its levels' step named first) or a member's; offsets refused."""
        if leader:
            name_step = (
                None if dd is None else (lambda step, fix: dd.add(f"party {self.name!r}: {step}", fix))
            )
            mf, note = m.response_frame(formula, data, family, schema, name_step=name_step)
        else:
            mf, note = model_frame(formula, data, one_sided=True, drop_intercept=True, schema=schema), ""
        if mf.offset is not None:
            raise DataError(
                f"party {self.name!r}: offset() is not supported over the network yet; fit it in one process "
                "with dpstats.vertical_glm, or drop the offset from the formula."
            )
        return mf, note

    def _formula(self, leader: bool) -> str:
        if not leader:
            return self.formula or "~ ."
        formula = self.formula or (f"{self.response} ~ ." if self.response else None)
        if formula is None or "~" not in formula or formula.strip().startswith("~"):
            raise DataError(
                "the leader needs a two-sided formula such as 'y ~ x1 + x2' "
                "(or response='y'): it holds the outcome."
            )
        return formula

    def _schema(self, formula: str, dp: bool, bounds, family: str, strict: bool = False) -> Schema:
        """This party's public schema: its declared levels; in DP mode its bounds and fills as well, and
        under ``strict`` every variable not declared categorical numeric by declaration (:mod:`dpstats.schema`)."""
        if not dp:  # the exact protocol: rows with a missing value are dropped, and then refused
            return Schema.declare(levels=self.levels, na_action="omit", private=False)
        schema = Schema.declare(
            bounds=bounds,
            levels=self.levels,
            na_action="fill",
            neighbouring="replace",
            fills=m.response_fill(formula, family),
            strict=strict,
        )
        # one bounds mapping may serve every party: keys naming another party's columns are allowed;
        # factor(g, levels = c("a", "b")) declares g's levels as levels= does (vertical_glm's declare too)
        response = "binary" if family == "binomial" else "numeric"  # strict: a declared binomial response
        return replace(with_formula_declarations(schema, formula, response), check_names=False)

    def _refuse_unfilled(self, data: pd.DataFrame, formula: str, schema: Schema) -> None:
        """DP mode: every numeric variable needs a public fill (from the names and dtypes, no row read), and
        under ``strict`` every variable what its declared type can serve (:func:`dpstats.engines.refuse_undeclared_types`)."""
        from .. import engines

        try:
            engines.refuse_undeclared_types(schema, data, formula)
        except PrivacyParameterError as err:
            raise PrivacyParameterError(f"party {self.name!r}: {err}") from None
        unfilled = engines.unfilled_variables(data, formula, schema)
        if unfilled:
            raise PrivacyParameterError(
                f"party {self.name!r}: DP mode needs declared bounds for every numeric variable of the formula "
                f"(their midpoints fill missing values, so that no shared row is dropped); none for "
                f"{', '.join(map(repr, unfilled))}. Nothing was read or sent."
            )

    # ------------------------------------------------------------------ leader
    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        parties: Sequence[str] | None = None,
        n_parties: int | None = None,
        family: str = "gaussian",
        penalty: str | None = None,
        lam: float = 0.0,
        tol: float = 1e-8,
        max_iter: int = 10_000,
        se: str = "exact",
        conf_level: float = 0.95,
        on_listening: Callable[[int], None] | None = None,
        verbose: bool = False,
        round_delay: float = 0.0,
        eps: float | None = None,
        delta: float | None = None,
        bounds=None,
        rounds: int = 10,
        eta_clip: float = 4.0,
        coef_share: float = 0.1,
        random_state=None,
        on_refused: Callable[[str], None] | None = None,
        strict: bool = False,
    ) -> VerticalGLMResult:
        """Lead the fit: listen, admit the members, run the sweeps, release the table.

        ``parties`` (TLS): the names of every party of the analysis, this one included.  A
        connection is admitted only if its certificate is signed by the consortium's authority,
        unexpired, and names a party of ``parties`` not yet connected; any other connection
        (plaintext, TLS < 1.3, another authority, an expired certificate, an uninvited name) is
        refused and the leader keeps waiting, within ``timeout``; each refusal is passed to
        ``on_refused`` and kept in ``self.refused``, and a timeout lists them.  Connections are
        taken in turn, each TLS handshake within ``HANDSHAKE_TIMEOUT`` (10 s).  ``n_parties``
        (the count, leader included) is for the deprecated pre-shared-key channel.
        ``round_delay`` (seconds) slows each sweep down, for demonstrations and tests.
        ``eps``/``delta`` (with ``bounds``, ``rounds``, ``eta_clip``, ``coef_share``, ``random_state``)
        start the DP mode of :func:`dpstats.vertical_glm`: every party clips and noises its own
        linear predictor before sending it; every member must declare the same eps and delta
        (a mismatch stops the fit before any data is sent).  ``strict=True`` (DP mode) refuses any
        party's data-dependent step (levels read from the rows) before y or any linear predictor is sent;
        every member must give the same ``strict`` (the welcome carries the leader's, each hello the
        member's): a mixed setting is refused before a member reads its rows (:func:`check_strict`).
        """
        if se == "pooled":
            raise DataError(
                "se='pooled' needs all columns in one process; use 'exact', 'history' or 'conditional'."
            )
        options = m.PrivregOptions.check(
            {**locals(), "formula": self.formula, "neighbouring": "replace", "schema": None}
        )
        expected = self._expected_members(parties, n_parties)
        self._strict = bool(strict)  # sent in every welcome, before a member reads its rows
        mf, dd, note = self._frame(
            leader=True, dp=options.dp, bounds=bounds, family=options.family, strict=strict
        )
        m.check_response(mf.y, family, mf.response, dp=options.dp)
        dp = _LocalDP.leader(mf, options, bounds, random_state) if options.dp else None
        ctx = server_context(self.tls) if self.tls is not None else None
        listener = socket.create_server((host, port))
        listener.settimeout(self.timeout)
        channels: list[tuple[str, SecureChannel | TLSChannel]] = []
        self._progress = {"sent_setup": False, "sweeps": 0, "dp": dp is not None}
        self.refused = []
        try:
            if on_listening is not None:
                on_listening(listener.getsockname()[1])
            if ctx is None:
                hellos = self._admit(listener, expected, channels)
            else:
                hellos = self._admit_tls(listener, ctx, expected, channels, on_refused)
            listener.close()  # no one joins once the fit has started
            check_strict(self._strict, hellos)
            self._order_and_check_rows(hellos, channels, mf.n)
            return self._lead(mf, channels, hellos, options, verbose, round_delay, dp, dd, note)
        except BaseException as exc:
            _abort_all(channels, exc)
            _add_failure_note(exc, self._progress, leader=True)
            raise
        finally:
            listener.close()
            # bytes through each member's channel, frames included (TLS record overhead excluded)
            self.traffic = {name: (ch.bytes_sent, ch.bytes_received) for name, ch in channels}
            for _, ch in channels:
                ch.close()

    def _expected_members(self, parties, n_parties) -> int | list[str]:
        """Members to admit: their names (TLS) or their count (pre-shared key)."""
        if self.tls is None:
            if parties is not None and n_parties is None:
                n_parties = len(list(parties))
            if not isinstance(n_parties, int) or n_parties < 2:
                raise DataError(f"n_parties must be an integer >= 2 (leader included), got {n_parties!r}.")
            return n_parties - 1
        if parties is None or isinstance(parties, str):
            raise DataError(
                "over TLS the leader needs parties=[...]: the names of every party of the analysis "
                "(this one included), as in their certificates."
            )
        names = [str(x) for x in parties]
        if len(set(names)) != len(names):
            raise DataError(f"parties= lists a name twice: {names}.")
        if self.name not in names:
            raise DataError(f"parties= must include the leader's own name {self.name!r}; got {names}.")
        members = [x for x in names if x != self.name]
        if not members:
            raise DataError("parties= needs at least one member besides the leader.")
        if n_parties is not None and n_parties != len(names):
            raise DataError(f"n_parties={n_parties!r} disagrees with the {len(names)} names in parties=.")
        return members

    def _order_and_check_rows(self, hellos: list[dict], channels, n: int) -> None:
        """Members in a fixed order (whatever the order of arrival), and every party's rows the same."""
        hellos.sort(key=lambda h: h["name"])
        channels.sort(key=lambda nc: nc[0])
        names = [self.name] + [h["name"] for h in hellos]
        m.check_rows(
            [self.row_hash] + [h["row_hash"] for h in hellos], [n] + [int(h["n"]) for h in hellos], names
        )

    def _admit_tls(self, listener, ctx, expected: list[str], channels, on_refused) -> list[dict]:
        """Admit exactly the named members, each authenticated by its certificate."""
        hellos: list[dict] = []
        deadline = time.monotonic() + self.timeout

        def refuse(text: str) -> None:
            self.refused.append(text)
            if on_refused is not None:
                on_refused(text)

        while len(hellos) < len(expected):
            remaining = deadline - time.monotonic()
            missing = [x for x in expected if x not in {h["name"] for h in hellos}]
            if remaining <= 0:
                raise ProtocolError(_admission_timeout(self.timeout, missing, self.refused))
            listener.settimeout(remaining)
            try:
                raw, addr = listener.accept()
            except TimeoutError:
                raise ProtocolError(_admission_timeout(self.timeout, missing, self.refused)) from None
            where = f"{addr[0]}:{addr[1]}"
            # one handshake may take at most HANDSHAKE_TIMEOUT: a silent connection cannot hold admission
            raw.settimeout(max(0.05, min(self.timeout, HANDSHAKE_TIMEOUT, deadline - time.monotonic())))
            try:
                sock = ctx.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError) as exc:  # includes timeouts of a silent connection
                raw.close()
                why = (
                    describe_tls_error(exc) if isinstance(exc, ssl.SSLError) else f"no TLS handshake ({exc})"
                )
                refuse(f"refused a connection from {where}: {why}")
                continue
            names = peer_names(sock)
            who = next((x for x in names if x in missing), None)
            ch = TLSChannel(
                sock,
                timeout=self.timeout,
                max_message=self.max_message,
                peer=f"party {who!r}" if who else f"{names} at {where}",
            )
            if who is None:
                connected = [x for x in names if x in expected]
                reason = (
                    f"party {connected[0]!r} is already connected"
                    if connected
                    else f"the certificate names {', '.join(map(repr, names)) or 'no one'}, "
                    "not a party of this analysis"
                )
                _try_send(ch, {"type": "refused", "reason": reason})
                ch.close()
                refuse(f"refused a connection from {where}: {reason}")
                continue
            channels.append((who, ch))
            ch.send({"type": "welcome", "strict": self._strict})  # the member sends nothing before this
            hello = _check_hello(_expect(ch.recv("the member's hello"), "hello", ch.peer), ch.peer)
            if hello["name"] != who:
                raise ProtocolError(
                    f"party {who!r} (by its certificate) introduced itself as {hello.get('name')!r}; "
                    f"start it with the name in its certificate, {who!r}."
                )
            hellos.append(hello)
        return hellos

    def _admit(self, listener, count: int, channels) -> list[dict]:
        hellos = []
        deadline = time.monotonic() + self.timeout
        while len(hellos) < count:
            listener.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                sock, addr = listener.accept()
            except TimeoutError:
                raise ProtocolError(
                    f"timed out after {self.timeout:g} s: {len(hellos)} of {count} members connected"
                ) from None
            ch = SecureChannel(
                sock,
                self.key,
                "leader",
                timeout=self.timeout,
                max_message=self.max_message,
                peer=f"member at {addr[0]}:{addr[1]}",
            )
            channels.append((f"{addr[0]}:{addr[1]}", ch))
            ch.handshake()
            # the member speaks first (a wrong key fails here, at the leader), then learns the leader's strict
            _expect(ch.recv("the member's greeting"), "ready", ch.peer)
            ch.send({"type": "welcome", "strict": self._strict})
            hello = _expect(ch.recv("the member's hello"), "hello", ch.peer)
            name = str(hello.get("name"))
            if name == self.name or any(h["name"] == name for h in hellos):
                raise DataError(f"two parties are named {name!r}; party names must be unique.")
            ch.peer = f"party {name!r}"
            channels[-1] = (name, ch)
            hellos.append(hello)
        return hellos

    def _lead(  # noqa: PLR0913 (the fit's pieces, as serve holds them)
        self, mf, channels, hellos, options, verbose, round_delay, dp=None, dd=None, response_note=""
    ) -> VerticalGLMResult:
        check_agreement(options, hellos)  # before y or any linear predictor leaves this party
        dd = members_steps(dd if dd is not None else DataDependence(False), hellos)
        family, penalty, lam, se = options.family, options.penalty, options.lam, options.se
        fam = m.FAMILIES[family]
        pen = m.Penalty(penalty, float(lam))
        terms = list(mf.names) + [t for h in hellos for t in h["terms"]]
        if len(set(terms)) != len(terms):
            dup = next(t for t in terms if terms.count(t) > 1)
            raise DataError(f"term {dup!r} is held by more than one party: column sets must not overlap.")
        p = len(terms)
        names = [self.name] + [h["name"] for h in hellos]
        sizes = [mf.p] + [len(h["terms"]) for h in hellos]
        radius = None
        y = mf.y if dp is None else dp.y
        if dp is not None:
            radius = [dp.radius] + [float(h["dp"]["radius"]) for h in hellos]
        plan = m.plan(options, mf.n, len(names), radius, None if dp is None else dp.y_bound, simulated=False)
        sigmas = plan.sigmas
        # every block is solved on its centred columns (privreg.centring): the leader's intercept absorbs
        intercept = mf.names.index("(Intercept)") if "(Intercept)" in mf.names else None
        centre = intercept is not None
        for name, ch in channels:
            k = names.index(name)
            setup = {
                "type": "setup",
                "y": y,
                "family": family,
                "penalty": penalty,
                "lam": lam,
                "se": se,
                "p_other": p - sizes[k],
                "centre": centre,
            }
            if dp is not None:
                setup["dp"] = dp_setup(options, radius, dp.y_bound, len(names))
            ch.send(setup)
            self._progress["sent_setup"] = True
        if dp is None:
            mask = np.array([0.0 if t == "(Intercept)" else 1.0 for t in mf.names])
            own_centre = m.centring(mf.X, intercept) if centre else None
            own = m.LocalBlock(
                mf.X, mf.y, fam, pen, mask, p - mf.p, se=se, centre=own_centre, intercept=intercept
            )
        else:
            own = dp.block(fam, pen, p - mf.p, sigmas[0][0], options, len(names))
        blocks = [own] + [RemoteBlock(ch, mf.n, sizes[names.index(nm)], se, pen) for nm, ch in channels]

        dp_on = dp is not None
        out = m.block_coordinate_descent(
            blocks,
            y,
            fam,
            options.sweeps(),
            check_separation=penalty is None and not dp_on,
            on_round=self._sweep_log(verbose, round_delay, dp_on),
            deviance=not dp_on,
        )
        # DP mode: each member noises its own coefficients with its own σ_β (RemoteBlock ignores the scale)
        finals = m.finish_blocks(blocks, out, fam, y, p, sigmas[1] if dp_on else None)
        index, start = [], 0
        for s in sizes:
            index.append(np.arange(start, start + s))
            start += s
        noise = dp.noise if dp_on else NoiseSource(None)
        statement = plan.statement(dd, noise)
        # a seed at any party makes the whole release predictable to whoever knows it
        statement.seeded = bool(noise.seeded) or any(bool((h.get("dp") or {}).get("seeded")) for h in hellos)
        statement.notes = list(statement.notes) + network_notes(self.channel, len(names), dp_on)
        call = party_call(mf.formula, names, options)
        released = m.Released(out, finals, index, *m.fit_summaries(fam, y, out.eta, mf.n - p, dp_on))
        result = assemble_result(call, terms, mf.n, names, released, options, statement, plan)
        result.response_note = response_note
        message = result_message(result)
        if dp_on:
            message["meta"]["dp"] = {
                **dp_setup(options, radius, dp.y_bound, len(names)),
                "seeded": statement.seeded,
            }
        message["meta"]["channel"] = self.channel
        for _, ch in channels:
            ch.send(message)
        return result

    def _sweep_log(self, verbose: bool, round_delay: float, dp_on: bool):
        """The leader's callback after each sweep: the count of sweeps made; with ``verbose`` a line on
        stderr (in DP mode without the relative change or the deviance, functions of the raw y: neither
        is computed or released); the ``round_delay`` of demonstrations."""

        def log(row: dict) -> None:
            self._progress["sweeps"] = int(row["iteration"])
            if verbose:
                line = f"[{self.name}] sweep {row['iteration']}"
                if not dp_on:
                    line += (
                        f": relative change = {row['relative_change']:.3e}, deviance = {row['deviance']:.10g}"
                    )
                print(line, file=sys.stderr, flush=True)
            if round_delay:
                time.sleep(round_delay)

        return log

    # ------------------------------------------------------------------ member
    def connect(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        retry_for: float = 10.0,
        verbose: bool = False,
        eps: float | None = None,
        delta: float | None = None,
        bounds=None,
        random_state=None,
        leader: str | None = None,
        strict: bool = False,
    ) -> VerticalGLMResult:
        """Join the leader's fit; answer its requests; return the released coefficient table.

        ``leader`` (TLS, required): the leader's name; the server's certificate must be signed by
        the consortium's authority, unexpired, and name ``leader``, or nothing is sent.

        ``eps``/``delta`` and ``bounds`` (this party's columns): DP mode.  The leader must have
        started the fit with the same eps and delta, or the fit stops before any data is sent.
        This party clips its columns to ``bounds``, clips and noises its linear predictor
        itself (σ derived locally from the public plan) and answers at most ``rounds`` updates.
        Its frame follows this party's ``levels=`` and fills missing values from ``bounds``
        (:class:`Party`); ``strict=True`` refuses a data-dependent step of its own before its hello.
        ``strict`` must be the leader's (its welcome says which): a mixed setting is refused before this
        party reads its rows (:func:`check_own_strict`).
        """
        own = member_spec(eps, delta)
        if own is not None and bounds is None:
            raise PrivacyParameterError(
                "DP mode needs public bounds on this party's columns, e.g. "
                "bounds=(-3, 3) or bounds={'x3': (0, 1), ...}."
            )
        noise = NoiseSource(random_state) if own is not None else None
        if self.tls is not None and not leader:
            raise DataError("over TLS a member needs leader='NAME': the name in the leader's certificate.")
        ctx = client_context(self.tls) if self.tls is not None else None
        self._progress = {"sent_setup": False, "sweeps": 0, "dp": own is not None}
        sock = _connect_retry(host, port, retry_for, self.timeout)
        if ctx is not None:
            ch = _member_tls(sock, ctx, host, port, leader, self.timeout, self.max_message)
        else:
            ch = SecureChannel(
                sock,
                self.key,
                "member",
                timeout=self.timeout,
                max_message=self.max_message,
                peer=f"leader at {host}:{port}",
            )
        try:
            if ctx is None:
                ch.handshake()
                ch.send({"type": "ready"})  # the leader answers with its welcome
            welcome = _expect(ch.recv("the leader's welcome"), "welcome", ch.peer)  # TLS: admitted by name
            check_own_strict(self.name, strict, welcome)  # before this party's rows are read
            mf, dd, _ = self._frame(leader=False, dp=own is not None, bounds=bounds, strict=strict)
            X, radius = mf.X, None
            if own is not None:
                X, (radius,) = m.clip_covariates(mf, np.zeros(mf.p, dtype=int), 1, bounds)
            hello = {
                "type": "hello",
                "name": self.name,
                "n": mf.n,
                "row_hash": self.row_hash,
                "terms": list(mf.names),
                "steps": _named_steps(dd, mf),
                "strict": bool(strict),
            }
            hello["dp"] = None if own is None else {**own, "radius": radius, "seeded": bool(noise.seeded)}
            ch.send(hello)
            setup = _expect(ch.recv("the setup"), "setup", ch.peer)
            self._progress["sent_setup"] = True
            y = _vector(setup["y"], mf.n, "y")
            fam = m.FAMILIES[setup["family"]]
            pen = m.Penalty(setup["penalty"], float(setup["lam"]))
            if own is None:
                if setup.get("dp") is not None:
                    raise PrivacyParameterError(
                        "the leader started a DP fit but this party gave no eps; "
                        "give the same eps and delta as the leader."
                    )
                centre = m.centring(mf.X) if setup.get("centre") else None  # the columns' means
                block = m.LocalBlock(
                    mf.X, y, fam, pen, np.ones(mf.p), int(setup["p_other"]), se=setup["se"], centre=centre
                )
                return self._serve_requests(ch, block, mf.n, verbose)
            centre = m.centring(X, None, m.midpoints(mf, bounds)) if setup.get("centre") else None
            sig_eta, sig_beta, rounds, block = self._dp_block(setup, own, radius, X, y, noise, centre)
            return self._serve_requests(ch, block, mf.n, verbose, rounds=rounds, sigma_beta=sig_beta)
        except DPStatsError as exc:
            if not isinstance(
                exc, ProtocolError
            ):  # the leader names this party ("party 'B' stopped the fit")
                reason = str(exc).removeprefix(f"party {self.name!r}: ")
                _try_send(ch, {"type": "error", "reason": reason})
            _add_failure_note(exc, self._progress, leader=False)
            raise
        finally:
            ch.close()

    def _dp_block(self, setup, own, radius, X, y, noise, centre):
        """Member in DP mode: check the leader's plan against this party's own, derive its σs locally;
        its block centred at its declared bounds' midpoints (``centre``) when the model has an intercept."""
        plan = setup.get("dp")
        if plan is None or plan["eps"] != own["eps"] or plan["delta"] != own["delta"]:
            got = "no DP" if plan is None else f"eps={plan['eps']!r}, delta={plan['delta']!r}"
            raise PrivacyParameterError(
                f"party {self.name!r} agreed to eps={own['eps']!r}, "
                f"delta={own['delta']!r} but the leader started {got}."
            )
        K = int(plan["K"])
        names_radius = [float(r) for r in plan["radius"]]
        if radius not in names_radius:
            raise ProtocolError("the leader's DP plan does not contain this party's row-norm bound")
        options = m.PrivregOptions.check(
            {
                "formula": None,
                "family": setup["family"],
                "penalty": setup["penalty"],
                "lam": float(setup["lam"]),
                "tol": 0.5,
                "max_iter": 1,
                "se": "none",
                "conf_level": 0.95,
                "eps": own["eps"],
                "delta": own["delta"],
                "rounds": int(plan["rounds"]),
                "eta_clip": float(plan["eta_clip"]),
                "coef_share": float(plan["coef_share"]),
                "neighbouring": "replace",
                "bounds": None,
            }
        )
        sig_eta, sig_beta = m.noise_scales(options, X.shape[0], K, [radius], y_bound=plan["y_bound"])
        offset_clip = (K - 1) * options.eta_clip if plan["y_bound"] is not None else math.inf
        block = m.LocalBlock(
            X,
            y,
            m.FAMILIES[setup["family"]],
            m.Penalty(setup["penalty"], float(setup["lam"])),
            np.ones(X.shape[1]),
            int(setup["p_other"]),
            se="none",
            sigma_eta=sig_eta[0],
            eta_clip=options.eta_clip,
            noise=noise,
            offset_clip=offset_clip,
            centre=centre,
        )
        return sig_eta[0], sig_beta[0], options.rounds, block

    def _serve_requests(
        self,
        ch: SecureChannel,
        block,
        n: int,
        verbose: bool,
        rounds: int | None = None,
        sigma_beta: float = 0.0,
    ) -> VerticalGLMResult:
        sweeps, finished = 0, False
        while True:
            msg = ch.recv("the leader's next request")
            kind = msg.get("type")
            if rounds is not None and (  # DP mode: never release more than the plan allows
                (kind == "update" and sweeps >= rounds) or kind == "basis" or (kind == "finish" and finished)
            ):
                raise PrivacyParameterError(
                    f"the leader asked for a {kind!r} release beyond the agreed DP plan "
                    f"({rounds} sweeps, one coefficient release); refused"
                )
            if kind == "update":
                eta, shift = block.update(_vector(msg["offset"], n, "offset"))
                ch.send({"type": "eta", "eta": eta, "shift": shift})
                sweeps += 1
                self._progress["sweeps"] = sweeps
                if verbose:
                    print(f"[{self.name}] update {sweeps}", file=sys.stderr, flush=True)
            elif kind == "basis":
                ch.send({"type": "basis", "q": block.column_basis()})
            elif kind == "finish":
                other = msg.get("other_basis")
                if other is not None and (other.ndim != 2 or other.shape[0] != n):
                    raise ProtocolError(f"received a basis of shape {other.shape}, expected ({n}, k)")
                fin = block.finish(
                    _vector(msg["eta"], n, "eta"),
                    float(msg["dispersion"]),
                    sigma_beta=sigma_beta,
                    other_basis=other,
                )
                finished = True
                reply = {"type": "final", "beta": fin.beta, "rank": fin.rank, "p_other": fin.p_other}
                reply.update(shift=fin.shift, shift_sd=fin.shift_sd)  # post-processing of fin.beta
                if fin.cov is not None:
                    reply["cov"] = fin.cov
                ch.send(reply)
            elif kind == "result":
                return result_from_message(msg)
            elif kind == "abort":
                raise ProtocolError(f"the leader stopped the fit: {msg.get('reason')}")
            else:
                raise ProtocolError(f"unexpected message {kind!r} from the leader")


class RemoteBlock:
    """The leader's proxy of a member's block: update/finish over the channel."""

    def __init__(self, ch: SecureChannel, n: int, p: int, se: str, penalty: m.Penalty) -> None:
        self.ch, self.n, self.p, self.se, self.penalty = ch, n, p, se, penalty

    def column_basis(self) -> np.ndarray:
        self.ch.send({"type": "basis"})
        q = _expect(self.ch.recv("its column basis"), "basis", self.ch.peer)["q"]
        if q.ndim != 2 or q.shape[0] != self.n or q.shape[1] > self.p:
            raise ProtocolError(f"{self.ch.peer} sent a basis of shape {q.shape}")
        return q

    def update(self, offset: np.ndarray, seen: np.ndarray | None = None):
        """The member's (η_k, shift_k) (shift None in DP mode); ``seen`` is the leader's own block's."""
        self.ch.send({"type": "update", "offset": offset})
        msg = _expect(self.ch.recv("its linear predictor"), "eta", self.ch.peer)
        shift = msg.get("shift")
        return _vector(msg["eta"], self.n, "eta"), (_scalar(shift, "shift") if shift is not None else None)

    def finish(self, eta_total, dispersion, sigma_beta=0.0, other_basis=None) -> m.BlockFinal:
        msg = {"type": "finish", "eta": eta_total, "dispersion": dispersion}
        if other_basis is not None:
            msg["other_basis"] = other_basis
        self.ch.send(msg)
        msg = _expect(self.ch.recv("its coefficients"), "final", self.ch.peer)
        beta = _vector(msg["beta"], self.p, "beta")
        cov = msg.get("cov")
        if cov is not None and np.shape(cov) != (self.p, self.p):
            raise ProtocolError(f"{self.ch.peer} sent a covariance of shape {np.shape(cov)}")
        shift, spread = (_scalar(msg.get(key, 0.0), key) for key in ("shift", "shift_sd"))
        return m.BlockFinal(beta, cov, int(msg["rank"]), int(msg["p_other"]), shift, spread)


# --------------------------------------------------------------------------- DP mode
class _LocalDP:
    """The leader's own DP state: clipped X and y, row-norm bound R, noise source, and its columns'
    declared midpoints (its block's centring constants, public as the bounds are)."""

    def __init__(self, mf, X, y, radius: float, y_bound, noise: NoiseSource, centre: np.ndarray) -> None:
        self.mf, self.X, self.y, self.radius, self.y_bound, self.noise = mf, X, y, radius, y_bound, noise
        self.centre = centre

    @classmethod
    def leader(cls, mf, options: m.PrivregOptions, bounds, random_state) -> _LocalDP:
        X, (radius,) = m.clip_covariates(mf, np.zeros(mf.p, dtype=int), 1, bounds)
        y, y_bound = m.clip_response(mf, bounds, options.family)  # binomial: [0, 1], a public rule
        return cls(mf, X, y, radius, y_bound, NoiseSource(random_state), m.midpoints(mf, bounds))

    def block(
        self, fam, pen, p_other: int, sigma_eta: float, options: m.PrivregOptions, K: int
    ) -> m.LocalBlock:
        offset_clip = (K - 1) * options.eta_clip if self.y_bound is not None else math.inf
        intercept = self.mf.names.index("(Intercept)") if "(Intercept)" in self.mf.names else None
        return m.LocalBlock(
            self.X,
            self.y,
            fam,
            pen,
            np.ones(self.mf.p),
            p_other,
            se="none",
            sigma_eta=sigma_eta,
            eta_clip=options.eta_clip,
            noise=self.noise,
            offset_clip=offset_clip,
            centre=m.centring(self.X, intercept, self.centre) if intercept is not None else None,
            intercept=intercept,
        )


def member_spec(eps, delta) -> dict | None:
    """A member's declared budget (validated as the front door does); None without eps."""
    if eps is None or (isinstance(eps, (int, float)) and math.isinf(eps) and eps > 0):
        if delta is not None:
            raise PrivacyParameterError("delta was given without eps; give both for DP mode.")
        return None
    return {"eps": check_eps(eps), "delta": check_gaussian_delta(delta, m.DELTA_REFUSAL)}


def check_agreement(options: m.PrivregOptions, hellos: list[dict]) -> None:
    """Every member must declare the leader's (eps, delta), or none when the leader has none."""
    want = None if options.eps is None else (options.eps, options.delta)
    for h in hellos:
        d = h.get("dp")
        got = None if d is None else (d["eps"], d["delta"])
        if got != want:
            raise PrivacyParameterError(
                f"the parties disagree on the privacy budget: the leader has {_say(want)}, party "
                f"{h['name']!r} has {_say(got)}. Every party must start the fit with the same eps and delta; "
                "no data was sent."
            )


def check_strict(strict: bool, hellos: list[dict]) -> None:
    """Every member must have started with the leader's ``strict`` (its hello says which): under
    ``strict=True`` each party's variables without declared levels are numeric by declaration, and a
    party whose types still came from its rows would make the fit's refusals depend on them.  From the
    settings the parties exchanged, before any row count, term or step of a hello is read."""
    for h in hellos:
        if bool(h.get("strict", False)) != strict:
            said = _strict_disagreement(strict, h["name"], bool(h.get("strict", False)))
            raise PrivacyParameterError(f"{said}; no data was sent.")


def check_own_strict(name: str, strict: bool, welcome: dict) -> None:
    """A member's check of the leader's ``strict`` (in its welcome) against its own, before it reads its
    rows: a mixed setting is refused from the settings alone (:func:`check_strict`)."""
    theirs = welcome.get("strict")
    if theirs is not None and bool(theirs) != bool(strict):
        raise PrivacyParameterError(
            f"{_strict_disagreement(bool(theirs), name, bool(strict))}; no data was read or sent."
        )


def _strict_disagreement(leader: bool, name: str, member: bool) -> str:
    return (
        f"the parties disagree on strict: the leader has strict={leader}, party {name!r} has "
        f"strict={member}. Every party must start the fit with the same strict (under strict=True every "
        "party's variables without declared levels are numeric by declaration, and any data-dependent "
        "step is refused)"
    )


def members_steps(dd: DataDependence, hellos: list[dict]) -> DataDependence:
    """The leader's named steps with every member's (its strict refuses them, before y is sent)."""
    for h in hellos:
        for step, fix in h.get("steps") or ():
            dd.add(step, fix)
    return dd


def _say(v) -> str:
    return "no DP (eps=None)" if v is None else f"eps={v[0]!r}, delta={v[1]!r}"


def dp_setup(options: m.PrivregOptions, radius, y_bound, K: int) -> dict:
    """The public DP plan the leader sends: budget, sweeps, clip, split, row-norm bounds."""
    return {
        "eps": options.eps,
        "delta": options.delta,
        "rounds": options.rounds,
        "eta_clip": options.eta_clip,
        "coef_share": options.coef_share,
        "radius": [float(r) for r in radius],
        "y_bound": y_bound,
        "K": K,
    }


def party_call(formula: str, names: list[str], options: m.PrivregOptions) -> dict:
    """The arguments a networked fit's ``call`` shows (defaults left out, eps only in DP mode)."""
    call = {"formula": formula, "parties": list(names), "family": options.family}
    if options.penalty is not None:
        call.update(penalty=options.penalty, lam=options.lam)
    if options.tol != 1e-8:
        call["tol"] = options.tol
    if options.max_iter != 10_000:
        call["max_iter"] = options.max_iter
    if options.se != "exact":
        call["se"] = options.se
    if options.dp:
        call.update(eps=options.eps, delta=options.delta, rounds=options.rounds)
    return call


# --------------------------------------------------------------------------- messages
def result_message(result: VerticalGLMResult) -> dict:
    """The released coefficient table and convergence trace, as a protocol message."""
    c = result.coefficients
    return {
        "type": "result",
        "terms": list(c["term"]),
        "party": list(c["party"]),
        "beta": c["estimate"].to_numpy(),
        "se": c["std_error"].to_numpy(),
        "trace": result.trace.to_numpy(dtype=float),
        "noise_sd": c["noise_sd"].to_numpy() if "noise_sd" in c else None,  # DP mode
        "meta": {
            "family": result.family,
            "n": result.n,
            "iterations": result.iterations,
            "converged": result.converged,
            "tol": result.tol,
            "dispersion": result.dispersion,
            "df_residual": result.df_residual,
            "deviance": result.deviance,
            "penalty": result.penalty,
            "lam": result.lam,
            "se_method": result.se_method,
            "se_blocks": result.se_blocks,
            "parties": result.parties,
            "party_terms": result.party_terms,
            "conf_level": result.conf_level,
            "call": result.call,
            "noise": result.noise,
            "steps": list(result.privacy.data_dependent_steps),
            "missing_values": result.privacy.missing_values,
            "response_note": result.response_note,
        },
    }


def result_from_message(msg: dict) -> VerticalGLMResult:
    """Rebuild the released result on a member."""
    meta = msg["meta"]
    spec = {"eps": None, "delta": 0.0, "neighbouring": "replace", "conf_level": meta["conf_level"]}
    radius = y_bound = None
    plan = meta.get("dp")
    if plan is not None:
        spec.update(
            eps=plan["eps"],
            delta=plan["delta"],
            rounds=int(plan["rounds"]),
            eta_clip=float(plan["eta_clip"]),
            coef_share=float(plan["coef_share"]),
            lam=float(meta["lam"]),
            family=meta["family"],
        )
        radius, y_bound = [float(r) for r in plan["radius"]], plan["y_bound"]
    statement = m.plan(
        m.PrivregOptions.partial(**spec), meta["n"], len(meta["parties"]), radius, y_bound, simulated=False
    ).statement(DataDependence(False), NoiseSource(None))
    statement.seeded = bool((plan or {}).get("seeded", False))
    statement.data_dependent_steps = [str(x) for x in meta.get("steps") or ()]
    statement.missing_values = str(meta.get("missing_values") or "")
    statement.notes = list(statement.notes) + network_notes(
        meta.get("channel", "psk"), len(meta["parties"]), plan is not None
    )
    table = coefficient_table(
        msg["terms"],
        msg["party"],
        np.asarray(msg["beta"]),
        np.asarray(msg["se"]),
        meta["family"],
        meta["df_residual"],
        meta["conf_level"],
    )
    trace = pd.DataFrame(
        np.asarray(msg["trace"]).reshape(-1, 3), columns=["iteration", "relative_change", "deviance"]
    )
    trace["iteration"] = trace["iteration"].astype(int)
    return VerticalGLMResult(
        method="vertical_glm",
        call=meta["call"],
        n=meta["n"],
        p=len(msg["terms"]),
        terms=msg["terms"],
        privacy=statement,
        family=meta["family"],
        coefficients=table,
        trace=trace,
        iterations=meta["iterations"],
        converged=meta["converged"],
        tol=meta["tol"],
        dispersion=meta["dispersion"],
        df_residual=meta["df_residual"],
        deviance=meta["deviance"],
        penalty=meta["penalty"],
        lam=meta["lam"],
        se_method=meta["se_method"],
        se_blocks=meta["se_blocks"],
        parties=meta["parties"],
        party_terms=meta["party_terms"],
        conf_level=meta["conf_level"],
        disclosure=statement.notes,
        noise=_noise_column(table, meta.get("noise"), msg.get("noise_sd")),
        response_note=str(meta.get("response_note") or ""),
    )


def _noise_column(table: pd.DataFrame, noise: dict | None, sd=None) -> dict | None:
    """DP mode: the leader's noise scales, and each coefficient's noise sd as the table's ``noise_sd``
    column: the leader's (``sd``; the intercept's includes the noise of the centring's shifts), else its
    party's σ_β."""
    if noise:
        table["noise_sd"] = (
            np.asarray(sd, dtype=float)
            if sd is not None and np.shape(sd) == (len(table),)
            else [float(noise["sigma_beta"][party]) for party in table["party"]]
        )
    return noise


def _expect(msg: dict, kind: str, peer: str) -> dict:
    got = msg.get("type")
    if got == kind:
        return msg
    if got in ("abort", "error"):
        raise ProtocolError(f"{peer} stopped the fit: {msg.get('reason')}")
    if got == "refused":
        raise ProtocolError(f"{peer} refused this party: {msg.get('reason')}")
    raise ProtocolError(f"expected a {kind!r} message from {peer}, got {got!r}")


def _scalar(v, what: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ProtocolError(f"received a {what} that is not a number") from None
    if not math.isfinite(x):
        raise ProtocolError(f"received a non-finite {what}")
    return x


def _vector(v, n: int, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if a.shape != (n,):
        raise ProtocolError(f"received {what} of shape {a.shape}, expected ({n},)")
    if not np.all(np.isfinite(a)):
        raise ProtocolError(f"received {what} with non-finite values")
    return a


def _try_send(ch: SecureChannel, msg: dict) -> None:
    try:
        ch.send(msg)
    except (DPStatsError, OSError):
        pass


def _abort_all(channels, exc: BaseException) -> None:
    reason = str(exc) or type(exc).__name__
    for _, ch in channels:
        if getattr(ch, "ready", False):
            _try_send(ch, {"type": "abort", "reason": reason})


def _check_own_name(creds: TLSCredentials, name: str) -> None:
    """This party's name must be one its certificate vouches for (checked before any connection)."""
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(creds.cert.read_bytes())
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the certificate '{creds.cert}': {exc}") from None
    try:
        names = cert.extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        ).value.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    if not names:
        names = [a.value for a in cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)]
    if name not in names:
        raise DataError(
            f"party name {name!r} is not in its certificate '{creds.cert}' (it names "
            f"{', '.join(map(repr, names)) or 'no one'}); the other parties check this name."
        )


def _member_tls(sock, ctx, host, port, leader: str, timeout: float, max_message: int) -> TLSChannel:
    """A member's TLS handshake, then the leader's name checked before anything is sent."""
    sock.settimeout(timeout)
    try:
        tsock = ctx.wrap_socket(sock, server_side=False)
    except TimeoutError:
        sock.close()
        raise ProtocolError(
            f"timed out after {timeout:g} s in the TLS handshake with the leader at {host}:{port}"
        ) from None
    except (ssl.SSLError, OSError) as exc:
        sock.close()
        why = describe_tls_error(exc) if isinstance(exc, ssl.SSLError) else str(exc)
        raise ProtocolError(
            f"TLS handshake with the leader {leader!r} at {host}:{port} failed: {why}; nothing was sent"
        ) from None
    names = peer_names(tsock)
    if leader not in names:
        tsock.close()
        raise ProtocolError(
            f"the server at {host}:{port} presented a certificate for {', '.join(map(repr, names))}, "
            f"not the leader {leader!r}; nothing was sent"
        )
    return TLSChannel(tsock, timeout=timeout, max_message=max_message, peer=f"leader {leader!r}")


def _check_hello(hello: dict, peer: str) -> dict:
    """A member's hello has the fields and types the leader reads (else a ProtocolError naming it)."""
    dp = hello.get("dp")
    ok = (
        isinstance(hello.get("name"), str)
        and isinstance(hello.get("n"), int)
        and isinstance(hello.get("row_hash"), str)
        and isinstance(hello.get("terms"), list)
        and all(isinstance(t, str) for t in hello["terms"])
        and isinstance(hello.get("steps", []), list)
        and all(
            isinstance(st, list) and len(st) == 2 and all(isinstance(x, str) for x in st)
            for st in hello.get("steps", [])
        )
        and (
            dp is None
            or (
                isinstance(dp, dict)
                and all(isinstance(dp.get(k), (int, float)) for k in ("eps", "delta", "radius"))
            )
        )
    )
    if not ok:
        raise ProtocolError(f"{peer} sent a malformed hello (fields name, n, row_hash, terms, dp)")
    return hello


def _named_steps(dd: DataDependence, mf: ModelFrame) -> list[list[str]]:
    """The steps a party named, with their fixes, for its hello (from its arguments and dtypes only)."""
    fixes = dict([*mf.schema_steps, *mf.data_dependent_terms])
    return [
        [step, fixes.get(step, "declare the levels of this party's columns (levels=)")] for step in dd.steps
    ]


def _admission_timeout(timeout: float, missing: list[str], refused: list[str]) -> str:
    text = f"timed out after {timeout:g} s waiting for {', '.join(map(repr, missing))} to connect"
    if refused:
        text += "; meanwhile " + "; ".join(refused)
    return text


def _add_failure_note(exc: BaseException, progress: dict, leader: bool) -> None:
    """Append what was (not) released and the budget's state to a DPStatsError's message."""
    if isinstance(exc, DPStatsError) and exc.args and "[no result released" not in str(exc.args[0]):
        exc.args = (f"{exc.args[0]} {failure_note(progress, leader)}", *exc.args[1:])


def _connect_retry(host: str, port: int, retry_for: float, timeout: float) -> socket.socket:
    deadline = time.monotonic() + max(retry_for, 0.0)
    while True:
        try:
            return socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise ProtocolError(
                    f"cannot connect to the leader at {host}:{port} ({exc}); is it "
                    "running and listening there?"
                ) from None
            time.sleep(0.1)


__all__ = ["Party", "RemoteBlock", "result_message", "result_from_message"]
