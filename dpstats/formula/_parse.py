"""R's expression grammar for formulas: tokens, a parse tree, and R's deparse.

The parse tree is made of :class:`Node` objects; :func:`deparse` writes a node
back the way R's ``deparse`` does (spaces around ``+`` and ``==`` but not around
``^``, ``:`` or ``%%``, backticks around non-syntactic names, ``1e+05`` for
100000), because R names design columns with that text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .._rnumbers import format_one
from ..errors import FormulaError

_RESERVED = {
    "if",
    "else",
    "repeat",
    "while",
    "function",
    "for",
    "next",
    "break",
    "TRUE",
    "FALSE",
    "NULL",
    "Inf",
    "NaN",
    "NA",
    "NA_integer_",
    "NA_real_",
    "NA_character_",
    "NA_complex_",
    "in",
}
_CONSTANTS = {"TRUE", "FALSE", "NULL", "NA", "Inf", "NaN"}
_SYNTACTIC = re.compile(r"^(?:(?:[^\W\d_]|\.(?![0-9]))[\w.]*|\.)$")
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?L?)
  | (?P<name>(?:[^\W\d_]|\.(?![0-9]))[\w.]*|\.)
  | (?P<tick>`[^`]*`)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op>::|%[^%]*%|<=|>=|==|!=|&&|\|\||\*\*|[~+\-*/^:(),=<>!&|])
""",
    re.VERBOSE,
)

# binding powers (R's precedence, ?Syntax): higher binds tighter
_BINARY = {
    "~": 1,
    "||": 2,
    "|": 2,
    "&&": 3,
    "&": 3,
    "==": 5,
    "!=": 5,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "+": 6,
    "-": 6,
    "*": 7,
    "/": 7,
    ":": 9,
    "^": 11,
    "::": 12,
}
_PREFIX = {"~": 1, "!": 4, "-": 10, "+": 10}
_SPECIAL = 8  # %in%, %%, %/%, ...
_CALL = 13
_TIGHT = {"^", ":", "::", "/", "%%", "%/%"}  # deparsed without spaces


@dataclass(frozen=True)
class Node:
    """One node of an R expression.

    ``kind`` is ``"name"``, ``"const"`` (``TRUE``, ``NA``...), ``"num"``, ``"str"``, ``"call"``, ``"binary"``,
    ``"unary"`` or ``"paren"``; ``value`` is the name, number, string or
    operator; ``args`` the operands, and for calls ``(argname, node)`` pairs
    whose first entry is the function.
    """

    kind: str
    value: object = None
    args: tuple = field(default_factory=tuple)
    integer: bool = False

    def __str__(self) -> str:
        return deparse(self)


def is_syntactic(name: str) -> bool:
    """Whether R accepts ``name`` without backticks (``a.b`` yes, ``a b`` and ``1x`` no)."""
    return bool(_SYNTACTIC.match(name)) and name not in _RESERVED and not re.match(r"^\.\.\d", name)


def r_name(name: str) -> str:
    """``name`` as R deparses a symbol: in backticks unless it is syntactic."""
    return name if is_syntactic(name) else f"`{name}`"


_ONE_SYNTACTIC = r"(?:(?:[^\W\d_]|\.(?![0-9]))[\w.]*|\.)"
_ALL_SYNTACTIC = re.compile(rf"(?:{_ONE_SYNTACTIC}\n)*{_ONE_SYNTACTIC}")


def r_names(names: list[str]) -> list[str]:
    """:func:`r_name` of every name; one regular-expression match for the whole list when all are syntactic.

    >>> r_names(["a.b", "x1"]), r_names(["a b", "if", "x"])
    (['a.b', 'x1'], ['`a b`', '`if`', 'x'])
    """
    if not names:
        return []
    text = "\n".join(names)
    if (
        text.count("\n") == len(names) - 1
        and _ALL_SYNTACTIC.fullmatch(text) is not None
        and not _RESERVED.intersection(names)
        and "\n.." not in "\n" + text
    ):
        return list(names)
    return [r_name(nm) for nm in names]


def tokenize(text: str) -> list[tuple[str, str]]:
    """The tokens of ``text``; ``**`` is ``^``, as R's parser reads it (``I(x**2)`` is R's ``I(x^2)``).

    >>> tokenize("I(x**2)")
    [('name', 'I'), ('op', '('), ('name', 'x'), ('op', '^'), ('num', '2'), ('op', ')')]
    """
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            bad = text[pos]
            hint = " ('$' and '[' are not formula syntax: name the column directly)" if bad in "$[]" else ""
            raise FormulaError(f"cannot read '{text}': unexpected '{bad}' at position {pos + 1}{hint}.")
        pos = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup, "^" if m.group() == "**" else m.group()))
    return out


