"""Lance's index statistics without IVF centroids: no WARN line in an index run's output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = "import os, codesift.indexer.indices as i; print(os.environ[i.CENTROIDS_ENV])"


@pytest.mark.parametrize(("given", "seen"), [(None, "false"), ("true", "true")])
def test_index_statistics_leave_out_centroids_unless_the_user_set_it(given: str | None, seen: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LANCE_INCLUDE_VECTOR_CENTROIDS"}
    if given is not None:
        env["LANCE_INCLUDE_VECTOR_CENTROIDS"] = given
    done = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == seen
