"""One-call grouped cross-validation for rankers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral

import sklearn
from sklearn.model_selection import cross_validate

from .._queries import QID_COLUMN, drop_column, qid_position, read_qid_column
from .._validation import HasMethods, Interval, validate_params
from ..estimators import QueryRanker
from ..estimators._inner import fit_kind
from ..metrics import MetricSpec, make_ranking_scorer
from ._split import QueryKFold

__all__ = ["cross_validate_ranker", "ranking_scoring"]


_SCORING = [str, MetricSpec, list, tuple, Mapping, callable, None]


@validate_params({"scoring": _SCORING, "sample_weight": ["boolean"]})
def ranking_scoring(scoring, *, sample_weight=False):
    """Turn metric specs into scorers: one spec, a list of specs, or a dict of them.

    Lists become dicts keyed by the canonical spec; dict values may be specs or
    scorers. A scorer (any callable) or None is returned unchanged. With
    ``sample_weight=True`` (under metadata routing) the scorers made from specs
    request ``sample_weight`` too.

    Parameters
    ----------
    scoring : str, MetricSpec, list, tuple, dict, callable or None
        What to score by, as the ``scoring`` of a scikit-learn search.
    sample_weight : bool, default=False
        Whether the scorers made from specs request ``sample_weight``.

    Returns
    -------
    scoring : scorer, dict of scorers, callable or None
        What scikit-learn's ``scoring=`` takes.
    """

    def make(spec):
        scorer = make_ranking_scorer(spec)
        return scorer.set_score_request(sample_weight=True) if sample_weight else scorer

    if isinstance(scoring, str | MetricSpec):
        return make(scoring)
    if isinstance(scoring, Mapping):
        return {name: make(s) if isinstance(s, str | MetricSpec) else s
                for name, s in scoring.items()}
    if isinstance(scoring, list | tuple):
        scorers = [make(s) for s in scoring]
        return {str(s.spec): s for s in scorers}
    return scoring


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
        A metric spec, a list of them, or a dict ``{name: spec or scorer}``;
        specs become :func:`~sklearn_rank.metrics.make_ranking_scorer` scorers.
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
    X, qid = _ids(estimator, X, qid)
    if isinstance(cv, Integral):
        cv = QueryKFold(cv)
    if params and "qid" in params:
        raise ValueError("cross_validate_ranker got qid twice: as qid= and in params; pass it "
                         "once, as qid=.")
    params = {**(params or {}), "qid": qid}
    with sklearn.config_context(enable_metadata_routing=True):
        scoring = ranking_scoring(scoring, sample_weight="sample_weight" in params)
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
