"""Query-keeping cross-validation splitters and cross-validation helpers."""

from ._split import QueryKFold, QueryShuffleSplit
from ._validation import cross_validate_ranker, ranking_scoring

__all__ = ["QueryKFold", "QueryShuffleSplit", "cross_validate_ranker", "ranking_scoring"]
