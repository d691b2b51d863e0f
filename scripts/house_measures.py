"""Measures of the front-door floor (issue "one house"): lines, long functions, long parameter lists.

``python scripts/house_measures.py`` prints them; ``tests/test_house.py`` holds them to the limits.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "dpstats" / "api"
MAX_API_LINES = 3000
MAX_CODE_LINES = 45
MAX_PARAMETERS = 8


def code_lines(source: str, node: ast.AST) -> int:
    """Lines of a function that hold code: not blank, not only a comment, not its docstring."""
    lines = set()
    segment = ast.get_source_segment(source, node, padded=True) or ""
    start = node.lineno
    for tok in tokenize.generate_tokens(io.StringIO(segment).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type == tokenize.ENDMARKER:
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    doc = node.body[0] if node.body and isinstance(node.body[0], ast.Expr) else None
    if doc is not None and isinstance(getattr(doc, "value", None), ast.Constant):
        lines -= set(range(doc.lineno - start + 1, doc.end_lineno - start + 2))
    return len(lines)


def parameters(node: ast.FunctionDef) -> int:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return len([n for n in names if n not in ("self", "cls")]) + bool(a.vararg) + bool(a.kwarg)


def is_front_door(path: Path, node: ast.FunctionDef, top_level: bool) -> bool:
    return (
        top_level
        and path.parent == API
        and not node.name.startswith("_")
        and node.name.startswith(("dp_", "vertical_"))
    )


def functions(path: Path):
    source = path.read_text()
    tree = ast.parse(source)
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield source, node, id(node) in top


def api_line_kinds() -> dict[str, int]:
    """api/'s lines by kind: docstrings (the user's documentation, shared text written once), blank
    lines, the public signatures (what users see in help() and R), and the rest, the door code."""
    kinds = dict.fromkeys(("docstrings", "blank", "public signatures", "code"), 0)
    for path in API.glob("*.py"):
        source = path.read_text()
        tree = ast.parse(source)
        total = len(source.splitlines())
        kinds["blank"] += sum(1 for line in source.splitlines() if not line.strip())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)) and ast.get_docstring(node):
                kinds["docstrings"] += node.body[0].end_lineno - node.body[0].lineno + 1
        doors = [n for n in tree.body if isinstance(n, ast.FunctionDef) and is_front_door(path, n, True)]
        kinds["public signatures"] += sum(n.body[0].lineno - n.lineno for n in doors)
        kinds["code"] += total
    kinds["code"] -= kinds["docstrings"] + kinds["blank"] + kinds["public signatures"]
    return kinds


def measures() -> dict:
    api_lines = sum(len(p.read_text().splitlines()) for p in API.glob("*.py"))
    long_functions, long_parameter_lists = [], []
    for path in sorted((ROOT / "dpstats").rglob("*.py")):
        rel = path.relative_to(ROOT)
        for source, node, top in functions(path):
            if path.parent == API and code_lines(source, node) > MAX_CODE_LINES:
                long_functions.append(f"{rel}:{node.name} ({code_lines(source, node)} code lines)")
            if parameters(node) > MAX_PARAMETERS and not is_front_door(path, node, top):
                if rel.parts[1] in ("api", "methods"):
                    long_parameter_lists.append(f"{rel}:{node.name} ({parameters(node)} parameters)")
    return {
        "api_lines": api_lines,
        "long_functions": long_functions,
        "long_parameter_lists": long_parameter_lists,
    }


if __name__ == "__main__":
    m = measures()
    print(f"api/ lines: {m['api_lines']} (limit {MAX_API_LINES})")
    print("    " + ", ".join(f"{kind} {count}" for kind, count in api_line_kinds().items()))
    print(f"api/ functions over {MAX_CODE_LINES} code lines: {len(m['long_functions'])}")
    for f in m["long_functions"]:
        print("   ", f)
    print(
        f"internal functions in api/ and methods/ over {MAX_PARAMETERS} parameters: {len(m['long_parameter_lists'])}"
    )
    for f in m["long_parameter_lists"]:
        print("   ", f)
