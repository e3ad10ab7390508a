"""Cutting the queries into blocks and ranking each block (DESIGN §6).

Queries whose lengths round up to the same width (:func:`widths`) form
blocks of at most ``_BLOCK_CELLS`` cells (:func:`block_specs`); a block's
scores are sorted once along axis 1 and each tie policy re-sorts only the
rows with ties (:func:`rank_block`), giving the
:class:`~sklearn_rank.metrics._engine.blocks.Ranking`
the kernels read.
"""

from __future__ import annotations

import numpy as np

from .blocks import Ranking
from .columns import LABELS, Relevant

__all__ = ["TREC_ORDER", "block_specs", "in_trec_mode", "rank_block", "ranked_relevant",
           "widths"]

# Upper bound on the number of cells (queries x padded width) of one block. It
# bounds the engine's working memory whatever the size of the input, and keeps
# each block's arrays (1 MiB) in cache: measured on 1.2M rows, blocks of 2**17
# cells rank and score as fast as blocks of 2**16 and run ties="average" about
# 8% faster (fewer, larger NumPy calls: less time holding the GIL); 2**18 and
# more are slower (blocks of 2**19 ran 1.4x slower than 2**16).
_BLOCK_CELLS = 1 << 17
# Blocks whose rows are in rank order (TREC mode) read their columns from the
# data's rows and make few (q, w) arrays (Ranking.reads_rows, ideal_cells), so
# they hold more cells: fewer blocks, fewer calls of every kernel. On a
# 1M-line run, 2 blocks instead of 10 took all_trec's registry measures from
# 23 to 17 ms at the same peak memory.
_BLOCK_CELLS_IN_ORDER = 1 << 20


