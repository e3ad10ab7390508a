"""trec_eval 10.0's per-query pipeline, vectorised over every query.

The run is joined to the qrels, ranked by decreasing float64 score with ties
by decreasing docno (bytes), cut at ``-M``, stripped of unjudged documents
with ``-J``, and laid out as one flat array of relevance codes, queries in
qrels qid byte order: a level >= 0, :data:`NONPOOL` (-1: not in the qrels)
or :data:`UNJUDGED` (-2: a negative qrels level, "pooled, not judged").
The measures (:mod:`sklearn_rank.metrics._families.trec_eval`) read this
:class:`~sklearn_rank.metrics._families.trec_eval.ranked.Ranked` layout.
"""

from __future__ import annotations

import numpy as np

from ..._utils.runs import runs_of as _runs_of
from ...metrics._families.trec_eval.ranked import NONPOOL, UNJUDGED, Ranked
from .._join import match_rows, query_sides, sorted_unique
from .._tables import Qrels, Run

__all__ = ["DUMMY_DOCNO", "MissingQueryError", "ranked"]

DUMMY_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval -c's ranking of a missing query


class MissingQueryError(ValueError):
    """A judged query has no document in the run (trec_eval 10 stops; -c
    evaluates it on an empty ranking)."""


def trec_order(qcode: np.ndarray, starts: np.ndarray, score: np.ndarray, docno_at,
                ties: str = "docno_desc"):
    """Row order grouped by query, by decreasing score, ties by decreasing docno
    (``ties="docno_asc"``: increasing docno; ``"input"``: the rows' own order).

    ``starts`` are the first rows of the runs of equal ``qcode``. Returns
    ``(order, moved)``. Runs usually come grouped by query and sorted by score
    (checked in O(n)): then ``order`` is None and ``moved`` None (the rows'
    own order) or, when scores tie, ``(at, source)``: the rows' own order but
    position ``at`` holds row ``source`` (no whole-run permutation is built).
    Otherwise ``order`` is a sort and ``moved`` None. Only tied rows are
    sorted by document id.
    """
    n = qcode.shape[0]
    # positions i where row i + 1 starts a new query
    boundary = np.zeros(n, dtype=bool)
    boundary[starts[1:] - 1] = True
    rising = np.flatnonzero(score[1:] > score[:-1])
    if (sorted_unique(qcode[starts]).shape[0] == starts.shape[0]
            and boundary[rising].all()):
        order, s = None, score
        tie = np.flatnonzero(score[1:] == score[:-1])  # i: rows i and i + 1 tie
        tie = tie[~boundary[tie]]
    else:
        order = np.lexsort((-score, qcode))
        q, s = qcode[order], score[order]
        tie = np.flatnonzero((s[1:] == s[:-1]) & (q[1:] == q[:-1]))
    if not tie.shape[0] or ties == "input":
        return order, None
    # break score ties by document id (decreasing: trec_eval)
    tied = sorted_unique(np.concatenate((tie, tie + 1)))  # the tied rows, groups contiguous
    new_group = np.ones(tied.shape[0], dtype=bool)
    new_group[1:] = ~np.isin(tied[:-1], tie, assume_unique=True)
    group = np.cumsum(new_group)
    rows = tied if order is None else order[tied]
    by_doc = np.lexsort((docno_at(rows), group))  # increasing docno in groups
    if ties != "docno_asc":  # reversed in groups
        first_of = np.flatnonzero(np.diff(group[by_doc], prepend=-1))
        sizes = np.diff(np.append(first_of, tied.shape[0]))
        first = np.repeat(first_of, sizes)
        last = np.repeat(first_of + sizes - 1, sizes)
        by_doc = by_doc[first + last - np.arange(tied.shape[0])]
    if order is not None:
        order[tied] = rows[by_doc]
        return order, None
    return None, (tied, rows[by_doc])


def docno_order(r_code, score, docno_key, ties: str = "docno_desc"):
    """Row order: by query code, decreasing score, then decreasing docno
    (ties as :func:`trec_order`'s ``ties``)."""
    starts, _ = _runs_of(r_code)
    order, moved = trec_order(r_code, starts, score, docno_key, ties)
    if order is None:
        order = np.arange(r_code.shape[0])
        if moved is not None:
            order[moved[0]] = moved[1]
    return order


def _in_rank_order(r_code, code, score, docno_key):
    """``(r_code, code)`` of the rows in trec_eval's order (:func:`docno_order`);
    the arrays themselves when the run is in that order already, and only
    the tied rows moved when scores tie in an otherwise sorted run."""
    starts, _ = _runs_of(r_code)
    order, moved = trec_order(r_code, starts, score, docno_key)
    if order is not None:
        return r_code[order], code[order]
    if moved is not None:  # (ties stay within their query: the codes do not move)
        code = code.copy()
        code[moved[0]] = code[moved[1]]
    return r_code, code


