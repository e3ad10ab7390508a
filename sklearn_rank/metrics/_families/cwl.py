"""C/W/L metrics (Moffat et al.) and Judged@k.

A C/W/L user reads the ranking from the top and goes on from rank i to i + 1
with the *continuation probability* C_i; the weight of rank i is
W_i = prod_{j<i} C_j / sum_{m<=N} prod_{j<m} C_j and the metric is the
expected utility per document read, sum_i W_i g_i, over N = ``depth`` ranks
(cwl_eval's 1000: documents beyond are not read; ranks a list lacks gain
0; ir_measures' ``SDCG@k`` is depth k). Gains are graded, g = (clip(l, min_rel, max_rel) -
min_rel) / (max_rel - min_rel) in [0, 1], or binary for ``cwl_rbp`` (label >=
threshold); unjudged documents gain 0. These are ir_measures' ``RBP``,
``SDCG``, ``NERR8``-``NERR11``, ``INST``, ``INSQ`` and ``BPM`` (cwl_eval).
With ``residual=True`` each gives its residual instead: the value with
unjudged documents and the ranks a list lacks at gain 1, minus the value
(cwl_eval's residual, which ir_measures does not expose).

``judged`` is the fraction of the top k retrieved documents that are judged.

Under ``ties="average"`` the metrics whose weights do not depend on the gains
(cwl_rbp, sdcg, insq, judged) are exact through
:meth:`~sklearn_rank.metrics._engine.blocks.Ranking.expected`; the others (nerr8-11, inst, bpm)
average
over every distinct ordering of the tied documents, enumerated (a query with
more than 40320 such orderings is refused with a message).
"""

from __future__ import annotations

import numpy as np

from .._definition import Metric, metric_function
from .._engine.columns import JUDGED, LABELS, refuse_negative
from ._cwl import cwl_kernel

__all__ = ["judged_score", "cwl_rbp_score", "sdcg_score", "nerr8_score", "nerr9_score",
           "nerr10_score", "nerr11_score", "inst_score", "insq_score", "bpm_score"]


def _judged(rank, options, k):
    """The judged fraction of the top min(k, n) retrieved documents."""
    cut = rank.cut(k)
    n = rank.lengths if rank.retrieved is None else rank.retrieved
    seen = np.minimum(n, cut).astype(np.float64)
    empty = seen == 0
    if not rank.has_judgments:  # flat rows: every row is a judged document
        if rank.unranked(LABELS).min() < 0:
            refuse_negative(rank.data, "judged")
        return np.where(empty, 0.0, 1.0), empty
    judged = rank.expected(JUDGED, cut).sum(axis=1)
    return np.divide(judged, seen, out=np.zeros(seen.shape), where=~empty), empty


_COMMON = ("ties", "empty", "convention")
_GRADED = ("depth", "min_rel", "max_rel", "residual")


def _declare(name, summary, params, aliases=(), extra=()):
    binary = "threshold" in params
    return Metric(name, summary, params=(*params, *_COMMON),
                  capabilities={"binary" if binary else "graded", "bounded", *extra},
                  kernel=cwl_kernel(name), aliases=aliases)


JUDGED_METRIC = Metric(
    "judged", "fraction of the top k retrieved documents that are judged (needs qrels: "
    "1 on flat rows, where every row is judged)",
    params=("k", *_COMMON), capabilities={"graded", "cutoff", "bounded"}, kernel=_judged)


@metric_function(JUDGED_METRIC)
def judged_score(y_true, y_score, *, qid=None, k=None, ties=None, empty=None,
                 sample_weight=None, convention=None) -> float:
    """Judged@k: the fraction of the top ``k`` retrieved documents that are judged.

    See Also
    --------
    sklearn_rank.trec.evaluate_run : Where documents can be unjudged.

    Notes
    -----
    Judged@k = (number of judged documents among the top min(k, n)) / min(k,
    n), n the number of retrieved documents (ir_measures' ``Judged@k``); a query with
    nothing retrieved is empty (0). It measures how far a run's values can be
    trusted: it needs relevance judgments, so it is informative only with
    :func:`~sklearn_rank.trec.evaluate_run` or ``sklearn-rank evaluate``
    (a qrels line with a negative level marks a document "pooled but
    unjudged", as for trec_eval; ir_measures counts it as judged). On flat
    rows every row is a judged document: the value is 1. Spec:
    ``"judged@k"``.

    Examples
    --------
    >>> from sklearn_rank.trec import evaluate_run
    >>> qrels = {"q1": {"d1": 1, "d2": 0}}
    >>> run = {"q1": {"d1": 3.0, "d3": 2.0, "d2": 1.0, "d4": 0.5}}
    >>> evaluate_run(qrels, run, ["judged@2", "judged"]).per_query["judged@2"]
    array([0.5])
    """


CWL_RBP = _declare("cwl_rbp", "rank-biased precision as cwl_eval computes it (binary gain, "
                   "renormalised over 1000 ranks)", ("depth", "p", "threshold", "residual"))


