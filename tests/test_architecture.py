"""The layer rules of DESIGN §2, checked on the source: imports point one way, no cycle, no
private helper imported across packages, no I/O in the statistics."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "rngcert"

#: Layer of each top-level part of the package: a module may import only from its own layer or
#: lower ones (DESIGN §2, bottom to top).
LAYERS = {
    "errors": 0,
    "seeding": 0,
    "scratch": 0,
    "equipment": 1,
    "stats": 2,
    "collect": 3,
    "simulate": 4,
    "battery": 5,
    "report": 6,
    "pipeline": 7,
    "cli": 8,
}
#: The package facade (``rngcert/__init__.py``, ``__main__``) sits above everything.
TOP = 9
#: Stricter rules than the layer order.
ONLY = {
    "equipment": {"errors", "equipment"},
    "stats": {"errors", "seeding", "equipment", "stats"},
    "seeding": {"errors", "seeding"},
    "errors": {"errors"},
    "scratch": {"scratch"},  # (the standard library only: any layer keeps its temporary folders there)
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _is_module(name: str) -> bool:
    """Whether ``rngcert.<name>`` is a module or package of the source (not a name of the facade)."""
    return (PKG / f"{name}.py").is_file() or (PKG / name / "__init__.py").is_file()


def _imports(path: Path):
    """(imported module, imported names, line, at module level?) for every rngcert import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    top_level = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("rngcert"):
                    out.append((a.name, [], node.lineno, id(node) in top_level))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = me.split(".")[: len(me.split(".")) - node.level + (1 if path.name == "__init__.py" else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod == "rngcert" and any(_is_module(a.name) for a in node.names):
                for a in node.names:  # "from rngcert import scratch" imports the module rngcert.scratch
                    if _is_module(a.name):
                        out.append((f"rngcert.{a.name}", [], node.lineno, id(node) in top_level))
                rest = [a.name for a in node.names if not _is_module(a.name)]
                if rest:
                    out.append((mod, rest, node.lineno, id(node) in top_level))
            elif mod.startswith("rngcert"):
                names = [a.name for a in node.names]
                # "from rngcert.stats import frequency" imports the submodule rngcert.stats.frequency
                out.append((mod, names, node.lineno, id(node) in top_level))
    return out


def _all_modules():
    return sorted(p for p in PKG.rglob("*.py") if "data" not in p.relative_to(PKG).parts[:1])


def _layer(module: str) -> int:
    part = _part(module)
    if part is None or part in ("__main__",):
        return TOP
    return LAYERS.get(part, TOP)


def test_every_part_has_a_layer():
    parts = {_part(_module_name(p)) for p in _all_modules()}
    unknown = {p for p in parts if p not in LAYERS and p not in (None, "__main__", "data")}
    assert not unknown, f"parts of the package without a layer in DESIGN §2: {sorted(unknown)}"


def test_imports_point_down():
    bad = []
    for path in _all_modules():
        me = _module_name(path)
        mine, my_layer = _part(me), _layer(me)
        for mod, names, line, _ in _imports(path):
            target = _part(mod)
            if mod == "rngcert" and set(names) <= {"__version__"}:
                continue  # the version string
            if target is None:
                if my_layer != TOP:
                    bad.append(f"{path.relative_to(PKG.parent)}:{line} imports the package facade rngcert ({names})")
                continue
            if mine in ONLY and target not in ONLY[mine]:
                bad.append(f"{path.relative_to(PKG.parent)}:{line} ({mine}) imports {mod}: {mine}/ may import only {sorted(ONLY[mine])}")
            elif _layer(mod) > my_layer:
                bad.append(f"{path.relative_to(PKG.parent)}:{line} ({mine}, layer {my_layer}) imports {mod} (layer {_layer(mod)})")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_private_helper_crosses_a_package():
    bad = []
    for path in _all_modules():
        me = _module_name(path)
        my_pkg = me.rsplit(".", 1)[0] if path.name != "__init__.py" else me
        for mod, names, line, _ in _imports(path):
            pkg = mod.rsplit(".", 1)[0]
            leaf = mod.rsplit(".", 1)[-1]
            private_module = leaf.startswith("_") and not leaf.startswith("__")
            private_names = [n for n in names if n.startswith("_") and not n.startswith("__")]
            # a subpackage (collect/store) is part of the package that holds it: it may use that package's helpers
            inside = any(o != "rngcert" and (my_pkg == o or my_pkg.startswith(o + ".")) for o in (pkg, mod))
            if (private_module or private_names) and pkg != my_pkg and mod != my_pkg and not inside:
                bad.append(f"{path.relative_to(PKG.parent)}:{line} imports private {mod} {private_names}")
    assert not bad, "private helpers imported across packages:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    known = {_module_name(p) for p in _all_modules()}
    for path in _all_modules():
        me = _module_name(path)
        deps = set()
        for mod, names, _, _ in _imports(path):
            for n in names or [None]:
                sub = f"{mod}.{n}" if n else None
                deps.add(sub if sub in known else mod)
        # a package's __init__ is imported before its submodules: that edge is not a cycle
        graph[me] = {d for d in deps if d in known and d != me and not me.startswith(d + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cyc = stack[stack.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cyc))
            if not state.get(d):
                visit(d)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if not state.get(n):
            visit(n)


IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "load_paytable", "load_wheel", "load_procedure"}


def test_statistics_do_no_io():
    bad = []
    for path in sorted((PKG / "stats").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in IO_CALLS:
                    bad.append(f"{path.relative_to(PKG.parent)}:{node.lineno} calls {name}()")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for m in mods:
                    if m.split(".")[0] in ("tomllib", "pathlib", "csv", "duckdb", "pyarrow", "click", "matplotlib", "jinja2"):
                        bad.append(f"{path.relative_to(PKG.parent)}:{node.lineno} imports {m}")
    assert not bad, "I/O in rngcert/stats:\n" + "\n".join(bad)


def test_the_checks_can_fail(tmp_path):
    """The walker sees function-level imports too (a check that cannot fail is a defect)."""
    f = PKG / "stats" / "_arcs.py"
    found = _imports(f)
    assert all(m.startswith("rngcert") for m, *_ in found)
    src = "def f():\n    from rngcert.pipeline.certify_wheel import certify_log\n"
    p = tmp_path / "x.py"
    p.write_text(src)
    tree_imports = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)]
    assert tree_imports and _layer(tree_imports[0].module) > LAYERS["stats"]


#: Constructors of random state: only rngcert/seeding.py calls them (DESIGN §2: "the one place random streams are made").
RANDOM_MAKERS = {"SeedSequence", "default_rng", "Generator", "RandomState", "BitGenerator", "PCG64", "PCG64DXSM", "MT19937",
                 "Philox", "SFC64", "UserBitGenerator", "seed"}
#: Modules allowed to construct random state besides seeding.py, each with its reason.
RANDOM_ALLOWED = {
    "rngcert/seeding.py": "the one place random streams are made",
    "rngcert/simulate/sources.py": "the registry of simulated sources: it names the bit generator classes (pcg64, philox, "
    "mt19937, …) and user bit generators, and builds them on a SeedSequence made by rngcert.seeding",
}


def _random_makers(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of every call that constructs random state: ``np.random.X(...)``, ``numpy.random.X``,
    ``randomgen.X``, or a name imported from them; and every import of ``random`` or ``secrets``."""
    imported = set()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("numpy", "randomgen") and (
                "random" in (node.module or "") or node.module == "randomgen"):
            imported |= {a.asname or a.name for a in node.names if a.name in RANDOM_MAKERS}
        if isinstance(node, ast.Import) and any(a.name in ("random", "secrets") for a in node.names):
            out.append((node.lineno, "import random/secrets"))
        if isinstance(node, ast.ImportFrom) and node.module in ("random", "secrets"):
            out.append((node.lineno, f"from {node.module} import"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in imported:
            out.append((node.lineno, f.id))
        elif isinstance(f, ast.Attribute):
            chain = []
            x = f
            while isinstance(x, ast.Attribute):
                chain.append(x.attr)
                x = x.value
            if isinstance(x, ast.Name):
                chain.append(x.id)
            dotted = ".".join(reversed(chain))
            if (dotted.startswith(("np.random.", "numpy.random.", "randomgen.")) or f.attr in imported) and f.attr in RANDOM_MAKERS | {
                    "rand", "randn", "randint", "random", "shuffle", "permutation", "choice", "integers"}:
                out.append((node.lineno, dotted))
    return out


def test_random_streams_are_made_only_in_seeding():
    bad = []
    for path in _all_modules():
        rel = path.relative_to(PKG.parent).as_posix()
        if rel in RANDOM_ALLOWED:
            continue
        for line, call in _random_makers(ast.parse(path.read_text(encoding="utf-8"))):
            bad.append(f"{rel}:{line} {call}")
    assert not bad, "random state made outside rngcert/seeding.py (use rngcert.seeding.stream/sequence/root):\n" + "\n".join(bad)


def test_the_random_check_can_fail():
    src = ("import numpy as np\nfrom numpy.random import default_rng\nimport random\n"
           "a = np.random.SeedSequence(1)\nb = default_rng(2)\nc = np.random.Generator(np.random.PCG64(a))\nd = np.random.rand(3)\n")
    found = [c for _, c in _random_makers(ast.parse(src))]
    assert found.count("np.random.SeedSequence") == 1 and "default_rng" in found and "np.random.PCG64" in found
    assert "np.random.Generator" in found and "np.random.rand" in found and "import random/secrets" in found
    # a type named in an annotation or isinstance() is not a construction; nor are docstring examples
    ok = "import numpy as np\ndef f(rng: np.random.Generator):\n    '''>>> np.random.default_rng(1)'''\n    return isinstance(rng, np.random.Generator)\n"
    assert _random_makers(ast.parse(ok)) == []


def _packages() -> list[str]:
    """Every package of rngcert (a folder with an ``__init__.py``), by dotted name."""
    return sorted(_module_name(p) for p in PKG.rglob("__init__.py") if "data" not in p.relative_to(PKG).parts[:1])


def _export_problems(package: str) -> list[str]:
    """What is wrong with a package's ``__all__``: missing, not a list of distinct names, or a name
    that neither the package defines nor a submodule of that name provides."""
    import importlib

    mod = importlib.import_module(package)
    names = getattr(mod, "__all__", None)
    if names is None:
        return [f"{package}: no __all__"]
    if not all(isinstance(n, str) for n in names):
        return [f"{package}: __all__ holds something that is not a name"]
    bad = [f"{package}: {n!r} twice in __all__" for n in sorted({n for n in names if list(names).count(n) > 1})]
    for n in names:
        if hasattr(mod, n):
            continue
        try:
            importlib.import_module(f"{package}.{n}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{n}":
                raise
            bad.append(f"{package}: {n!r} in __all__ is neither defined there nor a submodule")
    return bad


def test_every_package_is_installed():
    """setuptools' ``packages`` list in pyproject.toml is explicit: a package missing from it is left
    out of ``pip install .`` (the tests, run from the checkout, would not notice)."""
    import tomllib

    listed = set(tomllib.loads((PKG.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    missing = [p for p in _packages() if p not in listed]
    assert not missing, f"packages not in pyproject.toml [tool.setuptools] packages: {missing}"


def test_every_package_lists_its_public_names():
    """Issue 27 item 5: every package ``__init__`` has ``__all__`` and each name listed imports."""
    pkgs = _packages()
    assert {"rngcert", "rngcert.collect", "rngcert.equipment", "rngcert.pipeline", "rngcert.report", "rngcert.simulate"} <= set(pkgs)
    bad = [p for pkg in pkgs for p in _export_problems(pkg)]
    assert not bad, "\n".join(bad)


def test_the_export_check_can_fail(tmp_path, monkeypatch):
    root = tmp_path / "fake_pkg"
    (root / "bare").mkdir(parents=True)
    (root / "__init__.py").write_text('__all__ = ["x", "sub", "ghost", "x"]\nx = 1\n')
    (root / "sub.py").write_text("")
    (root / "bare" / "__init__.py").write_text("y = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _export_problems("fake_pkg") == ["fake_pkg: 'x' twice in __all__",
                                               "fake_pkg: 'ghost' in __all__ is neither defined there nor a submodule"]
    assert _export_problems("fake_pkg.bare") == ["fake_pkg.bare: no __all__"]
