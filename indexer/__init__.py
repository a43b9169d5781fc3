"""codesift's engine: workspace walk, parsing, embedding, the LanceDB store, search and graph."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: the CLI's thin path never imports typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType


class _BeforeLanceDB:
    """Finds ``lancedb`` the first time something imports it, through
    ``lancedb_startup.lancedb_spec``: that module says what it leaves out of the import
    and why. Kept to ``sys`` alone: the CLI's thin path imports this package."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "lancedb":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        from .lancedb_startup import lancedb_spec

        return lancedb_spec()


if "lancedb" not in sys.modules and not any(isinstance(f, _BeforeLanceDB) for f in sys.meta_path):
    sys.meta_path.insert(0, _BeforeLanceDB())
