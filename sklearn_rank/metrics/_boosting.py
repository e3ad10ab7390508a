"""Custom evaluation metrics for LightGBM and XGBoost with this package's semantics.

Early stopping should watch the number the search selects on. These adapters
report any metric spec — tie-averaged, linear gain, classic discount, MAP, ... —
exactly as :func:`~sklearn_rank.metrics.evaluate` computes it, from inside
LightGBM's and XGBoost's training loops. Neither LightGBM nor XGBoost is
imported here.
"""

from __future__ import annotations

import numpy as np

from .._utils.validation import validate_params
from ._evaluate import evaluate
from ._vocab.spec import MetricSpec
from ._vocab.spec import spec_with as _spec_with

__all__ = ["lightgbm_eval_metric", "xgboost_eval_metric"]


def _mean(spec: MetricSpec, y_true, y_score, sizes, weight) -> float:
    qid = np.repeat(np.arange(sizes.shape[0]), sizes)
    ev = evaluate(y_true, y_score, qid=qid, metrics=[spec], sample_weight=weight)
    return ev.mean[str(spec)]


class _LightGBMMetric:
    """``eval_metric`` callable for LightGBM's scikit-learn API."""

    def __init__(self, spec: MetricSpec):
        self.spec = spec
        self.__name__ = str(spec)

    def __call__(self, y_true, y_pred, weight, group):
        if group is None:
            raise ValueError(
                f"lightgbm_eval_metric({str(self.spec)!r}) needs query groups: use it "
                "with LGBMRanker (or QueryRanker(LGBMRanker())), whose eval sets have groups."
            )
        weight = None if weight is None or np.size(weight) == 0 else weight
        value = _mean(self.spec, y_true, y_pred, np.asarray(group, dtype=np.int64), weight)
        return str(self.spec), value, True  # every metric of the registry: higher is better

    def __repr__(self) -> str:
        return f"lightgbm_eval_metric({str(self.spec)!r})"


class _XGBoostMetric:
    """Metric callable for XGBoost: ``XGBRanker(eval_metric=...)`` or ``xgboost.train``."""

    def __init__(self, spec: MetricSpec):
        self.spec = spec
        # XGBoost splits its evaluation log on whitespace: a name must have none.
        self.__name__ = str(spec).replace(" ", "")

    def __call__(self, y_true_or_predt, y_pred_or_dmatrix):
        if hasattr(y_pred_or_dmatrix, "get_uint_info"):  # xgboost.train(custom_metric=)
            dmatrix, predt = y_pred_or_dmatrix, y_true_or_predt
            ptr = np.asarray(dmatrix.get_uint_info("group_ptr"), dtype=np.int64)
            labels = dmatrix.get_label()
            sizes = np.diff(ptr) if ptr.size >= 2 else np.array([labels.shape[0]])
            weight = dmatrix.get_weight()
            if weight.size == sizes.shape[0]:  # ranking weights are per query
                weight = np.repeat(weight, sizes)
            elif weight.size == 0:
                weight = None
            return self.__name__, _mean(self.spec, labels, predt, sizes, weight)
        # XGBRanker(eval_metric=...): called once per query with its labels and scores.
        y_true, y_pred = y_true_or_predt, y_pred_or_dmatrix
        return _mean(self.spec, y_true, y_pred, np.array([np.size(y_true)]), None)

    def __repr__(self) -> str:
        return f"xgboost_eval_metric({str(self.spec)!r})"


@validate_params({"metric": [str, MetricSpec]})
def lightgbm_eval_metric(metric: str | MetricSpec, **options):
    """A LightGBM ``eval_metric`` callable reporting a metric with this package's semantics.

    Parameters
    ----------
    metric : str or MetricSpec
        A metric spec, e.g. ``"ndcg@10"`` or ``"ndcg(gain='linear', discount='classic')@5"``.
    **options
        Options added to the spec (``gain``, ``ties``, ``empty``, ...).

    Returns
    -------
    eval_metric : callable
        ``eval_metric(y_true, y_pred, weight, group) -> (name, value, is_higher_better)``,
        the four-argument form LightGBM's scikit-learn API calls with the group
        sizes of each eval set. ``name`` is the canonical spec, the key of
        ``evals_result_``.

    Notes
    -----
    Pass it as ``LGBMRanker().fit(..., eval_metric=lightgbm_eval_metric("ndcg@10"))``
    (or through :class:`~sklearn_rank.estimators.QueryRanker`). LightGBM also
    evaluates its own ranking metric; to make early stopping watch this one,
    construct the ranker with ``metric="None"`` (or use
    ``lightgbm.early_stopping(..., first_metric_only=True)`` with this metric
    first). Row weights of the eval set are used as ``sample_weight`` (a
    query's weight is the mean of its rows').

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import lightgbm_eval_metric
    >>> metric = lightgbm_eval_metric("ndcg(gain='linear')@2")
    >>> name, value, higher_is_better = metric(
    ...     np.array([1, 0, 0, 2]), np.array([0.3, 0.2, 0.9, 0.1]), None, np.array([2, 2]))
    >>> name, round(value, 6), higher_is_better
    ("ndcg(gain='linear')@2", 0.815465, True)
    """
    return _LightGBMMetric(_spec_with(metric, options))


@validate_params({"metric": [str, MetricSpec]})
def xgboost_eval_metric(metric: str | MetricSpec, **options):
    """An XGBoost metric callable reporting a metric with this package's semantics.

    Parameters
    ----------
    metric : str or MetricSpec
        A metric spec, e.g. ``"ndcg@10"``.
    **options
        Options added to the spec.

    Returns
    -------
    metric : callable
        Works in both XGBoost APIs:

        - ``xgboost.train(params, dtrain, custom_metric=metric, evals=...)``: called
          as ``metric(predt, dmatrix)``, it reads the query groups of the
          DMatrix (``group_ptr``) and per-query weights and returns
          ``(name, value)``, exactly this package's mean. Pass
          ``maximize=True`` to ``xgboost.train`` for early stopping on a
          higher-is-better metric. XGBoost logs the value with six significant
          digits.
        - ``XGBRanker(eval_metric=metric)``: XGBoost's scikit-learn API calls a
          ranking metric once per query, with that query's labels and scores,
          and averages the values itself: it scores single-document queries
          1.0 without calling the metric, and (measured with XGBoost 3.2) weights
          each query by its number of documents, because it takes the group
          sizes for weights. The per-query values are exact; the mean follows
          XGBoost's rules, not this package's. Use ``xgboost.train`` for the
          exact mean.

        The metric's name (the key in XGBoost's evaluation results) is the
        canonical spec without spaces, e.g. ``"ndcg(gain='linear',discount='classic')@3"``;
        :func:`parse_metric` reads it back.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import xgboost_eval_metric
    >>> metric = xgboost_eval_metric("ndcg@2")
    >>> metric.__name__
    'ndcg@2'
    >>> round(metric(np.array([1, 0, 2]), np.array([0.3, 0.2, 0.1])), 6)
    0.275412
    """
    return _XGBoostMetric(_spec_with(metric, options))
