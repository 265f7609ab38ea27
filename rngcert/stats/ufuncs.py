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
import importlib.util
import os
import sys
import types

__all__ = ["special", "ufuncs"]


def _ufuncs_alone() -> types.ModuleType | None:
    """``scipy.special._ufuncs`` loaded without running ``scipy.special/__init__``; None if that is not possible."""
    if "scipy.special" in sys.modules or os.environ.get("SCIPY_ARRAY_API"):
        return None
    try:
        import scipy

        spec = importlib.util.find_spec("scipy.special")
        if spec is None or not spec.submodule_search_locations:
            return None
        stub = types.ModuleType("scipy.special")
        stub.__path__ = list(spec.submodule_search_locations)
        stub.__spec__ = spec
        stub.__package__ = "scipy.special"
        sys.modules["scipy.special"] = stub
        try:
            mod = importlib.import_module("scipy.special._ufuncs")
        finally:
            if sys.modules.get("scipy.special") is stub:
                del sys.modules["scipy.special"]
            if vars(scipy).get("special") is stub:  # pragma: no cover - the import system does not set it
                del scipy.special
        return mod
    except Exception:  # pragma: no cover - another scipy layout: use the whole package
        sys.modules.pop("scipy.special._ufuncs", None)
        return None


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
