"""Where query ids come from when they are not passed: the qid column."""

from __future__ import annotations

from numbers import Integral

import numpy as np

QID_COLUMN = "qid"

#: The working line for LightGBM's group sizes, wherever they meet a qid.
GROUP_FIX = "qid=sklearn_rank.datasets.qid_from_group_sizes(group)"


def group_hint(name: str) -> str:
    """For an unknown argument ``name``: what to pass instead of ``group=``
    (LightGBM's group sizes), or "" for any other name."""
    if name != "group":
        return ""
    return (" group= is LightGBM's group sizes; this package takes the query id of "
            f"each row instead: pass {GROUP_FIX}.")


def length_hint(n_ids: int, n_rows: int) -> str:
    """For ids fewer than the rows: they may be group sizes, and how to convert them."""
    if n_ids >= n_rows:
        return ""
    return (" If these are LightGBM group sizes (one per query), convert them: "
            f"{GROUP_FIX}.")

NO_QID_HELP = (
    "Either enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
    "and pass qid=<one query id per row> to fit / cross_validate(params={'qid': qid}), "
    "or give X a query-id column: a DataFrame column named 'qid', or an array column "
    "named by QueryRanker(estimator, qid_column=j). groups=qid does not reach it: "
    "without routing, a search's fit(X, y, groups=qid) passes groups to the splitter "
    "only, never to QueryRanker.fit or the scorers. In a pipeline qid_column counts the "
    "columns of X as QueryRanker sees it, after the earlier steps, which must pass the "
    "column through unchanged: prefer routing there."
)

# What works for the splitter must work for the ranker and the scorers too: the
# advice "pass groups=qid" alone would lead into QueryRanker.fit's error.
NO_QID_HELP_SPLIT = (
    "In a search or cross-validation, give the ids where the ranker and the scorers "
    "find them too: enable metadata routing "
    "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=<one query id per "
    "row> to the search's fit (cross_validate: params={'qid': qid}), or give X a "
    "DataFrame column named 'qid' (this splitter, QueryRanker and the scorers all read "
    "it). groups=qid alone is not enough: it reaches this splitter only, and "
    "QueryRanker.fit would then fail for want of the ids (pass it besides an array "
    "column named by QueryRanker(..., qid_column=j)). Calling split yourself: "
    "split(X, y, qid=qid)."
)

# Under routing the advice cannot be "enable routing": it is on, and the caller
# (scikit-learn's permutation_importance, a scorer called by hand) routed no qid.
_ROUTED_CALLERS = (
    "A caller that routes no metadata to its scorer cannot pass it (scikit-learn's "
    "permutation_importance is one): use "
    "sklearn_rank.inspection.permutation_importance(estimator, X, y, qid=qid), which "
    "scores with the query ids you give it, or give X a query-id column: a DataFrame "
    "column named 'qid', or an array column named by QueryRanker(estimator, qid_column=j)."
)

NO_QID_HELP_ROUTED = (
    "Metadata routing is on, but no qid reached it: pass qid=<one query id per row> to "
    "the call that routes it (fit, a search's fit, cross_validate(params={'qid': qid})). "
    + _ROUTED_CALLERS
)

NO_QID_HELP_SPLIT_ROUTED = (
    "Metadata routing is on, but no qid reached it: pass qid=<one query id per row> to "
    "the search's fit (cross_validate: params={'qid': qid}), or give X a DataFrame "
    "column named 'qid' (this splitter, QueryRanker and the scorers all read it). "
    "groups=qid alone is not enough: it reaches this splitter only, never QueryRanker.fit "
    "or the scorers. Calling split yourself: split(X, y, qid=qid)."
)


def routing_on() -> bool:
    """Whether scikit-learn's metadata routing is enabled (``enable_metadata_routing``)."""
    import sklearn

    return bool(sklearn.get_config().get("enable_metadata_routing", False))


