"""TREC qrels and runs: reading, and trec_eval-compatible evaluation."""

from importlib import import_module

from ._io import read_qrels, read_run
from ._tables import Qrels, Run

__all__ = ["Qrels", "Run", "RunSimilarity", "SubtopicQrels", "evaluate_run", "kendall_tau",
           "overlap_at_k", "rank_biased_overlap", "read_qrels", "read_run", "read_subtopic_qrels",
           "run_similarity", "tau_ap", "trec_eval"]


# Imported on first use, so that reading files and trec_eval() (and the
# commands that only do that) do not pay for them: evaluate_run loads the
# metrics engine's planning machinery.
_LAZY = {
    "evaluate_run": "._evaluate",
    "trec_eval": "._trec_eval.drop_in",
    "rank_biased_overlap": "._rbo",
    "RunSimilarity": "._similarity",
    "kendall_tau": "._similarity",
    "overlap_at_k": "._similarity",
    "run_similarity": "._similarity",
    "tau_ap": "._similarity",
    "SubtopicQrels": "._subtopics",
    "read_subtopic_qrels": "._subtopics",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
