"""scikit-learn scorers for ranking metrics that see query ids."""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import sklearn
from sklearn.pipeline import Pipeline
from sklearn.utils.metadata_routing import MetadataRequest

from .._utils.compat import ScorerHooksMixin
from .._utils.queries import frame_qid, missing_qid_error, routing_fix, routing_on
from .._utils.validation import validate_params
from ._engine.ids import query_codes
from ._evaluate import evaluate
from ._vocab.ir_measures import is_irm_object
from ._vocab.registry import METRICS
from ._vocab.spec import MetricSpec
from ._vocab.spec import build as _build
from ._vocab.spec import spec_with as _spec_with

__all__ = [
    "MultimetricRankingScorer",
    "RankingScorer",
    "combine_scorers",
    "make_ranking_scorer",
    "query_ids_for",
]

_FUNCTIONS = {info.function: name for name, info in METRICS.items()}


def ranker_input(estimator, X):
    """``(final, Xt)``: the estimator that makes the predictions, and X as it sees it.

    Sees through pipelines — X goes once through the steps before the last —
    and fitted searches (their ``best_estimator_``), nested in any order. A
    pipeline with a step that does not transform (a resampler of
    imbalanced-learn's pipelines) is not seen through.
    """
    Xt = X
    while True:
        head = [step for _, step in getattr(estimator, "steps", [])[:-1]
                if step is not None and not isinstance(step, str)]  # not 'passthrough'
        if isinstance(estimator, Pipeline) and all(hasattr(s, "transform") for s in head):
            for step in head:
                Xt = step.transform(Xt)
            estimator = estimator.steps[-1][1]
        elif (not callable(getattr(estimator, "query_ids", None))
              and getattr(estimator, "best_estimator_", None) is not None):
            estimator = estimator.best_estimator_
        else:
            return estimator, Xt


def _refuse_hidden_ranker(estimator, who: str) -> None:
    """Refuse a query-id column read by a ranker inside a wrapper the scorer cannot see
    through: which column of X that ranker sees is the wrapper's business."""
    try:
        params = estimator.get_params(deep=True)
    except (AttributeError, TypeError):  # not a scikit-learn estimator
        return
    for inner in params.values():
        column = getattr(inner, "qid_column", None)
        if callable(getattr(inner, "query_ids", None)) and column is not None:
            fix = (f"Instead, {routing_fix()}" if routing_on() else
                   "Enable metadata routing (sklearn.set_config(enable_metadata_routing="
                   "True)) and pass qid=<one query id per row> to fit / "
                   "cross_validate(params={'qid': qid})")
            raise ValueError(
                f"{who} cannot read query ids through {type(estimator).__name__}: the "
                f"{type(inner).__name__}(qid_column={column!r}) inside it counts the "
                f"columns of X as {type(estimator).__name__} hands them on, which the "
                "scorer cannot see (it sees through pipelines and fitted searches only). "
                f"{fix}: the scorer then gets the query ids themselves."
            )


def _locate(estimator, X, who: str):
    """``(final, Xt, read_ids)``: the predicting estimator, X as it sees it, and its
    ``query_ids`` method (None when it has none)."""
    final, Xt = ranker_input(estimator, X)
    if not hasattr(final, "predict"):  # e.g. a pipeline ending in 'passthrough'
        final, Xt = estimator, X
    read_ids = getattr(final, "query_ids", None)
    if callable(read_ids):
        return final, Xt, read_ids
    _refuse_hidden_ranker(final, who)
    return final, Xt, None


def _read_ids(final, Xt, X, read_ids, who: str):
    """The ranker's ids (checked against a ``qid`` column of X when both exist), else
    X's ``qid`` column, else None."""
    ranker_ids = None if read_ids is None else read_ids(Xt)
    frame_ids = frame_qid(X)
    if ranker_ids is None:
        return frame_ids
    column = getattr(final, "qid_column", None)
    if frame_ids is not None and column is not None:
        _check_same_queries(ranker_ids, frame_ids, f"{type(final).__name__}(qid_column="
                            f"{column!r})", who)
    return ranker_ids


