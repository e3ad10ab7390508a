"""Evaluating a TREC run held in Spark DataFrames: :func:`evaluate_run`."""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Real

import numpy as np

from .._utils.validation import Interval, validate_params
from ..metrics import MetricSpec
from ..metrics._evaluation import Evaluation
from ..metrics._plan import PerQuery
from ..metrics._vocab.ir_measures import IRM_OBJECT
from ..metrics._vocab.spec import listed_metrics, parse_specs
from ..metrics._vocab.trec_eval_table import engine_item
from ..trec import Qrels, Run
from ..trec._evaluate import DEFAULT_MEASURES, lay_out, merged, registry_plans
from ..trec._ranked_rows import ranked_rows
from ._evaluate import SPARK_FRAME, install, refuse_stable, shipped
from ._frames import collect, numeric, query_ids, run_partitions
from ._session import quiet

__all__ = ["evaluate_run"]

_LAYOUTS = {"qrels": (("qid", "docno", "label"), ("query_id", "doc_id", "relevance")),
            "run": (("qid", "docno", "score"), ("query_id", "doc_id", "score"))}
_KIND, _QID, _DOC, _LABEL, _SCORE = "kind", "qid", "docno", "label", "score"


def _columns(df, what: str) -> tuple[str, str, str]:
    """The id and value columns of a qrels or run DataFrame, in either layout."""
    found = [names for names in _LAYOUTS[what] if all(n in df.columns for n in names)]
    if len(found) != 1:
        layouts = " or ".join(", ".join(names) for names in _LAYOUTS[what])
        which = "both" if found else "neither"
        raise ValueError(f"{what}_df must have the columns {layouts} (PyTerrier's or "
                         f"ir_measures' layout); its columns {df.columns} have {which}.")
    return found[0]


def _rows(qrels_df, run_df):
    """The judgments and the run as one DataFrame: ``kind`` 0 (qrels) or 1 (run),
    ``qid`` and ``docno`` as text, the qrels' ``label`` and the run's ``score``."""
    from pyspark.sql import functions as F

    frames = []
    for df, what in ((qrels_df, "qrels"), (run_df, "run")):
        qid, docno, value = _columns(df, what)
        query_ids(df, f"{what}_df's {qid!r}", qid, what=f"{what}_df")
        query_ids(df, f"{what}_df's {docno!r}", docno, what=f"{what}_df")
        numeric(df, {f"{what}_df's {value!r}": value}, what=f"{what}_df")
        frames.append((df, qid, docno, value))
    (qdf, qq, qd, qv), (rdf, rq, rd, rv) = frames
    label_type, score_type = qdf.schema[qv].dataType, rdf.schema[rv].dataType
    qrels = qdf.select(F.lit(0).alias(_KIND), F.col(qq).cast("string").alias(_QID),
                       F.col(qd).cast("string").alias(_DOC), F.col(qv).alias(_LABEL),
                       F.lit(None).cast(score_type).alias(_SCORE))
    run = rdf.select(F.lit(1).alias(_KIND), F.col(rq).cast("string").alias(_QID),
                     F.col(rd).cast("string").alias(_DOC),
                     F.lit(None).cast(label_type).alias(_LABEL), F.col(rv).alias(_SCORE))
    return qrels.unionByName(run)


def _schema(n_values: int):
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    fields = [StructField("qid", StringType(), True), StructField("length", LongType(), True),
              StructField("max_label", DoubleType(), True)]
    for i in range(n_values):
        fields += [StructField(f"value{i}", DoubleType(), True),
                   StructField(f"empty{i}", BooleanType(), True)]
    return StructType(fields)


def _tables(table):
    """The partition's :class:`Qrels` and :class:`Run` (None when no query is
    evaluated here: the run's queries without judgments are skipped)."""
    import pyarrow.compute as pc

    kind = table.column(_KIND)
    qrels = table.filter(pc.equal(kind, 0)).select([_QID, _DOC, _LABEL]).to_pandas()
    run = table.filter(pc.equal(kind, 1)).select([_QID, _DOC, _SCORE]).to_pandas()
    for frame, what in ((qrels, "qrels_df"), (run, "run_df")):
        missing = frame.isna().any(axis=1)
        if missing.any():
            raise ValueError(f"{what} has {int(missing.sum())} row(s) with a missing (null) "
                             f"value (first in query {frame[_QID][missing].iloc[0]!r}); drop "
                             "or fill them first.")
    if not qrels.shape[0]:
        return None, None
    return Qrels.from_frame(qrels), Run.from_frame(run)


def _per_partition(plans, options, relevance_level, complete, judged_only):
    definitions = shipped(plan for _, plan in plans)

    def compute(table):
        import pyarrow as pa

        install(definitions)
        qrels, run = _tables(table)
        if qrels is None:
            return None
        cache: dict = {}

        def columns(only, layout):
            return ranked_rows(qrels, run, complete, judged_only or only, layout, cache)

        out, i, laid_out, qids = {}, 0, {}, None
        for key, plan in plans:
            data = lay_out(key, plan, options, relevance_level, columns, laid_out)
            if not data.n_queries:
                return None
            part = plan.per_query(data)
            if qids is not None and not np.array_equal(part.qids, qids):
                raise ValueError("The layouts of the metrics evaluate different queries; "
                                 "evaluate these metrics in separate calls.")
            if qids is None:
                qids = part.qids
                out.update(qid=pa.array(part.qids.astype(str), type=pa.string()),
                           length=pa.array(part.lengths, type=pa.int64()),
                           max_label=pa.array(np.full(data.n_queries, part.max_label)))
            for k in plan.keys:
                out[f"value{i}"] = pa.array(part.values[k], type=pa.float64())
                out[f"empty{i}"] = pa.array(part.empty[k], type=pa.bool_())
                i += 1
        return out

    return compute


