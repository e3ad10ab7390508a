"""trec_eval-compatible evaluation of runs against relevance judgments."""

from __future__ import annotations

import os

import numpy as np

from ..metrics._engine import _low, _runs_of, _sort_keys, grouped
from ..metrics._evaluation import Evaluation
from ..metrics._ranking import _check_options, _compute, _specs
from ._io import Qrels, Run, _as_text, read_qrels, read_run

__all__ = ["evaluate_run"]

DEFAULT_MEASURES = ("map", "P.10", "ndcg_cut.10", "recip_rank")


def _as_table(value, cls, reader, what):
    if isinstance(value, cls):
        return value
    if isinstance(value, dict):
        return cls.from_dict(value)
    if isinstance(value, str | os.PathLike) or hasattr(value, "read"):
        return reader(value)
    raise TypeError(f"{what} must be a path, a file, a {cls.__name__} or a "
                    f"{{qid: {{docno: value}}}} dict; got {type(value).__name__}.")


def _codes(ids: np.ndarray, vocabulary: np.ndarray) -> np.ndarray:
    """Position of every id in the sorted ``vocabulary`` (ids are grouped in runs)."""
    starts, lengths = _runs_of(ids)
    return np.repeat(np.searchsorted(vocabulary, ids[starts]), lengths)


def _join(qrels: Qrels, run: Run) -> np.ndarray:
    """For every run row, the qrels row judging the same (qid, docno), or -1.

    A hash join on (qid, docno); matches are verified by comparing the ids, and
    a hash collision falls back to an exact dictionary join.
    """
    q_key, r_key = qrels._key, run._key
    order = np.argsort(q_key, kind="stable")
    sorted_keys = q_key[order]
    # Searching the run's keys in sorted order walks the qrels keys sequentially
    # (measured 3x faster than searching them in file order).
    by_key = np.argsort(r_key)
    pos = np.empty(r_key.shape[0], dtype=np.intp)
    pos[by_key] = np.searchsorted(sorted_keys, r_key[by_key])
    np.minimum(pos, sorted_keys.shape[0] - 1, out=pos)
    match = np.where(sorted_keys[pos] == r_key, order[pos], -1)
    hit = match >= 0
    same = ((run.qid_bytes[hit] == qrels.qid_bytes[match[hit]])
            & (run.docno_bytes[hit] == qrels.docno_bytes[match[hit]]))
    if same.all() and not (sorted_keys[1:] == sorted_keys[:-1]).any():
        return match
    index = {pair: i for i, pair in enumerate(zip(qrels.qid_bytes.tolist(),
                                                  qrels.docno_bytes.tolist(), strict=True))}
    return np.array([index.get(pair, -1) for pair in zip(run.qid_bytes.tolist(),
                                                        run.docno_bytes.tolist(), strict=True)])


