"""Fusion of runs: reciprocal rank fusion, CombSUM, CombMNZ and their kin, score
normalisations, and fusion weights chosen by cross-validation over whole queries.

:func:`fuse` fuses TREC runs (tables, frames, dicts, files) into a
:class:`~sklearn_rank.trec.Run`, :func:`fuse_scores` several models' scores of the same
rows; :func:`fuse_cv` chooses the weights of a weighted fusion by cross-validation against
any metric, and compares the fused run with the best single run.
"""

from ._cv import FusionCV, fuse_cv, weight_grid
from ._fuse import fuse, fuse_scores

__all__ = ["FusionCV", "fuse", "fuse_cv", "fuse_scores", "weight_grid"]
