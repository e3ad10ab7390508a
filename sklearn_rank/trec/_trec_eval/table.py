"""trec_eval 10.0's output: :func:`trec_eval` computes the measures of a parsed ``-m`` list
on :mod:`.rankings`' rankings and returns a :class:`TrecResult`, whose
:meth:`~TrecResult.lines` are trec_eval's output, byte for byte.

The measure table and the ``-m`` grammar are
:mod:`sklearn_rank.metrics._vocab.trec_eval_table`'s, the kernels
:mod:`sklearn_rank.metrics._families.trec_eval`'s.
"""

from __future__ import annotations

import math

from ...metrics._families.trec_eval.measures import compute
from ...metrics._families.trec_eval.ranked import Ranked

__all__ = ["TrecResult", "trec_eval"]


class TrecResult:
    """trec_eval's values: ``per_query[name]`` (one value per query of
    ``qids``; a str array for relstring; for gm_map and gm_bpref the logs
    their summary averages) and ``summary[name]``, under the names trec_eval
    prints, in its order. (Two cut-offs can print alike, as
    ``iprec_at_recall.0.333,0.334``: the dicts keep the last, :meth:`lines`
    both.)"""

    def __init__(self, qids: list, rows: list):
        self.qids = qids
        self._rows = rows
        self.per_query = {label: v for label, _, v, _ in rows if v is not None}
        self.summary = {label: s for label, _, _, s in rows if s is not None}

    def __repr__(self) -> str:
        return f"TrecResult({len(self.qids)} queries, {len(self._rows)} values)"

    def lines(self, per_query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output lines (with ``-q``: ``per_query``; ``-n``:
        ``summary=False``)."""
        out = []
        if per_query:
            for i, qid in enumerate(self.qids):
                out += [_line(label, qid, values[i], kind)
                        for label, kind, values, _ in self._rows
                        if values is not None and kind in "DLQ"]
        if summary:
            out += [_line(label, "all", total, kind)
                    for label, kind, _, total in self._rows if total is not None]
        return out


def _line(name: str, qid: str, value, kind: str) -> str:
    if kind == "Q":
        return f"{name:<22}\t{qid}\t'{value}'"
    if isinstance(value, str):
        return f"{name:<22}\t{qid}\t{value}"
    if kind == "L":
        return f"{name:<22}\t{qid}\t{int(value)}"
    value = float(value)
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{name:<22}\t{qid}\t{text:>6}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def trec_eval(data: Ranked, measures: dict, *, relevance_level: int = 1,
              n_docs: int = 0) -> TrecResult:
    """trec_eval's per-query values and summary of ``measures`` (from
    :func:`~sklearn_rank.metrics._vocab.trec_eval_table.parse_measures`) on ``data``."""
    return TrecResult(data.qids, compute(data, measures, relevance_level=relevance_level,
                                         n_docs=n_docs))
