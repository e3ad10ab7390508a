"""TREC qrels and runs: reading, and trec_eval-compatible evaluation."""

from ._evaluate import evaluate_run
from ._io import read_qrels, read_run
from ._tables import Qrels, Run
from ._trec_eval import trec_eval

__all__ = ["Qrels", "Run", "evaluate_run", "read_qrels", "read_run", "trec_eval"]
