"""What ``import lancedb`` costs codesift, cut without changing LanceDB.

``import lancedb`` was most of a cold CLI call (~0.85 s of CPU on an idle core, 1.3–4 s
at this machine's usual load; ``python -X importtime``). Most of that served what
codesift never calls (LanceDB's REST namespace client, its embedding providers) or
checks LanceDB's own code; all are kept out of the import here:

- the REST client package ``lance_namespace_urllib3_client`` is registered without
  running its ``__init__``, which imports every generated API module;
- its ``models`` sub-package is registered without its ``__init__`` too (146 pydantic
  model modules, ~45% of the import's CPU): a model class is imported when a module
  imports it by its own module path, as ``lancedb.namespace`` does for 8 of them; a
  name taken from the package itself (``lance_namespace`` re-exports ~140 of them for
  type hints and namespace methods) is a ``DeferredModel`` that imports its class when
  it is called or read;
- ``lancedb.embeddings`` is registered without its ``__init__``, which imports all of
  LanceDB's embedding providers (~15% of the import's CPU; codesift embeds with its own
  models): a name read from the package is imported from its sub-module, and the
  registry imports every provider the first time it is asked for one it lacks;
- while lancedb's modules import, pydantic defers building each model class's
  validator to its first use (``_defer_pydantic_builds``: ~5% of the import's CPU went
  to building ~48 classes codesift never validates with);
- ``pyarrow.compute`` (imported by lancedb) parses each options class's docstring once
  instead of once per compute function (``_parse_each_docstring_once``);
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
import os
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


class _LazyProviders(types.ModuleType):
    """``lancedb.embeddings`` without its ``__init__``: a name read from it is imported
    from the sub-module that ``__init__`` takes it from."""

    where: dict[str, str]

    def __getattr__(self, name: str) -> Any:
        module = self.where.get(name) if not name.startswith("__") else None
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{self.__name__}.{module}"), name)


class _ImportedOnMiss(dict[str, Any]):
    """The embedding registry's providers: a name not registered yet imports every
    provider module (each registers itself on import), then is looked up again."""

    def __init__(self, known: dict[str, Any], modules: list[str]) -> None:
        super().__init__(known)
        self._modules = modules

    def __missing__(self, name: str) -> Any:
        modules, self._modules = self._modules, []
        for module in modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        if modules and name in self:
            return self[name]
        raise KeyError(name)


def _init_names(init: str, package: str) -> dict[str, str] | None:
    """Each name a package's ``__init__`` imports from its own sub-modules → that
    sub-module; None when the file cannot be read."""
    try:
        with open(init, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    where: dict[str, str] = {}
    start = rf"^from (?:\.|{re.escape(package)}\.)(\w+) import "
    pattern = start + r"(?:\(([^)]*)\)|([\w ,]+)$)"  # (names over lines) or names on one line
    for module, wrapped, flat in re.findall(pattern, text, re.MULTILINE):
        for name in (wrapped or flat).split(","):
            if name.strip():
                where[name.strip()] = module
    return where


def skip_embedding_providers(lancedb_dir: str) -> types.ModuleType | None:
    """Register ``lancedb.embeddings`` without its ``__init__``, which imports all 19 of
    LanceDB's embedding providers (gemini, bedrock, open_clip…: ~15% of the import's
    CPU) although codesift embeds with its own models and its tables name no LanceDB
    embedding function. The registry still finds any provider by name: a miss imports
    them all (``_ImportedOnMiss``)."""
    name = "lancedb.embeddings"
    if name in sys.modules:
        return None
    init = os.path.join(lancedb_dir, "embeddings", "__init__.py")
    where = _init_names(init, name)
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[os.path.dirname(init)]
    )
    if where is None or spec is None:
        return None
    package = _LazyProviders(name)
    package.__spec__ = spec
    package.__file__ = init
    package.__path__ = list(spec.submodule_search_locations or [])
    package.__package__ = name
    package.where = where
    sys.modules[name] = package
    return package


def _providers_on_miss(package: types.ModuleType) -> None:
    """Give the registry its providers lazily (see ``_ImportedOnMiss``)."""
    registry_module = sys.modules.get(f"{package.__name__}.registry")
    registry = getattr(getattr(registry_module, "EmbeddingFunctionRegistry", None), "get_instance", None)
    if registry is None:
        return
    instance = registry()
    functions = getattr(instance, "_functions", None)
    if type(functions) is dict:
        providers = sorted(set(getattr(package, "where", {}).values()) - {"base", "registry"})
        instance._functions = _ImportedOnMiss(functions, [f"{package.__name__}.{m}" for m in providers])


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
    where = _init_names(spec.origin, REST_MODELS)
    if where is None:
        return
    models = _LazyModels(REST_MODELS)
    models.__spec__ = spec
    models.__file__ = spec.origin
    models.__path__ = list(spec.submodule_search_locations)
    models.__package__ = REST_MODELS
    models.where = where
    sys.modules[REST_MODELS] = models


def _marking_override(method: _F | None = None, **_checks: bool) -> Any:
    """``overrides.override`` without its checks: mark the method, as 3.12's does."""
    if method is None:
        return _marking_override
    with contextlib.suppress(AttributeError, TypeError):  # a builtin or slotted object
        method.__override__ = True  # type: ignore[attr-defined]
    return method


