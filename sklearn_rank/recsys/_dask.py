"""evaluate_recommendations on Dask DataFrames: users in chunks, each chunk in memory.

Every user goes to one chunk by a hash of its id (the same in the three
frames), and each frame is laid out with chunk i in its partition i
(``set_index`` on the chunk number with divisions 0..n). Chunk by chunk, the
three frames' partitions are computed to pandas and evaluated as in memory;
the item codes are global (the distinct items are computed first), so the
lists of every chunk are merged into the lists of all users and the result
equals the in-memory evaluation.
"""

from __future__ import annotations

import numpy as np

from ._frames import Items, frame_kind
from ._read import catalog_ids, check_kinds, read_interactions

__all__ = ["dask_parts"]

_CHUNK = "__sklearn_rank_chunk"


def _as_dask(frame, npartitions: int):
    import dask.dataframe as dd

    kind = frame_kind(frame)
    if kind == "dask":
        return frame
    if kind == "polars":
        frame = frame.to_pandas()
    elif kind == "arrow":
        frame = frame.to_pandas()
    return dd.from_pandas(frame, npartitions=max(1, min(npartitions, len(frame) or 1)))


def _chunked(frame, user_col: str, n: int):
    """The frame's partitions, chunk i (users hashed to i) in partition i."""
    import pandas as pd

    def chunk_of(part):
        if user_col not in part.columns:  # (read_interactions names the column)
            return part.assign(**{_CHUNK: np.zeros(len(part), dtype=np.int64)})
        hashed = pd.util.hash_pandas_object(part[user_col], index=False).to_numpy()
        return part.assign(**{_CHUNK: (hashed % np.uint64(n)).astype(np.int64)})

    with_chunk = frame.map_partitions(chunk_of)
    laid = with_chunk.set_index(_CHUNK, divisions=tuple(range(n + 1)), sorted=False)
    return laid.to_delayed()


def _distinct(frame, column: str, what: str):
    if column not in frame.columns:
        return None
    values = frame[column].drop_duplicates().compute().to_numpy()
    from ._frames import ids_of

    return ids_of(values, what, column)


def _items(frames: dict, catalog, train, item_col: str) -> Items:
    """The global item vocabulary of the frames (the catalog, else train's items)."""
    distinct = {what: _distinct(f, item_col, what) for what, f in frames.items()}
    others = [d for d in distinct.values() if d is not None]
    if catalog is not None:
        catalog = catalog_ids(catalog)
    elif train is not None and distinct.get("train") is not None:
        catalog = distinct["train"]
    else:
        catalog = np.zeros(0, dtype=others[0].dtype if others else np.int64)
    return Items.of(catalog, others)


def _chunk_part(pieces: dict, names: dict, items: Items, k: int, exclude_seen: bool, plan):
    """The part of one chunk's pandas frames, and its training rows."""
    from ._evaluate import evaluate_part

    recs_rows = read_interactions(pieces["recs"], "recs", names, score=True)
    test_rows = read_interactions(pieces["test"], "test", names, rating=True)
    train_rows = (read_interactions(pieces["train"], "train", names)
                  if "train" in pieces else None)
    catalog = items.ids[:items.n_catalog]
    check_kinds([f for f in (recs_rows, test_rows, train_rows) if f is not None],
                catalog if catalog.shape[0] else None)
    part = evaluate_part(recs_rows, test_rows, train_rows, items, k, exclude_seen, plan)
    return part, train_rows


def dask_parts(recs, test, train, catalog, names: dict, k: int, exclude_seen: bool, plan):
    """``(parts, items, train codes)`` of Dask (or in-memory) frames, chunk by chunk."""
    import dask

    n = recs.npartitions if frame_kind(recs) == "dask" else 1
    frames = {"recs": _as_dask(recs, n), "test": _as_dask(test, n)}
    if train is not None:
        frames["train"] = _as_dask(train, n)
    items = _items(frames, catalog, train, names["item"])
    chunks = {what: _chunked(f, names["user"], n) for what, f in frames.items()}
    parts, train_users, train_items = [], [], []
    for i in range(n):
        computed = dask.compute(*(chunks[what][i] for what in frames))
        part, train_rows = _chunk_part(dict(zip(frames, computed, strict=True)), names, items,
                                       k, exclude_seen, plan)
        parts.append(part)
        if train_rows is not None:
            train_users.append(train_rows.user)
            train_items.append(items.codes(train_rows.item))
    train_codes = None
    if train is not None:
        train_codes = (np.concatenate(train_users), np.concatenate(train_items))
    return parts, items, train_codes
