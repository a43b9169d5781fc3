"""The CLI starts fast: --version / --help load neither the engine nor rich; lancedb skips its REST client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def test_loading_the_cli_imports_neither_lancedb_nor_rich_nor_the_engine() -> None:
    loaded = _modules_after("import codesift.server.cli")
    assert not {"lancedb", "rich", "pyarrow", "numpy", "codesift.indexer.store"} & loaded


def test_codesift_version_and_help_answer_without_the_engine() -> None:
    for flag in ("--version", "--help"):
        code = (
            "import sys\nfrom codesift.server.cli import main\n"
            f"sys.argv = ['codesift', '{flag}']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass"
        )
        loaded = _modules_after(code)
        assert "lancedb" not in loaded and "rich" not in loaded, flag


def test_the_store_imports_lancedb_without_its_rest_namespace_client() -> None:
    loaded = _modules_after("import codesift.indexer.store")
    assert "lancedb" in loaded and "lance_namespace_urllib3_client.models" in loaded
    assert not [m for m in loaded if m.startswith("lance_namespace_urllib3_client.api")]
    models = [m for m in loaded if m.startswith("lance_namespace_urllib3_client.models.")]
    assert 0 < len(models) < 30  # lancedb.namespace's own 8 and theirs, not all 146
    assert "lancedb.embeddings.registry" in loaded and "lancedb.embeddings.openai" not in loaded


def test_lancedb_imported_this_way_answers_with_real_classes_providers_and_overrides(
    tmp_path: Path,
) -> None:
    """A name lancedb took from the skipped package is its real class once called,
    ``overrides.override`` is the checking one again after lancedb's import, and
    LanceDB's embedding registry finds its providers by name."""
    code = f"""
import codesift.indexer, overrides
before = overrides.override
import lancedb, lance_namespace
import pyarrow as pa
from lance_namespace_urllib3_client.models.list_namespaces_response import ListNamespacesResponse
db = lancedb.connect({str(tmp_path)!r})
table = db.create_table("t", pa.table({{"a": [1, 2, 3]}}))
assert db.open_table("t").count_rows() == 3
assert db.open_table("t").search().where("a > 1").limit(5).to_arrow().column("a").to_pylist() == [2, 3]
assert type(db.list_namespaces()) is ListNamespacesResponse
assert lance_namespace.ListNamespacesResponse.model_fields == ListNamespacesResponse.model_fields
assert lancedb.db.LanceDBConnection.open_table.__override__
assert overrides.override is before
from lancedb.embeddings import EmbeddingFunctionConfig, get_registry
from lancedb.embeddings.base import EmbeddingFunctionConfig as Config
assert EmbeddingFunctionConfig is Config and lancedb.embeddings.get_registry is get_registry
from lancedb.embeddings.openai import OpenAIEmbeddings
assert get_registry().get("sentence-transformers").__name__ == "SentenceTransformerEmbeddings"
assert get_registry().get("openai") is OpenAIEmbeddings
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.stdout.strip() == "ok", run.stderr[-2000:]


def test_the_thin_path_imports_only_the_standard_library_and_its_printer() -> None:
    """What ``codesift search / grep / symbols`` import when a server answers (server/thin.py):
    the entry point, the socket's client half, the printer and the index locator."""
    loaded = _modules_after(
        "import codesift.server.thin, codesift.server.endpoint, codesift.server.cli_print, "
        "codesift.indexer.locate"
    )
    heavy = {"click", "rich", "logging", "threading", "typing", "pydantic", "numpy", "codesift.indexer.model"}
    assert not heavy & loaded
    assert not [m for m in loaded if m.startswith("codesift.") and m not in _THIN]


_THIN = {
    "codesift.server",
    "codesift.server.thin",
    "codesift.server.endpoint",
    "codesift.server.cli_print",
    "codesift.server.cli_text",
    "codesift.indexer",
    "codesift.indexer.locate",
}


def test_a_vector_query_runs_without_importing_numpy_ma_and_finds_what_a_numpy_query_finds(
    tmp_path: Path,
) -> None:
    """``pa.array`` on a numpy query vector imports ``numpy.ma`` (20-35 ms of a cold CLI
    search) to look for a mask; ``semantic.query_array`` hands LanceDB an Arrow array."""
    code = f"""
import sys
import numpy as np, pyarrow as pa, lancedb
from lancedb.background_loop import LOOP
from codesift.indexer.search.semantic import query_array
rng = np.random.default_rng(3)
vectors = rng.standard_normal((50, 8)).astype(np.float32)
db = lancedb.connect({str(tmp_path)!r})
flat = pa.array(vectors.ravel().tolist(), pa.float32())  # not from numpy: that imports numpy.ma
db.create_table("t", pa.table({{"i": range(50), "v": pa.FixedSizeListArray.from_arrays(flat, 8)}}))
query = rng.standard_normal(8)
search = db.open_table("t")._table.query().nearest_to(query_array(query))
got = LOOP.run(search.distance_type("cosine").limit(5).to_arrow())
assert "numpy.ma" not in sys.modules
assert query_array(query).equals(pa.array(query.astype(np.float32)))
want = db.open_table("t").search(query.astype(np.float32)).distance_type("cosine").limit(5).to_arrow()
assert got.column("i").to_pylist() == want.column("i").to_pylist()
assert got.column("_distance").to_pylist() == want.column("_distance").to_pylist()
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.stdout.strip() == "ok", run.stderr[-2000:]


def test_lancedb_s_pydantic_models_build_when_first_used_and_pydantic_s_default_is_restored() -> None:
    """While lancedb imports, its pydantic models defer building their validators
    (``lancedb_startup._defer_pydantic_builds``); afterwards pydantic's default is its
    own again, and a deferred model validates as a built one when used."""
    code = """