@metric_function(CWL_RBP)
def cwl_rbp_score(y_true, y_score, *, qid=None, depth=1000, p=0.8, threshold=1,
                  residual=False, ties=None, empty=None, sample_weight=None,
                  convention=None) -> float:
    """Rank-biased precision, C/W/L's version: ir_measures' ``RBP(rel=r, p=p)``.

    See Also
    --------
    rank_biased_precision_score : The textbook RBP, not renormalised.

    Notes
    -----
    (1 - p) / (1 - p**N) sum over ranks i <= N of p**(i - 1) rel_i, N =
    ``depth``: the textbook RBP renormalised so that the weights of the N
    ranks sum to 1 (cwl_eval). The two agree to 1e-16 for p <= 0.96 and
    lists of at most 1000 documents; near p = 1 they differ (one relevant
    document at rank 2, p = 0.999: 0.00158 against 0.000999). Spec:
    ``"cwl_rbp(p=0.8, threshold=1)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import cwl_rbp_score
    >>> round(cwl_rbp_score([[1, 0, 1, 0]], [[4, 3, 2, 1]]), 6)  # 0.2 (1 + 0.8**2)
    0.328
    >>> round(cwl_rbp_score([[1, 0, 1, 0]], [[4, 3, 2, 1]], residual=True), 6)  # 0.8**4
    0.4096
    """


SDCG = _declare("sdcg", "scaled DCG: DCG of C/W/L gains over the DCG of depth gains of 1",
                _GRADED)


@metric_function(SDCG)
def sdcg_score(y_true, y_score, *, qid=None, depth=1000, min_rel=0, max_rel=4,
               residual=False, ties=None, empty=None, sample_weight=None,
               convention=None) -> float:
    """Scaled DCG@k (C/W/L): ir_measures' ``SDCG(min_rel=..., max_rel=...)@k``.

    See Also
    --------
    ndcg_score

    Notes
    -----
    SDCG@k = sum_{i<=k} g_i / log2(i + 1) / sum_{i<=k} 1 / log2(i + 1): NDCG
    as if k fully relevant documents existed (C_i = log2(i + 1) / log2(i +
    2)) over k = ``depth`` ranks. Spec: ``"sdcg(max_rel=3, depth=10)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import sdcg_score
    >>> round(sdcg_score([[2, 0, 1]], [[3, 2, 1]], depth=2, max_rel=2), 6)  # 1 / (1 + 1/log2 3)
    0.613147
    """


NERR8 = _declare("nerr8", "normalised ERR, Moffat et al.'s eq. 8 (C/W/L)", _GRADED)


@metric_function(NERR8)
def nerr8_score(y_true, y_score, *, qid=None, depth=1000, min_rel=0, max_rel=4,
                residual=False, ties=None, empty=None, sample_weight=None,
                convention=None) -> float:
    """NERR (Moffat et al., eq. 8): ir_measures' ``NERR8(max_rel=...)@k``.

    See Also
    --------
    expected_reciprocal_rank_score

    Notes
    -----
    C_i = 1 - g_i for i < k: sum_{i<=k} g_i prod_{j<i} (1 - g_j) / sum_{i<=k}
    prod_{j<i} (1 - g_j), k = ``depth``. Spec: ``"nerr8(max_rel=3, depth=10)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import nerr8_score
    >>> nerr8_score([[2, 0, 1]], [[3, 2, 1]], depth=3, max_rel=2)
    1.0
    """


NERR9 = _declare("nerr9", "normalised ERR, Moffat et al.'s eq. 9 (C/W/L)", _GRADED)


@metric_function(NERR9)
def nerr9_score(y_true, y_score, *, qid=None, depth=1000, min_rel=0, max_rel=4,
                residual=False, ties=None, empty=None, sample_weight=None,
                convention=None) -> float:
    """NERR (Moffat et al., eq. 9): ir_measures' ``NERR9(max_rel=...)@k``.

    See Also
    --------
    nerr8_score

    Notes
    -----
    C_i = (i / (i + 1)) (1 - g_i) for i < k = ``depth``. Spec:
    ``"nerr9(max_rel=3, depth=10)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import nerr9_score
    >>> round(nerr9_score([[1, 2]], [[2, 1]], depth=2, max_rel=2), 6)  # (1/2 + 1/4) / (1 + 1/4)
    0.6
    """


NERR10 = _declare("nerr10", "normalised ERR, Moffat et al.'s eq. 10 (C/W/L)",
                  ("depth", "p", "min_rel", "max_rel", "residual"))


