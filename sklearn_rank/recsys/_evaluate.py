"""evaluate_recommendations: top-k lists from user–item frames, evaluated as TREC runs.

The test interactions are the qrels (a user is a query, an item a document,
the rating its relevance level, 1 without ratings) and each user's top k,
after the items the user saw in training are removed, is the run. The
ranking metrics are the registry's, computed by the engine of
:func:`~sklearn_rank.trec.evaluate_run` on the lists laid out as it lays out
a run (each list in rank order, then the test items it missed: they count
for recall and for the ideal ranking); the metrics of the lists themselves
come from :mod:`~sklearn_rank.recsys._beyond`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._utils.validation import Interval, validate_params
from ..metrics import MetricSpec
from ..metrics._engine.data import ranked_data
from ..metrics._evaluation import Evaluation, combined
from ..metrics._plan import Plan
from ._frames import Frame, Items, codes_in, frame_kind, sorted_unique, unique_ids
from ._list_values import Inputs, list_values
from ._lists import pair_keys, rank_lists, test_layout
from ._metrics import ListMetric, split_metrics
from ._read import Interactions, catalog_ids, check_kinds, read_interactions

__all__ = ["DEFAULT_METRICS", "RecommenderEvaluation", "evaluate_recommendations"]

DEFAULT_METRICS = ("ndcg", "precision", "recall", "map", "mrr", "hit_rate")


class RecommenderEvaluation(Evaluation):
    """An :class:`~sklearn_rank.metrics.Evaluation` of recommendations: the
    per-user values (users as queries, so :func:`~sklearn_rank.stats.compare`
    and the tests of :mod:`sklearn_rank.stats` work unchanged), plus the
    system-level values and the users left out.

    Attributes
    ----------
    qids : ndarray of shape (n_users,)
        The evaluated users (those with a test item), sorted.
    per_query, mean, n_empty, metrics
        As in :class:`~sklearn_rank.metrics.Evaluation`: per-user values of
        the ranking metrics and of the per-user list metrics (``novelty@10``,
        ...; NaN for a user whose list is empty, counted in ``n_empty`` and
        left out of the mean).
    system : dict of str -> float
        The system-level metrics (``catalog_coverage@10``, ``gini@10``,
        ``entropy@10``, ``user_coverage@10``), one value each, computed on
        the evaluated users' lists.
    k : int
        The length the lists were cut at.
    n_users_without_recs : int
        Evaluated users with no row in the recommendations: they score 0 on
        the ranking metrics and are counted in every mean.
    n_users_without_test : int
        Users with recommendations but no test item: left out.
    """

    def __init__(self, base: Evaluation, system: dict, k: int, n_users_without_recs: int,
                 n_users_without_test: int):
        super().__init__(base.qids, dict(base.per_query), dict(base.mean),
                         dict(base.n_empty), base.weights, base.metrics)
        self.system = dict(system)
        self.k = k
        self.n_users_without_recs = n_users_without_recs
        self.n_users_without_test = n_users_without_test

    def to_dict(self, names: str = "spec") -> dict[str, float]:
        """The means and the system-level values, as a plain dict (see
        :meth:`Evaluation.to_dict <sklearn_rank.metrics.Evaluation.to_dict>`)."""
        out = super().to_dict(names)
        if names == "safe":
            from ..metrics._vocab.names import safe_name

            return {**out, **{safe_name(key): float(v) for key, v in self.system.items()}}
        return {**out, **{key: float(v) for key, v in self.system.items()}}

    def __repr__(self) -> str:
        head, _, rest = super().__repr__().partition("\n")
        head = (f"RecommenderEvaluation(n_users={self.n_queries}, k={self.k}, "
                f"n_users_without_recs={self.n_users_without_recs}, "
                f"n_users_without_test={self.n_users_without_test})")
        lines = [head] + ([rest] if self.mean else [])
        if self.system:
            width = max(len(key) for key in self.system)
            lines.append("  system-level:")
            lines += [f"  {key:<{width}}  {value:.6f}" for key, value in self.system.items()]
        return "\n".join(lines)

    def __eq__(self, other) -> bool:
        same = super().__eq__(other)
        if same is NotImplemented or not same:
            return same
        if not isinstance(other, RecommenderEvaluation):
            return False
        return (self.k == other.k and self.n_users_without_recs == other.n_users_without_recs
                and self.n_users_without_test == other.n_users_without_test
                and self.system.keys() == other.system.keys()
                and all(np.array_equal(self.system[key], other.system[key], equal_nan=True)
                        for key in self.system))

    __hash__ = None


@dataclass(frozen=True)
class Part:
    """The lists of some users and their ranking metrics' raw values.

    Attributes
    ----------
    users : ndarray of shape (n_evaluated,)
        The evaluated users' ids, sorted.
    top : ndarray of shape (n_evaluated, k)
    top_labels : ndarray of shape (n_evaluated, k)
    values : PerQuery or None
    n_without_recs, n_without_test : int
    history : (user rows, item codes) of the training interactions of these users
    """

    users: np.ndarray
    top: np.ndarray
    top_labels: np.ndarray
    values: object
    n_without_recs: int
    n_without_test: int
    history: tuple


def evaluate_part(recs: Interactions, test: Interactions, train: Interactions | None,
                  items: Items, k: int, exclude_seen: bool, plan: Plan | None) -> Part:
    """The lists and ranking metrics of the users of ``recs`` and ``test``
    (whole users: each user's rows all here), items coded by ``items``."""
    users = unique_ids(np.concatenate([unique_ids(recs.user), unique_ids(test.user)]))
    n_users = users.shape[0]
    rec_user, test_user = codes_in(recs.user, users), codes_in(test.user, users)
    key = items.order
    history = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    seen = None
    if train is not None:
        train_user = codes_in(train.user, users)
        known = train_user >= 0
        train_user, train_item = train_user[known], items.codes(train.item[known])
        history = (train_user, train_item)
        if exclude_seen:
            seen = sorted_unique(pair_keys(train_user, train_item, key))
    rec_item = items.codes(recs.item)
    lists = rank_lists(rec_user, rec_item, recs.score, key, n_users, k, seen,
                       recs.duplicate_error)
    del rec_item, seen
    has_test = np.zeros(n_users, dtype=bool)
    has_test[test_user] = True
    evaluated = np.flatnonzero(has_test)
    layout = test_layout(lists.top, evaluated, test_user, items.codes(test.item), test.label,
                         key, test.duplicate_error)
    values = None
    if plan is not None and plan.entries and evaluated.shape[0]:
        data = ranked_data(layout.labels, layout.lengths, users[evaluated],
                           n_retrieved=layout.n_retrieved)
        values = plan.per_query(data)
    position = np.full(n_users, -1, dtype=np.int64)
    position[evaluated] = np.arange(evaluated.shape[0])
    rows = position[history[0]]
    kept = rows >= 0
    return Part(users[evaluated], lists.top[evaluated], layout.top_labels, values,
                int((lists.n_recommended[evaluated] == 0).sum()),
                int((~has_test & (lists.n_recommended > 0)).sum()),
                (rows[kept], history[1][kept]))


@validate_params({
    "recs": [Frame],
    "test": [Frame],
    "train": [Frame, None],
    "k": [Interval(Integral, 1, None, closed="left")],
    "metrics": [str, MetricSpec, Iterable],
    "exclude_seen": ["boolean"],
    "catalog": ["array-like", None],
    "item_features": [Frame, tuple, None],
    "user_col": [str],
    "item_col": [str],
    "score_col": [str, None],
    "rating_col": [str, None],
    "metric_options": [Mapping, None],
})
def evaluate_recommendations(recs, test, *, train=None, k=10, metrics=DEFAULT_METRICS,
                             exclude_seen=True, catalog=None, item_features=None,
                             user_col="user", item_col="item", score_col="score",
                             rating_col="rating", metric_options=None,
                             **options) -> RecommenderEvaluation:
    """Evaluate top-k recommendations against held-out interactions.

    Each user's recommended items are ranked by decreasing score (equal
    scores by increasing item id), the items the user interacted with in
    ``train`` are removed (``exclude_seen``), and the list is cut at ``k``.
    The users of ``test`` are then evaluated as the queries of a TREC run:
    the test interactions are the relevance judgments, every test item
    counts for recall and for the ideal ranking of NDCG, listed or not.

    Parameters
    ----------
    recs : pandas or polars DataFrame, pyarrow Table or Dask DataFrame
        Recommendations: one row per (user, item) with its score; every
        candidate of each user or already a top list. A pair listed twice is
        an error naming both rows.
    test : DataFrame or Table
        Held-out interactions: (user, item) rows, with a rating column for
        graded relevance (its values are the relevance levels), else every
        test item has relevance 1.
    train : DataFrame or Table, default=None
        Training interactions: the items each user saw (removed from the
        lists with ``exclude_seen``), the items' popularity (``novelty``,
        ``arp``, ``tail_share``) and the catalog.
    k : int, default=10
        The length the lists are cut at; metrics written without ``@k`` get it.
    metrics : str or list of str, default=("ndcg", "precision", "recall", "map", "mrr", "hit_rate")
        Registry specs (``"ndcg@10"``, ``"recall@20"``, ``"p(threshold=4)@10"``,
        ...) and the list metrics ``catalog_coverage``, ``gini``,
        ``entropy``, ``user_coverage`` (system-level) and ``novelty``,
        ``arp``, ``tail_share``, ``ild``, ``serendipity`` (per user), with
        their options in the spec (``"tail_share(head=0.9)@10"``). A cut-off
        above ``k`` is an error.
    exclude_seen : bool, default=True
        Remove each user's training items from the list before it is cut.
    catalog : array-like, default=None
        The item ids of the catalog (coverage and Gini are over it); None:
        the items of ``train``.
    item_features : DataFrame or (ids, matrix), default=None
        Item features for ``ild``: a frame with the item column and numeric
        feature columns, or the item ids and a dense or sparse matrix whose
        rows are their features.
    user_col, item_col, score_col, rating_col : str
        Column names. ``score_col=None``: the rows of ``recs`` are in rank
        order within each user. ``rating_col`` missing from ``test`` (or
        None): binary relevance.
    metric_options : dict of str -> dict, default=None
        Options of list metrics that are not literals, by metric name (e.g.
        ``{"serendipity": {"expected": baseline_recs}}``).
    **options
        Options of the registry's metrics (``gain``, ``threshold``,
        ``empty``, ...), as for :func:`~sklearn_rank.metrics.evaluate`.
        ``threshold`` (default 1) also sets which items count as relevant
        for ``user_coverage`` and ``serendipity``.

    Returns
    -------
    RecommenderEvaluation
        Per-user values (an :class:`~sklearn_rank.metrics.Evaluation`), the
        system-level values (``.system``) and the counts of users without
        recommendations and without test items.

    Notes
    -----
    Users in ``test`` without a recommendation score 0 on the ranking
    metrics and count in their means (``n_users_without_recs``); users with
    recommendations but no test item are left out (``n_users_without_test``).
    A test user whose test items all have a rating below the threshold has no
    relevant item: the metrics' ``empty`` policy applies (counted in
    ``n_empty``). A test item the user also has in ``train`` stays in the
    test set (it can never be listed when ``exclude_seen``).

    Ties: a user's items with equal scores are ranked by increasing item id
    (integers by value, strings as Python compares them), before the cut;
    the lists are then rankings without ties, so every ``ties`` option gives
    the same numbers.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_rank.recsys import evaluate_recommendations
    >>> recs = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": ["a", "b", "c", "a", "c"],
    ...                      "score": [0.9, 0.8, 0.7, 0.6, 0.5]})
    >>> test = pd.DataFrame({"user": [1, 2], "item": ["b", "b"]})
    >>> train = pd.DataFrame({"user": [1], "item": ["a"]})
    >>> ev = evaluate_recommendations(recs, test, train=train, k=2,
    ...                               metrics=["p@2", "recall", "user_coverage"])
    >>> ev.per_query["p@2"]
    array([0.5, 0. ])
    >>> ev.system["user_coverage@2"]
    0.5
    """
    specs = split_metrics(metrics, k)
    registry = [s for s in specs if isinstance(s, MetricSpec)]
    listed = [s for s in specs if isinstance(s, ListMetric)]
    plan = Plan.of(registry, options, caller="evaluate_recommendations") if registry else None
    if not registry and options:
        raise TypeError(f"evaluate_recommendations() got the options {sorted(options)}, but "
                        "no registry metric takes them.")
    names = dict(user=user_col, item=item_col, score=score_col, rating=rating_col)
    if "dask" in {frame_kind(recs), frame_kind(test), frame_kind(train)}:
        from ._dask import dask_parts

        parts, items, train_codes = dask_parts(recs, test, train, catalog, names, k,
                                               exclude_seen, plan)
    else:
        recs_rows = read_interactions(recs, "recs", names, score=True)
        test_rows = read_interactions(test, "test", names, rating=True)
        train_rows = None if train is None else read_interactions(train, "train", names)
        catalog = None if catalog is None else catalog_ids(catalog)
        check_kinds([f for f in (recs_rows, test_rows, train_rows) if f is not None], catalog)
        items = Items.of(*_catalog_and_others(catalog, recs_rows, test_rows, train_rows))
        parts = [evaluate_part(recs_rows, test_rows, train_rows, items, k, exclude_seen,
                               plan)]
        train_codes = (None if train_rows is None
                       else (train_rows.user, items.codes(train_rows.item)))
    return _finish(parts, items, train_codes, plan, specs, listed, k,
                   dict(metric_options or {}), item_features, names, exclude_seen, options)


def _catalog_and_others(catalog, recs, test, train):
    """The catalog's item ids (``catalog``, else the items of ``train``) and
    the other frames' item ids."""
    others = [recs.item, test.item] + ([] if train is None else [train.item])
    if catalog is not None:
        return catalog, others
    if train is None:
        return np.zeros(0, dtype=recs.item.dtype), others
    return train.item, others


def _merged(parts: list):
    """The parts' users (sorted), lists, labels of the listed items and
    training history (rows of the merged lists), in one user order."""
    users = np.concatenate([part.users for part in parts])
    top = np.concatenate([part.top for part in parts])
    top_labels = np.concatenate([part.top_labels for part in parts])
    shift = np.cumsum([0] + [part.users.shape[0] for part in parts])
    history = (np.concatenate([p.history[0] + s for p, s in zip(parts, shift, strict=False)]),
               np.concatenate([p.history[1] for p in parts]))
    if len(parts) > 1:
        order = np.argsort(users, kind="stable")
        users, top, top_labels = users[order], top[order], top_labels[order]
        rank = np.empty_like(order)
        rank[order] = np.arange(order.shape[0])
        history = (rank[history[0]], history[1])
    return users, top, top_labels, history


def _finish(parts: list, items: Items, train_codes, plan, specs, listed, k: int,
            metric_options: dict, item_features, names: dict, exclude_seen: bool,
            options) -> RecommenderEvaluation:
    """One evaluation of the parts (disjoint users): the ranking metrics
    finished together, the list metrics on the lists of every part."""
    if not any(part.users.shape[0] for part in parts):
        raise ValueError("test has no rows, so no user to evaluate: pass the held-out "
                         "interactions (user, item[, rating] rows).")
    users, top, top_labels, history = _merged(parts)
    if plan is not None:
        base = plan.finish([part.values for part in parts if part.values is not None],
                           where="the partitions")
    else:
        base = Evaluation(users, {}, {}, {}, None, [])
    threshold = float(options.get("threshold", 1.0))
    relevant = np.nan_to_num(top_labels, nan=-np.inf) >= threshold
    inputs = Inputs(users, items, train_codes, history, item_features, names, exclude_seen)
    per_user, system = list_values(listed, top, relevant, inputs, metric_options)
    entries = {str(m): (m, base.per_query[str(m)], base.mean[str(m)], base.n_empty[str(m)])
               for m in base.metrics}
    for metric, values in per_user.items():
        counted = ~np.isnan(values)
        mean = float(values[counted].mean()) if counted.any() else float("nan")
        entries[str(metric)] = (metric, values, mean, int((~counted).sum()))
    chosen = [entries[str(s)] for s in specs if str(s) in entries]
    evaluation = combined(users, None, ((str(m), m, v, mean, n) for m, v, mean, n in chosen))
    return RecommenderEvaluation(evaluation, system, k,
                                 sum(part.n_without_recs for part in parts),
                                 sum(part.n_without_test for part in parts))
