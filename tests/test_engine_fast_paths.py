"""Fast paths of the engine against the general code they shortcut (issue 16).

Each shortcut claims to give the general path's numbers bit for bit; these
tests run both on random data with many ties and compare with ``==``.
"""

from __future__ import annotations

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate
from sklearn_rank.metrics._engine import grouping as _grouping
from sklearn_rank.metrics._engine import ties as _ties
from sklearn_rank.metrics._engine.grouping import group
from sklearn_rank.metrics._families import cascade as _cascade_metrics

BINARY_CASCADES = ["mrr", "mrr@3", "mrr@50", "hit_rate", "hit_rate@1", "hit_rate@10"]


def _tied(seed: int):
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(1, 60))
    lengths = rng.integers(1, int(rng.choice([5, 30, 300])), n_q)
    qid = np.repeat(np.arange(n_q), lengths)
    n = qid.shape[0]
    y = rng.choice(5, size=n, p=rng.dirichlet(np.ones(5))).astype(float)
    y[0] = 4  # some document is relevant at every threshold used
    s = rng.integers(0, int(rng.choice([1, 2, 5, 20])), n).astype(float)
    return y, s, qid, int(rng.integers(1, 4))


def test_binary_cascades_equal_the_general_cascade(monkeypatch):
    """MRR and hit rate under ties="average" take the first positive group
    only (``_ties._first_groups``); the general cascade gives the same bits."""
    def general(rank, col, weights, binary=False):
        return _ties.cascade_ties(rank, col, weights)

    for seed in range(120):
        y, s, qid, threshold = _tied(seed)
        fast = evaluate(y, s, qid=qid, metrics=BINARY_CASCADES, ties="average",
                        threshold=threshold, empty="zero")
        with monkeypatch.context() as m:
            m.setattr(_cascade_metrics, "cascade_ties", general)
            slow = evaluate(y, s, qid=qid, metrics=BINARY_CASCADES, ties="average",
                            threshold=threshold, empty="zero")
        for key in BINARY_CASCADES:
            np.testing.assert_array_equal(fast.per_query[key], slow.per_query[key])


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("width", [3, 7, 12])
def test_string_ids_grouped_as_their_values(width, collide, monkeypatch):
    """Shuffled string ids (grouped through their codes' runs, verified) give
    the grouping of the ids themselves, in id order or in any order; also
    when distinct ids share codes (a hash reduced to one bit)."""
    if collide:
        real = _grouping._string_codes
        monkeypatch.setattr(_grouping, "_string_codes", lambda v: real(v) & np.uint64(1))
    rng = np.random.default_rng(width)
    for n_ids, n in ((3, 10), (50, 2000), (400, 30_000)):
        names = np.array(["".join(rng.choice(list("ab\u00e9\u4e2d"), size=width))
                          for _ in range(n_ids)])
        q = names[rng.integers(0, n_ids, n)]
        uniques, codes = np.unique(q, return_inverse=True)
        expect = np.argsort(codes, kind="stable")
        g = group(q)
        np.testing.assert_array_equal(g.qids, uniques)
        np.testing.assert_array_equal(g.rows(), expect)
        assert g.seg_pos is None
        g = group(q, any_order=True)
        got, starts, qids = g.rows(), g.starts, g.qids
        pos = np.arange(qids.shape[0]) if g.seg_pos is None else g.seg_pos
        lengths = g.lengths
        # a permutation; each segment holds all of one id's rows, in input order
        np.testing.assert_array_equal(np.sort(got), np.arange(n))
        segment = np.repeat(np.arange(starts.shape[0]), lengths)
        np.testing.assert_array_equal(q[got], qids[pos][segment])
        assert (np.diff(got)[np.diff(segment) == 0] > 0).all()
        np.testing.assert_array_equal(np.sort(pos), np.arange(qids.shape[0]))


@pytest.mark.parametrize("collide", [False, True])
def test_tiny_contiguous_string_queries_move_no_row(collide, monkeypatch):
    """Queries of 1-2 rows look shuffled (most rows change id) but are
    contiguous: no row moves, and each run is its own query."""
    if collide:
        real = _grouping._string_codes
        monkeypatch.setattr(_grouping, "_string_codes", lambda v: real(v) & np.uint64(1))
    rng = np.random.default_rng(5)
    names = np.array([f"query-{i:04d}" for i in rng.permutation(3000)])
    lengths = rng.integers(1, 3, names.shape[0])
    q = np.repeat(names, lengths)
    g = group(q, any_order=True)
    assert g.order is None
    np.testing.assert_array_equal(g.starts, np.cumsum(lengths) - lengths)
    np.testing.assert_array_equal(g.qids[g.seg_pos], names)
    q[1], q[-1] = q[-1], q[1]  # two rows swapped: not contiguous any more
    g = group(q)
    uniques, codes = np.unique(q, return_inverse=True)
    np.testing.assert_array_equal(g.order, np.argsort(codes, kind="stable"))