import codesift.indexer, lancedb, lancedb.query, pydantic
from pydantic._internal._config import config_defaults
assert config_defaults["defer_build"] is False
assert not lancedb.query.Query.__pydantic_complete__
class Later(pydantic.BaseModel):
    n: int
assert Later.__pydantic_complete__
query = lancedb.query.Query(columns=["a"], limit=3)
assert lancedb.query.Query.__pydantic_complete__ and query.limit == 3
try:
    lancedb.query.Query(limit="many")
except pydantic.ValidationError:
    print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.stdout.strip() == "ok", run.stderr[-2000:]


def _entry(root: Path, *args: str, fast_exit: bool) -> subprocess.CompletedProcess[str]:
    """``codesift ARGS`` through the entry point, no server; an ``atexit`` hook says
    whether the interpreter's own exit ran."""
    from codesift.server.endpoint import NO_SERVER_ENV
    from codesift.server.thin import FAST_EXIT_ENV

    code = (
        "import atexit, sys\natexit.register(lambda: sys.stderr.write('\\nATEXIT'))\n"
        f"from codesift.server.thin import main\nsys.argv = ['codesift', *{list(args)!r}]\nmain()"
    )
    env = {**os.environ, NO_SERVER_ENV: "1", FAST_EXIT_ENV: "1" if fast_exit else "0"}
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)


def test_a_read_command_answered_in_process_exits_at_once_with_all_its_output_and_its_code(
    tmp_path: Path,
) -> None:
    """A one-shot ``grep`` (no server) ends with ``os._exit`` once its output is flushed:
    the same bytes through a pipe (~200 kB, more than any buffer) and the same exit code
    as the interpreter's own exit, for a match, no match and a usage error."""
    for i in range(3000):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return 'needle {i}' * 2\n")
    for args, code in [
        (("grep", "needle", "--json"), 0),
        (("grep", "needle"), 0),
        (("grep", "no-such-text"), 1),
        (("grep", "(", "--regex"), 2),
    ]:
        fast = _entry(tmp_path, *args, fast_exit=True)
        usual = _entry(tmp_path, *args, fast_exit=False)
        assert (fast.returncode, usual.returncode) == (code, code), (args, fast.stderr[-500:])
        assert "ATEXIT" not in fast.stderr and usual.stderr.endswith("\nATEXIT"), args
        millis = re.compile(r'; \d+ ms$|"millis": [\d.]+', re.MULTILINE)  # differ between runs
        assert millis.sub("", fast.stdout) == millis.sub("", usual.stdout), args
        assert millis.sub("", fast.stderr) == millis.sub("", usual.stderr.removesuffix("\nATEXIT")), args
        assert code or len(fast.stdout) > 200_000, args


def test_pyarrow_compute_imported_with_lancedb_has_every_docstring_and_signature_it_has_alone() -> None:
    """lancedb's import parses each of pyarrow.compute's options docstrings once
    (``lancedb_startup._parse_each_docstring_once``): the functions' docstrings and
    signatures are those of a plain ``import pyarrow.compute``, and docscrape is restored."""
    code = """
import sys
from pyarrow.vendored import docscrape
parses = []
class Counted(docscrape.NumpyDocString):
    def __init__(self, *args, **kwargs):
        parses.append(1)
        super().__init__(*args, **kwargs)
docscrape.NumpyDocString = Counted
if sys.argv[1] == "hook":
    import codesift.indexer, lancedb
import pyarrow.compute as pc
assert docscrape.NumpyDocString is Counted
names = sorted(n for n in dir(pc) if callable(getattr(pc, n)))
print(len(parses))
print(repr([(n, getattr(pc, n).__doc__, str(getattr(getattr(pc, n), "__signature__", ""))) for n in names]))
"""
    runs = [
        subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True).stdout
        for how in ("plain", "hook")
    ]
    (plain_parses, plain), (hook_parses, hooked) = (run.split("\n", 1) for run in runs)
    assert hooked == plain and len(plain) > 100_000
    assert int(hook_parses) < int(plain_parses)
