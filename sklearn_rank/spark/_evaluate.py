"""Evaluating a Spark DataFrame of (query, label, score) rows: :func:`evaluate`.

Also the interface of the other modules: :data:`SPARK_FRAME` (the constraint of
a DataFrame argument), :func:`refuse_stable` (row order does not survive a
shuffle), :func:`finish` (the driver's part: the gathered per-query values
finished as in memory), and :func:`shipped` and :func:`install`, which carry the
plan's metric definitions to the executors (a metric registered with
:func:`~sklearn_rank.metrics.register_metric` in the driver is unknown to their
Python processes, or known there under an older definition).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._utils.validation import HasMethods, validate_params
from ..metrics import MetricSpec
from ..metrics._engine.ids import qid_array
from ..metrics._engine.inputs import prepare
from ..metrics._evaluation import Evaluation
from ..metrics._plan import PerQuery, Plan
from ..metrics._trec_flat import engine_items
from ..metrics._vocab.ir_measures import IRM_OBJECT
from ..metrics._vocab.registry import METRICS, register, unregister
from ..metrics._vocab.spec import listed_metrics
from ._frames import collect, numeric, query_ids, run_partitions
from ._session import check_columns, quiet

__all__ = ["SPARK_FRAME", "evaluate", "finish", "install", "refuse_stable", "shipped"]

#: The constraint of a Spark DataFrame argument.
SPARK_FRAME = HasMethods(("mapInArrow", "repartition", "select"))
_Q, _Y, _S, _W = "q", "y", "s", "w"  # the columns as the executors see them


def refuse_stable(plan: Plan, qid_col: str) -> None:
    """Refuse a metric that breaks ties by row order: a shuffle does not keep it."""
    stable = [e.key for e in plan.entries if e.options.get("ties") == "stable"]
    if stable:
        raise ValueError(
            f"{stable[0]} breaks ties by row order (ties='stable'), which Spark's shuffle "
            f"on {qid_col!r} does not keep (nor does a DataFrame have a row order): use "
            "ties='average' (the default), 'pessimistic' or 'optimistic', or add a "
            "column that orders the rows and make it part of the score.")


def shipped(plans) -> dict:
    """``{name: definition}`` of the metrics of ``plans``, sent with the executors'
    function (a user's metric pickled by value, with its function)."""
    return {entry.spec.name: entry.metric for plan in plans for entry in plan.entries}


def install(definitions: dict) -> None:
    """Make the executor's registry hold the driver's ``definitions`` (registering a
    user's metric the worker lacks, replacing one the worker has from an earlier
    task of another definition)."""
    for name, metric in definitions.items():
        if METRICS.get(name) != metric:
            if name in METRICS:
                unregister(name)
            register(metric)


def _refuse_engine(listed: list) -> None:
    """Refuse trec_eval's own families (computed by its engine on flat rows in memory)."""
    engine = engine_items(listed)
    if engine:
        text = ", ".join(repr(listed[i] if isinstance(listed[i], str) else str(listed[i]))
                         for i in engine)
        raise ValueError(
            f"{text}: trec_eval's own measures (computed by its engine, not the registry) "
            "are not distributed on Spark; evaluate them on collected rows with "
            "sklearn_rank.metrics.evaluate, or use the registry's metrics (see "
            "sklearn_rank.metrics.get_metric_names()).")


def _schema(qid_type, keys):
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        LongType,
        StructField,
        StructType,
    )

    fields = [StructField("qid", qid_type, True), StructField("weight", DoubleType(), True),
              StructField("length", LongType(), True),
              StructField("max_label", DoubleType(), True)]
    for i in range(len(keys)):
        fields += [StructField(f"value{i}", DoubleType(), True),
                   StructField(f"empty{i}", BooleanType(), True)]
    return StructType(fields)


def _named(exc: Exception, names: dict) -> Exception:
    """``exc`` with the engine's argument names replaced by the user's columns."""
    message = str(exc)
    for engine_name, user in names.items():
        message = message.replace(engine_name, user)
    return type(exc)(message)


def _no_nulls(table, names: dict) -> None:
    """Refuse a missing value in a column, naming its argument."""
    for column, argument in names.items():
        if column in table.column_names and table.column(column).null_count:
            raise ValueError(
                f"{argument} has {table.column(column).null_count} missing (null) value(s); "
                "drop or fill them (df.dropna(subset=[...]) / df.fillna(...)) first.")


def _per_partition(plan: Plan, keys: list, names: dict, weighted: bool):
    """The function an executor runs on one partition's rows (an Arrow table)."""
    definitions = shipped([plan])

    def compute(table):
        import pyarrow as pa

        install(definitions)
        _no_nulls(table, {_Q: names["qid"], _Y: names["y_true"], _S: names["y_score"],
                          _W: names["sample_weight"]})
        col = {n: table.column(n).to_numpy(zero_copy_only=False) for n in table.column_names}
        try:
            part = plan.per_query(prepare(col[_Y], col[_S], col[_Q],
                                          col[_W] if weighted else None))
        except (ValueError, TypeError) as exc:
            raise _named(exc, {k: v for k, v in names.items() if k != "qid"}) from None
        n = part.qids.shape[0]
        out = {"qid": pa.array(part.qids, type=table.schema.field(_Q).type),
               "weight": pa.array(np.full(n, np.nan) if part.weights is None
                                  else part.weights, type=pa.float64()),
               "length": pa.array(part.lengths, type=pa.int64()),
               "max_label": pa.array(np.full(n, part.max_label), type=pa.float64())}
        for i, key in enumerate(keys):
            out[f"value{i}"] = pa.array(part.values[key], type=pa.float64())
            out[f"empty{i}"] = pa.array(part.empty[key], type=pa.bool_())
        return out

    return compute


