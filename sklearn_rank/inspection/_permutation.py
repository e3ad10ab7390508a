"""Permutation importance scored per query, with the query ids held fixed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch, check_array, check_random_state

from .._utils.queries import QID_COLUMN, has_qid_column, qid_position
from .._utils.validation import HasMethods, Interval, validate_params
from ..metrics import MetricSpec, evaluate
from ..metrics._scorer import (
    MultimetricRankingScorer,
    RankingScorer,
    make_ranking_scorer,
    query_ids_for,
    ranker_input,
)

__all__ = ["permutation_importance"]

_WHO = "permutation_importance"


def _scoring_specs(scoring) -> tuple[dict, bool]:
    """``({name: MetricSpec}, several)`` from ``scoring``; ``several`` is whether
    the result is a dict of Bunches (several metrics) or one Bunch."""
    if isinstance(scoring, RankingScorer):
        return {str(scoring.spec): scoring.spec}, False
    if isinstance(scoring, MultimetricRankingScorer):
        return dict(scoring.specs), True
    if isinstance(scoring, str | MetricSpec):
        spec = make_ranking_scorer(scoring).spec
        return {str(spec): spec}, False
    items = (scoring.items() if isinstance(scoring, Mapping)
             else [(None, s) for s in scoring])
    specs = {}
    for name, item in items:
        if isinstance(item, RankingScorer):
            spec = item.spec
        elif isinstance(item, str | MetricSpec):
            spec = make_ranking_scorer(item).spec
        else:
            raise TypeError(
                f"{_WHO}: scoring holds {item!r}; give metric specs (e.g. 'ndcg@10') or "
                "scorers of make_ranking_scorer, which this function evaluates with the "
                "query ids it holds fixed."
            )
        if name is not None and not isinstance(name, str):
            raise ValueError(f"{_WHO}: the names of the scores must be strings; got "
                             f"{name!r} ({type(name).__name__}).")
        specs[str(spec) if name is None else name] = spec
    if not specs:
        raise ValueError(f"{_WHO}: scoring is empty: give at least one metric spec, e.g. "
                         "['ndcg@10', 'map'].")
    return specs, True


def _as_table(X):
    """X as it is permuted: a pandas or polars DataFrame as it is, anything else
    as a 2-D NumPy array (scikit-learn's ``check_array``, NaN allowed)."""
    if hasattr(X, "iloc") or type(X).__module__.partition(".")[0] == "polars":
        return X
    return check_array(X, ensure_all_finite="allow-nan", dtype=None,
                       input_name="X")


def _qid_columns(estimator, X) -> set:
    """Positions of the query-id columns of X, which are never permuted.

    A DataFrame column named ``qid``, and the ``qid_column`` of a ranker that
    reads X itself (alone, or behind fitted searches or pipelines whose earlier
    steps are all ``'passthrough'``). A ranker that reads X after other
    pipeline steps counts its columns after them: that column of X cannot be
    named here.
    """
    positions = set()
    if has_qid_column(X):
        positions.add(qid_position(X, QID_COLUMN, _WHO))
    final, Xt = ranker_input(estimator, X)
    column = getattr(final, "qid_column", None)
    if Xt is X and column is not None and callable(getattr(final, "query_ids", None)):
        positions.add(qid_position(X, column, f"{type(final).__name__}(qid_column="
                                              f"{column!r})"))
    return positions


def _query_ids(estimator, X, qid):
    """The query ids every score is computed with: ``qid``, else those the
    estimator's ranker reads from the unpermuted X (as the scorers read them)."""
    if qid is not None:
        return qid
    qid = query_ids_for(estimator, X, _WHO)
    if qid is None:
        raise ValueError(
            f"{_WHO} needs the query id of each row of X: pass qid=<one query id per row>, "
            "or give X a query-id column (a DataFrame column named 'qid', or an array "
            "column named by QueryRanker(estimator, qid_column=j))."
        )
    return qid


def _permuted(X, column: int, seed: int, n_repeats: int) -> Iterator:
    """X with ``column`` shuffled across all rows, ``n_repeats`` times.

    The shuffles are scikit-learn's, draw for draw: a fresh ``RandomState(seed)``
    for each column, one index array shuffled in place before each repeat and
    applied to the column as the last repeat left it.
    """
    rng = check_random_state(seed)
    order = np.arange(X.shape[0])
    if type(X).__module__.partition(".")[0] == "polars":
        values = X.to_series(column)
        for _ in range(n_repeats):
            rng.shuffle(order)
            values = values.gather(order)
            yield X.with_columns(values)
        return
    if hasattr(X, "iloc"):
        X_perm, values = X.copy(), X.iloc[:, column]
        for _ in range(n_repeats):
            rng.shuffle(order)
            values = values.iloc[order].set_axis(X.index)
            X_perm.isetitem(column, values)
            yield X_perm
        return
    X_perm = X.copy()
    for _ in range(n_repeats):
        rng.shuffle(order)
        X_perm[:, column] = X_perm[order, column]
        yield X_perm


@validate_params({
    "estimator": [HasMethods(("predict",))],
    "X": ["array-like"],
    "y": ["array-like"],
    "qid": ["array-like", None],
    "scoring": [str, MetricSpec, RankingScorer, MultimetricRankingScorer, list, tuple,
                Mapping],
    "n_repeats": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "sample_weight": ["array-like", None],
})
def permutation_importance(estimator, X, y, *, qid=None, scoring="ndcg@10", n_repeats=5,
                           random_state=None, sample_weight=None) -> Bunch | dict:
    """Permutation importance of each column of X, scored per query.

    scikit-learn's :func:`~sklearn.inspection.permutation_importance` for
    rankers: each column of ``X`` in turn is shuffled across all rows (the
    standard definition, with scikit-learn's shuffles draw for draw), and the
    importance is how much the score falls. The query ids are held fixed:
    given as ``qid``, or read once from the unpermuted ``X``, so a shuffle
    never moves a row to another query, and the query-id column itself is
    never shuffled. scikit-learn's own function calls its scorer as
    ``scorer(estimator, X, y)``, routing no metadata, so it cannot pass
    ``qid``; on a query-id column it shuffles that column too, which scrambles
    the queries.

    Parameters
    ----------
    estimator : fitted estimator
        Anything with ``predict``: a fitted
        :class:`~sklearn_rank.estimators.QueryRanker`, a pipeline, a search,
        a bare ``LGBMRanker``.
    X : array-like or DataFrame of shape (n_rows, n_columns)
        The data to score on (held-out data, ideally), as ``estimator.predict``
        takes it. pandas and polars DataFrames are permuted as they are,
        anything else as a NumPy array.
    y : array-like of shape (n_rows,)
        Relevance labels.
    qid : array-like of shape (n_rows,), default=None
        Query id of each row. None reads them from ``X`` as the scorers of
        :func:`~sklearn_rank.metrics.make_ranking_scorer` do: the query-id
        column of the estimator's ``QueryRanker`` (``qid_column``), else a
        DataFrame column named ``qid``.
    scoring : str, MetricSpec, scorer, list, tuple or dict, default="ndcg@10"
        A metric spec (``"ndcg@10"``, ``"map"``, ...) or a scorer of
        :func:`~sklearn_rank.metrics.make_ranking_scorer`; or several, as a
        list of specs, a dict ``{name: spec or scorer}``, or a scorer of
        :func:`~sklearn_rank.model_selection.ranking_scoring`. Each
        prediction is evaluated for every metric at once.
    n_repeats : int, default=5
        Number of shuffles of each column.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffles, as in scikit-learn: one seed is drawn from it, and
        every column is shuffled with the same sequence of permutations.
    sample_weight : array-like of shape (n_rows,), default=None
        Row weights of the scores (a query's weight is the mean of its rows').

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch` or dict of them
        ``importances_mean`` and ``importances_std`` of shape ``(n_columns,)``
        and ``importances`` of shape ``(n_columns, n_repeats)``: the baseline
        score minus each permuted score. A dict ``{name: Bunch}`` when
        ``scoring`` names several metrics (keyed by the canonical spec for a
        list), as scikit-learn returns for several scorers. The rows of the
        query-id columns are NaN: they are not shuffled.

    See Also
    --------
    sklearn.inspection.permutation_importance : The same, without query ids.
    sklearn_rank.metrics.make_ranking_scorer : The scores, per query.

    Notes
    -----
    The query-id columns left unshuffled are a DataFrame column named ``qid``
    and the ``qid_column`` of a ``QueryRanker`` that sees ``X`` itself (alone,
    in a fitted search, or after ``'passthrough'`` steps only). Behind other
    pipeline steps the ranker's ``qid_column`` counts the columns of ``X`` as
    it sees it, so the column of ``X`` cannot be named here: it is shuffled
    like any other, and as the ids stay fixed its importance is what
    shuffling it does to the predictions (0 when the ranker drops it).

    There is no ``max_samples``: a sample of rows would cut queries (use a
    sample of queries, e.g. one fold of
    :class:`~sklearn_rank.model_selection.QueryShuffleSplit`), and no
    ``n_jobs``: the columns are scored one after the other, each prediction
    with the estimator's own threads (LightGBM's ``n_jobs``).

    Examples
    --------
    >>> from lightgbm import LGBMRanker
    >>> from sklearn_rank.datasets import make_ranking
    >>> from sklearn_rank.estimators import QueryRanker
    >>> from sklearn_rank.inspection import permutation_importance
    >>> X, y, qid = make_ranking(n_queries=20, n_features=4, n_informative=2,
    ...                           random_state=0)
    >>> ranker = QueryRanker(LGBMRanker(n_estimators=10, n_jobs=1, verbose=-1))
    >>> ranker = ranker.fit(X, y, qid=qid)
    >>> result = permutation_importance(ranker, X, y, qid=qid, n_repeats=3,
    ...                                 random_state=0)
    >>> result.importances.shape
    (4, 3)
    """
    specs, several = _scoring_specs(scoring)
    X = _as_table(X)
    held = _qid_columns(estimator, X)
    qid = _query_ids(estimator, X, qid)
    metrics = list(dict.fromkeys(specs.values()))

    def score(X_scored) -> np.ndarray:
        ev = evaluate(y, estimator.predict(X_scored), qid=qid, metrics=metrics,
                      sample_weight=sample_weight)
        return np.array([ev.mean[str(spec)] for spec in specs.values()], dtype=float)

    baseline = score(X)
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    permuted = np.full((len(specs), X.shape[1], n_repeats), np.nan)
    for column in range(X.shape[1]):
        if column not in held:
            for repeat, X_perm in enumerate(_permuted(X, column, seed, n_repeats)):
                permuted[:, column, repeat] = score(X_perm)
    bunches = {name: Bunch(importances_mean=np.mean(drop, axis=1),
                           importances_std=np.std(drop, axis=1), importances=drop)
               for name, drop in zip(specs, baseline[:, None, None] - permuted,
                                     strict=True)}
    return bunches if several else next(iter(bunches.values()))
