"""The kernel of a metric a user registers (:func:`~sklearn_rank.metrics.register_metric`):
a user's function of one query's labels in ranked order, run on ranked blocks.

The interface is :class:`UserFunction` (a registered function and how to call
it: one query at a time or a padded block at once, its values checked to be one
finite number per query), :func:`kernel_of` (the registry kernel that reads the
ranked labels of a block, the same
:class:`~sklearn_rank.metrics._engine.blocks.Ranking` as the built-in metrics,
and calls the function), :data:`MAX_ORDERS` and :func:`short_repr` (the way
values are shown in its messages). The plan, the spec grammar, the tie policies,
the empty-query policies, the weights and every entry point are the built-ins'.

Under ``ties="average"`` a query with tied scores is the exact expectation
over the orders of its tied documents (:func:`_expansions`): by enumeration of
the distinct label orders of each tie group, or, for a metric declared
``additive`` (a sum over ranks of a term of the rank and its label), by the
rotations of each tie group, whose every position sees each of the group's
labels once.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ._engine.columns import LABELS, Relevant
from ._engine.data import scalar

__all__ = ["MAX_ORDERS", "UserFunction", "kernel_of", "short_repr"]

#: Most label orders that ``ties="average"`` enumerates for one query of a
#: metric that is not declared ``additive`` (and at most ``_MAX_LABELS``
#: labels in all); beyond, a ValueError names ``ties="stable"``.
MAX_ORDERS = 100_000
_MAX_LABELS = 1 << 24
#: Most cells (sequences x ranks) handed to a vectorised function at once.
_CELLS = 1 << 20


class UserFunction(NamedTuple):
    """A registered function and how to call it: :func:`kernel_of`'s argument."""

    name: str
    func: Callable
    vectorized: bool
    additive: bool
    takes: tuple  # the options the function takes: "k", "threshold"

    def __call__(self, labels: np.ndarray, lengths: np.ndarray, options: dict,
                 qids) -> np.ndarray:
        """Values of the rows of ``labels`` (a fresh (n, w) array, zero beyond
        ``lengths``) under ``options`` (``k`` and ``threshold``); ``qids(i)``
        is the query id of row i, for messages."""
        extra = {name: options[name] for name in self.takes}
        if not self.vectorized:
            values = np.empty(labels.shape[0])
            for i in range(labels.shape[0]):
                values[i] = self._scalar(self.func(labels[i, :lengths[i]], **extra), qids, i)
            return values
        values = np.zeros(labels.shape[0])
        step = max(1, _CELLS // max(labels.shape[1], 1))
        for lo in range(0, labels.shape[0], step):
            hi = min(lo + step, labels.shape[0])
            values[lo:hi] = self._block(
                self.func(labels[lo:hi], lengths[lo:hi].copy(), **extra), hi - lo, qids, lo)
        return values

    def _scalar(self, value, qids, i: int) -> float:
        try:
            out = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            out = None
        if out is None or out.ndim != 0:
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {short_repr(value)} for query "
                f"{qids(i)!r}; its function must return one number per query.")
        if not np.isfinite(out):
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {float(out)!r} for query "
                f"{qids(i)!r}; values must be finite (a query without relevant documents is "
                "never passed to it: the 'empty' option scores it).")
        return float(out)

    def _block(self, value, n: int, qids, lo: int) -> np.ndarray:
        try:
            out = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            out = None
        if out is None or out.shape != (n,):
            shape = "no array" if out is None else f"shape {out.shape}"
            raise ValueError(
                f"Metric {self.name!r} (register_metric, vectorized=True) returned {shape} for "
                f"a block of {n} queries (the first: query {qids(lo)!r}); its function must "
                f"return one number per row, shape ({n},).")
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {float(out[i])!r} for query "
                f"{qids(lo + i)!r}; values must be finite (a query without relevant documents "
                "is never passed to it: the 'empty' option scores it).")
        return out


def short_repr(value) -> str:
    """``repr(value)``, cut to 60 characters: a value in a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the kernel -----------------------------------------------------------------------


def kernel_of(user: UserFunction) -> Callable:
    """The registry kernel of a user's function: ``kernel(rank, options, k)``."""

    def kernel(rank, p, k):
        options = {"k": k, "threshold": p["threshold"]}
        cut = rank.cut(k)
        empty = rank.count(Relevant(p["threshold"])) == 0
        n = rank.lengths if rank.retrieved is None else rank.retrieved
        lengths = np.minimum(n, cut)
        ranked = rank.ranked(LABELS, cut)  # zero beyond each query's ranked documents
        data = rank.data

        def qids(rows):
            def qid(i):
                return scalar(data.qids[data.query_position(rank.segments[rows[i]])])
            return qid

        values = np.zeros(ranked.shape[0])
        plain = ~empty
        if rank.tied:
            plain[rank.tie_rows] = False
        rows = np.flatnonzero(plain)
        if rows.shape[0]:
            values[rows] = user(ranked[rows], lengths[rows], options, qids(rows))
        if rank.tied:
            tied = rank.tie_rows[~empty[rank.tie_rows]]
            if tied.shape[0]:
                values[tied] = _averaged(user, rank, tied, options, lengths, qids)
        return values, empty

    return kernel


