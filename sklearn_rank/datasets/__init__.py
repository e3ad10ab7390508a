"""Synthetic learning-to-rank data and readers for LETOR / LightGBM ranking files."""

from ._svmlight import load_svmlight_ranking
from ._synthetic import make_ranking

__all__ = ["load_svmlight_ranking", "make_ranking"]
