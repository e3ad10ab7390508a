"""Folds that keep each query whole: :func:`query_folds`, :func:`check_query_folds`."""

from __future__ import annotations

import heapq
from numbers import Integral

import numpy as np

from .._utils.validation import Interval, validate_params
from ._evaluate import SPARK_FRAME
from ._frames import collect, query_ids
from ._session import check_columns, quiet

__all__ = ["assign_folds", "check_query_folds", "query_folds"]


def assign_folds(counts: np.ndarray, num_folds: int, seed: int) -> np.ndarray:
    """The fold of each query given its row count: queries in a seeded random
    order, then largest first (a stable sort: equal sizes stay shuffled), each
    to the fold with the fewest rows so far (the lowest-numbered on a tie).
    The folds' row counts end within one query's size of each other."""
    n = counts.shape[0]
    order = np.random.default_rng(seed).permutation(n)
    order = order[np.argsort(-counts[order], kind="stable")]
    folds = np.empty(n, dtype=np.int32)
    heap = [(0, f) for f in range(num_folds)]
    for i in order:
        rows, fold = heapq.heappop(heap)
        folds[i] = fold
        heapq.heappush(heap, (rows + int(counts[i]), fold))
    return folds


@validate_params({
    "df": [SPARK_FRAME],
    "num_folds": [Interval(Integral, 2, None, closed="left")],
    "qid_col": [str],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "fold_col": [str],
})
@quiet
def query_folds(df, num_folds, *, qid_col="qid", seed=0, fold_col="fold"):
    """Add a fold column that assigns whole queries to folds, balanced by rows.

    For ``CrossValidator(foldCol=fold_col)`` and ``TrainValidationSplit``
    searches over rankers: Spark's own folds split rows at random, so one
    query's documents would sit in training and validation at once.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per (query, document).
    num_folds : int
        Number of folds (>= 2), ``CrossValidator``'s ``numFolds``.
    qid_col : str, default="qid"
        The query id column (strings or integers, no nulls).
    seed : int, default=0
        Seed of the random order of queries of equal size: the same seed
        gives the same folds.
    fold_col : str, default="fold"
        The name of the integer fold column added (0 to ``num_folds - 1``).

    Returns
    -------
    df : pyspark.sql.DataFrame
        ``df`` with the fold column (rows in another order: it is a join).

    Notes
    -----
    Each query's row count is computed on the executors; the driver collects
    one count per query and assigns the queries largest first, each to the
    fold with the fewest rows so far (queries of equal size in a seeded random
    order), so the folds' row counts end within the largest query's size of
    each other; the ``(query, fold)`` table is then joined to the rows on the
    executors. A query is never in two folds.

    Examples
    --------
    >>> from sklearn_rank.spark import query_folds
    >>> df = spark.createDataFrame([(q, d) for q in range(6) for d in range(q + 1)],
    ...                            ["qid", "doc"])
    >>> folded = query_folds(df, 3, seed=0)
    >>> sorted(r["count"] for r in folded.groupBy("fold").count().collect())
    [7, 7, 7]
    >>> folded.select("qid", "fold").distinct().count()  # each query in one fold
    6
    """
    from pyspark.sql import functions as F

    check_columns(df, {"qid_col": qid_col})
    query_ids(df, "qid_col", qid_col)
    if fold_col in df.columns:
        raise ValueError(f"fold_col={fold_col!r}: the DataFrame already has a column "
                         f"{fold_col!r}; pass another name, or drop it first.")
    counts = collect(df.groupBy(qid_col).count(), errors=False)
    ids, sizes = counts[qid_col], counts["count"].astype(np.int64)
    missing = _missing(ids)
    if missing.any():
        raise ValueError(f"qid_col={qid_col!r} has missing (null) values; drop or fill them "
                         "first: their rows would belong to no query.")
    if ids.shape[0] < num_folds:
        raise ValueError(f"num_folds={num_folds} is more than the {ids.shape[0]} queries of "
                         "the DataFrame: each fold needs a query; lower num_folds.")
    order = np.argsort(ids, kind="stable")  # (Spark's order of the counts varies)
    ids, sizes = ids[order], sizes[order]
    folds = assign_folds(sizes, num_folds, int(seed))
    schema = df.select(F.col(qid_col), F.lit(0).cast("int").alias(fold_col)).schema
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:  # an Arrow table: fast for many queries
        import pyarrow as pa

        table = df.sparkSession.createDataFrame(pa.table({qid_col: ids, fold_col: folds}),
                                                schema=schema)
    else:
        table = df.sparkSession.createDataFrame(
            list(zip(ids.tolist(), folds.tolist(), strict=True)), schema=schema)
    return df.join(table, on=qid_col, how="inner")


def _missing(ids: np.ndarray) -> np.ndarray:
    """Whether each collected id is missing (None, or NaN: an integer column with nulls)."""
    if ids.dtype.kind == "O":
        return np.array([q is None for q in ids], dtype=bool)
    return np.isnan(ids) if ids.dtype.kind == "f" else np.zeros(ids.shape, dtype=bool)


@validate_params({"df": [SPARK_FRAME], "fold_col": [str], "qid_col": [str]})
@quiet
def check_query_folds(df, fold_col, *, qid_col="qid") -> None:
    """Refuse a fold column that puts one query in two folds.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Rows with a query id column and a fold column.
    fold_col : str
        The fold column (as ``CrossValidator``'s ``foldCol``).
    qid_col : str, default="qid"
        The query id column.

    Raises
    ------
    ValueError
        When a query has rows in two folds (naming one such query and its
        folds), or a fold is missing (null).

    Examples
    --------
    >>> from sklearn_rank.spark import check_query_folds
    >>> df = spark.createDataFrame([("a", 0), ("a", 1), ("b", 1)], ["qid", "fold"])
    >>> check_query_folds(df, "fold")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: fold_col='fold' splits 1 query across folds (first: query 'a', ...
    """
    from pyspark.sql import functions as F

    check_columns(df, {"fold_col": fold_col, "qid_col": qid_col})
    nulls = df.filter(F.col(fold_col).isNull()).limit(1).count()
    if nulls:
        raise ValueError(f"fold_col={fold_col!r} has missing (null) values: every row needs "
                         "its fold.")
    split = (df.groupBy(qid_col)
             .agg(F.countDistinct(fold_col).alias("n"), F.sort_array(
                 F.collect_set(fold_col)).alias("folds"))
             .filter(F.col("n") > 1))
    n_split = split.count()
    if n_split:
        first = split.orderBy(qid_col).first()
        raise ValueError(
            f"fold_col={fold_col!r} splits {n_split} quer{'y' if n_split == 1 else 'ies'} "
            f"across folds (first: query {first[qid_col]!r}, in folds {list(first['folds'])}); "
            "a query's rows must all be in one fold, or the validation fold scores "
            "documents of queries trained on: make the folds with "
            "sklearn_rank.spark.query_folds(df, num_folds).")