def _trec_order(qcode: np.ndarray, score: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Row order grouped by query, by decreasing score, ties by decreasing docno.

    Runs usually come grouped by query and sorted by score: that is checked in
    O(n) and kept; only tied rows are sorted by document id.
    """
    n = qcode.shape[0]
    if n == 0:
        return np.arange(0)
    starts, _ = _runs_of(qcode)
    grouped_in_runs = np.unique(qcode[starts]).shape[0] == starts.shape[0]
    new_query = np.zeros(n, dtype=bool)
    new_query[starts] = True
    descending = new_query[1:] | (score[1:] <= score[:-1])
    if grouped_in_runs and descending.all():
        order = np.arange(n)
    else:
        order = np.lexsort((-score, qcode))
    q, s = qcode[order], score[order]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if tie.any():  # break score ties by decreasing document id, as trec_eval
        in_tie = np.zeros(n, dtype=bool)
        in_tie[1:] |= tie
        in_tie[:-1] |= tie
        rows = np.flatnonzero(in_tie)  # positions of the tied rows, groups contiguous
        group = np.cumsum(np.concatenate(([True], ~tie[rows[:-1]])))
        by_doc = np.lexsort((docno[order[rows]], group))  # increasing docno in groups
        starts = np.flatnonzero(np.diff(group[by_doc], prepend=-1))
        first = np.repeat(starts, np.diff(np.append(starts, rows.shape[0])))
        last = np.repeat(np.append(starts[1:], rows.shape[0]) - 1,
                         np.diff(np.append(starts, rows.shape[0])))
        reversed_in_group = by_doc[first + last - np.arange(rows.shape[0])]
        order[rows] = order[rows[reversed_in_group]]
    return order


def evaluate_run(qrels, run, metrics=DEFAULT_MEASURES, *, relevance_level=1, complete=False,
                 judged_only=False, **options) -> Evaluation:
    """Evaluate a TREC run against relevance judgments, as trec_eval does.

    Parameters
    ----------
    qrels : path, file, Qrels or dict
        Relevance judgments: a qrels file (see :func:`read_qrels`), a
        :class:`Qrels`, or ``{qid: {docno: level}}``.
    run : path, file, Run or dict
        The run: a run file (see :func:`read_run`), a :class:`Run`, or
        ``{qid: {docno: score}}``.
    metrics : str or list of str, default=("map", "P.10", "ndcg_cut.10", "recip_rank")
        trec_eval measure names (``"map"``, ``"P.5,10"``, ``"ndcg_cut.10"``,
        ``"recall.100"``, ``"recip_rank"``, ``"gm_map"``, ``"Rprec"``,
        ``"bpref"``, ``"success.1"``, ``"set_P"``, ``"set_F"``, ...) or any
        registry spec (``"err@20"``, ``"ndcg(gain='exponential')@10"``,
        ``"rank_eff"``, ...).
    relevance_level : float, default=1
        A document is relevant when its level is >= relevance_level
        (trec_eval's ``-l``); it sets ``threshold`` of the binary metrics, not
        the gains of NDCG, as in trec_eval.
    complete : bool, default=False
        trec_eval's ``-c``: judged queries the run misses count, with every
        measure 0 (GMAP's floor applies).
    judged_only : bool, default=False
        trec_eval's ``-J``: unjudged retrieved documents are removed before
        ranking.
    **options
        Options of the metrics (``convention`` defaults to ``"trec_eval"``:
        linear gain, empty queries 0).

    Returns
    -------
    evaluation : Evaluation
        Per-query values and means; ``.qids`` are the evaluated queries.

    Notes
    -----
    trec_eval's semantics: the run is ranked by decreasing score, compared in
    single precision as trec_eval stores them, ties by decreasing document id
    (its rank column is ignored); the ideal ranking of
    NDCG and the number of relevant documents come from every judged document
    of the query, retrieved or not; unjudged retrieved documents are
    non-relevant (bpref and RankEff skip them); a negative level in the qrels
    marks a document as in the pool but unjudged; queries in the run but not in
    the qrels are skipped. Every registry metric works here, on these rules.

    Examples
    --------
    >>> from sklearn_rank.trec import evaluate_run
    >>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d4": 0.7}, "q2": {"d2": 0.5, "d1": 0.4}}
    >>> ev = evaluate_run(qrels, run, ["map", "P.2", "ndcg_cut.3"])
    >>> ev.per_query["map"]
    array([0.5, 0.5])
    >>> round(ev.mean["ndcg_cut.3"], 6)
    0.695559
    """
    qrels = _as_table(qrels, Qrels, read_qrels, "qrels")
    run = _as_table(run, Run, read_run, "run")
    specs = _specs(metrics)
    options = {"convention": "trec_eval", **options}
    if any("threshold" in s.info.params for s in specs):
        options.setdefault("threshold", relevance_level)
    _check_options(options, specs)
    data = _trec_data(qrels, run, complete, judged_only)
    return _compute(data, specs, options)


def _trec_data(qrels: Qrels, run: Run, complete: bool, judged_only: bool):
    if len(qrels) == 0:
        raise ValueError("The qrels hold no judgment.")
    q_starts, _ = _runs_of(qrels.qid_bytes)
    r_starts, _ = _runs_of(run.qid_bytes)
    vocabulary = np.unique(np.concatenate((qrels.qid_bytes[q_starts], run.qid_bytes[r_starts])))
    q_code = _codes(qrels.qid_bytes, vocabulary)
    r_code = _codes(run.qid_bytes, vocabulary)
    judged_query = np.zeros(vocabulary.shape[0], dtype=bool)
    judged_query[q_code] = True
    evaluated = judged_query.copy()
    if not complete:
        in_run = np.zeros_like(evaluated)
        in_run[r_code] = True
        evaluated &= in_run

    if not evaluated.any():
        raise ValueError(
            "No query has both results and relevance judgments (as trec_eval says); check "
            "that the run and the qrels use the same query ids, or pass complete=True."
        )
    match = _join(qrels, run)
    level = np.where(match >= 0, qrels.rel[np.maximum(match, 0)], -1.0)
    keep = evaluated[r_code]
    if judged_only:
        keep &= level >= 0
    rows = np.flatnonzero(keep)
    # trec_eval keeps scores as C floats: near-equal doubles tie, and the tie
    # goes by document id.
    score = run.score[rows].astype(np.float32)
    order = rows[_trec_order(r_code[rows], score, run.docno_bytes[rows])]

    # Judged documents the run did not retrieve: they count for the ideal
    # ranking and the number of relevant documents, at no rank.
    retrieved = np.zeros(len(qrels), dtype=bool)
    retrieved[match[order][match[order] >= 0]] = True
    missed = np.flatnonzero(~retrieved & (qrels.rel >= 0) & evaluated[q_code])

    codes = np.concatenate((r_code[order], q_code[missed]))
    labels = np.concatenate((np.maximum(level[order], 0.0), qrels.rel[missed]))
    judged = np.concatenate(((level[order] >= 0).astype(np.float64), np.ones(missed.shape[0])))
    n_ret = np.bincount(r_code[order], minlength=vocabulary.shape[0])

    # A judged query with no document to hold (complete mode, nothing judged
    # >= 0 and nothing retrieved): one unjudged placeholder scores it 0.
    counts = np.bincount(codes, minlength=vocabulary.shape[0])
    empty = np.flatnonzero(evaluated & (counts == 0))
    if empty.shape[0]:
        codes = np.concatenate((codes, empty))
        labels = np.concatenate((labels, np.zeros(empty.shape[0])))
        judged = np.concatenate((judged, np.zeros(empty.shape[0])))
        counts[empty] = 1

    group = _low(_sort_keys(codes))  # stable by query
    lengths = counts[evaluated]
    scores = -np.arange(group.shape[0], dtype=np.float64)  # ranks: retrieved first, in order
    qids = _as_text(vocabulary[evaluated])
    return grouped(labels[group], scores, lengths, qids, n_retrieved=n_ret[evaluated],
                   judged=judged[group])