def _check_same_queries(ranker_ids, frame_ids, ranker: str, who: str) -> None:
    """Refuse ranker ids that group the rows otherwise than X's own ``qid`` column:
    the ranker's column is then not the query ids (a step moved them)."""
    a = query_codes(ranker_ids).codes
    b = query_codes(frame_ids).codes
    n_a, n_b = int(a.max()) + 1, int(b.max()) + 1
    if n_a == n_b == np.unique(a.astype(np.int64) * n_b + b).shape[0]:
        return
    raise ValueError(
        f"{who}: the query ids {ranker} reads from X as it sees it group the "
        f"{a.shape[0]} rows into {n_a} queries, X's 'qid' column into {n_b}"
        f"{' other ones' if n_a == n_b else ''}, so qid_column does not point at the "
        "query ids (an earlier pipeline step may have moved them). Point qid_column at "
        f"the query-id column of X as the ranker sees it, or {routing_fix()}."
    )


def _predict_with_query_ids(estimator, X, who: str):
    """``(y_pred, qid)``: the estimator's scores for X and the query ids of its rows.

    The ids come from the query-id column of the ranker that makes the
    predictions, read from X as that ranker sees it (after a pipeline's earlier
    steps, which transform X once for both), else from a DataFrame column of X
    named ``qid``; None when neither exists. Predictions come first, so that a
    model's own check of X (its feature names) speaks before the ids are read.
    """
    final, Xt, read_ids = _locate(estimator, X, who)
    y_pred = final.predict(Xt)
    return y_pred, _read_ids(final, Xt, X, read_ids, who)


def query_ids_for(estimator, X, who: str = "The scorer"):
    """Query ids of the rows of ``X``, as the estimator's ranker reads them.

    Looks for an estimator that knows its query-id column (a
    :class:`~sklearn_rank.estimators.QueryRanker`, possibly the last step of a
    pipeline — it reads X as transformed by the earlier steps — or the best
    estimator of a fitted search), then for a ``qid`` column of a DataFrame
    ``X``. Returns None when neither exists; raises when the ranker sits in a
    wrapper that hides which columns it sees.
    """
    final, Xt, read_ids = _locate(estimator, X, who)
    return _read_ids(final, Xt, X, read_ids, who)


def _predict_for_scoring(estimator, X, qid, who: str):
    """``(y_pred, qid)``: one prediction of the estimator for ``X``, and the query ids.

    Routed ids (``qid`` given) are used as they are and X is not looked into;
    otherwise the ids are read as :func:`query_ids_for` reads them, and their
    absence is an error that names both fixes.
    """
    if qid is not None:
        return estimator.predict(X), qid
    y_pred, qid = _predict_with_query_ids(estimator, X, who)
    if qid is None:
        raise missing_qid_error(who)
    return y_pred, qid


class _ScoreRequests:
    """The metadata-routing side of this package's scorers: ``qid`` requested by
    default, ``sample_weight`` on demand."""

    def get_metadata_routing(self) -> MetadataRequest:
        """Metadata the scorer requests: ``qid`` by default, ``sample_weight`` on demand.

        Returns
        -------
        routing : MetadataRequest
        """
        requests = MetadataRequest(owner=type(self).__name__)
        for param, alias in self.score_requests().items():
            requests.score.add_request(param=param, alias=alias)
        return requests

    def score_requests(self) -> dict:
        """The metadata the scorer requests, ``{"qid": ..., "sample_weight": ...}``
        (what :meth:`set_score_request` set, else query ids only)."""
        return getattr(self, "_score_requests", {"qid": True, "sample_weight": None})

    def set_score_request(self, *, qid=True, sample_weight=None):
        """Set which metadata the scorer requests under metadata routing.

        Parameters
        ----------
        qid : bool, str or None, default=True
            Request query ids (the default), or an alias to read them from.
        sample_weight : bool, str or None, default=None
            Request sample weights.

        Returns
        -------
        self : scorer
        """
        if not sklearn.get_config()["enable_metadata_routing"]:
            raise RuntimeError(
                "This method is only available when metadata routing is enabled. You can "
                "enable it using sklearn.set_config(enable_metadata_routing=True)."
            )
        self._score_requests = {"qid": qid, "sample_weight": sample_weight}
        return self


