"""A Spark ML ``Evaluator`` of ranking metrics: :class:`RankingEvaluator`."""

from __future__ import annotations

from pyspark import keyword_only
from pyspark.ml.evaluation import Evaluator
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from ..metrics._vocab.spec import listed_metrics, parse_specs
from ._evaluate import evaluate

__all__ = ["RankingEvaluator"]


def _metric_name(value) -> str:
    """``metricName``'s converter: one metric spec, checked when it is set."""
    if not isinstance(value, str):
        raise TypeError(f"metricName must be one metric spec as a string, such as 'ndcg@10' "
                        f"or 'map'; got {type(value).__name__} {value!r}.")
    specs = parse_specs(listed_metrics(value))  # a misspelt metric is told here
    if len(specs) != 1:
        raise ValueError(f"metricName must be one metric spec, got {value!r} (which is "
                         f"{len(specs)}); an evaluator scores one metric (evaluate several "
                         "with sklearn_rank.spark.evaluate).")
    return value


def _param(name: str, doc: str, converter) -> Param:
    """A class-level Param, owned by no instance yet (each evaluator copies it
    with itself as the parent, as Spark's own ``Params._dummy()`` placeholder does)."""
    owner = Params()
    owner.uid = "undefined"
    return Param(owner, name, doc, typeConverter=converter)


def _optional_string(value):
    return None if value is None else TypeConverters.toString(value)


class RankingEvaluator(Evaluator, DefaultParamsReadable, DefaultParamsWritable):
    """Evaluator of a ranking metric per query, for Spark ML's model selection.

    The metric's mean over queries of :func:`sklearn_rank.spark.evaluate`, so
    ``CrossValidator`` and ``TrainValidationSplit`` tune rankers on NDCG,
    MAP, ERR, ... with each query ranked whole. Persistable like Spark's own
    evaluators (``save``/``load``, and inside a saved ``CrossValidator``).

    Parameters
    ----------
    metricName : str, default="ndcg@10"
        One metric spec of the registry (``"ndcg@10"``, ``"map"``,
        ``"dcg(gain='linear')@5"``, ``"P.10"``, ``"nDCG@10"``; see
        :func:`sklearn_rank.metrics.get_metric_names`).
    queryIdCol : str, default="qid"
        The column of the query ids (strings or integers).
    labelCol : str, default="label"
        The column of the relevance labels.
    predictionCol : str, default="prediction"
        The column of the scores that rank each query's documents.
    weightCol : str, default=None
        A column of per-row sample weights (a query's weight is the mean of its
        rows'); None: queries weigh alike.

    See Also
    --------
    sklearn_rank.spark.evaluate : Several metrics, per query.
    sklearn_rank.spark.query_folds : Folds that keep each query whole, for
        ``CrossValidator(foldCol=...)``.

    Examples
    --------
    >>> from sklearn_rank.spark import RankingEvaluator
    >>> evaluator = RankingEvaluator(metricName="ndcg@2", queryIdCol="qid")
    >>> evaluator.isLargerBetter()
    True
    >>> df = spark.createDataFrame(
    ...     [("a", 3, .9), ("a", 0, .8), ("a", 1, .1), ("b", 0, .5), ("b", 1, .4)],
    ...     ["qid", "label", "prediction"])
    >>> round(evaluator.evaluate(df), 6)
    0.774125
    """

    metricName = _param("metricName", "the ranking metric spec, e.g. 'ndcg@10'", _metric_name)
    queryIdCol = _param("queryIdCol", "the query id column", TypeConverters.toString)
    labelCol = _param("labelCol", "the relevance label column", TypeConverters.toString)
    predictionCol = _param("predictionCol", "the score (prediction) column",
                           TypeConverters.toString)
    weightCol = _param("weightCol", "a column of sample weights (None: unweighted)",
                       _optional_string)

    @keyword_only
    def __init__(self, *, metricName: str = "ndcg@10", queryIdCol: str = "qid",
                 labelCol: str = "label", predictionCol: str = "prediction",
                 weightCol: str | None = None):
        super().__init__()
        self._setDefault(metricName="ndcg@10", queryIdCol="qid", labelCol="label",
                         predictionCol="prediction", weightCol=None)
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, metricName: str = "ndcg@10", queryIdCol: str = "qid",
                  labelCol: str = "label", predictionCol: str = "prediction",
                  weightCol: str | None = None) -> RankingEvaluator:
        """Set the given params (the others keep their values)."""
        return self._set(**self._input_kwargs)

    def getMetricName(self) -> str:
        """The metric spec."""
        return self.getOrDefault(self.metricName)

    def setMetricName(self, value: str) -> RankingEvaluator:
        """Set the metric spec."""
        return self._set(metricName=value)

    def getQueryIdCol(self) -> str:
        """The query id column."""
        return self.getOrDefault(self.queryIdCol)

    def setQueryIdCol(self, value: str) -> RankingEvaluator:
        """Set the query id column."""
        return self._set(queryIdCol=value)

    def getLabelCol(self) -> str:
        """The relevance label column."""
        return self.getOrDefault(self.labelCol)

    def setLabelCol(self, value: str) -> RankingEvaluator:
        """Set the relevance label column."""
        return self._set(labelCol=value)

    def getPredictionCol(self) -> str:
        """The score column."""
        return self.getOrDefault(self.predictionCol)

    def setPredictionCol(self, value: str) -> RankingEvaluator:
        """Set the score column."""
        return self._set(predictionCol=value)

    def getWeightCol(self) -> str | None:
        """The sample weight column (None: unweighted)."""
        return self.getOrDefault(self.weightCol)

    def setWeightCol(self, value: str | None) -> RankingEvaluator:
        """Set the sample weight column (None: unweighted)."""
        return self._set(weightCol=value)

    def isLargerBetter(self) -> bool:
        """Whether a larger value of the metric is better (the metric's own sense)."""
        spec = parse_specs(listed_metrics(self.getMetricName()))[0]
        return bool(getattr(spec, "greater_is_better", True))

    def _evaluate(self, dataset) -> float:
        metric = self.getMetricName()
        result = evaluate(dataset, [metric], qid_col=self.getQueryIdCol(),
                          label_col=self.getLabelCol(), score_col=self.getPredictionCol(),
                          weight_col=self.getWeightCol())
        return float(next(iter(result.mean.values())))
