"""The graph bench's Swift parse-failure count (`python -m bench.graph_accuracy --swift`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.graph_accuracy import main, parse_failures


def test_swift_parse_failures_count_files_losing_a_declaration_after_the_repairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directive line between members is repaired (no loss); an unclosed attribute
    swallows the function after it (a loss); `--swift` sums the trees and fails on any."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "A.swift").write_text('struct S {\n    func a() {}\n#warning("later")\n    func g() {}\n}\n')
    (bad / "B.swift").write_text("struct S {\n    @x(\n    func g() {}\n}\n")
    assert parse_failures(good, "swift", ".swift") == {
        "files": 1,
        "with parse errors": 0,
        "losing a declaration": 0,
    }
    assert parse_failures(bad, "swift", ".swift")["losing a declaration"] == 1
    assert main(["--swift", str(good)]) == 0
    assert main(["--swift", str(good), str(bad)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "Swift files losing a declaration: 1"
