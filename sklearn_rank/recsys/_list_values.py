"""The values of the list metrics (beyond accuracy) of an evaluation.

Each metric reads the evaluated users' top lists cut at its own k and what
its function in :mod:`~sklearn_rank.recsys._beyond` takes besides (the
catalog's size, the items' popularity in training, item features, the
relevance of the listed items); ``user_coverage`` is computed here, from
that relevance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._frames import Items, codes_in, column_names, frame_kind, ids_of, sorted_unique, unique_ids
from ._metrics import ListMetric

__all__ = ["Inputs", "baseline_lists", "features_by_code", "list_values"]

_NEEDS_TRAIN = "{metric} reads the items' popularity in training: pass train=."


@dataclass(frozen=True)
class Inputs:
    """What the list metrics read besides their lists.

    Attributes
    ----------
    users : ndarray of shape (n_users,)
        The evaluated users' ids (the rows of the lists).
    items : Items
    train : (user ids, item codes) of the training interactions, or None
    history : (rows of the lists, item codes) of the evaluated users' training items
    item_features : the argument of evaluate_recommendations
    names : dict
        The column names (user, item, score, rating).
    exclude_seen : bool
    """

    users: np.ndarray
    items: Items
    train: tuple | None
    history: tuple
    item_features: object
    names: dict
    exclude_seen: bool


def list_values(metrics: list[ListMetric], top: np.ndarray, relevant: np.ndarray,
                inputs: Inputs, metric_options: dict) -> tuple[dict, dict]:
    """``({metric: per-user values}, {key: system value})`` of the list ``metrics``."""
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
        from ._beyond import BEYOND

        kwargs = {**dict(metric.params), **metric_options.get(metric.name, {})}
        args = [cut] + [_argument(need, metric, cut, hits, inputs, cache)
                        for need in _needs(metric.name)]
        if metric.name == "serendipity":
            kwargs = _serendipity_options(kwargs, metric, cut, hits, inputs, cache)
        try:
            value = BEYOND[metric.name][0](*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{metric}: {error}") from None
        if metric.level == "system":
            system[str(metric)] = float(value)
        else:
            per_user[metric] = np.asarray(value, dtype=np.float64)
    return per_user, system


def _serendipity_options(kwargs: dict, metric, cut, hits, inputs: Inputs, cache) -> dict:
    """serendipity's keywords: the training history, a baseline frame as its
    lists (``expected``), and what its convention reads."""
    kwargs = dict(kwargs)
    kwargs.setdefault("history", inputs.history)
    if kwargs.get("expected") is not None and frame_kind(kwargs["expected"]) is not None:
        kwargs["expected"] = baseline_lists(kwargs["expected"], metric.k, inputs)
    if kwargs.get("convention") == "rectools":
        kwargs.setdefault("popularity", _argument("popularity", metric, cut, hits, inputs,
                                                  cache))
        kwargs.setdefault("n_catalog", _argument("n_catalog", metric, cut, hits, inputs,
                                                 cache))
    if inputs.item_features is not None and "item_features" not in kwargs:
        kwargs["item_features"] = _argument("item_features", metric, cut, hits, inputs, cache)
    return kwargs


def baseline_lists(frame, k: int, inputs: Inputs) -> np.ndarray:
    """A baseline's recommendations frame as lists of the evaluated users
    (ranked, seen items removed and cut as the evaluated lists are; items
    outside the vocabulary dropped: they match no listed item)."""
    from ._lists import pair_keys, rank_lists
    from ._read import read_interactions

    rows = read_interactions(frame, "the serendipity baseline (expected)", inputs.names,
                             score=True)
    user = codes_in(rows.user, inputs.users)
    at = codes_in(rows.item, inputs.items.sorted_ids)
    keep = (user >= 0) & (at >= 0)
    item = inputs.items.code_of_sorted[at[keep]]
    key = inputs.items.order
    seen = None
    if inputs.exclude_seen and inputs.history[0].shape[0]:
        seen = sorted_unique(pair_keys(inputs.history[0], inputs.history[1], key))
    kept = np.flatnonzero(keep)

    def where(a, b):
        return rows.duplicate_error(int(kept[a]), int(kept[b]))

    return rank_lists(user[keep], item, rows.score[keep], key, inputs.users.shape[0], k,
                      seen, where).top


def _needs(name: str) -> tuple:
    from ._metrics import LIST_METRICS

    return LIST_METRICS[name][1]


def _argument(need: str, metric, cut, hits, inputs: Inputs, cache: dict):
    items = inputs.items
    if need == "n_catalog":
        if items.n_catalog == 0:
            raise ValueError(f"{metric} is a share of the catalog, which is empty: pass "
                             "train= (its items are the catalog) or catalog=.")
        return items.n_catalog
    if need == "relevant":
        return hits
    if need == "popularity":
        if inputs.train is None:
            raise ValueError(_NEEDS_TRAIN.format(metric=metric))
        if "popularity" not in cache:
            from ._beyond import Popularity

            user_ids, item_codes = inputs.train
            users = codes_in(user_ids, unique_ids(user_ids))
            cache["popularity"] = Popularity.from_codes(users, item_codes, items.n_items)
        return cache["popularity"]
    if need == "item_features":
        if "features" not in cache:
            cache["features"] = features_by_code(inputs.item_features, items,
                                                 inputs.names["item"])
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
