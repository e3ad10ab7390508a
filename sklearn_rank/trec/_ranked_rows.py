"""The run's rankings laid out for the metrics engine: :func:`ranked_rows`.

The run is joined to the qrels (:mod:`~sklearn_rank.trec._join`), the
evaluated queries chosen (judged, and retrieved unless ``complete``), each
query's retrieved documents ranked as trec_eval ranks them
(:func:`~sklearn_rank.trec._trec_eval.rankings.trec_order`, or another layout's
order of tied scores) and followed by the judged documents the run missed, which
count for the ideal ranking and the number of relevant documents at no rank.
The interface is :func:`ranked_rows`, whose result is the arguments of
:func:`~sklearn_rank.metrics._engine.data.ranked_data`; it is what
:func:`~sklearn_rank.trec.evaluate_run` computes the registry's metrics on.
"""

from __future__ import annotations

import numpy as np

from .._utils.runs import runs_of as _runs_of
from ..metrics._families.trec_eval.ranked import NONPOOL, UNJUDGED
from ..metrics._vocab.ir_measures import TREC_LAYOUT
from ._join import match_rows, row_codes
from ._tables import Qrels, Run
from ._trec_eval.rankings import trec_order

__all__ = ["ranked_rows"]


def ranked_rows(qrels: Qrels, run: Run, complete: bool, judged_only: bool,
                layout=TREC_LAYOUT, cache: dict | None = None):
    """The evaluated queries' rows, as ``ranked_data``'s arguments (labels,
    lengths, qids, n_retrieved, judged, scores, input_order, codes): queries
    in code order, each with its retrieved documents in trec_eval's rank
    order (or ``layout``'s), then the judged ones it missed (in qrels order),
    and their scores (NaN: no rank), rows in the run and trec_eval's
    relevance codes (for a negative level). ``cache`` keeps the join and
    each ranking for the next call (another layout)."""
    cache = {} if cache is None else cache
    if "join" not in cache:
        vocabulary, q_run_code, r_run_code, q_code, r_code = row_codes(qrels, run)
        evaluated = _evaluated(vocabulary.shape[0], q_run_code, r_run_code, complete)
        match = match_rows(qrels, run, q_code, r_code, vocabulary.shape[0])
        cache["join"] = vocabulary, r_run_code, q_code, r_code, evaluated, match
    vocabulary, r_run_code, q_code, r_code, evaluated, match = cache["join"]
    # A negative level counts as judged (at 0) before ranking only when -J drops
    # the unjudged documents; otherwise the ranking is the same and it is set after.
    before = judged_only and layout.negative_judged
    key = (judged_only, layout.ties, before)
    if key not in cache:
        level = np.append(qrels.rel, -np.inf)[match]  # -inf: not judged (row len(qrels))
        if before:
            level = _judged_at_zero(level)
        cache[key] = _ranked(run, r_code, r_run_code, level, evaluated, judged_only,
                             layout.ties)
    ranked_code, level, score, row, starts, lengths = cache[key]
    if layout.negative_judged and not before:
        level = _judged_at_zero(level)
    # Judged documents the run did not retrieve: they count for the ideal
    # ranking and the number of relevant documents, at no rank.
    retrieved = np.zeros(len(qrels) + 1, dtype=bool)
    retrieved[match] = True
    missed = np.flatnonzero(~retrieved[:-1] & (qrels.rel >= 0) & evaluated[q_code])
    labels, judged, scores, rows, codes, counts, n_ret = _laid_out(
        ranked_code, level, score, row, starts, lengths, q_code[missed], qrels.rel[missed],
        evaluated)
    return (labels, counts[evaluated], vocabulary[evaluated], n_ret[evaluated], judged, scores,
            rows, codes)


def _judged_at_zero(level: np.ndarray) -> np.ndarray:
    """``level`` with every negative level of a judged document (not -inf) at 0."""
    return np.where(np.isneginf(level), level, np.maximum(level, 0.0))


def _evaluated(n_codes: int, q_run_code: np.ndarray, r_run_code: np.ndarray,
               complete: bool) -> np.ndarray:
    """Which query codes are evaluated: those judged and (unless
    ``complete``) retrieved; an error when there is none."""
    evaluated = np.zeros(n_codes, dtype=bool)
    evaluated[q_run_code] = True
    if not complete:
        in_run = np.zeros_like(evaluated)
        in_run[r_run_code] = True
        evaluated &= in_run
    if not evaluated.any():
        raise ValueError(
            "No query has both results and relevance judgments (as trec_eval says); check "
            "that the run and the qrels use the same query ids, or pass complete=True."
        )
    return evaluated


