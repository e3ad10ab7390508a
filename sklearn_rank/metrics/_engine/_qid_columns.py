"""Query ids held by pandas, pyarrow or polars columns, coded by their library.

String and categorical columns are factorized where they live (pandas' hash
tables, Arrow's ``dictionary_encode``): exact for strings and bytes (Arrow
compares bytes, pandas ``==`` on Python strings), without a Python call per
row as a dict of Python strings needs, and never padded to the longest id.
Libraries are used only when the column is theirs (so already imported).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["column_codes"]

# Kinds of category values that pandas and Python agree are equal exactly when
# ``==`` says so (float categories could hold both 0.0 and -0.0).
_CATEGORY_TYPES = (str, bytes, int, np.integer)


def column_codes(qid) -> tuple[np.ndarray, list] | None:
    """``(codes, uniques)`` of a string or categorical column, or None.

    ``codes[i]`` is the position of row i's id in ``uniques`` (each id once,
    all of one sortable type), -1 where the id is missing; None for any other
    input (it is then read through NumPy).
    """
    module = type(qid).__module__.partition(".")[0]
    try:
        if module == "pandas":
            return _pandas_codes(qid, sys.modules["pandas"])
        if module == "pyarrow":
            return _arrow_codes(qid)
        if module == "polars" and _is_polars_text(qid, sys.modules["polars"]):
            return _arrow_codes(qid.to_arrow())
    except ImportError:  # e.g. polars without pyarrow
        return None
    return None


def _pandas_codes(qid, pd):
    dtype = getattr(qid, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        uniques = dtype.categories.tolist()
        types = set(map(type, uniques))
        kind = types.pop() if len(types) == 1 else None
        if kind is None or not issubclass(kind, _CATEGORY_TYPES) or issubclass(kind, bool):
            return None  # read through NumPy: mixed, bool or float categories
        codes = getattr(qid, "cat", qid).codes
        return np.asarray(codes, dtype=np.intp), uniques
    if isinstance(dtype, pd.StringDtype):
        codes, uniques = pd.factorize(qid)
        return np.asarray(codes, dtype=np.intp), uniques.tolist()
    return None


def _is_polars_text(qid, pl) -> bool:
    dtype = getattr(qid, "dtype", None)
    return dtype is not None and (dtype == pl.String or dtype == pl.Binary)


def _arrow_codes(arr):
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = getattr(arr, "type", None)
    text = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
            pa.types.is_large_binary)
    if kind is None or not any(is_text(kind) for is_text in text):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()  # one dictionary for all rows
    encoded = pc.dictionary_encode(arr)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    return np.asarray(codes, dtype=np.intp), encoded.dictionary.to_pylist()
