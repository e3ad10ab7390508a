"""scikit-learn scorers for ranking metrics that see query ids."""

from __future__ import annotations

from collections.abc import Callable

from sklearn.utils.metadata_routing import MetadataRequest

from .._compat import routing_enabled
from .._queries import frame_qid, missing_qid_error
from ._ranking import evaluate
from ._registry import METRICS, MetricSpec, _build, _spec_with

__all__ = ["RankingScorer", "make_ranking_scorer", "query_ids_for"]

_FUNCTIONS = {info.function: name for name, info in METRICS.items()}


def query_ids_for(estimator, X):
    """Query ids of the rows of ``X``, from the estimator's qid column.

    Looks for an estimator that knows its query-id column (a
    :class:`~sklearn_rank.estimators.QueryRanker`, possibly the last step of a
    pipeline or the best estimator of a fitted search), then for a ``qid``
    column of a DataFrame ``X``. Returns None when neither exists.
    """
    seen = set()
    while estimator is not None and id(estimator) not in seen:
        seen.add(id(estimator))
        get = getattr(estimator, "query_ids", None)
        if callable(get):
            ids = get(X)
            if ids is not None:
                return ids
        steps = getattr(estimator, "steps", None)
        if steps:
            estimator = steps[-1][1]
        else:
            estimator = getattr(estimator, "best_estimator_", None)
    return frame_qid(X)


class RankingScorer:
    """A scikit-learn scorer for a ranking metric, computed per query.

    Build it with :func:`make_ranking_scorer`. Called as
    ``scorer(estimator, X, y_true, qid=None, sample_weight=None)`` it predicts
    scores for ``X`` and returns the metric averaged over queries (negated
    when lower is better, as scikit-learn expects).

    Query ids come from ``qid`` — which the scorer requests by default under
    metadata routing — or, without routing, from the estimator's query-id
    column (see :func:`query_ids_for`).
    """

    def __init__(self, spec: MetricSpec):
        self.spec = spec

    @property
    def _sign(self) -> int:
        return 1 if self.spec.greater_is_better else -1

    def __call__(self, estimator, X, y_true, sample_weight=None, qid=None):
        if qid is None:
            qid = query_ids_for(estimator, X)
            if qid is None:
                raise missing_qid_error(f"The scorer for {str(self.spec)!r}")
        y_pred = estimator.predict(X)
        ev = evaluate(y_true, y_pred, qid=qid, metrics=[self.spec],
                      sample_weight=sample_weight)
        return self._sign * ev.mean[str(self.spec)]

    def __repr__(self) -> str:
        sign = "" if self.spec.greater_is_better else ", greater_is_better=False"
        return f"make_ranking_scorer({str(self.spec)!r}{sign})"

    def _routing_repr(self) -> str:
        return repr(self)

    def _accept_sample_weight(self) -> bool:
        # scikit-learn asks scorers this when routing is off.
        return True

    # -- metadata routing -------------------------------------------------

    def get_metadata_routing(self) -> MetadataRequest:
        """Metadata the scorer requests: ``qid`` by default, ``sample_weight`` on demand.

        Returns
        -------
        routing : MetadataRequest
        """
        requests = MetadataRequest(owner=type(self).__name__)
        for param, alias in self._requests().items():
            requests.score.add_request(param=param, alias=alias)
        return requests

    def _requests(self) -> dict:
        return getattr(self, "_score_requests", {"qid": True, "sample_weight": None})

    def set_score_request(self, *, qid=True, sample_weight=None) -> RankingScorer:
        """Set which metadata the scorer requests under metadata routing.

        Parameters
        ----------
        qid : bool, str or None, default=True
            Request query ids (the default), or an alias to read them from.
        sample_weight : bool, str or None, default=None
            Request sample weights.

        Returns
        -------
        self : RankingScorer
        """
        if not routing_enabled():
            raise RuntimeError(
                "This method is only available when metadata routing is enabled. You can "
                "enable it using sklearn.set_config(enable_metadata_routing=True)."
            )
        self._score_requests = {"qid": qid, "sample_weight": sample_weight}
        return self


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
    fold per query. Without routing it asks the estimator for the query ids of
    ``X`` (a :class:`~sklearn_rank.estimators.QueryRanker` with a query-id
    column, or a DataFrame column named ``qid``). With neither, it raises an
    error that names both fixes. The sign follows scikit-learn: higher is
    better for every score returned.

    Examples
    --------
    >>> from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
    >>> make_ranking_scorer("ndcg@10")
    make_ranking_scorer('ndcg@10')
    >>> make_ranking_scorer(ndcg_score, k=5, gain="linear")
    make_ranking_scorer("ndcg(gain='linear')@5")
    """
    if isinstance(metric, str | MetricSpec):
        spec = _spec_with(metric, options)
    elif callable(metric) and getattr(metric, "__name__", None) in _FUNCTIONS:
        spec = _build(_FUNCTIONS[metric.__name__], options, "make_ranking_scorer")
    else:
        raise TypeError(
            "metric must be a metric spec (e.g. 'ndcg@10') or a metric function of "
            f"sklearn_rank.metrics (e.g. ndcg_score); got {metric!r}."
        )
    return RankingScorer(spec)
