"""One-call grouped cross-validation for rankers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real

import numpy as np
import sklearn
from sklearn.model_selection import cross_validate

from .._utils.queries import QID_COLUMN, drop_column, group_hint, qid_position, read_qid_column
from .._utils.validation import HasMethods, Interval, StrOptions, validate_params
from ..estimators import QueryRanker
from ..estimators._inner import fit_kind
from ..metrics import MetricSpec, RankingScorer, make_ranking_scorer
from ..metrics._scorer import combine_scorers
from ._split import QueryKFold

__all__ = ["cross_validate_ranker", "ranking_scoring"]


_SCORING = [str, MetricSpec, list, tuple, Mapping, callable, None]


@validate_params({"scoring": _SCORING, "sample_weight": ["boolean"],
                  "error_score": [StrOptions({"raise"}), Real]})
def ranking_scoring(scoring, *, sample_weight=False, error_score="raise"):
    """What to pass as ``scoring=``: one scorer, predicting once, for one or many metrics.

    A metric spec becomes its scorer (:func:`~sklearn_rank.metrics.make_ranking_scorer`).
    A list of specs, or a dict ``{name: spec or ranking scorer}``, becomes one
    scorer that predicts once per call and returns ``{name: score}`` for every
    metric, computed with one :func:`~sklearn_rank.metrics.evaluate`; the
    scores are exactly those of the single-metric scorers, named by the
    canonical spec (for a list) or by the dict's keys. Pass it to a search
    with ``refit=<name>``; the results are named ``mean_test_<name>`` as for a
    dict of scorers, which predicts once per metric. A dict that also holds
    other scorers, or ranking scorers that request different metadata, stays
    a dict of scorers (specs made into scorers); a scorer (any callable) or
    None is returned unchanged.

    Parameters
    ----------
    scoring : str, MetricSpec, list, tuple, dict, callable or None
        What to score by, as the ``scoring`` of a scikit-learn search.
    sample_weight : bool, default=False
        Whether the scorers made from specs request ``sample_weight`` (under
        metadata routing).
    error_score : "raise" or float, default="raise"
        What a metric that cannot be scored on a split gives, in the scorer of
        several metrics: give it the search's ``error_score``. scikit-learn
        cannot take one number for a scorer that returns several (it fails
        with a TypeError), so a number here makes the scorer warn and give it
        for each metric that failed, as scikit-learn does for a dict of
        scorers; "raise" raises the error.

    Returns
    -------
    scoring : scorer, dict of scorers, callable or None
        What scikit-learn's ``scoring=`` takes.

    Examples
    --------
    >>> from sklearn_rank.model_selection import ranking_scoring
    >>> ranking_scoring("ndcg@10")
    make_ranking_scorer('ndcg@10')
    >>> ranking_scoring(["ndcg@10", "ap@5"])
    ranking_scoring(['ndcg@10', 'map@5'])
    """

    def make(spec):
        scorer = make_ranking_scorer(spec)
        return scorer.set_score_request(sample_weight=True) if sample_weight else scorer

    if isinstance(scoring, str | MetricSpec):
        return make(scoring)
    if isinstance(scoring, list | tuple):
        scorers = {str(s.spec): s for s in map(make, scoring)}
    elif isinstance(scoring, Mapping):
        scorers = {name: make(s) if isinstance(s, str | MetricSpec) else s
                   for name, s in scoring.items()}
    else:
        return scoring
    if not scorers:
        raise ValueError("scoring is empty: give at least one metric spec, e.g. "
                         "['ndcg@10', 'map'].")
    bad = next((name for name in scorers if not isinstance(name, str)), None)
    if bad is not None:
        raise ValueError(f"The names of the scores must be strings (they name the columns "
                         f"of cv_results_); got {bad!r} ({type(bad).__name__}).")
    if all(isinstance(s, RankingScorer) for s in scorers.values()):
        combined = combine_scorers(scorers, error_score=error_score)
        if combined is not None:
            return combined
    return scorers


@validate_params({
    "estimator": [HasMethods(("fit", "predict"))],
    "X": ["array-like", "sparse matrix"],
    "y": ["array-like"],
    "qid": ["array-like", str, None],
    "scoring": _SCORING,
    "cv": [Interval(Integral, 2, None, closed="left"),
           HasMethods(("split", "get_n_splits")), Iterable],
    "params": [dict, None],
})
def cross_validate_ranker(estimator, X, y, *, qid=None, scoring="ndcg@10", cv=5, params=None,
                          **kwargs) -> dict:
    """Cross-validate a ranker with folds that keep queries whole, scored per query.

    Parameters
    ----------
    estimator : estimator object
        A :class:`~sklearn_rank.estimators.QueryRanker`, a pipeline, a regressor
        used as a pointwise ranker, or a bare ``lightgbm.LGBMRanker`` /
        ``xgboost.XGBRanker`` (wrapped in ``QueryRanker`` for you).
    X : array-like, sparse matrix or DataFrame of shape (n_rows, n_features)
    y : array-like of shape (n_rows,)
        Relevance labels.
    qid : array-like of shape (n_rows,), str or None, default=None
        Query id of each row (rows in any order), or the name of the
        DataFrame column of ``X`` that holds them; None reads the column
        named ``qid``. A column named here, or found, is taken out of ``X``
        before the estimator sees it (never a feature); to keep it in ``X``
        (a pipeline that selects it), pass its values: ``qid=df["qid"]``.
    scoring : str, list of str or dict, default="ndcg@10"
        A metric spec, a list of them, or a dict ``{name: spec or scorer}``,
        made into scorers by :func:`ranking_scoring`: several metrics are
        scored from one prediction per fold, and a metric that cannot be
        scored on a fold gives ``error_score`` (a keyword of
        :func:`~sklearn.model_selection.cross_validate`, NaN by default) with
        a warning, as with a dict of scikit-learn scorers.
    cv : int, cross-validation splitter or iterable, default=5
        An int means ``QueryKFold(cv)``; an iterable yields ``(train, test)``
        index arrays. There is no default splitter for None: scikit-learn's
        would cut queries apart.
    params : dict, default=None
        More metadata for the estimator, scorers and splitter; ``qid`` is added.
        With ``sample_weight`` here, the scorers made from specs weight their
        scores by it (the estimator must request it:
        ``QueryRanker(...).set_fit_request(sample_weight=True)``).
    **kwargs
        Passed to :func:`sklearn.model_selection.cross_validate`
        (``return_train_score``, ``return_estimator``, ``n_jobs``, ...).

    Returns
    -------
    scores : dict
        What :func:`sklearn.model_selection.cross_validate` returns, with keys
        ``test_<name>`` per metric (``test_score`` for a single metric).

    Notes
    -----
    Metadata routing is enabled for the duration of the call only
    (``sklearn.config_context``), so ``qid`` reaches the splitter, the ranker
    and the scorers of every fold whatever the global configuration.

    Examples
    --------
    >>> from lightgbm import LGBMRanker
    >>> from sklearn_rank.datasets import make_ranking
    >>> from sklearn_rank.model_selection import cross_validate_ranker
    >>> X, y, qid = make_ranking(n_queries=40, random_state=0)
    >>> res = cross_validate_ranker(LGBMRanker(n_estimators=10, verbose=-1), X, y, qid=qid,
    ...                             scoring=["ndcg@10", "ndcg(gain='linear')@10"], cv=3)
    >>> sorted(k for k in res if k.startswith("test_"))
    ["test_ndcg(gain='linear')@10", 'test_ndcg@10']

    A DataFrame with a ``qid`` column needs no ``qid=`` (pandas or polars):

    >>> import pandas as pd
    >>> df = pd.DataFrame(X).add_prefix("f").assign(qid=qid)
    >>> res = cross_validate_ranker(LGBMRanker(n_estimators=10, n_jobs=1, verbose=-1), df, y,
    ...                             cv=3)
    >>> res["test_score"].shape
    (3,)
    """
    if not isinstance(estimator, QueryRanker) and fit_kind(estimator) != "none":
        estimator = QueryRanker(estimator)  # a bare LGBMRanker / XGBRanker
    if "group" in kwargs:  # LightGBM's group sizes: not an argument of cross_validate
        raise TypeError(f"cross_validate_ranker() got an unexpected keyword argument 'group'."
                        f"{group_hint('group')}")
    X, qid = _ids(estimator, X, qid)
    if isinstance(cv, Integral):
        cv = QueryKFold(cv)
    if params and "qid" in params:
        raise ValueError("cross_validate_ranker got qid twice: as qid= and in params; pass it "
                         "once, as qid=.")
    params = {**(params or {}), "qid": qid}
    # several metrics: one scorer, one prediction per fold; a scoring failure gives the
    # same error_score as with a dict of scorers (cross_validate's default: NaN)
    error_score = kwargs.get("error_score", np.nan)
    if not (error_score == "raise" or isinstance(error_score, Real)):
        error_score = "raise"  # refused by cross_validate, in its words, before any fit
    with sklearn.config_context(enable_metadata_routing=True):
        scoring = ranking_scoring(scoring, sample_weight="sample_weight" in params,
                                  error_score=error_score)
        return cross_validate(estimator, X, y, scoring=scoring, cv=cv, params=params,
                              **kwargs)


def _ids(estimator, X, qid):
    """``(X, qid)``: the ids as given, or read from a DataFrame column of ``X``
    (``qid`` names it; None means ``'qid'``), which is then taken out of ``X``."""
    if qid is not None and not isinstance(qid, str):
        return X, qid
    who = "cross_validate_ranker"
    name = QID_COLUMN if qid is None else qid
    columns = getattr(X, "columns", None)
    if qid is None and (columns is None or QID_COLUMN not in list(columns)):
        raise ValueError(
            f"{who} needs the query id of each row of X: pass qid=<one query id per row>, "
            "qid='<name of the DataFrame column of X that holds them>', or give X a "
            "DataFrame column named 'qid'."
        )
    if columns is None:
        raise ValueError(
            f"{who}: qid={qid!r} names a column of X, but X is not a DataFrame; pass "
            "qid=<one query id per row>."
        )
    if isinstance(estimator, QueryRanker) and estimator.qid_column is not None:
        raise ValueError(
            f"{who} takes the query-id column {name!r} out of X, so "
            f"QueryRanker(qid_column={estimator.qid_column!r}) would not find it: leave "
            f"qid_column at None, or pass the ids as values (qid=X[{name!r}]), which "
            "keeps the column in X."
        )
    position = qid_position(X, name, f"{who}(qid={name!r})")
    return drop_column(X, position), read_qid_column(X, position, who, check=False)
