"""What ``import lancedb`` costs codesift, cut without changing LanceDB.

``import lancedb`` was most of a cold CLI call (~0.85 s of CPU on an idle core, 1.3–4 s
at this machine's usual load; ``python -X importtime``). Most of that served what
codesift never calls (LanceDB's REST namespace client) or checks LanceDB's own code;
both are kept out of the import here:

- the REST client package ``lance_namespace_urllib3_client`` is registered without
  running its ``__init__``, which imports every generated API module;
- its ``models`` sub-package is registered without its ``__init__`` too (146 pydantic
  model modules, ~45% of the import's CPU): a model class is imported when a module
  imports it by its own module path, as ``lancedb.namespace`` does for 8 of them; a
  name taken from the package itself (``lance_namespace`` re-exports ~140 of them for
  type hints and namespace methods) is a ``DeferredModel`` that imports its class when
  it is called or read;
- LanceDB's ``@override`` on Python < 3.12 comes from ``overrides``, which checks each
  of ~100 methods against its base classes by disassembling the class body's caller
  (~15% of the import's CPU). While lancedb's own modules import, ``overrides.override``
  only marks the method (``__override__``), as ``typing.override`` does on 3.12; the
  checks are for LanceDB's authors, and LanceDB's tests run them.

``codesift.indexer`` makes these cuts when something first imports lancedb (a finder
on ``sys.meta_path``), so a process that never does — the CLI's thin path, ``--help`` —
pays nothing for them. Each does nothing when its package is missing.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar

REST_CLIENT = "lance_namespace_urllib3_client"
REST_MODELS = f"{REST_CLIENT}.models"

_F = TypeVar("_F", bound=Callable[..., Any])


class DeferredModel:
    """One of the REST client's model classes, imported when first called or read."""

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self._name = name

    def resolve(self) -> Any:
        """The model class itself (importing its module)."""
        return getattr(importlib.import_module(self._module), self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.resolve(), attr)

    def __repr__(self) -> str:
        return f"<deferred {self._module}.{self._name}>"


class _LazyModels(types.ModuleType):
    """The ``models`` package without its ``__init__``: a name read from it is its class
    when that class's module is already imported, else a ``DeferredModel``."""

    where: dict[str, str]

    def __getattr__(self, name: str) -> Any:
        module = self.where.get(name) if not name.startswith("__") else None
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        full = f"{self.__name__}.{module}"
        loaded = sys.modules.get(full)
        return getattr(loaded, name) if loaded is not None else DeferredModel(full, name)


def _module_without_init(name: str) -> types.ModuleType | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.submodule_search_locations is None:
        return None
    return importlib.util.module_from_spec(spec)


def skip_rest_client() -> None:
    """Register the REST client package and its ``models`` without their ``__init__``."""
    if REST_CLIENT not in sys.modules:
        package = _module_without_init(REST_CLIENT)
        if package is None:
            return
        sys.modules[REST_CLIENT] = package
    if REST_MODELS in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(REST_MODELS)
    except (ImportError, ValueError):
        return
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return
    try:
        with open(spec.origin, encoding="utf-8") as init:
            text = init.read()
    except OSError:
        return
    models = _LazyModels(REST_MODELS)
    models.__spec__ = spec
    models.__file__ = spec.origin
    models.__path__ = list(spec.submodule_search_locations)
    models.__package__ = REST_MODELS
    models.where = {
        name: module
        for module, name in re.findall(
            rf"^from {re.escape(REST_MODELS)}\.(\w+) import (\w+)$", text, re.MULTILINE
        )
    }
    sys.modules[REST_MODELS] = models


def _marking_override(method: _F | None = None, **_checks: bool) -> Any:
    """``overrides.override`` without its checks: mark the method, as 3.12's does."""
    if method is None:
        return _marking_override
    with contextlib.suppress(AttributeError, TypeError):  # a builtin or slotted object
        method.__override__ = True  # type: ignore[attr-defined]
    return method


class _CheapOverrideLoader(importlib.abc.Loader):
    """Runs lancedb's ``__init__`` (and so the modules it imports) with
    ``overrides.override`` only marking."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # resources, source: the wrapped loader's
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            import overrides
        except ImportError:
            self._loader.exec_module(module)
            return
        checked = overrides.override
        overrides.override = _marking_override
        try:
            self._loader.exec_module(module)
        finally:
            overrides.override = checked


def lancedb_spec() -> importlib.machinery.ModuleSpec | None:
    """lancedb's spec, found by the other finders, after the REST client is skipped; on
    Python < 3.12 its loader runs with ``@override`` only marking. Called by the finder
    ``codesift.indexer`` installs, when something first imports lancedb."""
    skip_rest_client()
    spec = importlib.util.find_spec("lancedb")
    if spec is not None and spec.loader is not None and sys.version_info < (3, 12):
        spec.loader = _CheapOverrideLoader(spec.loader)
    return spec
