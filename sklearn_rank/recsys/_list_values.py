"""The values of the list metrics (beyond accuracy) of an evaluation.

Each metric reads the evaluated users' top lists cut at its own k and what
its function in :mod:`~sklearn_rank.recsys._beyond` takes besides (the
catalog's size, the items' popularity in training, item features, the
relevance of the listed items); ``user_coverage`` is computed here, from
that relevance.
"""

from __future__ import annotations

import numpy as np

from ._frames import Items, codes_in, column_names, frame_kind, ids_of, unique_ids
from ._metrics import ListMetric

__all__ = ["list_values"]

_NEEDS_TRAIN = "{metric} reads the items' popularity in training: pass train=."


def list_values(metrics: list[ListMetric], top: np.ndarray, relevant: np.ndarray,
                items: Items, train: tuple | None, history: tuple, item_features,
                metric_options: dict, item_col: str) -> tuple[dict, dict]:
    """``({metric: per-user values}, {key: system value})`` of the list
    ``metrics``; ``train`` is the (user ids, item codes) of the training
    interactions, ``history`` their (rows of ``top``, item codes) for the
    evaluated users."""
    per_user, system = {}, {}
    unknown = set(metric_options) - {m.name for m in metrics}
    if unknown:
        raise ValueError(f"metric_options names {sorted(unknown)}, which is not among the "
                         f"list metrics asked for ({sorted({m.name for m in metrics})}).")
    cache: dict = {}
    for metric in metrics:
        cut, hits = top[:, :metric.k], relevant[:, :metric.k]
        if metric.name == "user_coverage":
            system[str(metric)] = float(hits.any(axis=1).mean()) if hits.shape[0] else 0.0
            continue
        from ._beyond import BEYOND, Popularity

        kwargs = {**dict(metric.params), **metric_options.get(metric.name, {})}
        function = BEYOND[metric.name][0]
        args = [cut]
        for need in _needs(metric.name):
            args.append(_argument(need, metric, cut, hits, items, train, item_features,
                                  item_col, cache, Popularity))
        if metric.name == "serendipity":
            kwargs.setdefault("history", history)
        try:
            value = function(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{metric}: {error}") from None
        if metric.level == "system":
            system[str(metric)] = float(value)
        else:
            per_user[metric] = np.asarray(value, dtype=np.float64)
    return per_user, system


def _needs(name: str) -> tuple:
    from ._metrics import LIST_METRICS

    return LIST_METRICS[name][1]


def _argument(need: str, metric, cut, hits, items: Items, train, item_features, item_col,
              cache: dict, popularity_type):
    if need == "n_catalog":
        if items.n_catalog == 0:
            raise ValueError(f"{metric} is a share of the catalog, which is empty: pass "
                             "train= (its items are the catalog) or catalog=.")
        return items.n_catalog
    if need == "relevant":
        return hits
    if need == "popularity":
        if train is None:
            raise ValueError(_NEEDS_TRAIN.format(metric=metric))
        if "popularity" not in cache:
            user_ids, item_codes = train
            users = codes_in(user_ids, unique_ids(user_ids))
            cache["popularity"] = popularity_type.from_codes(users, item_codes, items.n_items)
        return cache["popularity"]
    if need == "item_features":
        if "features" not in cache:
            cache["features"] = features_by_code(item_features, items, item_col)
        matrix, has = cache["features"]
        listed = cut[cut >= 0]
        lacking = listed[~has[listed]]
        if lacking.shape[0]:
            raise ValueError(f"{metric}: item {items.ids[lacking[0]]!r} is listed but has no "
                             "row in item_features; give every recommended item its features.")
        return matrix
    raise AssertionError(need)  # pragma: no cover - LIST_METRICS names the needs above


def features_by_code(item_features, items: Items, item_col: str):
    """``(matrix, has)``: the rows of ``item_features`` (a frame with the item
    column and numeric feature columns, or ``(ids, matrix)``) in item-code
    order, and whether each code has features."""
    if item_features is None:
        raise ValueError("ild compares the items of a list by their features: pass "
                         "item_features=.")
    if frame_kind(item_features) is not None:
        names = column_names(item_features)
        if item_col not in names:
            raise ValueError(f"item_features has no column {item_col!r} (its columns: "
                             f"{names}); it needs the item ids in the item column.")
        from ._frames import read_columns

        features = [n for n in names if n != item_col]
        columns = read_columns(item_features, "item_features",
                               {n: (n, "item_features") for n in [item_col, *features]})
        ids = columns.pop(item_col)
        try:
            matrix = np.column_stack([np.asarray(columns[n], dtype=np.float64)
                                      for n in features])
        except (TypeError, ValueError):
            raise ValueError("item_features: every column but the item column must hold "
                             "numbers.") from None
    else:
        if len(item_features) != 2:
            raise ValueError("item_features must be a frame or a pair (item ids, matrix).")
        ids, matrix = item_features
        ids = np.asarray(ids)
    ids = ids_of(ids.astype(object) if ids.dtype.kind == "U" else ids, "item_features",
                 item_col)
    if matrix.shape[0] != ids.shape[0]:
        raise ValueError(f"item_features: {ids.shape[0]} item ids but {matrix.shape[0]} "
                         "rows of features.")
    at = codes_in(ids, items.sorted_ids)
    row_of = np.full(items.n_items, -1, dtype=np.int64)
    row_of[items.code_of_sorted[at[at >= 0]]] = np.flatnonzero(at >= 0)
    has = row_of >= 0
    return matrix[np.maximum(row_of, 0)], has
