"""R's ``terms.formula``: which variables a formula uses and which terms it has.

Variables are numbered in order of first appearance (the response first);
a term is the set of variable numbers it multiplies.  The operators are R's:
``+`` union, ``-`` removal, ``:`` interaction, ``*`` crossing, ``/`` nesting,
``%in%``, ``^`` crossing to a degree, ``.`` for every data column the
left-hand side does not use, ``0``/``1``/``-1`` for the intercept and
``offset()`` for offsets.  Terms are sorted by degree, as R sorts them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from ..errors import DataWarning, FormulaError, caller_stacklevel
from ._parse import Node, call_name, deparse, names_in

Term = frozenset


@dataclass
class Terms:
    """Variables (parse nodes and R labels), terms, intercept, response and offsets."""

    variables: list[Node] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    terms: list[Term] = field(default_factory=list)
    intercept: bool = True
    response: int | None = None
    offsets: list[int] = field(default_factory=list)

    def label(self, term: Term) -> str:
        """R's term label: its variables in order of appearance, joined by ':'."""
        return ":".join(self.labels[i] for i in sorted(term))


class _Builder:
    def __init__(self, formula: str, dot_columns: list[str] | None):
        self.formula, self.dot = formula, dot_columns
        self.t = Terms()
        self.index: dict[str, int] = {}

    def install(self, node: Node) -> int:
        label = deparse(node)
        if label not in self.index:
            self.index[label] = len(self.t.variables)
            self.t.variables.append(node)
            self.t.labels.append(label)
        return self.index[label]

    def encode(self, node: Node, parity: bool = True) -> list[Term]:
        kind, op = node.kind, node.value
        if kind == "paren":
            return self.encode(node.args[0], parity)
        if kind == "num" and op in (0.0, 1.0):
            self.t.intercept = (op == 1.0) == parity
            return []
        if kind == "num":
            raise FormulaError(
                f"'{deparse(node)}' in formula '{self.formula}' is not a term; "
                "only 0, 1 and -1 may stand alone (the intercept)."
            )
        if kind == "name" and op == ".":
            return self.expand_dot()
        if kind == "unary" and op in "+-":
            terms = self.encode(node.args[0], parity if op == "+" else not parity)
            return [] if op == "-" else terms
        if kind == "binary" and (op in _OPERATORS or op == "%in%"):
            return self.binary(node, parity)
        if call_name(node) == "offset":
            self.t.offsets.append(self.install(node))
            return []
        return [Term({self.install(node)})]

    def binary(self, node: Node, parity: bool) -> list[Term]:
        op = node.value
        left = self.encode(node.args[0], parity)
        if op == "^":
            return self.power(left, node.args[1])
        right = self.encode(node.args[1], not parity if op == "-" else parity)
        if op == "+":
            return _unique(left + right)
        if op == "-":
            drop = set(right)
            return [t for t in left if t not in drop]
        if op == ":":
            return _unique([a | b for a in left for b in right])
        if op == "*":
            return _unique(left + right + [a | b for a in left for b in right])
        if op == "%in%":
            whole = Term().union(*right)
            return _unique([a | whole for a in left])
        whole = Term().union(*left)  # '/': a/b is a + b %in% a
        return _unique(left + [whole | b for b in right])

    def power(self, left: list[Term], exponent: Node) -> list[Term]:
        while exponent.kind == "paren":
            exponent = exponent.args[0]
        if exponent.kind != "num" or exponent.value < 1 or exponent.value != int(exponent.value):
            raise FormulaError(
                f"the power in '{self.formula}' must be a whole number such as "
                f"(a + b)^2, got '{deparse(exponent)}'."
            )
        out = list(left)
        for _ in range(int(exponent.value) - 1):
            out = _unique(out + [a | b for a in out for b in left])
        return out

    def expand_dot(self) -> list[Term]:
        if self.dot is None:
            raise FormulaError(f"'.' in formula '{self.formula}' needs a data frame to expand.")
        return [Term({self.install(Node("name", c))}) for c in self.dot]


_OPERATORS = {"+", "-", ":", "*", "/", "^"}


def _unique(terms: list[Term]) -> list[Term]:
    return list(dict.fromkeys(t for t in terms if t))


def build_terms(formula: str, lhs: Node | None, rhs: Node, columns: list[str]) -> Terms:
    """The terms of ``lhs ~ rhs`` on data with ``columns`` (for ``.``).

    Examples
    --------
    >>> from dpstats.formula._parse import parse
    >>> t = build_terms("y ~ a/b", parse("y"), parse("a/b"), [])
    >>> [t.label(x) for x in t.terms]
    ['a', 'a:b']
    """
    lhs_names = set(names_in(lhs)) if lhs is not None else set()
    b = _Builder(formula, [c for c in columns if c not in lhs_names])
    if lhs is not None:
        b.t.response = b.install(lhs)
    terms = b.encode(rhs)
    if b.t.response is not None and Term({b.t.response}) in terms:
        warnings.warn(
            f"the response '{b.t.labels[b.t.response]}' appeared on the right-hand side of "
            f"'{formula}' and was dropped (as R does).",
            DataWarning,
            stacklevel=caller_stacklevel(),
        )
        terms = [t for t in terms if t != Term({b.t.response})]
    b.t.terms = sorted(terms, key=len)
    return b.t