def routing_fix() -> str:
    """The routing fix, worded for the current configuration: enable routing and
    pass qid when it is off; when it is on, pass qid to a caller that routes it."""
    if not routing_on():
        return ("pass qid=<one query id per row> with metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True))")
    return ("pass qid=<one query id per row> to a call that routes it (metadata routing "
            "is on): a search's fit, cross_validate(params={'qid': qid}), or "
            "sklearn_rank.inspection.permutation_importance(..., qid=qid)")


def has_qid_column(X) -> bool:
    """Whether ``X`` is a DataFrame with a ``qid`` column."""
    columns = getattr(X, "columns", None)
    return columns is not None and QID_COLUMN in list(columns)


def frame_qid(X):
    """The ``qid`` column of a DataFrame ``X``, or None."""
    return series_values(X[QID_COLUMN]) if has_qid_column(X) else None


def series_values(series) -> np.ndarray:
    """A DataFrame column's values as a NumPy array, strings as Python objects.

    ``np.asarray`` turns a polars string column into a fixed-width ``'U'``
    array, which pads every id to the longest and drops trailing NUL
    characters (``'a'`` and ``'a\\x00'`` would become one query); polars'
    ``to_numpy`` keeps objects. pandas gives objects either way.
    """
    if type(series).__module__.partition(".")[0] == "polars":
        return series.to_numpy()
    return np.asarray(series)


def missing_qid_error(who: str, splitter: bool = False, X=None) -> ValueError:
    """The error raised when no query ids can be found, naming the fixes.

    With ``X``, a column whose name ends in ``__qid`` (a ColumnTransformer's
    name for a passed-through ``qid`` column) is pointed out. Under metadata
    routing the fixes say that routing is on and name the callers that cannot
    route qid (scikit-learn's ``permutation_importance``) and what works there.
    """
    if routing_on():
        help_text = NO_QID_HELP_SPLIT_ROUTED if splitter else NO_QID_HELP_ROUTED
    else:
        help_text = NO_QID_HELP_SPLIT if splitter else NO_QID_HELP
    renamed = [c for c in getattr(X, "columns", ()) if str(c).endswith("__" + QID_COLUMN)]
    if renamed:
        help_text += (f" X has a column named {renamed[0]!r}: if it holds the query ids, "
                      f"pass QueryRanker(..., qid_column={renamed[0]!r}).")
    return ValueError(f"{who} needs the query id of each row{'' if splitter else ' of X'}. "
                      f"{help_text}")


# -- a query-id column of X: where it is, its values, X without it ------------


def _is_int(key) -> bool:
    return isinstance(key, Integral) and not isinstance(key, bool | np.bool_)


def qid_position(X, key, who: str) -> int:
    """Position of the query-id column ``key`` in X.

    An int is a position for every input (negative counts from the end);
    anything else is a DataFrame column name. On a DataFrame whose column
    labelled ``key`` sits at another position, an int is refused: it would
    mean one column here and another wherever labels are read.
    """
    if isinstance(key, bool | np.bool_):
        raise ValueError(f"{who}: qid_column must be None, an int (a column position) or a "
                         f"column name; got {key!r}.")
    if _is_int(key):
        return _int_position(X, key, who)
    columns = getattr(X, "columns", None)
    if columns is None:
        raise ValueError(
            f"{who} names a column, but X is not a DataFrame; use the column's integer "
            "position for arrays."
        )
    matches = [i for i, c in enumerate(columns) if c == key]
    if not matches:
        raise ValueError(f"{who}: X has no column named {key!r}; its columns are "
                         f"{list(columns)[:10]}.")
    if len(matches) > 1:
        raise ValueError(f"{who}: X has {len(matches)} columns named {key!r}; give the "
                         "query-id column a name of its own.")
    return matches[0]


