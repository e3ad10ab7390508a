"""Synthetic ranking data, LETOR / LightGBM file readers and a sample TREC collection."""

from ._samples import load_sample_trec
from ._svmlight import load_svmlight_ranking
from ._synthetic import make_ranking

__all__ = ["load_sample_trec", "load_svmlight_ranking", "make_ranking"]
