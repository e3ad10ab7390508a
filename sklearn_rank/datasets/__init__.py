"""Synthetic ranking data, LETOR / LightGBM file readers and a sample TREC collection."""

from ._groups import group_sizes_from_qid, qid_from_group_sizes
from ._samples import load_sample_trec
from ._svmlight import load_svmlight_ranking
from ._synthetic import make_ranking

__all__ = ["group_sizes_from_qid", "load_sample_trec", "load_svmlight_ranking", "make_ranking",
           "qid_from_group_sizes"]
