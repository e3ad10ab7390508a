"""Where query ids come from when they are not passed: the qid column."""

from __future__ import annotations

import numpy as np

QID_COLUMN = "qid"

NO_QID_HELP = (
    "Either enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
    "and pass qid=<one query id per row> to fit / cross_validate(params={{'qid': qid}}), "
    "or give X a query-id column: a DataFrame column named 'qid', or an array column "
    "named by QueryRanker(estimator, qid_column=j)."
)


def frame_qid(X):
    """The ``qid`` column of a DataFrame ``X``, or None."""
    columns = getattr(X, "columns", None)
    if columns is not None and QID_COLUMN in list(columns):
        return np.asarray(X[QID_COLUMN])
    return None


def missing_qid_error(who: str) -> ValueError:
    """The error raised when no query ids can be found, naming both fixes."""
    return ValueError(f"{who} needs the query id of each row of X. " + NO_QID_HELP.format())