def _int_position(X, key: int, who: str) -> int:
    """The position an int ``qid_column`` names, refused when a DataFrame column
    labelled with that int sits elsewhere."""
    n_columns = X.shape[1]
    if not -n_columns <= key < n_columns:
        raise ValueError(f"{who} is out of range for X with {n_columns} columns.")
    position = int(key) % n_columns
    labelled = [i for i, c in enumerate(getattr(X, "columns", ())) if _is_int(c) and c == key]
    if labelled and labelled != [position]:
        raise ValueError(
            f"{who}: an int qid_column is a column position, but X also has a column "
            f"labelled {key!r}, at position {labelled[0]}, so the int would name two "
            "columns. Give X string column names and name the query-id column "
            f"(qid_column='...'), or {routing_fix()}."
        )
    return position


def column_values(X, position: int) -> np.ndarray:
    """The values of column ``position`` of X (a view for NumPy arrays)."""
    if hasattr(X, "tocsc"):
        return X[:, [position]].toarray().ravel()
    if getattr(X, "columns", None) is None:
        return np.asarray(X)[:, position]
    from .compat import safe_indexing

    return series_values(safe_indexing(X, position, axis=1))


def read_qid_column(X, position: int, who: str, *, check: bool = True,
                    fitted_names=None) -> np.ndarray:
    """The query ids in column ``position`` of X.

    With ``check``, non-integer numbers are refused (:func:`check_qid_values`).
    With ``fitted_names`` (the column names seen in fit, given when the column
    was named by its position), a DataFrame column named otherwise is refused:
    it may not be the column the ranker was fitted with.
    """
    values = column_values(X, position)
    columns = getattr(X, "columns", None)
    if columns is None:
        where = f"column {position} of X"
    else:
        name = columns[position]
        where = f"column {name!r} of X"
        if (fitted_names is not None and len(fitted_names) == X.shape[1]
                and name != fitted_names[position]):
            raise ValueError(
                f"{who}: column {position} of X is named {name!r} here but was "
                f"{fitted_names[position]!r} in fit, so it may not hold the same query ids. "
                f"Name the query-id column (qid_column={fitted_names[position]!r}), or "
                f"{routing_fix()}."
            )
    if check:
        check_qid_values(values, who, where)
    return values


def drop_column(X, position: int):
    """X without column ``position``, of the same kind (array, sparse or DataFrame)."""
    from .compat import safe_indexing

    return safe_indexing(X, np.delete(np.arange(X.shape[1]), position), axis=1)


def check_qid_values(values: np.ndarray, who: str, where: str) -> None:
    """Refuse a query-id column of non-integer numbers: a scaled or wrong column.

    Query ids read from a numeric column are integers; a fraction means the
    column is a feature, or the ids were scaled on their way (a pipeline step
    put another column where the ids were, or a scaler saw them).
    """
    if values.dtype.kind != "f":
        return
    bad = np.flatnonzero(np.isfinite(values) & (values != np.trunc(values)))
    if bad.shape[0]:
        row = int(bad[0])
        raise ValueError(
            f"{who}: {where} holds non-integer numbers (row {row}: {values[row].item()!r}), so it "
            "does not hold query ids. In a pipeline, qid_column counts the columns of X as "
            "QueryRanker sees it, after the earlier steps: a feature selector or a "
            "ColumnTransformer may have moved or dropped the query-id column, a scaler may "
            "have scaled it. Pass it through unchanged ('passthrough') and point "
            "qid_column at it (by name after set_output(transform='pandas')), or "
            f"{routing_fix()}."
        )


def id_kind(value) -> int:
    """0 for a string, 1 for an integer (not a bool), 2 for anything else: what an
    object column's id is (frames of runs and of user-item interactions)."""
    if isinstance(value, str):
        return 0
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return 1
    return 2


def is_missing_id(value) -> bool:
    """Whether an object column's id is a missing value (None, pandas' NA or
    NaT, or a float NaN) rather than a wrong one: the two get different messages."""
    return (value is None or type(value).__name__ in ("NAType", "NaTType")
            or (isinstance(value, float) and value != value))
