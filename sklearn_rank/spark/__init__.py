"""Spark integration: ranking metrics on Spark DataFrames, an Evaluator for
Spark ML's model selection and folds that keep each query whole.

Requires the ``spark`` extra (``pip install "sklearn-rank[spark]"``: PySpark
and pyarrow) and a Java runtime 17 or newer, which Spark runs on
(:func:`get_session` checks it). :func:`evaluate` and :func:`evaluate_run`
give exactly the :class:`~sklearn_rank.metrics.Evaluation` of the in-memory
:func:`sklearn_rank.metrics.evaluate` and :func:`sklearn_rank.trec.evaluate_run`,
each query computed whole on the executors; :class:`RankingEvaluator` scores a
ranking metric in ``CrossValidator`` and ``TrainValidationSplit``, over the
folds of :func:`query_folds`.
"""

try:
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is installed in CI
    raise ImportError(
        "sklearn_rank.spark needs PySpark: pip install 'sklearn-rank[spark]' (and a Java "
        f"runtime 17 or newer, e.g. openjdk-17-jre-headless) ({exc})."
    ) from None

from ._evaluate import evaluate
from ._evaluator import RankingEvaluator
from ._folds import check_query_folds, query_folds
from ._run import evaluate_run
from ._session import get_session

__all__ = ["RankingEvaluator", "check_query_folds", "evaluate", "evaluate_run", "get_session",
           "query_folds"]
