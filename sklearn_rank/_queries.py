"""Where query ids come from when they are not passed: the qid column."""

from __future__ import annotations

import numpy as np

QID_COLUMN = "qid"

NO_QID_HELP = (
    "Either enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
    "and pass qid=<one query id per row> to fit / cross_validate(params={'qid': qid}), "
    "or give X a query-id column: a DataFrame column named 'qid', or an array column "
    "named by QueryRanker(estimator, qid_column=j). In a pipeline the column must reach "
    "QueryRanker (earlier steps may turn a DataFrame into an array): prefer routing there."
)

NO_QID_HELP_SPLIT = (
    "Pass qid=<one query id per row> or groups=qid to split (without metadata routing, "
    "GridSearchCV(...).fit(X, y, groups=qid) does), enable metadata routing "
    "(sklearn.set_config(enable_metadata_routing=True)) and pass qid to the search's fit, "
    "or give X a DataFrame column named 'qid'."
)


def has_qid_column(X) -> bool:
    """Whether ``X`` is a DataFrame with a ``qid`` column."""
    columns = getattr(X, "columns", None)
    return columns is not None and QID_COLUMN in list(columns)


def frame_qid(X):
    """The ``qid`` column of a DataFrame ``X``, or None."""
    return np.asarray(X[QID_COLUMN]) if has_qid_column(X) else None


def missing_qid_error(who: str, splitter: bool = False) -> ValueError:
    """The error raised when no query ids can be found, naming the fixes."""
    help_text = NO_QID_HELP_SPLIT if splitter else NO_QID_HELP
    return ValueError(f"{who} needs the query id of each row of X. {help_text}")
