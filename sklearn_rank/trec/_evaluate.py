"""trec_eval-compatible evaluation of runs against relevance judgments."""

from __future__ import annotations

import os

import numpy as np

from ..metrics._data import ranked_data
from ..metrics._evaluation import Evaluation
from ..metrics._grouping import runs_of as _runs_of
from ..metrics._plan import Plan
from ..metrics._spec import parse_specs
from ._column import _text
from ._io import Qrels, Run, read_qrels, read_run

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


def _vocabulary(*tables) -> tuple[np.ndarray, list[np.ndarray]]:
    """The query ids of the tables, unique and sorted (bytes order, as
    trec_eval), as str; and for every table the position in them of each of
    its runs of rows with the same qid."""
    starts = [table._qid_runs[0] for table in tables]
    if all(table._qid.compact for table in tables):
        ids = [table._qid.fixed(s) for table, s in zip(tables, starts, strict=True)]
        vocabulary = np.unique(np.concatenate(ids))
        return _text(vocabulary), [np.searchsorted(vocabulary, i).astype(np.int32) for i in ids]
    # a few very long ids: compared as bytes objects (memory: their bytes)
    ids = [table._qid.items(s) for table, s in zip(tables, starts, strict=True)]
    vocabulary = sorted(set().union(*ids))
    index = {q: i for i, q in enumerate(vocabulary)}
    strings = np.empty(len(vocabulary), dtype=object)
    strings[:] = vocabulary
    return _text(strings), [np.array([index[q] for q in i], dtype=np.int32) for i in ids]