def finish(plan: Plan, columns: dict, weighted: bool, where: str) -> Evaluation:
    """The evaluation of the per-query values gathered from the executors."""
    keys = plan.keys
    if not columns["qid"].shape[0]:
        raise ValueError(f"There is no row to evaluate: {where} is empty.")
    part = PerQuery(qid_array(columns["qid"]),
                    {k: np.asarray(columns[f"value{i}"], dtype=np.float64)
                     for i, k in enumerate(keys)},
                    {k: np.asarray(columns[f"empty{i}"], dtype=bool)
                     for i, k in enumerate(keys)},
                    np.asarray(columns["weight"], dtype=np.float64) if weighted else None,
                    float(np.max(columns["max_label"])),
                    lengths=np.asarray(columns["length"], dtype=np.int64))
    return plan.finish([part], where=where)


@validate_params({
    "df": [SPARK_FRAME],
    "metrics": [str, MetricSpec, Iterable, IRM_OBJECT],
    "qid_col": [str],
    "label_col": [str],
    "score_col": [str],
    "weight_col": [str, None],
})
@quiet
def evaluate(df, metrics=("ndcg@10",), *, qid_col="qid", label_col="label",
             score_col="score", weight_col=None, **options) -> Evaluation:
    """Evaluate ranking metrics on a Spark DataFrame, per query, exactly.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per (query, document), in any order and partitioning.
    metrics : str, MetricSpec or list of them, default=("ndcg@10",)
        Metric specs, as for :func:`sklearn_rank.metrics.evaluate` (the
        registry's metrics, with their trec_eval and ir_measures names;
        trec_eval's own families such as ``num_rel`` or ``infAP`` are
        refused: evaluate them in memory).
    qid_col, label_col, score_col : str, default="qid", "label", "score"
        The columns of the query ids (strings or integers), the relevance
        labels and the scores (numbers).
    weight_col : str, default=None
        A column of per-row sample weights (a query's weight is the mean of
        its rows').
    **options
        Options of the metrics (``gain``, ``ties``, ``empty``, ...), as for
        :func:`sklearn_rank.metrics.evaluate`. ``ties="stable"`` (row order,
        also set by the ``lightgbm`` and ``xgboost`` conventions) is refused:
        a Spark DataFrame has no row order a shuffle keeps.

    Returns
    -------
    evaluation : Evaluation
        Exactly what :func:`sklearn_rank.metrics.evaluate` returns on the same
        rows in memory: per-query values, means, empty counts, weights.

    Notes
    -----
    The rows are shuffled by ``qid_col`` (``df.repartition(qid_col)``, into
    ``spark.sql.shuffle.partitions`` partitions), so each query's rows meet in
    one partition whatever the input's partitioning; each executor reads its
    partition as Arrow batches and computes all its queries' values at once
    with the in-memory engine (a query's value does not depend on the
    others). Only a few numbers per query (the values, whether the query is
    empty, its weight and length) are collected to the driver, which applies
    the ``empty`` policies and takes the means once, as in memory. Missing
    (null) values and non-numeric columns are refused naming the argument.

    Examples
    --------
    >>> from sklearn_rank.spark import evaluate
    >>> df = spark.createDataFrame(
    ...     [("a", 3, .9), ("a", 0, .8), ("a", 1, .1), ("b", 0, .5), ("b", 1, .4)],
    ...     ["qid", "label", "score"])
    >>> ev = evaluate(df, ["ndcg@2", "mrr"])
    >>> ev.per_query["mrr"]
    array([1. , 0.5])
    >>> round(ev.mean["ndcg@2"], 6)
    0.774125
    """
    listed = listed_metrics(metrics)
    _refuse_engine(listed)
    plan = Plan.of(listed, options, caller="evaluate")
    refuse_stable(plan, qid_col)
    arguments = {"qid_col": qid_col, "label_col": label_col, "score_col": score_col,
                 "weight_col": weight_col}
    check_columns(df, arguments)
    numeric(df, {"label_col": label_col, "score_col": score_col, "weight_col": weight_col})
    query_ids(df, "qid_col", qid_col)
    weighted = weight_col is not None
    from pyspark.sql import functions as F

    rows = df.select(F.col(qid_col).alias(_Q), F.col(label_col).cast("double").alias(_Y),
                     F.col(score_col).alias(_S),
                     *([F.col(weight_col).cast("double").alias(_W)] if weighted else []))
    names = {"qid": f"qid_col={qid_col!r}", "y_true": f"label_col={label_col!r}",
             "y_score": f"score_col={score_col!r}",
             "sample_weight": f"weight_col={weight_col!r}"}
    keys = plan.keys
    parts = run_partitions(rows, _Q, _per_partition(plan, keys, names, weighted),
                           _schema(df.schema[qid_col].dataType, keys))
    return finish(plan, collect(parts), weighted, "the Spark DataFrame")