class RankingScorer(_ScoreRequests, ScorerHooksMixin):
    """A scikit-learn scorer for a ranking metric, computed per query.

    Build it with :func:`make_ranking_scorer`. Called as
    ``scorer(estimator, X, y_true, qid=None, sample_weight=None)`` it predicts
    scores for ``X`` and returns the metric averaged over queries (every
    metric of the registry is higher-is-better, as scikit-learn expects of a
    score).

    Query ids come from ``qid`` — which the scorer requests by default under
    metadata routing, and then X is not looked into — or, without routing,
    from the estimator's query-id column, read from X as the ranker sees it
    (see :func:`query_ids_for`).
    """

    def __init__(self, spec: MetricSpec):
        self.spec = spec

    def __call__(self, estimator, X, y_true, sample_weight=None, qid=None):
        who = f"The scorer for {str(self.spec)!r}"
        y_pred, qid = _predict_for_scoring(estimator, X, qid, who)
        ev = evaluate(y_true, y_pred, qid=qid, metrics=[self.spec],
                      sample_weight=sample_weight)
        return ev.mean[str(self.spec)]

    def __repr__(self) -> str:
        return f"make_ranking_scorer({str(self.spec)!r})"


class MultimetricRankingScorer(_ScoreRequests, ScorerHooksMixin):
    """Several ranking metrics from one prediction: a scorer that returns ``{name: score}``.

    Build it with :func:`sklearn_rank.model_selection.ranking_scoring` from a
    list or dict of metric specs, and pass it as ``scoring=`` with
    ``refit=<name>``: scikit-learn accepts a callable that returns a dict, and
    names the results ``mean_test_<name>`` as for a dict of scorers. Each call
    predicts once and evaluates every metric with one
    :func:`~sklearn_rank.metrics.evaluate` (one ranking of each query), where a
    dict of scorers predicts once per metric (scikit-learn shares predictions
    only between its own scorers). The scores are those of the single-metric
    scorers exactly. Query ids and metadata routing work as for
    :class:`RankingScorer`.

    Parameters
    ----------
    specs : dict of str -> MetricSpec
        The name of each score and its metric.
    error_score : "raise" or float, default="raise"
        What a failure to score gives. scikit-learn gives a failing scorer
        that returns a dict the search's ``error_score`` as one number, which
        it cannot put in its table (it then fails with a TypeError): so this
        scorer raises by default, and with a number it warns and gives that
        number for each metric that failed (every metric when the prediction
        failed), as scikit-learn does for a dict of scorers. Pass the search's
        ``error_score``.
    """

    def __init__(self, specs: Mapping[str, MetricSpec], *, error_score="raise"):
        self.specs = dict(specs)
        self.error_score = error_score

    def __call__(self, estimator, X, y_true, sample_weight=None, qid=None):
        who = f"The scorer for {', '.join(repr(str(s)) for s in self.specs.values())}"
        try:
            y_pred, qid = _predict_for_scoring(estimator, X, qid, who)
        except Exception:
            if self.error_score == "raise":
                raise
            return self._failed(list(self.specs), traceback.format_exc())
        try:
            ev = evaluate(y_true, y_pred, qid=qid, sample_weight=sample_weight,
                          metrics=list(dict.fromkeys(self.specs.values())))
        except Exception:
            if self.error_score == "raise":
                raise
        else:
            return {name: ev.mean[str(spec)] for name, spec in self.specs.items()}
        # as a dict of scorers would: each metric alone, error_score where it fails
        scores = {}
        for name, spec in self.specs.items():
            try:
                ev = evaluate(y_true, y_pred, qid=qid, metrics=[spec],
                              sample_weight=sample_weight)
            except Exception:
                scores.update(self._failed([name], traceback.format_exc()))
            else:
                scores[name] = ev.mean[str(spec)]
        return scores

    def _failed(self, names: list, error: str) -> dict:
        warnings.warn(
            f"{', '.join(map(repr, names))} could not be scored on this split and "
            f"{'are' if len(names) > 1 else 'is'} set to error_score={self.error_score!r}; "
            f"the error:\n{error}", UserWarning, stacklevel=3)
        return {name: self.error_score for name in names}

    def __repr__(self) -> str:
        if all(name == str(spec) for name, spec in self.specs.items()):
            what = repr(list(self.specs))
        else:
            what = repr({name: str(spec) for name, spec in self.specs.items()})
        extra = "" if self.error_score == "raise" else f", error_score={self.error_score!r}"
        return f"ranking_scoring({what}{extra})"