def _defer_pydantic_builds() -> Callable[[], None]:
    """Until the returned function is called, a pydantic model class defined without a
    ``defer_build`` of its own builds its validator and serializer when first used, not
    when defined (``ConfigDict(defer_build=True)`` as pydantic's default): lancedb and the
    REST client's models define ~48 classes at import, and codesift uses a few. Pydantic
    keeps its defaults in ``pydantic._internal._config.config_defaults`` (a private dict,
    there since 2.0); when it is not there, or holds no ``defer_build``, nothing changes."""
    try:
        from pydantic._internal import _config
    except ImportError:
        return lambda: None
    defaults = getattr(_config, "config_defaults", None)
    if not isinstance(defaults, dict) or defaults.get("defer_build") is not False:
        return lambda: None
    defaults["defer_build"] = True

    def restore() -> None:
        defaults["defer_build"] = False

    return restore


def _parse_each_docstring_once() -> Callable[[], None]:
    """Until the returned function is called, ``pyarrow.vendored.docscrape.NumpyDocString``
    parses each docstring once. ``pyarrow.compute`` (which lancedb imports) writes the
    docstring of each of its ~300 function wrappers from its options class's docstring,
    parsed again for each function though there are 57 of them (~40% of that import);
    pyarrow only reads the parse, so every docstring comes out the same. Nothing changes
    when ``pyarrow.compute`` is imported already or docscrape is not where it was."""
    if "pyarrow.compute" in sys.modules:
        return lambda: None
    try:
        from pyarrow.vendored import docscrape
    except ImportError:
        return lambda: None
    real = getattr(docscrape, "NumpyDocString", None)
    if not isinstance(real, type):
        return lambda: None
    parsed: dict[str, Any] = {}

    def once(docstring: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(docstring, str):
            return real(docstring, *args, **kwargs)
        found = parsed.get(docstring)
        if found is None:
            found = parsed[docstring] = real(docstring)
        return found

    docscrape.NumpyDocString = once

    def restore() -> None:
        if docscrape.NumpyDocString is once:
            docscrape.NumpyDocString = real

    return restore


class _LanceDBLoader(importlib.abc.Loader):
    """Runs lancedb's ``__init__`` (and so the modules it imports) without its embedding
    providers and, on Python < 3.12, with ``overrides.override`` only marking."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # resources, source: the wrapped loader's
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        path = getattr(module, "__path__", None) or []
        providers = skip_embedding_providers(path[0]) if path else None
        checked: Any = None
        if sys.version_info < (3, 12):
            with contextlib.suppress(ImportError):
                import overrides

                checked = overrides.override
                overrides.override = _marking_override
        restore_builds = _defer_pydantic_builds()
        restore_docs = _parse_each_docstring_once()
        try:
            self._loader.exec_module(module)
        finally:
            if checked is not None:
                overrides.override = checked
            restore_builds()
            restore_docs()
        if providers is not None:
            module.embeddings = providers  # type: ignore[attr-defined]
            _providers_on_miss(providers)


def lancedb_spec() -> importlib.machinery.ModuleSpec | None:
    """lancedb's spec, found by the other finders, after the REST client is skipped; on
    Python < 3.12 its loader runs with ``@override`` only marking. Called by the finder
    ``codesift.indexer`` installs, when something first imports lancedb."""
    skip_rest_client()
    spec = importlib.util.find_spec("lancedb")
    if spec is not None and spec.loader is not None:
        spec.loader = _LanceDBLoader(spec.loader)
    return spec