class _HashTable:
    """Open-addressing (linear probing) hash tables of keys, one per query.

    Query ``c`` gets its own power-of-two region of slots, at least 4 per key,
    so a query's lookups stay within a few cache lines; a slot holds a row
    number of ``keys``, or ``len(keys)`` when empty. Built and searched
    vectorised: rows that want the same slot take it in turns, the others move
    on to the next slot of their region.
    """

    def __init__(self, keys: np.ndarray, codes: np.ndarray, n_codes: int):
        n = keys.shape[0]
        per_query = np.bincount(codes, minlength=n_codes)
        bits = np.ceil(np.log2(np.maximum(4 * per_query, 4))).astype(np.int64)
        self.size = 1 << bits
        self.base = np.cumsum(self.size) - self.size
        self.shift = (64 - bits).astype(np.uint64)  # a key's home: its top bits
        self.keys = np.append(keys, np.uint64(0))  # row n: the empty slot's key
        self.table = np.full(int(self.size.sum()), n,
                             dtype=np.int32 if n < 2**31 - 1 else np.int64)
        pending = np.arange(n, dtype=self.table.dtype)
        pos = self._home(keys, codes)
        while pending.shape[0]:
            self.table[pos] = pending  # one of the rows wanting a slot gets it
            lost = self.table[pos] != pending
            pending, pos = pending[lost], pos[lost]
            while pending.shape[0]:  # the others probe for the next free slot
                taken = np.flatnonzero(self.table[pos] < n)
                if not taken.shape[0]:
                    break
                pos[taken] = self._next(pos[taken], codes[pending[taken]])

    def _home(self, keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
        home = self.shift[codes]
        np.right_shift(keys, home, out=home)
        home = home.view(np.int64)
        home += self.base[codes]
        return home

    def _next(self, pos: np.ndarray, codes: np.ndarray) -> np.ndarray:
        base = self.base[codes]
        return base + ((pos - base + 1) & (self.size[codes] - 1))

    def find(self, keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """For every key, the row holding it (searched in its query's region),
        or ``len(keys)`` (the empty slot's row) when it is absent."""
        n = self.keys.shape[0] - 1
        pos = self._home(keys, codes)
        out = self.table[pos]
        # a slot holding another key: probe on (an empty slot, row n, ends the search)
        pending = np.flatnonzero(np.greater(out < n, self.keys[out] == keys))
        pos = pos[pending]
        while pending.shape[0]:
            pos = self._next(pos, codes[pending])
            row = self.table[pos]
            out[pending] = row
            go_on = np.flatnonzero(np.greater(row < n, self.keys[row] == keys[pending]))
            pending, pos = pending[go_on], pos[go_on]
        return out


def _verify(match: np.ndarray, qrels: Qrels, run: Run, q_code: np.ndarray,
            r_code: np.ndarray) -> np.ndarray:
    """Check a hash join of the run to the qrels on (qid, docno) by comparing
    the ids of every match (``len(qrels)``: no match); after a hash collision,
    redo it exactly (in place). Returns the qrels rows matched."""
    n = len(qrels)
    hit = np.flatnonzero(match < n)
    judged = match[hit]
    if ((q_code[judged] == r_code[hit]).all()
            and qrels._docno.all_equal(judged, run._docno, hit)):
        return judged
    index = {pair: i for i, pair in enumerate(zip(q_code.tolist(), qrels._docno.items(),
                                                  strict=True))}
    match[:] = [index.get(pair, n) for pair in zip(r_code.tolist(), run._docno.items(),
                                                  strict=True)]
    return match[match < n]


def _trec_order(qcode: np.ndarray, starts: np.ndarray, score: np.ndarray, docno_at):
    """Row order grouped by query, by decreasing score, ties by decreasing docno.

    ``starts`` are the first rows of the runs of equal ``qcode``. Returns
    ``(order, moved)``. Runs usually come grouped by query and sorted by score
    (checked in O(n)): then ``order`` is None, or, when scores tie, the
    identity but at the positions ``moved``. Otherwise ``order`` is a sort and
    ``moved`` None. Only tied rows are sorted by document id.
    """
    n = qcode.shape[0]
    # positions i where row i + 1 starts a new query
    boundary = np.zeros(n, dtype=bool)
    boundary[starts[1:] - 1] = True
    rising = np.flatnonzero(score[1:] > score[:-1])
    if (np.unique(qcode[starts]).shape[0] == starts.shape[0]
            and boundary[rising].all()):
        order, s = None, score
        tie = np.flatnonzero(score[1:] == score[:-1])  # i: rows i and i + 1 tie
        tie = tie[~boundary[tie]]
    else:
        order = np.lexsort((-score, qcode))
        q, s = qcode[order], score[order]
        tie = np.flatnonzero((s[1:] == s[:-1]) & (q[1:] == q[:-1]))
    if not tie.shape[0]:
        return order, None
    # break score ties by decreasing document id, as trec_eval
    tied = np.union1d(tie, tie + 1)  # positions of the tied rows, groups contiguous
    new_group = np.ones(tied.shape[0], dtype=bool)
    new_group[1:] = ~np.isin(tied[:-1], tie, assume_unique=True)
    group = np.cumsum(new_group)
    rows = tied if order is None else order[tied]
    by_doc = np.lexsort((docno_at(rows), group))  # increasing docno in groups
    first_of = np.flatnonzero(np.diff(group[by_doc], prepend=-1))
    sizes = np.diff(np.append(first_of, tied.shape[0]))
    first = np.repeat(first_of, sizes)
    last = np.repeat(first_of + sizes - 1, sizes)
    reversed_in_group = by_doc[first + last - np.arange(tied.shape[0])]
    if order is not None:
        order[tied] = rows[reversed_in_group]
        return order, None
    order = np.arange(n)
    order[tied] = rows[reversed_in_group]
    return order, tied


def evaluate_run(qrels, run, metrics=DEFAULT_MEASURES, *, relevance_level=1, complete=False,
                 judged_only=False, **options) -> Evaluation:
    """Evaluate a TREC run against relevance judgments, as trec_eval does.

    Parameters
    ----------
    qrels : path, file, Qrels or dict
        Relevance judgments: a qrels file (see :func:`read_qrels`), a
        :class:`Qrels`, or ``{qid: {docno: level}}``; levels are integers, as
        in trec_eval (``1.5`` is a ``ValueError``).
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
    specs = parse_specs(metrics)
    options = {"convention": "trec_eval", **options}
    if any("threshold" in s.info.params for s in specs):
        options.setdefault("threshold", relevance_level)
    plan = Plan.of(specs, options, caller="evaluate_run")
    return plan.evaluate(_trec_data(qrels, run, complete, judged_only))


def _within(codes: np.ndarray) -> np.ndarray:
    """Position of every element among the elements with the same code (stable)."""
    by = np.argsort(codes, kind="stable")
    starts, lengths = _runs_of(codes[by])
    out = np.empty_like(by)
    out[by] = np.arange(by.shape[0]) - np.repeat(starts, lengths)
    return out


def _trec_data(qrels: Qrels, run: Run, complete: bool, judged_only: bool):
    if len(qrels) == 0:
        raise ValueError("The qrels hold no judgment.")
    vocabulary, (q_run_code, r_run_code) = _vocabulary(qrels, run)
    n_codes = vocabulary.shape[0]
    q_code = np.repeat(q_run_code, qrels._qid_runs[1])
    r_code = np.repeat(r_run_code, run._qid_runs[1])
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

    match = _HashTable(qrels._key, q_code, n_codes).find(run._key, r_code)
    judged = _verify(match, qrels, run, q_code, r_code)
    level = np.append(qrels.rel, -1.0)[match]  # -1: not judged (row len(qrels))
    starts, lengths = run._qid_runs
    if evaluated[r_run_code].all() and not (judged_only and (level < 0).any()):
        rows, score = None, run.score
    else:
        keep = np.repeat(evaluated[r_run_code], lengths)
        if judged_only:
            keep &= level >= 0
        rows = np.flatnonzero(keep)
        r_code, level, score = r_code[rows], level[rows], run.score[rows]
        starts, lengths = _runs_of(r_code)
    # trec_eval keeps scores as C floats: near-equal doubles tie, and the tie
    # goes by document id.
    order, moved = _trec_order(r_code, starts, score.astype(np.float32),
                               run._docno.sort_key if rows is None
                               else lambda i: run._docno.sort_key(rows[i]))
    if moved is not None:
        level[moved] = level[order[moved]]  # ties reordered within queries only
    elif order is not None:
        r_code, level = r_code[order], level[order]
        starts, lengths = _runs_of(r_code)

    # Judged documents the run did not retrieve: they count for the ideal
    # ranking and the number of relevant documents, at no rank.
    retrieved = np.zeros(len(qrels), dtype=bool)
    retrieved[judged] = True
    missed = np.flatnonzero(~retrieved & (qrels.rel >= 0) & evaluated[q_code])

    # Each query's rows, queries in code order: its retrieved documents in rank
    # order, then the judged ones it missed (in qrels order).
    missed_code = q_code[missed]
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
    is_judged = np.zeros_like(labels)
    is_judged[at] = level >= 0
    labels[at] = np.maximum(level, 0.0, out=level)
    at = offset[missed_code] + n_ret[missed_code] + _within(missed_code)
    labels[at] = qrels.rel[missed]
    is_judged[at] = 1.0
    return ranked_data(labels, counts[evaluated], vocabulary[evaluated],
                       n_retrieved=n_ret[evaluated], judged=is_judged)
