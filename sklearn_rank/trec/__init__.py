"""TREC qrels and runs: reading, and trec_eval-compatible evaluation."""

from ._io import read_qrels, read_run
from ._rbo import rank_biased_overlap
from ._similarity import RunSimilarity, kendall_tau, overlap_at_k, run_similarity, tau_ap
from ._subtopics import SubtopicQrels, read_subtopic_qrels
from ._tables import Qrels, Run

__all__ = ["Qrels", "Run", "RunSimilarity", "SubtopicQrels", "evaluate_run", "kendall_tau",
           "overlap_at_k", "rank_biased_overlap", "read_qrels", "read_run", "read_subtopic_qrels",
           "run_similarity", "tau_ap", "trec_eval"]


def __getattr__(name):
    # imported on first use: reading files and trec_eval() do not need the
    # metrics engine's planning machinery that evaluate_run loads
    if name == "evaluate_run":
        from ._evaluate import evaluate_run

        return evaluate_run
    if name == "trec_eval":
        from ._trec_eval.drop_in import trec_eval

        return trec_eval
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
