"""A scorer that scores rankings on logged clicks, reweighted by inverse propensity."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sklearn

from .._utils.validation import validate_params
from ._ipw import ipw_labels
from ._scorer import RankingScorer
from ._vocab.spec import MetricSpec
from ._vocab.spec import spec_with as _spec_with

__all__ = ["ClickScorer", "make_click_scorer"]

#: Metrics whose value is linear in the labels, where IPW labels are unbiased.
_LINEAR = ("dcg", "cg")


class ClickScorer(RankingScorer):
    """A :class:`RankingScorer` whose labels are clicks: it scores
    ``ipw_labels(clicks, propensity(position))``.

    Called as ``scorer(estimator, X, clicks, qid=None, position=None,
    sample_weight=None)``; under metadata routing it requests ``qid`` and
    ``position`` by default. Build it with :func:`make_click_scorer`.
    """

    def __init__(self, spec: MetricSpec, propensity):
        super().__init__(spec)
        self.propensity = propensity

    def __call__(self, estimator, X, y_true, sample_weight=None, qid=None, position=None):
        if position is None:
            raise ValueError(
                f"{self!r} needs the display position of each row: enable metadata "
                "routing (sklearn.set_config(enable_metadata_routing=True)) and pass "
                "position=<one position per row> to the search's fit (cross_validate: "
                "params={'position': position}), or call scorer(estimator, X, clicks, "
                "qid=qid, position=position).")
        labels = ipw_labels(y_true, _propensities(self.propensity, position))
        return super().__call__(estimator, X, labels, sample_weight=sample_weight, qid=qid)

    def score_requests(self) -> dict:
        """The metadata the scorer requests (query ids and display positions by default)."""
        return getattr(self, "_score_requests",
                       {"qid": True, "position": True, "sample_weight": None})

    def set_score_request(self, *, qid=True, position=True, sample_weight=None):
        """Set which metadata the scorer requests under metadata routing.

        Parameters
        ----------
        qid : bool, str or None, default=True
            Request query ids (the default), or an alias to read them from.
        position : bool, str or None, default=True
            Request display positions (the default), or an alias.
        sample_weight : bool, str or None, default=None
            Request sample weights.

        Returns
        -------
        self : ClickScorer
        """
        if not sklearn.get_config()["enable_metadata_routing"]:
            raise RuntimeError(
                "This method is only available when metadata routing is enabled. You can "
                "enable it using sklearn.set_config(enable_metadata_routing=True).")
        self._score_requests = {"qid": qid, "position": position,
                                "sample_weight": sample_weight}
        return self

    def __repr__(self) -> str:
        return f"make_click_scorer({str(self.spec)!r})"


def _propensities(propensity, position) -> np.ndarray:
    """The examination propensity of each row's display position."""
    position = np.asarray(position)
    if callable(propensity):
        values = np.asarray(propensity(position), dtype=float)
        if values.shape != position.shape:
            raise ValueError(
                f"propensity(position) returned shape {values.shape} for {position.shape} "
                "positions; it must return one propensity per row.")
        return values
    table = np.asarray(propensity, dtype=float)
    if position.dtype.kind not in "iu" and not (
            position.dtype.kind == "f" and np.all(position == np.floor(position))):
        raise ValueError("position must hold integer display positions to index the "
                         "propensity table.")
    index = position.astype(np.int64)
    bad = (index < 0) | (index >= table.shape[0])
    if bad.any():
        raise ValueError(
            f"position {index[bad][0]} has no entry in the propensity table of "
            f"{table.shape[0]} values (propensity[p] is the propensity of position p).")
    return table[index]


@validate_params({"metric": [str, MetricSpec], "propensity": [callable, "array-like"]})
def make_click_scorer(metric: str | MetricSpec = "dcg(gain='linear')@10", *,
                      propensity: Callable | np.ndarray) -> ClickScorer:
    """Make a scorer that scores rankings on logged clicks, unbiased for position bias.

    The scorer takes the clicks as ``y`` and each row's display position
    (routed as ``position``, as :meth:`QueryRanker.fit
    <sklearn_rank.estimators.QueryRanker.fit>` takes it), and computes
    ``metric`` on :func:`ipw_labels` ``(clicks, propensity(position))``: an
    unbiased estimate of the metric on the true relevance under the
    position-based click model. Only DCG and CG with ``gain='linear'`` are
    linear in the labels, so only they are accepted.

    Parameters
    ----------
    metric : str or MetricSpec, default="dcg(gain='linear')@10"
        ``dcg`` or ``cg`` with ``gain='linear'`` (any cutoff and discount).
    propensity : callable or array-like
        The examination propensity of a display position: a function of an
        array of positions returning one propensity per position (e.g.
        ``lambda p: 1.0 / p``), or a table with ``propensity[p]`` for position
        ``p``.

    Returns
    -------
    scorer : ClickScorer
        Called as ``scorer(estimator, X, clicks, qid=None, position=None,
        sample_weight=None)``; under metadata routing it requests ``qid`` and
        ``position`` by default. Picklable when ``propensity`` is (a table, or
        a function defined at module level).

    Raises
    ------
    ValueError
        When ``metric`` is not DCG or CG with linear gain.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_rank.estimators import QueryRanker
    >>> from sklearn_rank.metrics import make_click_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clicks, qid, position = [1, 1, 0, 0], [1, 1, 1, 1], [1, 2, 3, 4]
    >>> ranker = QueryRanker(Ridge()).fit(X, clicks, qid=qid)
    >>> scorer = make_click_scorer("dcg(gain='linear')@2", propensity=lambda p: 1.0 / p)
    >>> round(scorer(ranker, X, clicks, qid=qid, position=position), 6)
    2.26186
    """
    spec = _spec_with(metric, {})
    if spec.name not in _LINEAR or dict(spec.params).get("gain") != "linear":
        raise ValueError(
            f"make_click_scorer takes dcg or cg with gain='linear' (e.g. "
            f"\"dcg(gain='linear')@10\"), whose value is linear in the labels so that "
            f"inverse-propensity-weighted clicks estimate it without bias; got "
            f"{str(spec)!r}.")
    return ClickScorer(spec, propensity)
