"""Metrics that users write themselves: :func:`register_metric`.

A user's function of one query's labels in ranked order becomes an ordinary
:class:`~sklearn_rank.metrics._definition.Metric` of the registry, whose kernel
(:func:`_kernel`) reads the ranked labels of a block (the same
:class:`~sklearn_rank.metrics._engine.blocks.Ranking` as the built-in metrics)
and calls the function; the plan, the spec grammar, the tie policies, the
empty-query policies, the weights and every entry point are the built-ins'.

Under ``ties="average"`` a query with tied scores is the exact expectation
over the orders of its tied documents (:func:`_expansions`): by enumeration of
the distinct label orders of each tie group, or, for a metric declared
``additive`` (a sum over ranks of a term of the rank and its label), by the
rotations of each tie group, whose every position sees each of the group's
labels once.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._utils.validation import validate_params
from ._definition import Metric
from ._engine.columns import LABELS, Relevant
from ._engine.data import scalar
from ._vocab.ir_measures import IRM_ALIASES, IRM_MEASURES
from ._vocab.registry import ALIASES, METRICS, register, unregister
from ._vocab.trec_eval import TREC_CUTOFF_MEASURES, TREC_MEASURES, glued_cutoff
from ._vocab.trec_eval_table import MEASURES as TREC_EVAL_MEASURES
from ._vocab.trec_eval_table import NICKNAMES as TREC_EVAL_SETS

__all__ = ["MAX_ORDERS", "MetricRegistration", "register_metric"]

#: Most label orders that ``ties="average"`` enumerates for one query of a
#: metric that is not declared ``additive`` (and at most ``_MAX_LABELS``
#: labels in all); beyond, a ValueError names ``ties="stable"``.
MAX_ORDERS = 100_000
_MAX_LABELS = 1 << 24
#: Most cells (sequences x ranks) handed to a vectorised function at once.
_CELLS = 1 << 20
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_PARAMS = ("k", "threshold", "ties", "empty", "convention")


@dataclass(frozen=True)
class _UserFunction:
    """A registered function and how to call it."""

    name: str
    func: Callable
    vectorized: bool
    additive: bool
    takes: tuple  # the options the function takes: "k", "threshold"

    def __call__(self, labels: np.ndarray, lengths: np.ndarray, options: dict,
                 qids) -> np.ndarray:
        """Values of the rows of ``labels`` (a fresh (n, w) array, zero beyond
        ``lengths``) under ``options`` (``k`` and ``threshold``); ``qids(i)``
        is the query id of row i, for messages."""
        extra = {name: options[name] for name in self.takes}
        if not self.vectorized:
            values = np.empty(labels.shape[0])
            for i in range(labels.shape[0]):
                values[i] = self._scalar(self.func(labels[i, :lengths[i]], **extra), qids, i)
            return values
        values = np.zeros(labels.shape[0])
        step = max(1, _CELLS // max(labels.shape[1], 1))
        for lo in range(0, labels.shape[0], step):
            hi = min(lo + step, labels.shape[0])
            values[lo:hi] = self._block(
                self.func(labels[lo:hi], lengths[lo:hi].copy(), **extra), hi - lo, qids, lo)
        return values

    def _scalar(self, value, qids, i: int) -> float:
        try:
            out = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            out = None
        if out is None or out.ndim != 0:
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {_short(value)} for query "
                f"{qids(i)!r}; its function must return one number per query.")
        if not np.isfinite(out):
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {float(out)!r} for query "
                f"{qids(i)!r}; values must be finite (a query without relevant documents is "
                "never passed to it: the 'empty' option scores it).")
        return float(out)

    def _block(self, value, n: int, qids, lo: int) -> np.ndarray:
        try:
            out = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            out = None
        if out is None or out.shape != (n,):
            shape = "no array" if out is None else f"shape {out.shape}"
            raise ValueError(
                f"Metric {self.name!r} (register_metric, vectorized=True) returned {shape} for "
                f"a block of {n} queries (the first: query {qids(lo)!r}); its function must "
                f"return one number per row, shape ({n},).")
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Metric {self.name!r} (register_metric) returned {float(out[i])!r} for query "
                f"{qids(lo + i)!r}; values must be finite (a query without relevant documents "
                "is never passed to it: the 'empty' option scores it).")
        return out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the kernel -----------------------------------------------------------------------


def _kernel(user: _UserFunction) -> Callable:
    """The registry kernel of a user's function: ``kernel(rank, options, k)``."""

    def kernel(rank, p, k):
        options = {"k": k, "threshold": p["threshold"]}
        cut = rank.cut(k)
        empty = rank.count(Relevant(p["threshold"])) == 0
        n = rank.lengths if rank.retrieved is None else rank.retrieved
        lengths = np.minimum(n, cut)
        ranked = rank.ranked(LABELS, cut)  # zero beyond each query's ranked documents
        data = rank.data

        def qids(rows):
            def qid(i):
                return scalar(data.qids[data.query_position(rank.segments[rows[i]])])
            return qid

        values = np.zeros(ranked.shape[0])
        plain = ~empty
        if rank.tied:
            plain[rank.tie_rows] = False
        rows = np.flatnonzero(plain)
        if rows.shape[0]:
            values[rows] = user(ranked[rows], lengths[rows], options, qids(rows))
        if rank.tied:
            tied = rank.tie_rows[~empty[rank.tie_rows]]
            if tied.shape[0]:
                values[tied] = _averaged(user, rank, tied, options, lengths, qids)
        return values, empty

    return kernel