def combine_scorers(scorers: Mapping[str, RankingScorer], *, error_score="raise"):
    """One :class:`MultimetricRankingScorer` for ``{name: RankingScorer}``, or None.

    None when the scorers request different metadata (a dict of scorers then
    keeps each one's requests).
    """
    requests = [scorer.score_requests() for scorer in scorers.values()]
    if not requests or any(r != requests[0] for r in requests):
        return None
    combined = MultimetricRankingScorer(
        {name: scorer.spec for name, scorer in scorers.items()}, error_score=error_score)
    combined._score_requests = dict(requests[0])
    return combined


@validate_params({"metric": [str, MetricSpec, callable]})
def make_ranking_scorer(metric: str | MetricSpec | Callable, **options) -> RankingScorer:
    """Make a scikit-learn scorer from a ranking metric.

    Parameters
    ----------
    metric : str, MetricSpec or metric function
        A metric spec such as ``"ndcg@10"`` or ``"ndcg(gain='linear')@5"``
        (see :func:`parse_metric`), or a metric function of this package such
        as :func:`ndcg_score`.
    **options
        Options of the metric (``k``, ``gain``, ``discount``, ``ties``,
        ``empty``, ``convention``, ...), added to the spec.

    Returns
    -------
    scorer : RankingScorer
        Callable as ``scorer(estimator, X, y, qid=None, sample_weight=None)``,
        picklable, usable as ``scoring=`` (alone or in a dict with
        ``refit=``) in every scikit-learn model-selection tool.

    Notes
    -----
    Under metadata routing (``sklearn.set_config(enable_metadata_routing=True)``)
    the scorer requests ``qid`` by default, so
    ``GridSearchCV(..., scoring=scorer).fit(X, y, qid=qid)`` scores each test
    fold per query. Without routing it reads the query ids from the query-id
    column of the :class:`~sklearn_rank.estimators.QueryRanker` that makes
    the predictions, in ``X`` as that ranker sees it: through pipelines
    (nested too; ``X`` is transformed once by the steps before the ranker,
    for both the predictions and the ids) and fitted searches
    (``best_estimator_``); when ``X`` also has a DataFrame column named
    ``qid``, both must group the rows alike. Failing that it reads that
    ``qid`` column. With neither, it raises an error that names both fixes;
    so it does for a ranker with a ``qid_column`` inside any other wrapper
    (``TransformedTargetRegressor``, ensembles, ...), which may hand the ranker
    other columns than ``X``'s: use routing there. The sign follows
    scikit-learn: higher is better for every score returned.

    Examples
    --------
    >>> from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
    >>> make_ranking_scorer("ndcg@10")
    make_ranking_scorer('ndcg@10')
    >>> make_ranking_scorer(ndcg_score, k=5, gain="linear")
    make_ranking_scorer("ndcg(gain='linear')@5")
    """
    if isinstance(metric, str | MetricSpec) or is_irm_object(metric):
        spec = _spec_with(str(metric) if is_irm_object(metric) else metric, options)
    elif callable(metric) and getattr(metric, "__name__", None) in _FUNCTIONS:
        spec = _build(_FUNCTIONS[metric.__name__], options, "make_ranking_scorer")
    else:
        raise TypeError(
            "metric must be a metric spec (e.g. 'ndcg@10') or a metric function of "
            f"sklearn_rank.metrics (e.g. ndcg_score); got {metric!r}."
        )
    return RankingScorer(spec)
