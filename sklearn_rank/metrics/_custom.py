"""Metrics that users write themselves: :func:`register_metric`, the public way to add a metric.

The interface is :func:`register_metric` (re-exported by
:mod:`sklearn_rank.metrics`) and :class:`MetricRegistration`, what it returns.
This module checks the arguments (a name the spec grammar reads as this metric
and no vocabulary of the package already gives a meaning) and registers an
ordinary :class:`~sklearn_rank.metrics._definition.Metric`, whose kernel,
:func:`~sklearn_rank.metrics._custom_kernel.kernel_of`, runs the user's function
on ranked blocks (:mod:`~sklearn_rank.metrics._custom_kernel`).
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable

from .._utils.validation import validate_params
from ._custom_kernel import UserFunction, kernel_of, short_repr
from ._definition import Metric
from ._vocab.ir_measures import IRM_ALIASES, IRM_MEASURES
from ._vocab.registry import ALIASES, METRICS, register, unregister
from ._vocab.trec_eval import TREC_CUTOFF_MEASURES, TREC_MEASURES, glued_cutoff
from ._vocab.trec_eval_table import MEASURES as TREC_EVAL_MEASURES
from ._vocab.trec_eval_table import NICKNAMES as TREC_EVAL_SETS

__all__ = ["MetricRegistration", "register_metric"]

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_PARAMS = ("k", "threshold", "ties", "empty", "convention")


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
    :func:`sklearn_rank.trec.evaluate_run`, :func:`sklearn_rank.dask.evaluate`,
    :func:`sklearn_rank.spark.evaluate` and the command line (``sklearn-rank
    evaluate --plugin module``, or the entry-point group ``sklearn_rank.metrics``
    of an installed package). The engine groups the rows by query, ranks them,
    cuts the ranking at ``k``,
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
        summary = doc.splitlines()[0] if doc else f"a metric registered by {short_repr(func)}"
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        parameters = {}
    takes = tuple(option for option in ("k", "threshold") if option in parameters)
    user = UserFunction(name, func, vectorized, additive, takes)
    metric = Metric(name, summary, params=_PARAMS, capabilities={"binary", "cutoff"},
                    kernel=kernel_of(user))
    register(metric)
    return MetricRegistration(metric)
