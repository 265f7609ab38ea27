"""``scipy.special``'s ufuncs without ``scipy.special``'s array-API layer (issue 26 item 1: fixed cost).

``import scipy.special`` runs the package's ``__init__``, which imports scipy's array-API layer
(``scipy._lib._array_api`` and its vendored ``array_api_compat.numpy``); that layer clones the numpy
namespace attribute by attribute and so imports ``numpy.testing`` (with ``unittest``), ``numpy.f2py``,
``numpy.ma``, ``numpy.polynomial`` and more: about 0.13 of the 0.19 CPU-s that ``scipy.special`` costs a
10,000-spin certify. The wheel battery, its power and its figures use only ufuncs of the compiled
extension ``scipy.special._ufuncs`` (``bdtr``, ``bdtrc``, ``bdtri``, ``bdtrik``, ``chdtrc``, ``chdtri``,
``chndtrinc``, ``gammainc``, ``gammaln``, ``ndtr``, ``xlogy`` and the Boost ones ``_binom_sf`` …).

:data:`special` is that extension module, loaded under a placeholder parent package so that the
package's ``__init__`` does not run; the placeholder is removed at once, and a later
``import scipy.special`` (``scipy.stats`` on the shuffle path, say) runs the real ``__init__``, which
takes the already loaded extension from ``sys.modules``: ``scipy.special.bdtr is special.bdtr``. The
ufuncs are therefore the very objects ``scipy.special`` exports (without ``SCIPY_ARRAY_API`` its public
names *are* these ufuncs), and every number is bit-identical by construction, not by approximation.

:data:`special` falls back to the whole ``scipy.special`` when that is already imported, when
``SCIPY_ARRAY_API`` is set (then scipy's public names are wrappers that dispatch on the array type),
or when the extension cannot be loaded this way (another scipy layout); a name the extension lacks is
looked up in the whole ``scipy.special`` (imported then).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

__all__ = ["special", "ufuncs"]


def _stub(name: str, spec) -> types.ModuleType:
    """A placeholder package module ``name`` whose submodules are found on ``spec``'s path (its
    ``__init__`` not run)."""
    stub = types.ModuleType(name)
    stub.__path__ = list(spec.submodule_search_locations)
    stub.__spec__ = spec
    stub.__package__ = name
    return stub


def _ufuncs_alone() -> types.ModuleType | None:
    """``scipy.special._ufuncs`` loaded without running ``scipy.special/__init__``; None if that is not possible.

    When ``scipy`` itself is not imported yet, its ``__init__`` and that of ``scipy._lib`` (whose
    ``_testutils`` imports ``subprocess``, ``shutil``, ``bz2``, ``lzma`` and ``sysconfig``: about 0.02
    CPU-s) do not run either: the extension needs only ``scipy._lib._ccallback`` of them. Placeholders
    stand for the three packages while the extension loads and are removed at once; a later ``import
    scipy`` runs the real ``__init__`` files, which take the loaded extension modules from ``sys.modules``."""
    if "scipy.special" in sys.modules or os.environ.get("SCIPY_ARRAY_API"):
        return None
    placed: list[str] = []
    try:
        if "scipy" in sys.modules:
            import scipy  # noqa: F401 (already imported: its path)

            spec = importlib.util.find_spec("scipy.special")
        else:
            top = importlib.util.find_spec("scipy")
            if top is None or not top.submodule_search_locations:
                return None
            sys.modules["scipy"] = _stub("scipy", top)
            placed.append("scipy")
            lib = importlib.machinery.PathFinder.find_spec("scipy._lib", top.submodule_search_locations)
            if "scipy._lib" not in sys.modules and lib is not None and lib.submodule_search_locations:
                sys.modules["scipy._lib"] = _stub("scipy._lib", lib)
                placed.append("scipy._lib")
            spec = importlib.machinery.PathFinder.find_spec("scipy.special", top.submodule_search_locations)
        if spec is None or not spec.submodule_search_locations:
            return None
        sys.modules["scipy.special"] = _stub("scipy.special", spec)
        placed.append("scipy.special")
        return importlib.import_module("scipy.special._ufuncs")
    except Exception:  # pragma: no cover - another scipy layout: use the whole package
        sys.modules.pop("scipy.special._ufuncs", None)
        return None
    finally:
        loaded = {name: [m for m in sys.modules if m.rpartition(".")[0] == name] for name in placed}
        for name in placed:  # the placeholders go; the extension modules loaded under them stay
            if type(sys.modules.get(name)) is types.ModuleType and getattr(sys.modules[name], "__file__", None) is None:
                del sys.modules[name]
        top = sys.modules.get("scipy")
        if top is not None and getattr(vars(top).get("special"), "__file__", 1) is None:  # pragma: no cover - not set by the import system
            del top.special
        pending = {name: kids for name, kids in loaded.items() if name != "scipy.special" and kids}
        if pending:
            sys.meta_path.insert(0, _Rebind(pending))


class _Rebind(importlib.abc.MetaPathFinder):
    """Binds, as attributes, the submodules loaded under a placeholder to the real package when it is
    imported later (``scipy._lib._ccallback`` on ``scipy._lib``), as a normal import would have; then
    leaves ``sys.meta_path``. Finds nothing itself: the real package's spec is the path finder's."""

    def __init__(self, pending: dict[str, list[str]]):
        self.pending = pending

    def find_spec(self, name, path=None, target=None):
        if name not in self.pending:
            return None
        kids = self.pending.pop(name)
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module, run=run, kids=kids):
            for k in kids:
                if k in sys.modules:
                    setattr(module, k.rpartition(".")[2], sys.modules[k])
            run(module)

        spec.loader.exec_module = exec_module
        return spec


class _Special(types.ModuleType):
    """The extension's ufuncs; any other name from the whole ``scipy.special``."""

    def __init__(self, ufuncs: types.ModuleType):
        super().__init__("rngcert.stats.ufuncs.special")
        self.__dict__.update({k: v for k, v in vars(ufuncs).items() if not k.startswith("__")})

    def __getattr__(self, name: str):  # only for names the extension lacks
        from scipy import special as whole

        return getattr(whole, name)


def _load() -> tuple[types.ModuleType, types.ModuleType]:
    ufuncs = _ufuncs_alone()
    if ufuncs is None:
        from scipy import special as whole

        return whole, whole._ufuncs
    return _Special(ufuncs), ufuncs


#: ``scipy.special``'s ufuncs (the same objects), or the whole ``scipy.special`` (see the module docstring);
#: ``ufuncs``: the extension module itself, for its private Boost ufuncs (``ufuncs._binom_sf`` …).
special, ufuncs = _load()