def _averaged(user: _UserFunction, rank, tied: np.ndarray, options: dict,
              lengths: np.ndarray, qids) -> np.ndarray:
    """The expected values of the block rows ``tied`` over their tie orders,
    their label sequences handed to the function in batches of about
    ``_CELLS`` labels."""
    cut = rank.cut(options["k"])
    full = rank.ranked(LABELS)
    gstart, gend = rank.tie_groups(rank.width)
    where = np.searchsorted(rank.tie_rows, tied)  # their rows among the tie rows
    qid = qids(tied)
    out = np.zeros(tied.shape[0])
    pending: list = []

    def flush():
        owners = np.concatenate([np.full(w.shape[0], j) for j, _, w in pending])
        values = user(np.concatenate([s for _, s, _ in pending]), lengths[tied][owners],
                      options, lambda i: qid(int(owners[i])))
        weights = np.concatenate([w for _, _, w in pending])
        out[:] += np.bincount(owners, weights=weights * values, minlength=out.shape[0])
        pending.clear()

    for j, (row, at) in enumerate(zip(tied, where, strict=True)):
        starts = np.flatnonzero(gstart[at, :cut] == np.arange(cut))
        groups = [(int(a), int(gend[at, a]) + 1) for a in starts if gend[at, a] > a]
        sequences, weights = _expansions(user, full[row], groups, cut,
                                         functools.partial(qid, j))
        pending.append((j, sequences, weights))
        if sum(s.size for _, s, _ in pending) >= _CELLS:
            flush()
    if pending:
        flush()
    return out


