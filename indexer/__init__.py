"""codesift's engine: workspace walk, parsing, embedding, the LanceDB store, search and graph."""

from __future__ import annotations

import importlib.util
import sys


def _skip_lancedb_rest_client() -> None:
    """Keep ``import lancedb`` from importing the REST namespace client codesift never uses.

    ``lance_namespace`` imports model classes from ``lance_namespace_urllib3_client.models``;
    running that package's ``__init__`` first also imports every generated REST API module,
    1.0–4.5 s of a CLI call's start-up here (measured with ``python -X importtime``).
    Registering the package without running its ``__init__`` lets the ``models``
    sub-package import as before and leaves the API modules out. Does nothing when the
    package is missing or already imported.
    """
    name = "lance_namespace_urllib3_client"
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None or spec.submodule_search_locations is None:
        return
    sys.modules[name] = importlib.util.module_from_spec(spec)


_skip_lancedb_rest_client()
