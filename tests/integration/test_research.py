"""code_research over a real index: implementations, caller chains, related, module map."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.indexer.embed import make_embedder
from codesift.indexer.research import (
    UNRESOLVED_CALLER,
    ResearchKind,
    code_research,
    parse_question,
    render_markdown,
)
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import write_workspace

FILES = {
    "Sources/Auth/AuthProtocol.swift": """
        protocol AuthProtocol {
            func login(user: String) -> Bool
        }

        struct PasswordAuth: AuthProtocol {
            func login(user: String) -> Bool { return true }
        }

        struct TokenAuth {}
        """,
    "Sources/Auth/TokenAuth+Login.swift": """
        extension TokenAuth: AuthProtocol {
            func login(user: String) -> Bool { return false }
        }
        """,
    "app/session.py": """
        from .auth import login


        def start(user):
            return login(user)


        def resume(user):
            return start(user)


        def ping(n):
            if n:
                return pong(n - 1)


        def pong(n):
            return ping(n)
        """,
    "app/auth.py": """
        import hashlib


        def login(user):
            return hashlib.sha256(user.encode()).hexdigest()
        """,
    "app/__init__.py": "",
    "lib/tokens.py": """
        class Token:
            def refresh(self):
                return 1


        def renew(token: Token):
            return token.refresh()


        def poke(thing):
            return thing.refresh()
        """,
    "reports/monthly.py": """
        def render_report(rows):
            \"\"\"Render the monthly sales report as text.\"\"\"
            return format_header(rows) + format_rows(rows)


        def format_header(rows):
            return "Report\\n"


        def format_rows(rows):
            return "\\n".join(str(r) for r in rows)
        """,
    "web/views.py": """
        from app.session import resume


        def view(request):
            return resume(request.user)
        """,
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_workspace(tmp_path_factory.mktemp("research") / "ws", FILES)
    index_workspace(root, load_settings(root), embedder=make_embedder(Settings().embed), embed=False)
    return root


def ask(root: Path, question: str, **kw: int):  # type: ignore[no-untyped-def]
    settings = load_settings(root)
    return code_research(open_store(root, settings), question, settings, root=root, **kw)


def test_questions_are_parsed() -> None:
    assert parse_question("implementations of AuthProtocol") == (ResearchKind.IMPLEMENTATIONS, "AuthProtocol")
    assert parse_question("what calls login()?") == (ResearchKind.CALLERS, "login")
    assert parse_question("dependencies of module app") == (ResearchKind.DEPENDENCIES, "app")
    assert parse_question("related to login") == (ResearchKind.RELATED, "login")
    assert parse_question("token refresh") == (ResearchKind.RELATED, "token refresh")


def test_implementations_include_swift_extension_conformances(ws: Path) -> None:
    result = ask(ws, "implementations of AuthProtocol")
    found = {(f.name, f.relation, f.path) for f in result.findings}
    assert found == {
        ("PasswordAuth", "subclass", "Sources/Auth/AuthProtocol.swift"),
        ("TokenAuth", "extension", "Sources/Auth/TokenAuth+Login.swift"),
    }
    md = render_markdown(result)
    assert "Sources/Auth/TokenAuth+Login.swift:1" in md


def test_what_calls_traces_the_chain_depth_limited(ws: Path) -> None:
    result = ask(ws, "what calls login()", depth=3)
    chain = [(f.name, f.depth) for f in result.findings if f.path.endswith(".py")]
    assert ("start", 1) in chain and ("resume", 2) in chain and ("view", 3) in chain
    shallow = ask(ws, "what calls login()", depth=1)
    assert [f.name for f in shallow.findings] == ["start"]
    assert shallow.notes  # says it stopped
    md = render_markdown(result)
    assert "app/session.py:4" in md and "web/views.py" in md


def test_what_calls_lists_unresolved_candidates_apart(ws: Path) -> None:
    result = ask(ws, "what calls refresh()")
    resolved = [f.name for f in result.findings if f.relation == "caller"]
    maybe = [(f.name, f.relation, f.sites) for f in result.findings if f.relation == UNRESOLVED_CALLER]
    assert resolved == ["renew"]
    assert maybe == [("poke", UNRESOLVED_CALLER, (11,))]
    md = render_markdown(result)
    assert md.index("`renew`") < md.index("## Unresolved calls") < md.index("(unresolved) `poke`")
    assert any("unresolved" in n for n in result.notes)


def test_what_calls_cuts_cycles(ws: Path) -> None:
    result = ask(ws, "what calls ping", depth=5)
    assert [(f.name, f.depth) for f in result.findings] == [("pong", 1)]


def test_dependencies_of_module(ws: Path) -> None:
    result = ask(ws, "dependencies of module app")
    deps = result.dependencies
    assert deps is not None
    assert set(deps.files) == {"app/__init__.py", "app/auth.py", "app/session.py"}
    assert [(d.name, d.external) for d in deps.imports] == [("hashlib", True)]
    assert [d.name for d in deps.imported_by] == ["web/views.py"]
    assert "## Imported by" in render_markdown(result)


def test_related_combines_graph_neighbours_and_search(ws: Path) -> None:
    result = ask(ws, "related to start")
    relations = {(f.name, f.relation) for f in result.findings}
    assert ("login", "callee") in relations and ("resume", "caller") in relations


def test_unknown_subject_says_so(ws: Path) -> None:
    result = ask(ws, "what calls no_such_function")
    assert result.findings == () and "no definition" in result.notes[0]


def test_a_worded_question_lists_search_hits_then_what_the_best_ones_call(ws: Path) -> None:
    result = ask(ws, "how is the monthly sales report rendered")
    assert result.kind is ResearchKind.RELATED and result.subjects == ()
    found = [(f.name, f.relation, f.depth, f.via) for f in result.findings]
    assert found[0] == ("render_report", "search", 1, ())
    callees_of_render = [(n, d, v) for n, r, d, v in found if r == "callee"]
    assert ("format_header", 2, ("render_report",)) in callees_of_render
    assert ("format_rows", 2, ("render_report",)) in callees_of_render
    names = [f.name for f in result.findings]
    assert len(names) == len(set(names))  # each definition once, callee or hit
    text = render_markdown(result)
    assert (
        "  - **callee** `format_rows` — reports/monthly.py:" in text and "called by `render_report`" in text
    )


def test_a_callers_chain_lists_each_caller_under_the_one_it_calls(tmp_path: Path) -> None:
    # Found level by level (a, b, then a's caller c), the chain used to be listed in that
    # order, so the markdown's indented `c` read as a caller of `b`.
    root = write_workspace(
        tmp_path / "ws",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": "def target():\n    return 1\n",
            "pkg/a.py": "from .core import target\n\n\ndef alpha():\n    return target()\n",
            "pkg/b.py": "from .core import target\n\n\ndef beta():\n    return target()\n",
            "pkg/c.py": "from .a import alpha\n\n\ndef gamma():\n    return alpha()\n",
        },
    )
    index_workspace(root, load_settings(root), embedder=make_embedder(Settings().embed), embed=False)
    result = ask(root, "what calls target", depth=2)
    order = [(f.name, f.depth, f.via[-1]) for f in result.findings]
    assert sorted(order) == [("alpha", 1, "target"), ("beta", 1, "target"), ("gamma", 2, "alpha")]
    at = [name for name, _, _ in order]
    assert at.index("gamma") == at.index("alpha") + 1
    md = render_markdown(result).splitlines()
    gamma = next(i for i, line in enumerate(md) if "`gamma`" in line)
    assert md[gamma].startswith("  - ") and "`alpha`" in md[gamma - 1]