def widths(lengths: np.ndarray) -> np.ndarray:
    """Padded width of every query.

    Lengths are rounded up to the next of 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14,
    16, 20, ... (four widths per power of two), which wastes at most a quarter
    of a block on padding while keeping the number of blocks small. A query's
    width depends on its own length only, so its value does not depend on the
    other queries evaluated with it (chunked and distributed evaluation).
    """
    exp = np.maximum(np.ceil(np.log2(lengths)).astype(np.int64) - 3, 0)
    step = np.left_shift(1, exp)
    return -(-lengths // step) * step


def block_specs(data) -> list[tuple[np.ndarray, int]]:
    """The blocks of ``data``: ``(segments, width)`` of each, in order.

    Queries are bucketed by padded width and each bucket is cut into blocks of
    at most ``_BLOCK_CELLS`` cells (``_BLOCK_CELLS_IN_ORDER`` for rows in rank
    order). The blocks depend on the data only (never
    on the number of threads that rank them).
    """
    w_all = widths(data.lengths)
    by_width = np.argsort(w_all, kind="stable")
    bounds = np.flatnonzero(np.diff(w_all[by_width])) + 1
    out = []
    for bucket in np.split(by_width, bounds):
        w = int(w_all[bucket[0]])
        step = max(1, (_BLOCK_CELLS_IN_ORDER if data.in_rank_order else _BLOCK_CELLS) // w)
        out.extend((bucket[lo:lo + step], w) for lo in range(0, bucket.shape[0], step))
    return out


def rank_block(data, segments: np.ndarray, w: int, policies) -> dict:
    """``{policy: Ranking}`` of the queries ``segments`` padded to width ``w``.

    Scores are sorted once; each tie policy then re-sorts only the rows that
    contain ties.
    """
    lengths = data.lengths[segments]
    starts = data.starts[segments]
    cols = np.arange(w)
    if data.in_rank_order:  # rows already ranked
        return _ranked_block(data, segments, lengths, starts, w, policies)
    padded = bool((lengths < w).any())
    # Negated scores, so that an ascending sort ranks by decreasing score;
    # padding holds +inf and sorts last.
    # (the cells' data rows and padding are the block's too: Ranking.know_cells)
    if padded:
        at = np.minimum(cols, lengths[:, None] - 1)
        at += starts[:, None]
        pad = cols >= lengths[:, None]
    else:
        at, pad = cols + starts[:, None], None
    neg = data.scores.take(at)
    np.negative(neg, out=neg)
    if padded:
        neg[pad] = np.inf
    order = np.argsort(neg, axis=1)
    # the sorted scores, for the ties: sorted again rather than gathered
    # through ``order`` (same values; NumPy's vectorised sort is ~2.5x faster
    # than take_along_axis on a block)
    srt = np.sort(neg, axis=1)
    same = srt[:, 1:] == srt[:, :-1]
    if padded:
        same &= ~pad[:, 1:]
    tie_rows = np.flatnonzero(same.any(axis=1))
    out = {}
    for policy in policies:
        rank = Ranking(data, segments, lengths, starts, order, policy)
        rank.know_cells(at, pad)
        if tie_rows.shape[0] and policy == "average":
            rank.tie_rows, rank.same = tie_rows, same[tie_rows]
        elif tie_rows.shape[0]:
            rank.order = _break_ties(rank, order, neg[tie_rows], tie_rows, policy)
        out[policy] = rank
    return out


#: The internal tie policy of trec_eval's measures in TREC mode: the rows' own
#: order, which is trec_eval's (decreasing document id among equal scores).
TREC_ORDER = "trec"


def in_trec_mode(options) -> bool:
    """Whether a kernel computes trec_eval's measure itself (its resolved
    ``options`` rank ties in :data:`TREC_ORDER`): then it adds its terms
    one after the other in rank order and divides as trec_eval does, so that
    its value is trec_eval's double, bit for bit."""
    return options.get("ties") == TREC_ORDER


def ranked_relevant(options) -> Relevant:
    """The relevant documents of a metric's loop over ranks: ``Relevant(threshold)``,
    which in TREC mode also counts the unjudged documents whose trec_eval code
    is >= a negative threshold (trec_eval's ``P``, ``recall``, ``map``, ``Rprec``,
    ``recip_rank``, ``success`` under ``-l -1``; its R, and its set measures,
    count judged documents only)."""
    threshold = options["threshold"]
    # (at a level >= 0 no code of an unjudged document counts: the plain column,
    # shared with R's count, is the same one)
    return Relevant(threshold, unjudged=in_trec_mode(options) and threshold < 0)


def _ranked_block(data, segments, lengths, starts, w: int, policies) -> dict:
    """:func:`rank_block` of rows ranked already (TREC mode). Without scores
    the ranking has no ties; with them (NaN for the rows that hold no rank),
    equal scores are tie groups that :data:`TREC_ORDER` keeps in the rows'
    order, ``"stable"`` puts in the run's order (``data.input_order``) and the
    other policies average or re-sort."""
    cols = np.arange(w)
    order = np.broadcast_to(cols, (segments.shape[0], w))
    out = {}
    for policy in policies:
        out[policy] = Ranking(data, segments, lengths, starts, order, policy)
        out[policy].in_order = True
    fixed = {TREC_ORDER} if data.input_order is not None else {TREC_ORDER, "stable"}
    if data.scores is None or set(policies) <= fixed:
        return out
    at = np.minimum(cols, lengths[:, None] - 1) + starts[:, None]
    pad = cols >= lengths[:, None]
    neg = -data.scores.take(at)
    neg[pad] = np.nan  # NaN ties with nothing
    same = neg[:, 1:] == neg[:, :-1]
    tie_rows = np.flatnonzero(same.any(axis=1))
    if not tie_rows.shape[0]:
        return out
    for policy, rank in out.items():
        if policy == "average":
            rank.tie_rows, rank.same = tie_rows, same[tie_rows]
        elif policy not in fixed:
            # NaN (no rank) sorts last, after every score, keeping its place;
            # "stable" is the run's order: the rows' positions in it
            tied = np.nan_to_num(neg[tie_rows], nan=np.inf)
            positions = (None if data.input_order is None
                         else data.input_order.take(at[tie_rows]))
            rank.order = _break_ties(rank, order, tied, tie_rows, policy, positions)
            rank.in_order = False
    return out


def _break_ties(rank: Ranking, order: np.ndarray, neg: np.ndarray, tie_rows: np.ndarray,
                policy: str, positions: np.ndarray | None = None) -> np.ndarray:
    """``order`` with the tie rows re-sorted: ties in input order ("stable":
    the block's columns, or ``positions`` of the tie rows' cells when given),
    least relevant first ("pessimistic") or most relevant first ("optimistic")."""
    order = order.copy()
    if policy == "stable" and positions is None:
        order[tie_rows] = np.argsort(neg, axis=1, kind="stable")
    elif policy == "stable":
        order[tie_rows] = np.lexsort((positions, neg), axis=1)
    else:
        labels = rank.unranked(LABELS)[tie_rows]
        key = labels if policy == "pessimistic" else -labels
        order[tie_rows] = np.lexsort((key, neg), axis=1)
    return order

