"""Evaluating data too large for memory, chunk by chunk."""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral

import numpy as np

from .._utils.validation import validate_params
from ._engine.ids import qid_array
from ._engine.inputs import prepare
from ._engine.qid import concatenate_ids, id_kind
from ._evaluation import Evaluation
from ._plan import MIXED_WEIGHTS, Plan
from ._vocab.ir_measures import IRM_OBJECT
from ._vocab.spec import MetricSpec

__all__ = ["evaluate_chunks"]


def _columns(chunk, names) -> list[np.ndarray]:
    """The arrays of a chunk: a tuple, or columns of a table by name."""
    if isinstance(chunk, tuple | list):
        if len(chunk) not in (3, 4):
            raise ValueError("A chunk tuple is (y_true, y_score, qid) or (y_true, y_score, "
                             f"qid, sample_weight); got {len(chunk)} items.")
        arrays = list(chunk) + [None] * (4 - len(chunk))
    else:
        arrays = []
        for argument, name in zip(("label", "score", "qid", "weight"), names, strict=True):
            try:
                arrays.append(None if name is None else chunk[name])
            except (KeyError, IndexError):
                columns = getattr(chunk, "column_names", None) or list(chunk.keys())
                raise ValueError(f"A chunk has no column {name!r}; its columns are "
                                 f"{list(columns)}. Name the {argument} column with "
                                 f"{argument}=...") from None
    # The query ids are kept as given: see _chunk_arrays.
    return [None if a is None else a if i == 2 else np.asarray(a)
            for i, a in enumerate(arrays)]


def _chunk_arrays(chunk, names, number: int, kinds: list) -> list:
    """:func:`_columns`, with the query ids validated as given (never through
    np.asarray, which merges 1 and "1", "a" and "a\x00" or b"a" and "a"),
    errors located in the stream, and ids of one kind in every chunk
    (concatenating chunks would merge "a" and b"a")."""
    arrays = _columns(chunk, names)
    if arrays[2] is None:
        return arrays
    try:
        arrays[2] = q = qid_array(arrays[2])
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"chunk {number} (rows numbered within the chunk): {exc}") from None
    if q.shape[0]:
        kind = id_kind(q)
        if not kinds:
            kinds.append(kind)  # the kind of the first chunk's ids
        elif kind != kinds[0]:
            raise TypeError(
                f"qid values cannot be compared with each other: chunk {number} holds "
                f"{_kind_label(kind)} ids but the first chunk {_kind_label(kinds[0])} ids; "
                "use query ids of a single type in every chunk."
            )
    return arrays


def _kind_label(kind) -> str:
    return kind if isinstance(kind, str) else kind.__name__


@validate_params({"chunks": [Iterable], "metrics": [str, MetricSpec, Iterable, IRM_OBJECT],
                  "label": [str, Integral], "score": [str, Integral],
                  "qid": [str, Integral, None], "weight": [str, Integral, None]})
def evaluate_chunks(chunks: Iterable, *, metrics=("ndcg@10",), label="label", score="score",
                    qid="qid", weight=None, **options) -> Evaluation:
    """Evaluate ranking metrics over data streamed in chunks, in bounded memory.

    Parameters
    ----------
    chunks : iterable
        Chunks of rows: tuples ``(y_true, y_score, qid)`` or ``(y_true,
        y_score, qid, sample_weight)``, or tables whose columns are looked up
        by name (pandas DataFrames, pyarrow Tables or RecordBatches, or
        dicts of arrays). Each query's rows must be contiguous in the stream
        (data sorted or grouped by qid); a query may straddle chunks. For a
        parquet file, ``ParquetFile(path, pre_buffer=False).iter_batches()``
        or its row groups one at a time (``read_row_group(i)``) keep memory
        bounded; with pyarrow's default ``pre_buffer=True``, ``iter_batches``
        keeps what it has read until the iterator ends.
    metrics : str or list of str, default=("ndcg@10",)
        Metric specs, as for :func:`evaluate`.
    label, score, qid, weight : str or int, default="label", "score", "qid", None
        Column names (or positions) for table chunks; ``weight`` names an
        optional column of sample weights. Tuple chunks ignore them.
    **options
        Options of the metrics, as for :func:`evaluate`.

    Returns
    -------
    evaluation : Evaluation
        Exactly what :func:`evaluate` returns on all the rows at once: every
        query's value is computed the same way whatever else is in its chunk,
        and the means are taken once over all queries.

    Notes
    -----
    Memory holds one chunk, the rows of the query that straddles into the
    next chunk, and per-query results (a few numbers per query). A query whose
    rows appear in two separate places of the stream is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import evaluate, evaluate_chunks
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(100), 20)
    >>> y, s = rng.integers(0, 3, qid.shape[0]), rng.random(qid.shape[0])
    >>> chunks = ((y[i:i + 150], s[i:i + 150], qid[i:i + 150]) for i in range(0, 2000, 150))
    >>> streamed = evaluate_chunks(chunks, metrics=["ndcg@10", "map"])
    >>> streamed == evaluate(y, s, qid=qid, metrics=["ndcg@10", "map"])
    True
    """
    plan = Plan.of(metrics, options, caller="evaluate_chunks")
    return plan.finish([plan.per_query(prepare(*arrays))
                        for arrays in _whole_queries(chunks, (label, score, qid, weight))])


def _whole_queries(chunks: Iterable, names):
    """The rows of the chunks as arrays ``(y_true, y_score, qid, sample_weight)``
    of whole queries: the rows of the last query of a chunk are held back and
    joined to the next chunk's."""
    carry, weighted, kinds = None, None, []
    for number, chunk in enumerate(chunks):
        arrays = _chunk_arrays(chunk, names, number, kinds)
        if weighted is None:
            weighted = arrays[3] is not None
        elif weighted != (arrays[3] is not None):
            raise ValueError(MIXED_WEIGHTS)
        if carry is not None:
            arrays = _joined(carry, arrays)
        q = arrays[2]
        if q is None:
            raise ValueError("A chunk has no query ids: pass tuples (y_true, y_score, qid) or "
                             "tables with a query-id column (qid=... names it).")
        if q.shape[0] == 0:
            continue
        cut = _last_query_start(q)
        carry = [None if a is None else a[cut:] for a in arrays]
        if cut:
            yield [None if a is None else a[:cut] for a in arrays]
    if carry is not None:
        yield carry


def _joined(carry: list, arrays: list) -> list:
    """The rows held back from the previous chunks followed by a chunk's."""
    return [c if a is None else concatenate_ids((c, a)) if i == 2 else np.concatenate((c, a))
            for i, (c, a) in enumerate(zip(carry, arrays, strict=True))]


def _last_query_start(q: np.ndarray) -> int:
    """Where the rows of the last query begin (it may go on in the next chunk)."""
    last = np.empty(1, dtype=q.dtype)
    last[0] = q[-1]  # a 1-element array: a tuple id is one value, not a row
    other = np.flatnonzero(q != last)
    return 0 if other.shape[0] == 0 else int(other[-1]) + 1
