"""Per-query values computed on Spark's executors, gathered on the driver.

Rows are shuffled by query id (``repartition``: every row of a query lands in
one partition, whatever the input's partitioning), each partition is read
whole as Arrow batches (``mapInArrow``) and computed with the in-memory engine
on all its queries at once, and only a few numbers per query travel back.
An error found on an executor (bad values, a query too short for a
convention) comes back as a row carrying its message, raised on the driver
as the error it was, without a JVM or Python traceback.

Its interface: :func:`run_partitions` (the executors' part), :func:`collect`
(the driver's, with :func:`reraise`), and the checks of a DataFrame's columns
before any job starts, :func:`numeric` and :func:`query_ids`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ERROR", "collect", "column_type", "numeric", "query_ids", "reraise",
           "run_partitions"]

#: The name of the column that carries an executor's error message.
ERROR = "_sklearn_rank_error"

_ERRORS = {"ValueError": ValueError, "TypeError": TypeError}


def column_type(df, column: str):
    """The Spark type of ``df``'s ``column``."""
    return df.schema[column].dataType


def numeric(df, columns: dict, *, what: str = "the DataFrame") -> None:
    """Refuse a column of ``columns`` (``{argument: column}``) that is not numeric
    (nor boolean), naming the argument and the cast that fixes it."""
    from pyspark.sql.types import BooleanType, NumericType

    for argument, column in columns.items():
        if column is None:
            continue
        kind = column_type(df, column)
        if not isinstance(kind, NumericType | BooleanType):
            raise TypeError(
                f"{argument}={column!r}: the column {column!r} of {what} holds "
                f"{kind.simpleString()} values, not numbers; cast it, e.g. "
                f"df.withColumn({column!r}, df[{column!r}].cast('double')).")


def query_ids(df, argument: str, column: str, *, what: str = "the DataFrame") -> None:
    """Refuse a query id column of a type that is neither text nor integer."""
    from pyspark.sql.types import IntegralType, StringType

    kind = column_type(df, column)
    if not isinstance(kind, StringType | IntegralType):
        raise TypeError(
            f"{argument}={column!r}: the column {column!r} of {what} holds "
            f"{kind.simpleString()} values; query ids must be strings or integers "
            f"(cast it: df.withColumn({column!r}, df[{column!r}].cast('string'))).")


def run_partitions(df, key: str, compute, schema):
    """``compute(table)`` (a ``pyarrow.Table``: one whole partition, ``key``'s
    queries whole in it) on every partition of ``df`` shuffled by ``key``: a
    DataFrame of ``schema`` plus the error column."""
    from pyspark.sql.types import StringType, StructField, StructType

    out = StructType([*schema.fields, StructField(ERROR, StringType(), True)])
    names = out.fieldNames()

    def partition(batches):
        import pyarrow as pa

        batches = list(batches)
        if not batches or not sum(b.num_rows for b in batches):
            return
        table = pa.Table.from_batches(batches)
        try:
            columns = compute(table)
        except (ValueError, TypeError) as exc:
            columns = {ERROR: pa.array([f"{type(exc).__name__}: {exc}"])}
            columns.update({n: pa.nulls(1, _arrow(f.dataType))
                            for n, f in zip(names, out.fields, strict=True) if n != ERROR})
        if columns is None:
            return
        length = len(next(iter(columns.values())))
        columns.setdefault(ERROR, pa.nulls(length, pa.string()))
        yield pa.RecordBatch.from_arrays([columns[n] for n in names], names=names)

    return df.repartition(key).mapInArrow(partition, out)


def _arrow(kind):
    """The Arrow type of a Spark type (the few this module outputs)."""
    import pyarrow as pa
    from pyspark.sql.types import (
        BooleanType,
        ByteType,
        DoubleType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
    )

    return {BooleanType: pa.bool_(), ByteType: pa.int8(), ShortType: pa.int16(),
            IntegerType: pa.int32(), LongType: pa.int64(), DoubleType: pa.float64(),
            StringType: pa.string()}[type(kind)]


def collect(frame, *, errors: bool = True) -> dict:
    """``frame`` on the driver, as a dict of NumPy arrays, through Arrow when
    PySpark has it (>= 4.0); with ``errors``, ``frame`` carries the error column
    of :func:`run_partitions` and its executors' errors are raised here."""
    if hasattr(frame, "toArrow"):
        table = frame.toArrow()
        columns = {n: table.column(n).to_numpy(zero_copy_only=False)
                   for n in table.column_names}
    else:
        pdf = frame.toPandas()
        columns = {n: pdf[n].to_numpy() for n in pdf.columns}
    if errors:
        reraise(columns.pop(ERROR))
    return columns


def reraise(errors: np.ndarray) -> None:
    """Raise the first executor error in ``errors`` (None where there is none)."""
    found = [e for e in errors if e is not None]
    if found:
        kind, _, message = sorted(found)[0].partition(": ")
        raise _ERRORS.get(kind, ValueError)(message)
