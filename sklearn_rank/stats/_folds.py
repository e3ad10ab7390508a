"""Systems evaluated on several folds or data sets: one evaluation keyed by (fold, query)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..metrics._engine.aggregate import evaluation_aggregate, summarize, summary_weights
from ..metrics._evaluation import Evaluation, combined

__all__ = ["folded", "join_folds"]


def folded(evaluations: Mapping) -> dict:
    """``evaluations`` with every system's folds (a dict of fold -> Evaluation, or a
    list of them) joined into one :class:`Evaluation` keyed by (fold, query); an
    error when some systems have folds and others not, or other folds."""
    kinds = {name: _folds_of(name, value) for name, value in evaluations.items()}
    with_folds = [name for name, folds in kinds.items() if folds is not None]
    if not with_folds:
        return dict(evaluations)
    if len(with_folds) != len(kinds):
        alone = next(name for name, folds in kinds.items() if folds is None)
        raise ValueError(
            f"evaluations[{with_folds[0]!r}] holds folds and evaluations[{alone!r}] one "
            "Evaluation: queries keyed by (fold, query) cannot be paired with plain query "
            "ids. Pass every system's folds (a dict of fold -> Evaluation, or a list in the "
            "same fold order), or one Evaluation per system.")
    first = list(kinds[with_folds[0]])
    for name in with_folds[1:]:
        if list(kinds[name]) != first:
            raise ValueError(
                f"evaluations[{with_folds[0]!r}] has the folds {first} and "
                f"evaluations[{name!r}] {list(kinds[name])}: every system needs the same "
                "folds, so that a query is paired with itself in the same fold.")
    return {name: join_folds(folds) for name, folds in kinds.items()}


def _folds_of(name, value) -> dict | None:
    """``{fold: Evaluation}`` of a system given by folds, None for one Evaluation."""
    if isinstance(value, Evaluation):
        return None
    if isinstance(value, Mapping):
        folds = dict(value)
    elif isinstance(value, list | tuple):
        folds = dict(enumerate(value))
    else:
        raise TypeError(f"evaluations[{name!r}] must be an Evaluation, or its folds (a dict "
                        f"of fold -> Evaluation, or a list of them); got "
                        f"{type(value).__name__}.")
    if not folds:
        raise ValueError(f"evaluations[{name!r}] holds no fold; pass at least one "
                         "Evaluation.")
    for fold, ev in folds.items():
        if not isinstance(ev, Evaluation):
            raise TypeError(f"evaluations[{name!r}] must be an Evaluation, or its folds (a "
                            "dict of fold -> Evaluation, or a list of them); its fold "
                            f"{fold!r} is a {type(ev).__name__}.")
    return folds


def join_folds(folds: dict) -> Evaluation:
    """One :class:`Evaluation` of several folds' (or data sets'): its query ids
    the tuples ``(fold, query id)``, its metrics those every fold holds, its
    per-query values and weights the folds' in order, its means recomputed over
    all the queries (by each metric's summary: mean, geometric mean or sum).

    Examples
    --------
    >>> from sklearn_rank.metrics import evaluate
    >>> one = evaluate([1, 0, 0, 1], [1, 0, 1, 0], qid=[1, 1, 2, 2], metrics=["mrr"])
    >>> two = evaluate([1, 0], [0, 1], qid=[1, 1], metrics=["mrr"])
    >>> joined = join_folds({"a": one, "b": two})
    >>> joined.qids.tolist(), joined.per_query["mrr"].tolist()
    ([('a', 1), ('a', 2), ('b', 1)], [1.0, 0.5, 0.5])
    """
    evs = list(folds.values())
    qids = np.empty(sum(ev.n_queries for ev in evs), dtype=object)
    qids[:] = [(fold, q) for fold, ev in folds.items() for q in np.asarray(ev.qids).tolist()]
    weights = _joined(folds, "weights", "sample_weight")
    lengths = _joined(folds, "lengths", None)

    def entries():
        for spec in evs[0].metrics:
            key = str(spec)
            if not all(key in ev.per_query for ev in evs):
                continue
            values = np.concatenate([np.asarray(ev.per_query[key], dtype=np.float64)
                                     for ev in evs])
            aggregate = evaluation_aggregate(evs[0], key)
            summary = summarize(values, aggregate,
                                summary_weights(aggregate, weights, lengths))
            yield key, spec, values, summary, sum(int(ev.n_empty[key]) for ev in evs)

    return combined(qids, weights, entries(), lengths=lengths)


def _joined(folds: dict, attribute: str, what: str | None):
    """The folds' ``attribute`` (weights, lengths) concatenated; None when no fold
    has it (an error for weights some folds have and others not)."""
    parts = [getattr(ev, attribute) for ev in folds.values()]
    if all(p is not None for p in parts):
        return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts])
    if what is not None and any(p is not None for p in parts):
        fold = next(f for f, ev in folds.items() if getattr(ev, attribute) is None)
        raise ValueError(f"fold {fold!r} was evaluated without {what} and other folds "
                         f"with it; evaluate every fold the same way.")
    return None
