"""Weighted RRF and the hybrid weights: the scenarios DESIGN.md fixes."""

from __future__ import annotations

import pytest

from codesift.indexer.search.fusion import rrf
from codesift.indexer.search.hybrid import _weights
from codesift.indexer.search.results import SearchRequest, Source
from codesift.indexer.settings import Settings

W = {Source.SEMANTIC: 0.7, Source.BM25: 0.3, Source.GREP: 0.3}


def test_rrf_score_is_weighted_sum_of_reciprocal_ranks_with_k_60() -> None:
    fused = rrf({Source.SEMANTIC: ["a", "b"], Source.BM25: ["b"]}, W, k=60)
    raw_b = 0.7 / 62 + 0.3 / 61
    best = (0.7 + 0.3) / 61
    assert fused[0].key == "b"
    assert fused[0].score == pytest.approx(raw_b / best)
    assert fused[1].score == pytest.approx((0.7 / 61) / best)


def test_found_by_both_outranks_found_by_one_abc_cde() -> None:
    fused = rrf({Source.SEMANTIC: ["A", "B", "C"], Source.BM25: ["C", "D", "E"]}, W, k=60)
    assert fused[0].key == "C"
    assert set(fused[0].sources) == {Source.SEMANTIC, Source.BM25}
    assert [f.key for f in fused[1:]] == ["A", "B", "D", "E"]


def test_one_empty_source_never_empties_the_result_and_the_others_order_stands() -> None:
    fused = rrf({Source.SEMANTIC: [], Source.BM25: ["x", "y", "z"]}, W, k=60)
    assert [f.key for f in fused] == ["x", "y", "z"]
    assert fused[0].score == pytest.approx(1.0)
    assert rrf({Source.SEMANTIC: [], Source.BM25: []}, W, k=60) == []


def test_scores_lie_in_zero_one() -> None:
    fused = rrf(
        {Source.SEMANTIC: list("abcdef"), Source.BM25: list("fedcba"), Source.GREP: list("ace")}, W, k=60
    )
    assert all(0.0 <= f.score <= 1.0 for f in fused)


def test_semantic_weight_0_9_makes_semantic_order_dominate() -> None:
    semantic = [f"s{i}" for i in range(10)]
    keyword = list(reversed(semantic))
    weights = _weights(SearchRequest("q", semantic_weight=0.9), Settings())
    fused = rrf({Source.SEMANTIC: semantic, Source.BM25: keyword}, weights, k=60)
    assert [f.key for f in fused] == semantic
    # at the default 0.7 / 0.3 the keyword order still pulls items around
    default = rrf(
        {Source.SEMANTIC: semantic, Source.BM25: keyword}, _weights(SearchRequest("q"), Settings()), k=60
    )
    assert [f.key for f in default][:1] == ["s0"]


def test_default_weights_are_semantic_0_7_keyword_0_3_and_grep_configurable() -> None:
    w = _weights(SearchRequest("q"), Settings())
    assert (w[Source.SEMANTIC], w[Source.BM25], w[Source.GREP]) == (0.7, 0.3, 0.3)
    assert _weights(SearchRequest("q", grep_weight=0.05), Settings())[Source.GREP] == 0.05
