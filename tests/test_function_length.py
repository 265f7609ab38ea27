"""The function-length rule of the house (issue 27): at most 60 functions (and methods) of rngcert
over 50 lines, each of them justified by a ``# long: <reason>`` comment directly above its ``def``
(or its first decorator).

A function's length is that of its ``def`` statement (``end_lineno - lineno + 1``; decorators not
counted) less its docstring: the house requires a numpydoc docstring (shapes, units, errors, sources,
Examples) on every public function, and those lines are documentation, not logic to be split. Nested
functions count on their own as well as inside their parent.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rngcert"
MAX_LINES = 50
MAX_LONG = 60


def _docstring_lines(node) -> int:
    """Lines of the function's docstring (0 when it has none)."""
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno - first.lineno + 1
    return 0


def long_functions(root: Path = PACKAGE) -> list[tuple[str, int, str, int, bool]]:
    """(file, line of the def, name, length, justified) of every function over MAX_LINES lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines), filename=str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1 - _docstring_lines(node)
            if length <= MAX_LINES:
                continue
            top = min([d.lineno for d in node.decorator_list] + [node.lineno])  # 1-based
            justified = False
            i = top - 2  # the line directly above, 0-based
            while i >= 0 and lines[i].strip().startswith("#"):  # the comment block directly above
                if lines[i].strip().startswith("# long:") and lines[i].strip()[len("# long:"):].strip():
                    justified = True
                    break
                i -= 1
            out.append((str(path.relative_to(root.parent)), node.lineno, node.name, length, justified))
    return out


def _listing(rows) -> str:
    return "\n".join(f"  {f}:{ln} {name} ({n} lines){'' if ok else '  <- no # long: comment'}" for f, ln, name, n, ok in rows)


def test_the_counter_measures_defs_and_finds_the_comment(tmp_path):
    """The counter itself, on a file made for it: the def's lines only, a comment block above a
    decorator, a comment that is not directly above, an empty reason."""
    body = "".join(f"    x{i} = {i}\n" for i in range(50))  # 50 lines + the def line: 51
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "# long: a reason\n@staticmethod\n@property\ndef a():\n" + body
        + "\n# long: too far away\n\ndef b():\n" + body
        + "\n# long:\ndef c():\n" + body
        + "\n# long: a reason\n#   on two lines\ndef d():\n" + body
        + "\ndef short():\n" + "".join(f"    y{i} = {i}\n" for i in range(49))
        + "\ndef documented():\n    \"\"\"A docstring\n\n    on three lines.\"\"\"\n" + "".join(f"    z{i} = {i}\n" for i in range(49))
    )
    rows = long_functions(tmp_path / "pkg")
    assert [(name, n, ok) for _, _, name, n, ok in rows] == [("a", 51, True), ("b", 51, False), ("c", 51, False), ("d", 51, True)]


def test_at_most_60_long_functions_each_justified():
    rows = long_functions()
    missing = [r for r in rows if not r[4]]
    assert len(rows) <= MAX_LONG and not missing, (
        f"{len(rows)} functions over {MAX_LINES} lines (at most {MAX_LONG}), {len(missing)} without a '# long: <reason>' comment "
        f"directly above the def:\n{_listing(sorted(rows))}")