@metric_function(NERR10)
def nerr10_score(y_true, y_score, *, qid=None, depth=1000, p=0.8, min_rel=0, max_rel=4,
                 residual=False, ties=None, empty=None, sample_weight=None,
                 convention=None) -> float:
    """NERR (Moffat et al., eq. 10): ir_measures' ``NERR10(p=..., max_rel=...)``.

    See Also
    --------
    nerr8_score

    Notes
    -----
    C_i = p (1 - g_i). ir_measures' default is p = 0.9 (its spelling
    ``NERR10(max_rel=3)`` gives it); this function's is the registry's 0.8.
    Spec: ``"nerr10(p=0.9, max_rel=3)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import nerr10_score
    >>> round(nerr10_score([[0, 2]], [[2, 1]], p=0.5, depth=2, max_rel=2), 6)  # (1/2) / (3/2)
    0.333333
    """


NERR11 = _declare("nerr11", "normalised ERR, Moffat et al.'s eq. 11 (C/W/L)",
                  ("depth", "target", "min_rel", "max_rel", "residual"))


@metric_function(NERR11)
def nerr11_score(y_true, y_score, *, qid=None, depth=1000, target=1, min_rel=0, max_rel=4,
                 residual=False, ties=None, empty=None, sample_weight=None,
                 convention=None) -> float:
    """NERR (Moffat et al., eq. 11): ir_measures' ``NERR11(T=..., max_rel=...)``.

    See Also
    --------
    nerr8_score, insq_score

    Notes
    -----
    C_i = ((i + 2T - 1) / (i + 2T))**2 (1 - g_i), T = ``target``; over
    ``depth`` ranks. Spec: ``"nerr11(max_rel=3)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import nerr11_score
    >>> nerr11_score([[2, 0]], [[2, 1]], max_rel=2)
    1.0
    """


INST = _declare("inst", "INST (Moffat et al.): an adaptive user who wants T relevant "
                "documents (C/W/L)", ("depth", "target", "min_rel", "max_rel", "residual"))


@metric_function(INST)
def inst_score(y_true, y_score, *, qid=None, depth=1000, target=1, min_rel=0, max_rel=4,
               residual=False, ties=None, empty=None, sample_weight=None,
               convention=None) -> float:
    """INST (Moffat, Bailey, Scholer & Thomas): ir_measures' ``INST(T=..., max_rel=...)``.

    See Also
    --------
    insq_score

    Notes
    -----
    C_i = ((i + T + T_i - 1) / (i + T + T_i))**2 with T_i = T - sum_{j<=i}
    g_j: the user goes on while the gain collected falls short of the target
    T; over ``depth`` ranks. Spec: ``"inst(max_rel=3)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import inst_score
    >>> round(inst_score([[2, 0]], [[2, 1]], max_rel=2), 6)
    0.608297
    """


INSQ = _declare("insq", "INSQ (Moffat et al.): INST without adaptation (C/W/L)",
                ("depth", "target", "min_rel", "max_rel", "residual"))


@metric_function(INSQ)
def insq_score(y_true, y_score, *, qid=None, depth=1000, target=1, min_rel=0, max_rel=4,
               residual=False, ties=None, empty=None, sample_weight=None,
               convention=None) -> float:
    """INSQ (Moffat, Scholer & Thomas): ir_measures' ``INSQ(T=..., max_rel=...)``.

    See Also
    --------
    inst_score

    Notes
    -----
    C_i = ((i + 2T - 1) / (i + 2T))**2, independent of the gains (exact
    under ``ties="average"``); over ``depth`` ranks. Spec:
    ``"insq(max_rel=3)"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import insq_score
    >>> round(insq_score([[2]], [[1]], max_rel=2), 6)  # W_1 of 1000 weighted ranks
    0.388238
    """


# A relevant document read early can end the reading sooner and lower the mean gain.
BPM = _declare("bpm", "bejewelled player model (Zhang et al.; C/W/L)",
               ("depth", "target", "min_rel", "max_rel", "residual"), extra=("nonmonotone",))


@metric_function(BPM)
def bpm_score(y_true, y_score, *, qid=None, depth=1000, target=1, min_rel=0, max_rel=4,
              residual=False, ties=None, empty=None, sample_weight=None,
              convention=None) -> float:
    """Bejewelled player model: ir_measures' ``BPM(T=..., max_rel=...)@k``.

    See Also
    --------
    inst_score

    Notes
    -----
    The user reads ranks 1..m, m the first rank where the gain collected
    reaches T or m = k (C_i = 1 while sum_{j<=i} g_j < T, else 0); the value
    is the mean gain of those m documents, k = ``depth``. Spec:
    ``"bpm(max_rel=3, depth=10)"``. A more relevant document moved up can
    lower the value (it may end the reading with fewer gains averaged), so
    ``ties="pessimistic"`` and ``"optimistic"`` put the least / most
    relevant tied documents first but are not the bounds of the value over
    the tie orderings; ``"average"`` is its exact mean over them.

    Examples
    --------
    >>> from sklearn_rank.metrics import bpm_score
    >>> bpm_score([[0, 2, 0]], [[3, 2, 1]], depth=3, max_rel=2)  # reads 2 documents
    0.5
    """