def _refuse_engine(listed: list) -> None:
    engine = [m for m in listed if engine_item(m) is not None]
    if engine:
        raise ValueError(
            f"{', '.join(repr(str(m)) for m in engine)}: trec_eval's own measures (computed "
            "by its engine, not the registry's plan) are not distributed on Spark; compute "
            "them on the collected rows with sklearn_rank.trec.evaluate_run (or trec_eval), "
            "or use the registry's metrics.")


@validate_params({
    "qrels_df": [SPARK_FRAME],
    "run_df": [SPARK_FRAME],
    "metrics": [str, MetricSpec, Iterable, IRM_OBJECT],
    "relevance_level": [Interval(Real, None, None, closed="neither")],
    "complete": ["boolean"],
    "judged_only": ["boolean"],
})
@quiet
def evaluate_run(qrels_df, run_df, metrics=DEFAULT_MEASURES, *, relevance_level=1,
                 complete=False, judged_only=False, **options) -> Evaluation:
    """Evaluate a TREC run against relevance judgments held in Spark DataFrames.

    :func:`sklearn_rank.trec.evaluate_run`'s numbers, with the join and the
    evaluation of each query on Spark's executors.

    Parameters
    ----------
    qrels_df : pyspark.sql.DataFrame
        The judgments: columns ``qid, docno, label`` (PyTerrier's layout) or
        ``query_id, doc_id, relevance`` (ir_measures'); ids strings or
        integers (an integer id is its decimal string, as in a qrels file),
        levels integers.
    run_df : pyspark.sql.DataFrame
        The run: columns ``qid, docno, score`` or ``query_id, doc_id, score``.
    metrics : str or list of str, default=("map", "P.10", "ndcg_cut.10", "recip_rank")
        Registry specs and the trec_eval and ir_measures names the registry
        computes, each with the meaning it has in
        :func:`sklearn_rank.trec.evaluate_run`; trec_eval's own families
        (``num_ret``, ``infAP``, ``iprec_at_recall``, ...) and the diversity
        measures are refused (compute them on collected rows).
    relevance_level : float, default=1
        A document is relevant when its level is >= relevance_level
        (trec_eval's ``-l``).
    complete : bool, default=False
        trec_eval's ``-c``: judged queries the run misses count, with 0.
    judged_only : bool, default=False
        trec_eval's ``-J``: unjudged retrieved documents are removed before
        ranking.
    **options
        Options of the registry's metrics (``gain``, ``ties``, ``empty``,
        ``convention``, ...); ``ties="stable"`` (the run's row order) is
        refused: a shuffle does not keep it.

    Returns
    -------
    evaluation : Evaluation
        What :func:`sklearn_rank.trec.evaluate_run` returns on the same rows
        (query ids as text).

    Notes
    -----
    Both frames are shuffled together by query id, so a query's judgments and
    retrieved documents meet in one partition; each executor joins and ranks
    its partition's queries (trec_eval's rules: ties by decreasing document
    id for trec_eval's names, unjudged documents non-relevant, judged
    documents the run missed in the ideal ranking, queries without judgments
    skipped) and computes their values; the driver gathers a few numbers per
    query and takes the means.

    Examples
    --------
    >>> from sklearn_rank.spark import evaluate_run
    >>> qrels = spark.createDataFrame([("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1),
    ...                                ("q2", "d1", 1)], ["qid", "docno", "label"])
    >>> run = spark.createDataFrame([("q1", "d1", .9), ("q1", "d2", .8), ("q1", "d4", .7),
    ...                              ("q2", "d2", .5), ("q2", "d1", .4)],
    ...                             ["qid", "docno", "score"])
    >>> ev = evaluate_run(qrels, run, ["map", "P.2", "ndcg_cut.3"])
    >>> ev.per_query["map"]
    array([0.5, 0.5])
    >>> round(ev.mean["ndcg_cut.3"], 6)
    0.695559
    """
    listed = listed_metrics(metrics)
    _refuse_engine(listed)
    specs = parse_specs(listed)
    options, plans = registry_plans(specs, relevance_level, options)
    for _, plan in plans:
        refuse_stable(plan, "qid")
    rows = _rows(qrels_df, run_df)
    n_values = sum(len(plan.keys) for _, plan in plans)
    parts = run_partitions(rows, _QID, _per_partition(plans, options, relevance_level,
                                                      complete, judged_only),
                           _schema(n_values))
    columns = collect(parts)
    if not columns["qid"].shape[0]:
        raise ValueError("No query of run_df has judgments in qrels_df (nor, with "
                         "complete=True, is any query judged): there is nothing to evaluate.")
    evaluations, i = [], 0
    qids = np.asarray(columns["qid"]).astype(str)
    for _, plan in plans:
        values = {k: np.asarray(columns[f"value{i + j}"], dtype=np.float64)
                  for j, k in enumerate(plan.keys)}
        empty = {k: np.asarray(columns[f"empty{i + j}"], dtype=bool)
                 for j, k in enumerate(plan.keys)}
        i += len(plan.keys)
        part = PerQuery(qids, values, empty, None, float(np.max(columns["max_label"])),
                        lengths=np.asarray(columns["length"], dtype=np.int64))
        evaluations.append(plan.finish([part], where="the Spark DataFrames"))
    return evaluations[0] if len(evaluations) == 1 else merged(evaluations, specs)

