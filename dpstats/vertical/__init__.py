"""Vertically partitioned GLMs with real parties over a network.

:class:`Party` runs one data holder per process; the parties talk over TLS 1.3,
each with its own certificate signed by the consortium's authority (see
:mod:`dpstats.vertical.tls` and :mod:`dpstats.vertical.pki`).  ``dpstats party``
starts one from the command line::

    dpstats party init --names leader,B,C --out certs      # once, by the consortium
    dpstats party lead --data a.csv --formula "y ~ x1 + x2" --parties leader,B,C \
        --listen 127.0.0.1:7000 --tls-dir certs --row-id id --family binomial
    dpstats party join --data b.csv --formula "~ x3 + x4" --name B --leader leader \
        --connect 127.0.0.1:7000 --tls-dir certs --row-id id

``--tls-dir DIR`` reads ``DIR/ca.crt``, ``DIR/<name>.crt`` and ``DIR/<name>.key``;
``--tls-ca``, ``--tls-cert`` and ``--tls-key`` point at an institution's own files
instead.  ``--levels FILE.json`` declares the levels of this party's text columns (as ``dpstats run
--levels``), ``--na-action fill`` states the only rule for missing values (public fills), and ``--strict``
refuses a data-dependent step (levels read from the rows) before any data is sent, given to every party or
to none (a mixed setting is refused before a member reads a row): DP mode,
:class:`Party`'s ``levels=`` and ``na_action=``, ``serve``/``connect``'s ``strict=``.  The deprecated
pre-shared-key channel (``keygen``, ``--key-file``,
``--parties <count>``) still works and warns.

Exit codes: 0 success, 2 bad input (data, formula, arguments, TLS files), 3 a network or
protocol failure (a party disconnected, timed out, was refused, or sent a message that
failed a check).  No partial result is written on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import DPStatsError
from ..schema import read_levels_file
from .channel import PeerDisconnected, ProtocolError, SecureChannel, load_key
from .local import run_on_loopback
from .party import Party
from .pki import TLSCredentials, init_consortium
from .tls import TLSChannel

__all__ = [
    "Party",
    "ProtocolError",
    "PeerDisconnected",
    "SecureChannel",
    "TLSChannel",
    "TLSCredentials",
    "init_consortium",
    "party_main",
    "load_key",
    "run_on_loopback",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpstats party", description="One party of a vertically partitioned GLM fit."
    )
    sub = parser.add_subparsers(dest="action", required=True)
    init = sub.add_parser(
        "init", help="make the consortium's certificate authority and one key + certificate per party"
    )
    init.add_argument("--names", required=True, help="comma-separated party names, e.g. leader,hospital_a")
    init.add_argument("--out", required=True, help="directory for ca.crt, ca.key, <name>.crt, <name>.key")
    init.add_argument("--days", type=int, default=825, help="validity of every certificate in days")
    kg = sub.add_parser("keygen", help="deprecated: write a fresh 256-bit pre-shared key (hex) to a file")
    kg.add_argument("--out", required=True)

    for action, helptext in (
        ("lead", "hold y, listen, and run the fit"),
        ("join", "connect to the leader and contribute a column block"),
    ):
        p = sub.add_parser(action, help=helptext)
        p.add_argument("--data", required=True, help="this party's CSV or Parquet file")
        p.add_argument("--formula", help="leader: 'y ~ x1 + x2'; member: '~ x3 + x4' (default: all columns)")
        p.add_argument("--name", default="leader" if action == "lead" else None, required=action == "join")
        p.add_argument("--tls-dir", help="directory from `dpstats party init` (ca.crt, NAME.crt, NAME.key)")
        p.add_argument("--tls-ca", help="PEM file of the authority that signs every party's certificate")
        p.add_argument("--tls-cert", help="PEM file of this party's certificate")
        p.add_argument("--tls-key", help="PEM file of this party's private key")
        p.add_argument(
            "--key-file", help="deprecated: file with the pre-shared key (hex); or set DPSTATS_PARTY_KEY"
        )
        p.add_argument("--row-id", help="column with the shared row ids (default: row order)")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any message")
        p.add_argument("--json", help="write the released result as JSON here")
        p.add_argument("--verbose", action="store_true", help="log every sweep on stderr")
        p.add_argument("--eps", type=float, help="DP mode: total eps (every party must give the same)")
        p.add_argument("--delta", type=float, help="DP mode: total delta (every party must give the same)")
        p.add_argument(
            "--bounds",
            help="DP mode: JSON file with [lo, hi] or {column: [lo, hi]} for this "
            "party's columns (the leader's also bounds y)",
        )
        p.add_argument("--seed", type=int, help="seed for this party's noise (reproduction, not release)")
        p.add_argument(
            "--levels",
            help='JSON file: declared levels of this party\'s text columns, {"city": ["Leeds", "York"]} '
            "(as `dpstats run --levels`); in DP mode a text column without them has its levels read "
            "from the rows, a named data-dependent step",
        )
        p.add_argument(
            "--na-action",
            choices=["fill"],
            help="DP mode: a missing value gets its public fill (the midpoint of this party's --bounds, a "
            "factor's first level), the default; omit is not offered: every party keeps all shared rows",
        )
        p.add_argument(
            "--strict",
            action="store_true",
            help="DP mode: refuse any data-dependent step (e.g. levels read from the rows), this party's "
            "or (at the leader) a member's, before y or any linear predictor is sent; give it to every "
            "party or to none (a mixed setting is refused before any row is read)",
        )
        if action == "lead":
            p.add_argument("--rounds", type=int, default=10, help="DP mode: number of sweeps")
            p.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (port 0: any free port)")
            p.add_argument("--port-file", help="write the port actually bound to this file")
            p.add_argument(
                "--parties",
                required=True,
                help="the names of every party, leader included (comma-separated, as in their "
                "certificates); a count with the deprecated --key-file",
            )
            p.add_argument("--family", default="gaussian", choices=["gaussian", "binomial", "poisson"])
            p.add_argument("--penalty", choices=["ridge", "lasso"])
            p.add_argument("--lam", type=float, default=0.0)
            p.add_argument("--tol", type=float, default=1e-8)
            p.add_argument("--max-iter", type=int, default=10_000)
            p.add_argument("--se", default="exact", choices=["exact", "history", "conditional", "none"])
            p.add_argument("--report", help="write an HTML report here")
            p.add_argument(
                "--round-delay",
                type=float,
                default=0.0,
                help="sleep this many seconds per sweep (demonstrations and tests)",
            )
        else:
            p.add_argument("--connect", required=True, help="the leader's HOST:PORT")
            p.add_argument("--leader", help="TLS: the name in the leader's certificate")
            p.add_argument(
                "--retry-for", type=float, default=10.0, help="keep trying to connect for this many seconds"
            )
    return parser


def _read(path: str):
    from ..engines.files import read_frame

    p = Path(path)
    if not p.exists():
        raise DPStatsError(f"data file '{path}' does not exist")
    return read_frame(p, "parquet" if p.suffix.lower() == ".parquet" else "csv")


def _identity(args) -> dict:
    """Party(...) keyword for the channel: tls= (preferred) or the deprecated pre-shared key."""
    from .pki import TLSCredentials

    files = (args.tls_ca, args.tls_cert, args.tls_key)
    if args.tls_dir or any(files):
        if args.key_file:
            raise DPStatsError("give TLS files or --key-file, not both.")
        if args.tls_dir:
            base = TLSCredentials.from_dir(args.tls_dir, args.name)
            ca, cert, key = (f or d for f, d in zip(files, (base.ca, base.cert, base.key)))
        elif not all(files):
            raise DPStatsError("give all of --tls-ca, --tls-cert and --tls-key (or --tls-dir).")
        else:
            ca, cert, key = files
        return {"tls": TLSCredentials(ca=ca, cert=cert, key=key)}
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)  # said once below, in words
    print(
        "dpstats party: warning: the pre-shared-key channel is deprecated (any key holder can pose as any "
        "party; no forward secrecy); use `dpstats party init` and --tls-dir.",
        file=sys.stderr,
    )
    return {"key": _key(args)}


def _key(args) -> bytes:
    if args.key_file:
        try:
            text = Path(args.key_file).read_text().strip()
        except OSError as exc:
            raise ProtocolError(f"cannot read the key file '{args.key_file}': {exc}") from None
        return load_key(text)
    env = os.environ.get("DPSTATS_PARTY_KEY")
    if env:
        return load_key(env)
    raise ProtocolError("no pre-shared key: give --key-file FILE or set DPSTATS_PARTY_KEY (hex).")


def _dp_options(args, leader: bool) -> dict:
    """Keyword arguments of the DP mode from the command line (empty when --eps is not given)."""
    if args.eps is None:
        if args.delta is not None or args.bounds is not None:
            raise DPStatsError("--delta and --bounds are used only with --eps (the DP mode).")
        return {}
    if args.bounds is None:
        raise DPStatsError(
            "the DP mode needs --bounds FILE.json with public bounds for this party's columns."
        )
    try:
        value = json.loads(Path(args.bounds).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DPStatsError(f"cannot read the bounds file '{args.bounds}': {exc}") from None
    bounds = tuple(value) if isinstance(value, list) else {k: tuple(v) for k, v in value.items()}
    out = {
        "eps": args.eps,
        "delta": args.delta if args.delta is not None else 0.0,
        "bounds": bounds,
        "random_state": args.seed,
    }
    if leader:
        out["rounds"] = args.rounds
    return out


def _hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise DPStatsError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def _run(args) -> int:
    if args.action == "init":
        from .pki import check_names, init_consortium

        names = check_names(args.names.split(","))
        paths = init_consortium(names, args.out, days=args.days)
        print(
            f"wrote the authority ({paths['ca.crt']}, key {paths['ca.key']}) and a key and certificate for "
            f"{', '.join(names)} in {args.out}. Give each party ca.crt, its NAME.crt and NAME.key over a "
            "secure channel; keep ca.key offline; delete the other copies."
        )
        return 0
    if args.action == "keygen":
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(os.urandom(32).hex() + "\n")
        print(f"wrote a 256-bit key to {args.out} (share it with the other parties over a secure channel)")
        return 0
    identity = _identity(args)
    party = Party(
        _read(args.data),
        **identity,
        name=args.name,
        formula=args.formula,
        row_id=args.row_id,
        levels=read_levels_file(args.levels),
        na_action=args.na_action,
        timeout=args.timeout,
    )
    if args.action == "lead":
        host, port = _hostport(args.listen)

        def announce(bound: int) -> None:
            if args.port_file:
                tmp = args.port_file + ".tmp"
                Path(tmp).write_text(str(bound))
                os.replace(tmp, args.port_file)
            print(f"[{args.name}] listening on {host}:{bound}", file=sys.stderr, flush=True)

        if "tls" in identity:
            who = {"parties": [x.strip() for x in args.parties.split(",") if x.strip()]}
        elif args.parties.isdigit():
            who = {"n_parties": int(args.parties)}
        else:
            raise DPStatsError("with --key-file, --parties is the number of parties (leader included).")

        def refused(text: str) -> None:
            print(f"[{args.name}] {text}", file=sys.stderr, flush=True)

        result = party.serve(
            host,
            port,
            **who,
            on_refused=refused,
            family=args.family,
            penalty=args.penalty,
            lam=args.lam,
            tol=args.tol,
            max_iter=args.max_iter,
            se=args.se,
            on_listening=announce,
            verbose=args.verbose,
            round_delay=args.round_delay,
            strict=args.strict,
            **_dp_options(args, leader=True),
        )
        if args.report:
            result.report(args.report)
    else:
        host, port = _hostport(args.connect)
        result = party.connect(
            host,
            port,
            retry_for=args.retry_for,
            verbose=args.verbose,
            leader=args.leader,
            strict=args.strict,
            **_dp_options(args, leader=False),
        )
    print(result)
    if args.json:
        result.to_json(args.json)
    return 0


def party_main(argv: list[str] | None = None) -> int:
    """Entry point of ``dpstats party``; returns the exit code (0, 2 bad input, 3 network/protocol)."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return _run(args)
    except ProtocolError as exc:
        print(f"dpstats party: error: {exc}", file=sys.stderr)
        return 3
    except (DPStatsError, FileExistsError) as exc:
        print(f"dpstats party: error: {exc}", file=sys.stderr)
        return 2
