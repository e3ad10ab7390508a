"""Estimators: the QueryRanker adapter."""

from ._query_ranker import QueryRanker

__all__ = ["QueryRanker"]