class _Parser:
    def __init__(self, text: str):
        self.text, self.tokens, self.i = text, tokenize(text), 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def fail(self, what: str):
        return FormulaError(f"cannot read '{self.text}': {what}.")

    def expect(self, op: str) -> None:
        kind, tok = self.take()
        if tok != op or kind != "op":
            raise self.fail(f"expected '{op}' but found '{tok or 'the end'}'")

    def parse(self) -> Node:
        node = self.expr(0)
        if self.peek()[0] != "end":
            raise self.fail(f"unexpected '{self.peek()[1]}'")
        return node

    def expr(self, rbp: int) -> Node:
        left = self.prefix()
        while True:
            kind, tok = self.peek()
            if kind != "op":
                if kind == "end" or tok == "":
                    return left
                raise self.fail(f"unexpected '{tok}' (an operator such as '+' is missing)")
            if tok == "(":
                if _CALL <= rbp:
                    return left
                left = self.call(left)
                continue
            lbp = _SPECIAL if tok.startswith("%") else _BINARY.get(tok)
            if lbp is None or lbp <= rbp:
                return left
            self.take()
            if tok == "::":  # pkg::fun binds tighter than the call that follows
                kind, name = self.take()
                if kind not in ("name", "tick"):
                    raise self.fail(f"expected a function name after '::', found '{name}'")
                left = Node("binary", tok, (left, Node("name", name.strip("`"))))
                continue
            right = self.expr(lbp - 1 if tok == "^" else lbp)  # '^' is right-associative
            left = Node("binary", tok, (left, right))

    def prefix(self) -> Node:
        kind, tok = self.take()
        if kind == "num":
            integer = tok.endswith("L")
            return Node("num", float(tok.rstrip("L")), integer=integer)
        if kind == "str":
            return Node("str", bytes(tok[1:-1], "utf-8").decode("unicode_escape"))
        if kind == "name":
            return Node("const" if tok in _CONSTANTS else "name", tok)
        if kind == "tick":
            return Node("name", tok[1:-1])
        if tok == "(":
            inner = self.expr(0)
            self.expect(")")
            return Node("paren", None, (inner,))
        if tok in _PREFIX:
            return Node("unary", tok, (self.expr(_PREFIX[tok]),))
        raise self.fail(f"unexpected '{tok or 'end of formula'}'")

    def call(self, fn: Node) -> Node:
        if fn.kind not in ("name",) and not (fn.kind == "binary" and fn.value == "::"):
            raise self.fail(f"'{deparse(fn)}' is not a function name")
        self.expect("(")
        args: list[tuple[str | None, Node]] = []
        while self.peek()[1] != ")":
            name = None
            kind, tok = self.peek()
            nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else ("end", "")
            if kind in ("name", "tick", "str") and nxt == ("op", "="):
                name = tok.strip("`\"'")
                self.i += 2
            args.append((name, self.expr(0)))
            if self.peek()[1] == ",":
                self.take()
            elif self.peek()[1] != ")":
                raise self.fail(f"expected ',' or ')' in the arguments of {deparse(fn)}()")
        self.expect(")")
        return Node("call", fn, tuple(args))


def parse(text: str) -> Node:
    """Parse an R expression or formula.

    Examples
    --------
    >>> deparse(parse("log(a.b+5)*`my x`:I(x^-1)"))
    'log(a.b + 5) * `my x`:I(x^-1)'
    """
    if not text.strip():
        raise FormulaError("the formula is empty; write e.g. 'y ~ x1 + x2'.")
    return _Parser(text).parse()


def format_number(value: float, integer: bool = False) -> str:
    """A number as R's ``deparse``/``as.character`` write it (15 significant digits).

    Examples
    --------
    >>> [format_number(v) for v in (100000, 1000, 0.0001, 2.5, 1e15)]
    ['1e+05', '1000', '1e-04', '2.5', '1e+15']
    """
    if integer:
        return f"{int(value)}L"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return format_one(value, 15)


def deparse(node: Node) -> str:
    """``node`` as R's ``deparse`` writes it."""
    kind = node.kind
    if kind == "name":
        return r_name(node.value)
    if kind == "const":
        return node.value
    if kind == "num":
        return format_number(node.value, node.integer)
    if kind == "str":
        return '"' + node.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "paren":
        return f"({deparse(node.args[0])})"
    if kind == "unary":
        return f"{node.value}{deparse(node.args[0])}"
    if kind == "binary":
        op = node.value
        left, right = deparse(node.args[0]), deparse(node.args[1])
        return f"{left}{op}{right}" if op in _TIGHT else f"{left} {op} {right}"
    args = ", ".join(f"{r_name(n)} = {deparse(a)}" if n else deparse(a) for n, a in node.args)
    return f"{deparse(node.value)}({args})"


def call_name(node: Node) -> str | None:
    """The function a call node calls, without a namespace (``splines::ns`` -> ``ns``)."""
    if node.kind != "call":
        return None
    fn = node.value
    return fn.args[1].value if fn.kind == "binary" else fn.value


def names_in(node: Node) -> list[str]:
    """Every symbol an expression uses, except function names, in order."""
    if node.kind == "name":
        return [node.value]
    if node.kind == "call":
        return [v for _, a in node.args for v in names_in(a)]
    if node.kind == "binary" and node.value == "::":
        return []
    return [v for a in node.args for v in names_in(a)]
