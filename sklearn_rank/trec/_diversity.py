"""ir_measures' diversity measures, as the TREC Web track's ``ndeval`` computes them.

``alpha_nDCG@k``, ``alpha_DCG@k``, ``ERR_IA@k``, ``nERR_IA@k``, ``NRBP``,
``nNRBP``, ``AP_IA``, ``P_IA@k`` and ``StRecall@k`` (ir_measures' pyndeval
provider, ndeval 4.5) on subtopic judgments (:mod:`~sklearn_rank.trec._subtopics`):

- a document is relevant to a subtopic when its level there is ``>= rel``
  (binary: the level's size does not matter); a query's subtopics are those
  with at least one relevant document (``S`` of them); unjudged documents and
  those relevant to no subtopic gain nothing;
- the document at rank ``i`` (from 0) gains ``g_i = sum_j (1 - alpha)^c_ij``
  over the subtopics ``j`` it is relevant to, ``c_ij`` being how many
  documents ranked above it are relevant to ``j``; subtopics are added in
  order of first appearance in the qrels, as ndeval numbers them;
- ``alpha_DCG@k = sum_{i<k} g_i / log2(i + 2)`` and ``ERR_IA@k = sum_{i<k}
  g_i / (i + 1)``, divided by the same sums for an "ideal ideal" list that
  covers every subtopic at every rank (``S (1 - alpha)^i``) — except at
  ``k = 1``, which ndeval leaves undivided; ``alpha_nDCG`` and ``nERR_IA``
  divide by the same measure of ndeval's greedy ideal ranking of the judged
  documents (at each rank the document of highest gain, ties to the greatest
  document id), and are 0 while the ranking has gained nothing;
- ``NRBP = (1 - (1 - alpha) beta) / S * sum_i g_i beta^i`` over the whole
  ranking, ``nNRBP`` that divided by the ideal ranking's (NaN when the query
  has no relevant document: ndeval's 0/0);
- ``P_IA@k`` = relevant (document, subtopic) pairs in the top k / (k S),
  ``StRecall@k`` = subtopics covered by the top k / S, ``AP_IA`` = the mean
  over the subtopics of their average precision.

``ERR_IA`` and ``nERR_IA`` take ``alpha = 0.5``, as ir_measures invokes
ndeval. Every sum is added in ndeval's order, so values are ndeval's to the
last bit. The run is ranked as ir_measures' pyndeval provider ranks it: by
decreasing score, ties by increasing document id (ndeval's ``-traditional``
order and trec_eval's break them by decreasing id).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .._utils.runs import runs_of as _runs_of
from ..metrics._vocab.ir_measures import irm_layout
from ._join import match_rows, query_sides
from ._trec_eval.rankings import docno_order

__all__ = ["DIVERSITY", "diversity"]

#: ir_measures' diversity measures and whether they take a cut-off
DIVERSITY = {"alpha_nDCG": True, "alpha_DCG": True, "ERR_IA": True, "nERR_IA": True,
             "NRBP": False, "nNRBP": False, "AP_IA": False, "P_IA": True, "StRecall": True}
_ERR_ALPHA = 0.5  # ir_measures runs ERR_IA and nERR_IA with ndeval's default alpha


class _Judged:
    """The evaluated queries' rankings joined to the subtopic judgments at one
    relevance threshold: every relevant (ranked row, subtopic) pair, and every
    query's relevant documents and subtopics."""

    def __init__(self, qrels, run, qids, rel: int, judged_only: bool, complete: bool):
        table, codes, level = qrels.judgments, qrels.codes, qrels.rel
        vocabulary, q_code, r_code, judged_q, in_run = query_sides(table, run)
        n_codes = vocabulary.shape[0]
        evaluated = judged_q & (in_run | complete)
        if not evaluated.any():
            raise ValueError(
                "No query has both results and relevance judgments (as trec_eval says); check "
                "that the run and the qrels use the same query ids, or pass complete=True.")
        self.qids = vocabulary[evaluated] if qids is None else qids
        if qids is not None and [str(q) for q in qids] != vocabulary[evaluated].tolist():
            raise AssertionError("evaluate_run: the diversity measures' queries differ")
        self.missing = ~in_run[evaluated]
        qindex = np.full(n_codes, -1, dtype=np.int64)
        qindex[evaluated] = np.arange(len(self.qids))
        # (query, document) pairs of the judgments, exactly (no hashing)
        docno_key = table.docno_bytes.sort_key()
        by_pair = np.lexsort((docno_key, q_code))
        new = np.ones(by_pair.shape[0], dtype=bool)
        new[1:] = (q_code[by_pair][1:] != q_code[by_pair][:-1]) | \
            (docno_key[by_pair][1:] != docno_key[by_pair][:-1])
        group = np.empty(by_pair.shape[0], dtype=np.int64)
        group[by_pair] = np.cumsum(new) - 1
        n_groups = int(group.max()) + 1
        judged_g = np.zeros(n_groups + 1, dtype=bool)  # slot n_groups: not judged
        judged_g[group[level >= 0]] = True
        run_g = np.append(group, n_groups)[match_rows(table, run, q_code, r_code, n_codes)]
        keep = evaluated[r_code]
        if judged_only:
            keep &= judged_g[run_g]
        rows = np.flatnonzero(keep)
        docnos = run.docno_bytes
        ranked = rows[docno_order(r_code[rows], run.score[rows],
                                  lambda i: docnos.sort_key(rows[i]),
                                  irm_layout("alpha_nDCG", {}).ties)]  # pyndeval's, for all
        qcodes = r_code[ranked]
        if (qcodes[1:] < qcodes[:-1]).any():
            by_query = np.argsort(qcodes, kind="stable")
            ranked, qcodes = ranked[by_query], qcodes[by_query]
        self.row_q = qindex[qcodes]
        starts, lengths = _runs_of(qcodes)
        self.pos = np.arange(qcodes.shape[0]) - np.repeat(starts, lengths)
        # the relevant judgments of the evaluated queries, by (pair, subtopic)
        relevant = np.flatnonzero((level >= rel) & evaluated[q_code])
        relevant = relevant[np.lexsort((codes[relevant], group[relevant]))]
        per_group = np.bincount(group[relevant], minlength=n_groups + 1)
        first = np.cumsum(per_group) - per_group
        # every query's subtopics (S) and their relevant documents (nrelSub)
        self.n_sub = int(codes.max()) + 1
        qs = qindex[q_code[relevant]] * self.n_sub + codes[relevant]
        self.qs_keys, self.qs_count = np.unique(qs, return_counts=True)
        self.S = np.bincount(self.qs_keys // self.n_sub, minlength=len(self.qids))
        # the run's relevant (row, subtopic) pairs, by row then subtopic
        count = per_group[run_g[ranked]]
        self.hit_row = np.repeat(np.arange(ranked.shape[0]), count)
        within = np.arange(self.hit_row.shape[0]) - np.repeat(np.cumsum(count) - count, count)
        hit = relevant[np.repeat(first[run_g[ranked]], count) + within]
        hit_q = self.row_q[self.hit_row]
        self.hit_qs = hit_q * self.n_sub + codes[hit]
        # c: the pairs of the same (query, subtopic) ranked above
        by_qs = np.lexsort((self.hit_row, self.hit_qs))
        starts, lengths = _runs_of(self.hit_qs[by_qs])
        self.by_qs = by_qs
        self.c = np.empty_like(self.hit_row)
        self.c[by_qs] = np.arange(by_qs.shape[0]) - np.repeat(starts, lengths)
        self._ideal_input(relevant, group, codes, table.docno_bytes, qindex[q_code])

    def _ideal_input(self, relevant, group, codes, docnos, q_of_row) -> None:
        """Every query's relevant documents (their subtopics, in code order)
        by decreasing document id, for the greedy ideal ranking."""
        rows_q = q_of_row[relevant]
        g = group[relevant]
        firsts = np.flatnonzero(np.append(True, g[1:] != g[:-1])[:g.shape[0]])
        doc_q = rows_q[firsts]
        key = docnos.sort_key(relevant[firsts])
        order = np.lexsort((key, doc_q))[::-1]  # by query, then decreasing id
        bounds = np.append(firsts, g.shape[0])
        subs = [codes[relevant[bounds[i]:bounds[i + 1]]].tolist() for i in order.tolist()]
        self.ideal_docs = [[] for _ in self.qids]
        for q, s in zip(doc_q[order].tolist(), subs, strict=True):
            self.ideal_docs[q].append(s)

    def row_scores(self, alpha: float) -> np.ndarray:
        """Every ranked row's gain g_i (subtopic gains added in code order)."""
        power = np.cumprod(np.append(1.0, np.full(max(int(self.c.max(initial=0)), 0),
                                                  1.0 - alpha)))
        return np.bincount(self.hit_row, weights=power[self.c], minlength=self.pos.shape[0])

    def top(self, scores: np.ndarray, depth: int) -> np.ndarray:
        """The gains of every query's first ``depth`` ranks, as a matrix."""
        out = np.zeros((len(self.qids), depth))
        near = self.pos < depth
        out[self.row_q[near], self.pos[near]] = scores[near]
        return out


def _greedy(docs: list, alpha: float, beta: float, depth: int, nrbp: bool):
    """ndeval's greedy ideal ranking of one query's relevant documents (each
    a list of subtopic codes, by decreasing document id): the gains of its
    first ``depth`` ranks, and its NRBP sum (when ``nrbp``). A lazy max-heap:
    gains only decrease, so a popped document whose gain is still current
    is the best (ties: the greatest id, as ndeval)."""
    weight = {}
    heap = [(-float(len(s)), i) for i, s in enumerate(docs)]
    heapq.heapify(heap)
    top, total, decay, keep = [], 0.0, 1.0, 1.0 - alpha
    while heap and (len(top) < depth or (nrbp and decay != 0.0)):
        negative, i = heapq.heappop(heap)
        score = 0.0
        for j in docs[i]:
            score += weight.get(j, 1.0)
        if score != -negative:
            heapq.heappush(heap, (-score, i))
            continue
        if score == 0.0:
            break  # every document left gains nothing
        for j in docs[i]:
            weight[j] = weight.get(j, 1.0) * keep
        if len(top) < depth:
            top.append(score)
        elif score * decay < math.ulp(total) / 2:
            break  # gains and decay only fall: nothing left changes the sum
        total += score * decay
        decay *= beta
    return top, total


def _normalised(gains: np.ndarray, S: np.ndarray, alpha: float, err: bool) -> np.ndarray:
    """ndeval's computeERR / computeDCG: cumulative, over the ideal ideal
    list's (every rank but the first)."""
    depth = gains.shape[1]
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    discount = np.array([math.log(2.0) / math.log(i + 1.0) for i in range(1, depth + 1)])
    terms = gains / ranks if err else gains * discount
    ideal = np.empty_like(terms)
    gain = S.astype(np.float64)
    for i in range(depth):
        ideal[:, i] = gain / ranks[i] if err else gain * discount[i]
        gain = gain * (1.0 - alpha)
    out = np.cumsum(terms, axis=1)
    ideal = np.cumsum(ideal, axis=1)
    some = S > 0
    out[some, 1:] /= ideal[some, 1:]
    return out


def diversity(items: list, qrels, run, qids, *, complete: bool, judged_only: bool):
    """``(qids, [(per-query values, n_empty)])`` of the diversity ``items``
    (``(name, parameters)`` pairs) on the evaluated queries (``qids`` when
    given): ``n_empty`` counts the queries without a relevant subtopic (for
    nNRBP, those without a value: NaN, left out of the mean)."""
    judged, out = {}, []
    for name, params in items:
        only = judged_only or bool(params.get("judged_only"))
        key = (params["rel"], only)
        if key not in judged:
            judged[key] = _Judged(qrels, run, qids, params["rel"], only, complete)
            qids = judged[key].qids
        out.append(_measure(judged[key], name, params))
    return qids, out


def _measure(data: _Judged, name: str, params: dict) -> tuple[np.ndarray, int]:
    """One measure's per-query values (a query the run lacks: 0) and n_empty."""
    S, k = data.S, params.get("cutoff")
    with np.errstate(divide="ignore", invalid="ignore"):
        if name in ("P_IA", "StRecall"):
            near = data.pos[data.hit_row] < k
            if name == "StRecall":
                near &= data.c == 0
            count = np.bincount(data.row_q[data.hit_row][near], minlength=S.shape[0])
            values = count / (S * (k if name == "P_IA" else 1))
        elif name == "AP_IA":
            values = _ap_ia(data)
        else:
            alpha = _ERR_ALPHA if name in ("ERR_IA", "nERR_IA") else params["alpha"]
            values = _gain_measure(data, name, alpha, params.get("beta"), k)
    values = np.where(S > 0, values, np.nan if name == "nNRBP" else 0.0)
    values = np.where(data.missing, 0.0, values)
    empty = np.isnan(values) if name == "nNRBP" else S == 0
    return values, int(empty.sum())


def _gain_measure(data: _Judged, name: str, alpha: float, beta, k) -> np.ndarray:
    scores = data.row_scores(alpha)
    if name in ("NRBP", "nNRBP"):
        decay = np.cumprod(np.append(1.0, np.full(int(data.pos.max(initial=0)), beta)))
        run = np.bincount(data.row_q, weights=scores * decay[data.pos],
                          minlength=data.S.shape[0])
        factor = (1.0 - (1.0 - alpha) * beta) / data.S
        if name == "NRBP":
            return run * factor
        ideal = np.array([_greedy(docs, alpha, beta, 0, True)[1] for docs in data.ideal_docs])
        return (run * factor) / (ideal * factor)
    err = name in ("ERR_IA", "nERR_IA")
    run = _normalised(data.top(scores, k), data.S, alpha, err)[:, k - 1]
    if name in ("ERR_IA", "alpha_DCG"):
        return run
    ideal = np.zeros((data.S.shape[0], k))
    for q, docs in enumerate(data.ideal_docs):
        top = _greedy(docs, alpha, 0.0, k, False)[0]
        ideal[q, :len(top)] = top
    ideal = _normalised(ideal, data.S, alpha, err)[:, k - 1]
    gained = _normalised(data.top(scores, k), data.S, alpha, False)[:, k - 1]
    return np.where(gained != 0.0, run / ideal, 0.0)


def _ap_ia(data: _Judged) -> np.ndarray:
    """Every subtopic's precision at its relevant ranks, summed in rank order,
    over its relevant documents; the mean over the query's subtopics."""
    order = data.by_qs
    qs = data.hit_qs[order]
    precision = (data.c[order] + 1.0) / (data.pos[data.hit_row[order]] + 1.0)
    found, at = np.unique(qs, return_inverse=True)
    total = np.bincount(at, weights=precision)
    n_rel = data.qs_count[np.searchsorted(data.qs_keys, found)]
    return np.bincount(found // data.n_sub, weights=total / n_rel,
                       minlength=data.S.shape[0]) / data.S