def _expansions(user: _UserFunction, labels: np.ndarray, groups: list, cut: int, qid):
    """``(sequences, weights)``, (n, cut) and (n,), whose weighted sum of
    values is the expected value of the ranking ``labels`` (its ranks up to
    ``cut``) over the orders of the tie groups ``groups`` (``(start, end)``
    columns)."""
    groups = [(a, b) for a, b in groups if (labels[a:b] != labels[a]).any()]
    if not groups:
        return labels[None, :cut].copy(), np.ones(1)
    if user.additive:
        # value = f(labels) + sum over groups of (mean over rotations - f(labels))
        parts = [labels[None, :cut]]
        weights = [np.array([1.0 - len(groups) + sum(1.0 / (b - a) for a, b in groups)])]
        for a, b in groups:
            size = b - a
            shift = np.arange(1, size)[:, None]
            rotated = np.repeat(labels[None, :], size - 1, axis=0)
            rotated[:, a:b] = labels[a:b][(np.arange(size) - shift) % size]  # np.roll's
            parts.append(rotated[:, :cut])
            weights.append(np.full(size - 1, 1.0 / size))
        return np.concatenate(parts), np.concatenate(weights)
    limit = min(MAX_ORDERS, max(1, _MAX_LABELS // cut))
    choices, total = [], 1
    for a, b in groups:
        drawn = list(itertools.islice(_prefixes(Counter(labels[a:b].tolist()), b - a,
                                                min(b, cut) - a), limit + 1))
        total *= len(drawn)
        if total > limit:
            raise ValueError(
                f"Metric {user.name!r} (register_metric) under ties='average' would enumerate "
                f"more than {limit} orders of the tied documents of query {qid()!r}. "
                "Pass ties='stable' (input order), 'pessimistic' or 'optimistic', or register "
                "the metric with additive=True if its value is a sum over ranks of a term of "
                "the rank and its label (then ties are averaged per position).")
        choices.append((a, np.array([p for p, _ in drawn]), np.array([w for _, w in drawn])))
    picks = np.indices([len(w) for _, _, w in choices]).reshape(len(choices), -1)
    sequences = np.repeat(labels[None, :cut], picks.shape[1], axis=0)
    weights = np.ones(picks.shape[1])
    for (a, prefixes, w), pick in zip(choices, picks, strict=True):
        sequences[:, a:a + prefixes.shape[1]] = prefixes[pick]
        weights *= w[pick]
    return sequences, weights


def _prefixes(counts: Counter, size: int, length: int):
    """The distinct sequences of ``length`` labels drawn without replacement
    from the multiset ``counts`` (of ``size`` labels) in a uniformly random
    order, with their probabilities."""
    if length == 0:
        yield (), 1.0
        return
    for label in sorted(counts):
        share = counts[label] / size
        counts[label] -= 1
        rest = +counts  # (drops the labels used up)
        for tail, weight in _prefixes(rest, size - 1, length - 1):
            yield (label, *tail), share * weight
        counts[label] += 1


# -- registration ----------------------------------------------------------------------


class MetricRegistration:
    """What :func:`register_metric` returns: the metric's name, and a context
    manager that unregisters the metric when its block ends (for tests).

    Attributes
    ----------
    name : str
        The registered name.
    """

    def __init__(self, metric: Metric):
        self.name = metric.name
        self._metric = metric

    def __enter__(self) -> MetricRegistration:
        return self

    def __exit__(self, *exc_info) -> None:
        if METRICS.get(self.name) is self._metric:
            unregister(self.name)

    def __repr__(self) -> str:
        return f"MetricRegistration({self.name!r})"


def _check_name(name: str) -> None:
    """Refuse a name the spec grammar cannot read as this metric, or that another
    vocabulary of the package already gives a meaning."""
    if not (_NAME.fullmatch(name) and len(name) <= 64) or keyword.iskeyword(name):
        raise ValueError(
            f"register_metric: name {name!r} is not a metric name: lower-case letters, "
            "digits and '_', starting with a letter, at most 64 characters, not a Python "
            "keyword (e.g. 'my_dcg'); specs add the cut-off and options: 'my_dcg@10'.")
    lower = name.lower()
    taken = ((METRICS, "a registered metric"), (ALIASES, "an alias of a registered metric"),
             ({*TREC_EVAL_MEASURES, *TREC_EVAL_SETS}, "a trec_eval measure"),
             (TREC_MEASURES, "a trec_eval measure"),
             (TREC_CUTOFF_MEASURES, "a trec_eval measure"),
             (IRM_MEASURES, "an ir_measures measure"), (IRM_ALIASES, "an ir_measures alias"))
    for names, what in taken:
        clash = next((known for known in names if known.lower() == lower), None)
        if clash is not None:
            raise ValueError(
                f"register_metric: name {name!r} is taken: {clash!r} is {what} (a name means "
                "one metric in every entry point). Choose another name, e.g. "
                f"'my_{name}'.")
    glued = glued_cutoff(name)
    if glued is not None:
        raise ValueError(
            f"register_metric: name {name!r} reads as a metric with a cut-off "
            f"({' or '.join(glued)}). Choose another name, e.g. 'my_{name}'.")


@validate_params({
    "name": [str],
    "func": [callable],
    "vectorized": ["boolean"],
    "additive": ["boolean"],
    "summary": [str, None],
})
def register_metric(name: str, func: Callable, *, vectorized: bool = False,
                    additive: bool = False, summary: str | None = None) -> MetricRegistration:
    """Register a metric computed by a function of one query's ranked labels.

    Once registered, ``name`` is a metric like the built-in ones in every
    entry point: specs (``"name@5"``, ``"name(threshold=2, ties='stable')@5"``),
    :func:`evaluate`, :func:`evaluate_chunks`, :func:`make_ranking_scorer`,
    :func:`sklearn_rank.trec.evaluate_run`, :func:`sklearn_rank.dask.evaluate`
    and the command line (``sklearn-rank evaluate --plugin module``, or the
    entry-point group ``sklearn_rank.metrics`` of an installed package). The
    engine groups the rows by query, ranks them, cuts the ranking at ``k``,
    orders or averages tied scores (``ties``), scores the queries without a
    relevant document (``empty``) and weighs queries (``sample_weight``).

    Parameters
    ----------
    name : str
        The metric's name in specs: lower-case letters, digits and ``_``,
        starting with a letter (``"my_dcg"``). A name that is already a
        registered metric or alias, a trec_eval or ir_measures name (in any
        case), or a metric with a glued cut-off (``"ndcg10"``) is refused.
    func : callable
        ``func(labels) -> float``: ``labels`` is a 1-D float64 array of one
        query's relevance labels in ranked order (the best-scored document
        first), cut to the top ``k`` when the spec has a cut-off (a query
        shorter than ``k`` gives a shorter array; a judged query that a run
        did not retrieve, in :func:`~sklearn_rank.trec.evaluate_run` with
        ``complete=True``, an empty one). It returns the query's
        value, a finite number. It is never called for a query without a
        relevant document (no label >= ``threshold``): the ``empty`` option
        scores those. A function with a parameter named ``k`` also gets the
        cut-off (None without one; precision@k divides by it), one named
        ``threshold`` the spec's threshold: ``func(labels, k=5,
        threshold=1.0)``. It gets a copy of the labels, and may be called from several
        threads at once: keep it free of state.
    vectorized : bool, default=False
        ``func(labels, lengths) -> values`` instead (with ``k`` and
        ``threshold`` as above): ``labels`` is a 2-D array of shape (n, w), a query per row in
        ranked order, zero beyond each row's ``lengths[i]`` ranks (w is the
        cut-off, or the width of the block: at least its longest query); it
        returns an array of shape (n,). Faster for many queries: one call per
        block of queries.
    additive : bool, default=False
        Declare that the value is a sum over ranks of a term that depends on
        the rank and the label at that rank only (DCG, precision@k, RBP; not
        AP or reciprocal rank). ``ties="average"`` then averages each tie
        group per position, with as many calls as tied documents; otherwise
        it enumerates the distinct label orders of the tie groups, and refuses
        a query with more than 100,000 of them (a ValueError that names
        ``ties="stable"``).
    summary : str, default=None
        One line for listings; default: the first line of ``func``'s
        docstring.

    Returns
    -------
    registration : MetricRegistration
        ``registration.name`` is the name. Used as a context manager
        (``with register_metric(...):``) the metric is registered until the
        block ends, e.g. in a test.

    Raises
    ------
    ValueError
        For a name that is not a metric name or is taken; a function's value
        that is not one finite number per query is a ValueError of the
        evaluation, naming the metric and the query.

    See Also
    --------
    evaluate : Several metrics, per-query values.
    get_metric_names : The registered names.

    Notes
    -----
    The metric takes the options ``k`` (the cut-off), ``threshold`` (a
    document is relevant when its label is >= threshold; default 1; it
    defines the empty queries), ``ties`` (default ``"average"``: the exact
    expected value over the orders of tied documents), ``empty`` (default
    ``"zero"``) and ``convention`` (its tie order and empty-query rule). In
    :func:`~sklearn_rank.trec.evaluate_run` the labels are the qrels' levels
    of the retrieved documents (unjudged ones 0) and a query's relevant
    documents are counted over every judged one.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import evaluate, register_metric
    >>> def my_precision(labels):
    ...     '''Fraction of the ranked documents with label >= 1.'''
    ...     return float(np.mean(labels >= 1))
    >>> y_true, y_score = [[1, 0, 2, 0]], [[4, 3, 2, 1]]
    >>> with register_metric("my_precision", my_precision, additive=True):
    ...     evaluate(y_true, y_score, metrics=["my_precision@2", "p@2"]).mean
    {'my_precision@2': 0.5, 'p@2': 0.5}
    """
    _check_name(name)
    if summary is None:
        doc = (getattr(func, "__doc__", None) or "").strip()
        summary = doc.splitlines()[0] if doc else f"a metric registered by {_short(func)}"
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        parameters = {}
    takes = tuple(option for option in ("k", "threshold") if option in parameters)
    user = _UserFunction(name, func, vectorized, additive, takes)
    metric = Metric(name, summary, params=_PARAMS, capabilities={"binary", "cutoff"},
                    kernel=_kernel(user))
    register(metric)
    return MetricRegistration(metric)