def _averaged(user: UserFunction, rank, tied: np.ndarray, options: dict,
              lengths: np.ndarray, qids) -> np.ndarray:
    """The expected values of the block rows ``tied`` over their tie orders,
    their label sequences handed to the function in batches of about
    ``_CELLS`` labels."""
    cut = rank.cut(options["k"])
    full = rank.ranked(LABELS)
    gstart, gend = rank.tie_groups(rank.width)
    where = np.searchsorted(rank.tie_rows, tied)  # their rows among the tie rows
    qid = qids(tied)
    out = np.zeros(tied.shape[0])
    pending: list = []

    def flush():
        owners = np.concatenate([np.full(w.shape[0], j) for j, _, w in pending])
        values = user(np.concatenate([s for _, s, _ in pending]), lengths[tied][owners],
                      options, lambda i: qid(int(owners[i])))
        weights = np.concatenate([w for _, _, w in pending])
        out[:] += np.bincount(owners, weights=weights * values, minlength=out.shape[0])
        pending.clear()

    for j, (row, at) in enumerate(zip(tied, where, strict=True)):
        starts = np.flatnonzero(gstart[at, :cut] == np.arange(cut))
        groups = [(int(a), int(gend[at, a]) + 1) for a in starts if gend[at, a] > a]
        sequences, weights = _expansions(user, full[row], groups, cut,
                                         functools.partial(qid, j))
        pending.append((j, sequences, weights))
        if sum(s.size for _, s, _ in pending) >= _CELLS:
            flush()
    if pending:
        flush()
    return out


def _expansions(user: UserFunction, labels: np.ndarray, groups: list, cut: int, qid):
    """``(sequences, weights)``, (n, cut) and (n,), whose weighted sum of
    values is the expected value of the ranking ``labels`` (its ranks up to
    ``cut``) over the orders of the tie groups ``groups`` (``(start, end)``
    columns)."""
    groups = [(a, b) for a, b in groups if (labels[a:b] != labels[a]).any()]
    if not groups:
        return labels[None, :cut].copy(), np.ones(1)
    if user.additive:
        # value = f(labels) + sum over groups of (mean over rotations - f(labels))
        parts = [labels[None, :cut]]
        weights = [np.array([1.0 - len(groups) + sum(1.0 / (b - a) for a, b in groups)])]
        for a, b in groups:
            size = b - a
            shift = np.arange(1, size)[:, None]
            rotated = np.repeat(labels[None, :], size - 1, axis=0)
            rotated[:, a:b] = labels[a:b][(np.arange(size) - shift) % size]  # np.roll's
            parts.append(rotated[:, :cut])
            weights.append(np.full(size - 1, 1.0 / size))
        return np.concatenate(parts), np.concatenate(weights)
    limit = min(MAX_ORDERS, max(1, _MAX_LABELS // cut))
    choices, total = [], 1
    for a, b in groups:
        drawn = list(itertools.islice(_prefixes(Counter(labels[a:b].tolist()), b - a,
                                                min(b, cut) - a), limit + 1))
        total *= len(drawn)
        if total > limit:
            raise ValueError(
                f"Metric {user.name!r} (register_metric) under ties='average' would enumerate "
                f"more than {limit} orders of the tied documents of query {qid()!r}. "
                "Pass ties='stable' (input order), 'pessimistic' or 'optimistic', or register "
                "the metric with additive=True if its value is a sum over ranks of a term of "
                "the rank and its label (then ties are averaged per position).")
        choices.append((a, np.array([p for p, _ in drawn]), np.array([w for _, w in drawn])))
    picks = np.indices([len(w) for _, _, w in choices]).reshape(len(choices), -1)
    sequences = np.repeat(labels[None, :cut], picks.shape[1], axis=0)
    weights = np.ones(picks.shape[1])
    for (a, prefixes, w), pick in zip(choices, picks, strict=True):
        sequences[:, a:a + prefixes.shape[1]] = prefixes[pick]
        weights *= w[pick]
    return sequences, weights


def _prefixes(counts: Counter, size: int, length: int):
    """The distinct sequences of ``length`` labels drawn without replacement
    from the multiset ``counts`` (of ``size`` labels) in a uniformly random
    order, with their probabilities."""
    if length == 0:
        yield (), 1.0
        return
    for label in sorted(counts):
        share = counts[label] / size
        counts[label] -= 1
        rest = +counts  # (drops the labels used up)
        for tail, weight in _prefixes(rest, size - 1, length - 1):
            yield (label, *tail), share * weight
        counts[label] += 1
