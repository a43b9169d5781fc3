"""The reference graph: names resolved to definitions at query time; callers, callees,
implementations, references and module dependencies.

Use: ``graph = Graph(store)`` once (it loads lazily and follows the store), then
``callers(graph, symbol)``, ``callees(…)``, ``implementations(…)``,
``references(…)``, ``module_dependencies(graph, "email.mime")``.
"""

from .queries import (
    Callee,
    CallSite,
    Dependency,
    Graph,
    Implementation,
    ImplementationKind,
    Location,
    ModuleDependencies,
    Reference,
    callees,
    callers,
    implementations,
    module_dependencies,
    module_files,
    references,
)
from .resolve import Resolution

__all__ = [
    "CallSite",
    "Callee",
    "Dependency",
    "Graph",
    "Implementation",
    "ImplementationKind",
    "Location",
    "ModuleDependencies",
    "Reference",
    "Resolution",
    "callees",
    "callers",
    "implementations",
    "module_dependencies",
    "module_files",
    "references",
]