def _ranked(run: Run, r_code: np.ndarray, r_run_code: np.ndarray, level: np.ndarray,
            evaluated: np.ndarray, judged_only: bool, ties: str = "docno_desc"):
    """The run rows to rank (those of evaluated queries; with
    ``judged_only``, the judged ones) in trec_eval's order (ties as
    :func:`trec_order`'s ``ties``): their query codes, levels (< 0:
    unjudged), scores and rows in the run, and the starts and lengths of
    their queries."""
    starts, lengths = run.query_runs
    docnos = run.docno_bytes
    score, row = run.score, np.arange(run.score.shape[0])
    if evaluated[r_run_code].all() and not (judged_only and (level < 0).any()):
        docno_key = docnos.sort_key
    else:
        keep = np.repeat(evaluated[r_run_code], lengths)
        if judged_only:
            keep &= level >= 0
        rows = np.flatnonzero(keep)
        r_code, level, score, row = r_code[rows], level[rows], score[rows], rows
        starts, lengths = _runs_of(r_code)

        def docno_key(i):
            return docnos.sort_key(rows[i])

    # trec_eval 10.0 keeps scores as C doubles (9.0.8 and pytrec_eval: floats);
    # equal doubles tie, and the tie goes by decreasing document id.
    order, moved = trec_order(r_code, starts, score, docno_key, ties)
    if moved is not None:
        at, source = moved
        level[at] = level[source]  # ties reordered within queries only: same scores
        row = row.copy()
        row[at] = row[source]
    elif order is not None:
        r_code, level, score, row = r_code[order], level[order], score[order], row[order]
        starts, lengths = _runs_of(r_code)
    return r_code, level, score, row, starts, lengths


def _laid_out(r_code: np.ndarray, level: np.ndarray, score: np.ndarray, row: np.ndarray,
              starts: np.ndarray, lengths: np.ndarray, missed_code: np.ndarray,
              missed_level: np.ndarray, evaluated: np.ndarray):
    """Labels, judged flags, scores, run rows and trec_eval codes of every query's rows,
    queries in code order: its ranked rows (codes ``r_code``, levels
    ``level``, scores ``score``, rows in the run ``row``, runs at ``starts``
    of ``lengths``), then its missed judged documents (``missed_code``,
    ``missed_level``; score NaN: no rank; rows after the run's); and every
    query's number of rows and of retrieved documents."""
    n_codes = evaluated.shape[0]
    n_ret = np.zeros(n_codes, dtype=np.int64)
    np.add.at(n_ret, r_code[starts], lengths)
    counts = n_ret + np.bincount(missed_code, minlength=n_codes)
    # A judged query with no document to hold (complete mode, nothing judged
    # >= 0 and nothing retrieved): one unjudged placeholder scores it 0.
    counts[evaluated & (counts == 0)] = 1
    offset = np.cumsum(counts) - counts
    at = np.repeat(offset[r_code[starts]] - starts, lengths)
    at += np.arange(r_code.shape[0])
    labels = np.zeros(int(counts.sum()))
    judged = np.zeros_like(labels)
    scores = np.full_like(labels, np.nan)
    scores[at] = score
    rows = np.arange(labels.shape[0]) + (int(row.max()) + 1 if row.shape[0] else 0)
    rows[at] = row
    judged[at] = level >= 0
    labels[at] = np.maximum(level, 0.0)  # level may serve another layout
    # trec_eval's codes (a level >= 0, NONPOOL, UNJUDGED; a placeholder: never relevant)
    codes = np.full_like(labels, -np.inf)
    codes[at] = np.where(np.isneginf(level), NONPOOL, np.where(level < 0, UNJUDGED, level))
    at = offset[missed_code] + n_ret[missed_code] + _within(missed_code)
    labels[at] = missed_level
    judged[at] = 1.0
    codes[at] = missed_level
    return labels, judged, scores, rows, codes, counts, n_ret


def _within(codes: np.ndarray) -> np.ndarray:
    """Position of every element among the elements with the same code (stable)."""
    by = np.argsort(codes, kind="stable")
    starts, lengths = _runs_of(codes[by])
    out = np.empty_like(by)
    out[by] = np.arange(by.shape[0]) - np.repeat(starts, lengths)
    return out
