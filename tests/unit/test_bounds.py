"""Every number and glob a query takes is bounded before any work starts."""

from __future__ import annotations

import math

import pytest

from codesift.indexer.errors import QueryError
from codesift.indexer.search.bounds import MAX_GLOB_CHARS, check_float, check_globs, check_int, check_query
from codesift.indexer.search.filters import filters_sql
from codesift.indexer.search.results import Filters


@pytest.mark.parametrize("value", [10**9, -1, 2**63, True])
def test_a_number_outside_its_range_is_a_query_error_naming_the_option(value: int) -> None:
    with pytest.raises(QueryError, match="limit must be a whole number from 0 to 10,000"):
        check_int("limit", value, 0, 10_000)


def test_a_number_inside_its_range_passes() -> None:
    assert check_int("limit", 10_000, 0, 10_000) == 10_000


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.5, 1e300])
def test_a_weight_that_is_not_finite_or_out_of_range_is_refused(value: float) -> None:
    with pytest.raises(QueryError, match="semantic_weight"):
        check_float("semantic_weight", value, 0.0, 1000.0)


def test_a_100_kb_include_glob_is_refused_before_it_reaches_the_query_engine() -> None:
    with pytest.raises(QueryError, match="at most 1,024 characters"):
        filters_sql(Filters(include=("a" * 100_000,)))
    with pytest.raises(QueryError, match="at most 256 globs"):
        check_globs("exclude", ["*.py"] * 257)
    check_globs("include", ["x" * MAX_GLOB_CHARS, "src/**"])


def test_a_query_longer_than_10000_characters_is_refused() -> None:
    with pytest.raises(QueryError, match="query may be at most"):
        check_query("query", "x" * 10_001)