def ranked(qrels: Qrels, run: Run, *, complete: bool = False, judged_only: bool = False,
           max_retrieved: int | None = None) -> Ranked:
    """trec_eval's rankings of the qrels' queries (see the module's doc)."""
    vocabulary, q_code, r_code, judged_q, in_run = query_sides(qrels, run)
    n_codes = vocabulary.shape[0]
    missing_codes = np.flatnonzero(judged_q & ~in_run)
    if missing_codes.shape[0] and not complete:
        qid = str(vocabulary[missing_codes[0]])
        raise MissingQueryError(
            f"judged query '{qid}' has no document in the run ({missing_codes.shape[0]} such "
            "quer" + ("ies" if missing_codes.shape[0] > 1 else "y") + "); trec_eval 10 "
            "stops here too: pass -c (complete=True) to evaluate them on an empty ranking")
    qrel = qrels.rel.astype(np.int64)
    codes, rel = _ranked_rows(qrels, run, (q_code, r_code, n_codes), judged_q, qrel)
    if missing_codes.shape[0]:  # -c: one dummy document for each missing query
        codes, rel = _with_dummies(qrels, q_code, codes, rel, missing_codes)
    codes, rel = _cut(codes, rel, max_retrieved, judged_only)
    evaluated = np.flatnonzero(judged_q)
    n = np.bincount(codes, minlength=n_codes)[evaluated]
    offsets = np.concatenate(([0], np.cumsum(n)))
    levels, top = _level_counts(q_code, qrel, n_codes)
    unleveled = top[evaluated] < 0
    levels, top = _stale_levels(levels[evaluated], top[evaluated])
    return Ranked(qids=[str(q) for q in vocabulary[evaluated]], rel=rel.astype(np.int64),
                  offsets=offsets, levels=levels, top=top,
                  missing=~in_run[evaluated], runid=run.name, rel_gt0=int((qrel > 0).sum()),
                  complete=complete, unleveled=unleveled)


def _ranked_rows(qrels: Qrels, run: Run, sides: tuple, judged_q, qrel):
    """``(query codes, relevance codes)`` of the run's rows of judged queries, in
    trec_eval's order (queries by code; score, then docno, descending)."""
    q_code, r_code, n_codes = sides
    match = match_rows(qrels, run, q_code, r_code, n_codes)
    # each run row's code, in the narrowest type that holds the levels (memory traffic)
    small = qrel.shape[0] and -128 <= qrel.min() and qrel.max() < 128
    code = np.append(np.where(qrel < 0, UNJUDGED, qrel), NONPOOL).astype(
        np.int8 if small else np.int64)[match]
    del match
    keep = judged_q[r_code]
    docnos = run.docno_bytes
    if keep.all():
        codes, rel = _in_rank_order(r_code, code, run.score, docnos.sort_key)
    else:
        rows = np.flatnonzero(keep)
        order = rows[docno_order(r_code[rows], run.score[rows],
                            lambda i: docnos.sort_key(rows[i]))]
        codes, rel = r_code[order], code[order]
    if (codes[1:] < codes[:-1]).any():  # queries grouped, not in qid order
        by_query = np.argsort(codes, kind="stable")
        codes, rel = codes[by_query], rel[by_query]
    return codes, rel


def _with_dummies(qrels: Qrels, q_code, codes, rel, missing_codes):
    """trec_eval -c: the rankings with one dummy document for each missing query."""
    dummy = np.full(missing_codes.shape[0], NONPOOL, dtype=np.int64)
    for j, c in enumerate(missing_codes):
        hit = _judged_level(qrels, q_code, c, DUMMY_DOCNO)
        if hit is not None:
            dummy[j] = UNJUDGED if hit < 0 else hit
    at = np.searchsorted(codes, missing_codes)
    return np.insert(codes, at, missing_codes), np.insert(rel, at, dummy)


def _cut(codes, rel, max_retrieved: int | None, judged_only: bool):
    """trec_eval -M (the first ``max_retrieved`` documents of each query) and -J
    (judged documents only)."""
    if max_retrieved is None and not judged_only:
        return codes, rel
    keep = np.ones(codes.shape[0], dtype=bool)
    if max_retrieved is not None:
        starts, lengths = _runs_of(codes)
        keep &= np.arange(codes.shape[0]) - np.repeat(starts, lengths) < max_retrieved
    if judged_only:
        keep &= rel >= 0
    return (codes, rel) if keep.all() else (codes[keep], rel[keep])


def _level_counts(q_code, qrel, n_codes: int):
    """Per query code: how many qrels lines have each level >= 0, and the top level."""
    top_level = int(max(qrel.max(), 0))
    positive = qrel >= 0
    levels = np.bincount(q_code[positive] * (top_level + 1) + qrel[positive],
                         minlength=n_codes * (top_level + 1)).reshape(n_codes, top_level + 1)
    top = np.full(n_codes, np.iinfo(np.int64).min)
    np.maximum.at(top, q_code, qrel)
    return levels, top


def _stale_levels(levels: np.ndarray, top: np.ndarray):
    """trec_eval's level counts for a query whose qrels levels are all
    negative: the previous query's (its C code keeps them in static state;
    they only show through gain pairs, ``ideal_dcg`` and the like). Such a
    query still has no relevant document (:attr:`Ranked.unleveled`)."""
    negative = top < 0
    if not negative.any():
        return levels, top
    last = np.maximum.accumulate(np.where(negative, -1, np.arange(top.shape[0])))
    stale = negative & (last >= 0)
    levels, top = levels.copy(), top.copy()
    levels[stale] = levels[last[stale]]
    levels[negative & (last < 0)] = 0
    top[stale] = top[last[stale]]
    return levels, top


def _judged_level(qrels: Qrels, q_code, c, docno: str):
    rows = np.flatnonzero(q_code == c)
    docnos = qrels.docno_bytes.items(rows)
    target = docno.encode()
    for row, d in zip(rows, docnos, strict=True):
        if d == target:
            return int(qrels.rel[row])
    return None
