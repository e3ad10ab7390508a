"""ir_measures' ``Compat`` and ``Accuracy`` in :func:`~sklearn_rank.trec.evaluate_run`.

Both read document ids and scores, not only relevance codes: Compat's ideal
ranking orders the relevant documents by level, then by their run score
(0.0 when not retrieved), then in qrels order, as ir_measures' ``compat``
provider does (Clarke, Vtyurina & Smucker, TOIS 2021); Accuracy counts the
(relevant, non-relevant) pairs of the ranking in the right order, as its
``accuracy`` provider does. The run is ranked by decreasing score with ties
as each provider breaks them (``irm_layout``): by increasing document id for
Compat, in the run's row order for Accuracy. Plain Python loops over the
queries: fine for TREC-sized runs, slower than the other measures on
millions of rows.
"""

from __future__ import annotations

import math

import numpy as np

from ...metrics._vocab.ir_measures import irm_layout

__all__ = ["accuracy", "compat"]


def _grouped(table, values) -> dict:
    """``{qid: [(docno, value), ...]}`` in table order."""
    out: dict = {}
    for q, d, v in zip(table.qid.tolist(), table.docno.tolist(), values.tolist(), strict=True):
        out.setdefault(str(q), []).append((str(d), v))
    return out


def _sorted(docs: list, ties: str) -> list:
    """``[(docno, score)]`` by decreasing score, ties as ``ties`` says
    (:class:`~sklearn_rank.metrics._vocab.ir_measures.RunLayout`); the sorts are stable."""
    if ties != "input":  # docnos in code point order, which is UTF-8's byte order
        docs = sorted(docs, key=lambda ds: ds[0], reverse=ties == "docno_desc")
    return sorted(docs, key=lambda ds: -ds[1])


def _rankings(qrels, run, judged_only: bool, name: str):
    """Every query's judgments ``{docno: level}`` (qrels order) and its run's
    ``[(docno, score)]`` ranked as ir_measures' provider of ``name`` ranks
    them (with ``judged_only``, the documents judged >= 0 alone)."""
    judged = {q: dict(docs) for q, docs in _grouped(qrels, qrels.rel).items()}
    ties = irm_layout(name, {}).ties
    ranked = {}
    for q, docs in _grouped(run, run.score).items():
        if judged_only:
            levels = judged.get(q, {})
            docs = [(d, s) for d, s in docs if levels.get(d, -1) >= 0]
        ranked[q] = _sorted(docs, ties)
    return judged, ranked


def _rbo(ranking: list, ideal: list, p: float, depth: int) -> float:
    """Rank-biased overlap of the prefixes, truncated at ``depth`` and
    normalised by the weights' sum (ir_measures' ``rbo``)."""
    seen_a, seen_b = set(), set()
    common, score, total, weight = 0, 0.0, 0.0, 1.0
    for i in range(depth):
        a = ranking[i] if i < len(ranking) else None
        b = ideal[i] if i < len(ideal) else None
        seen_a.add(a)
        seen_b.add(b)
        if a is not None and a == b:
            common += 1
        else:
            common += (a is not None and a in seen_b) + (b is not None and b in seen_a)
        score += weight * common / (i + 1)
        total += weight
        weight *= p
    return score / total


def compat(qrels, run, qids, p: float, normalize: bool, judged_only: bool) -> np.ndarray:
    """Compat(p, normalize) of every query of ``qids`` (0 for one the run lacks)."""
    judged, ranked = _rankings(qrels, run, judged_only, "Compat")
    out = np.zeros(len(qids))
    for i, q in enumerate(str(q) for q in qids):
        if q not in ranked:
            continue
        levels = judged.get(q, {})
        scores = dict(ranked[q])
        ranking = [d for d, _ in ranked[q]]
        ideal = [d for d in levels if levels[d] > 0]
        ideal.sort(key=lambda d: scores.get(d, 0.0), reverse=True)
        ideal.sort(key=lambda d: levels[d], reverse=True)
        depth = max(len(ranking), len(ideal))
        if not depth:
            continue
        value = _rbo(ranking, ideal, p, depth)
        if normalize:
            best = _rbo(ideal, ideal, p, depth)
            if best > 0.0:
                value /= best
        out[i] = value
    return out


def accuracy(qrels, run, qids, cutoff: int | None, rel: int, judged_only: bool) -> np.ndarray:
    """Accuracy(cutoff, rel) of every query of ``qids``: NaN (no value, left
    out of the mean) when the top ``cutoff`` holds no relevant document, or
    no non-relevant one (ir_measures divides by zero there)."""
    judged, ranked = _rankings(qrels, run, judged_only, "Accuracy")
    out = np.full(len(qids), math.nan)
    for i, q in enumerate(str(q) for q in qids):
        docs = ranked.get(q, [])
        levels = judged.get(q, {})
        above, n_rel, n_nonrel = 0, 0, 0
        for d, _ in docs[:cutoff or len(docs)]:
            if levels.get(d, 0) >= rel:  # unjudged: level 0, as ir_measures
                n_rel += 1
                above += n_nonrel
            else:
                n_nonrel += 1
        if n_rel and n_nonrel:
            out[i] = 1.0 - above / (float(n_nonrel) * n_rel)
    return out
