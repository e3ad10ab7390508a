"""A metric's declaration, and the decorator that makes its public function.

A family module (``_gain_metrics.py``, ``_binary_metrics.py``, ...) holds,
for each of its metrics, the kernel, one :class:`Metric` declaration and the
public function, declared by its signature and docstring::

    RBP = Metric("rbp", "rank-biased precision ...", params=("k", "p", ...),
                 capabilities={"binary", "cutoff", "bounded"}, kernel=_rbp)

    @metric_function(RBP)
    def rank_biased_precision_score(y_true, y_score, *, qid=None, k=None, p=0.8,
                                    ..., sample_weight=None, convention=None) -> float:
        \"\"\"Summary line. ... See Also, Notes, Examples.\"\"\"

:func:`metric_function` registers the metric, writes the function's
Parameters, Returns and Raises sections from :data:`~sklearn_rank.metrics._vocab.params.PARAMS`,
checks that the signature's options are the declaration's, declares the
constraints of every argument (``validate_params``) and supplies the body,
the same for every metric: validate, evaluate the one metric, return its mean.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .._utils.validation import validate_params
from ._engine.inputs import prepare
from ._plan import Plan
from ._vocab.params import PARAMS
from ._vocab.registry import register
from ._vocab.spec import build

__all__ = ["CAPABILITIES", "Metric", "metric_function"]

#: The capabilities a metric may declare; the test tables derive from them.
CAPABILITIES = {
    "bounded": "0 <= value <= 1",
    "normalised": "the ideal ranking scores 1 (over the whole list)",
    "binary": "a document is relevant when its label >= threshold",
    "graded": "labels are grades: gains or stop probabilities, labels >= 0",
    "judgments": "needs judged non-relevant documents (TREC: unjudged ones are skipped)",
    "cutoff": "takes a cut-off k",
    "pairwise": ("compares relevant with non-relevant documents (AUC): a query with one "
                 "class only is empty, and has no value by default"),
    "nonmonotone": ("moving a more relevant document up can lower the value, so "
                    "ties='pessimistic' / 'optimistic' order labels but are not bounds"),
}


@dataclass(frozen=True)
class Metric:
    """One metric, declared once.

    Attributes
    ----------
    name : str
        The canonical name, used in specs.
    summary : str
        One line, for listings.
    params : tuple of str
        The options it takes (keys of ``PARAMS``), in the order of its
        function's signature; the canonical spec prints them in this order.
    capabilities : frozenset of str
        Words of :data:`CAPABILITIES`.
    kernel : callable
        ``kernel(ranking, options, k) -> (values, empty)``: one value per
        query of a block and the mask of the queries without relevant
        documents (for the ``empty`` policy).
    aggregate : {"mean", "geometric", "impressions"}
        How per-query values are averaged: their (weighted) mean, the
        geometric mean of the floored values, or the mean weighted by each
        query's number of rows (times its weight under ``sample_weight``).
    aliases : tuple of str
        Other names of the metric in specs.
    defaults : mapping of str -> object
        The metric's own defaults of some options, where the shared default
        would give a wrong number (``auc``: ``empty='skip'``, a user with one
        class has no AUC); stored as sorted ``(name, value)`` pairs.
    function : str or None
        The name of its public function (set by :func:`metric_function`).
    """

    name: str
    summary: str
    params: tuple[str, ...]
    capabilities: frozenset
    kernel: Callable = field(repr=False)
    aggregate: str = "mean"
    aliases: tuple[str, ...] = ()
    function: str | None = None
    defaults: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))
        object.__setattr__(self, "defaults", tuple(sorted(dict(self.defaults).items())))
        problems = [f"unknown option {p!r}" for p in self.params if p not in PARAMS]
        problems += [f"unknown capability {c!r}" for c in self.capabilities
                     if c not in CAPABILITIES]
        for capability, option in (("cutoff", "k"), ("binary", "threshold")):
            if (capability in self.capabilities) != (option in self.params):
                problems.append(f"capability {capability!r} goes with option {option!r}")
        if self.aggregate not in ("mean", "geometric", "impressions"):
            problems.append(f"unknown aggregate {self.aggregate!r}")
        problems += [f"a default for {p!r}, an option it does not take"
                     for p, _ in self.defaults if p not in self.params or p == "k"]
        if problems:
            raise TypeError(f"Metric {self.name!r}: {'; '.join(problems)}.")

    def default(self, option: str):
        """The default of ``option`` for this metric: its own, else the shared one."""
        return dict(self.defaults).get(option, PARAMS[option].default)


# -- the public function ---------------------------------------------------------------

_DATA = {  # argument: (constraints, numpydoc entry)
    "y_true": (["array-like"], """\
y_true : array-like of shape (n_rows,) or (n_queries, n_docs)
    {labels}"""),
    "y_score": (["array-like"], """\
y_score : array-like of the same shape as ``y_true``
    Predicted scores; documents are ranked by decreasing score. Scores
    are ranked as the numbers they are: integers beyond 2**53 (2**60 and
    2**60 + 1 do not tie), Python ints of any size, fractions, decimals."""),
    "qid": (["array-like", None], """\
qid : array-like of shape (n_rows,), default=None
    Query id of each row (int, str, object or pandas Series; rows in any
    order). Required for 1-D input; None for the 2-D layout of
    :func:`sklearn.metrics.ndcg_score`, where each row is one query. A set,
    dict or dict view is refused: it has no row order."""),
    "sample_weight": (["array-like", None], """\
sample_weight : array-like of shape (n_rows,) or (n_queries,), default=None
    Per-row weights for 1-D input (a query's weight is the mean of its rows'
    weights, LightGBM's rule) or per-query weights for 2-D input. With
    ``empty='one'`` the 1 of an empty query is weighted too."""),
}
_LABELS = {
    "graded": "Graded relevance labels, >= 0.",
    "binary": "Relevance labels: any real numbers; a document is relevant when its "
              "label is\n    >= threshold.",
}
_RETURNS = {
    "mean": "The (weighted) mean over queries. Per-query values come from\n"
            "        :func:`evaluate`.",
    "geometric": "exp of the (weighted) mean over queries of log(max(value, 1e-5))\n"
                 "        (trec_eval's floor). Per-query values come from :func:`evaluate`.",
    "impressions": "The mean over queries weighted by each query's number of rows (its\n"
                   "        impressions; with ``sample_weight``, the sum of its rows' weights).\n"
                   "        Per-query values come from :func:`evaluate`.",
}
_RAISES = """\
    Raises
    ------
    ValueError
        For NaN or infinite scores or labels, negative labels, a value
        beyond float64 (a DCG or CG above about 1.8e308; NDCG and ERR are
        computed scale-free and never overflow), mismatched lengths, 1-D input
        without ``qid``, 2-D input with ``qid``, empty input, ``k < 1`` or an
        unknown option value; the message names the argument, the number of
        bad values and the first query concerned."""


def _sections(metric: Metric, signature: inspect.Signature) -> str:
    """The Parameters, Returns and Raises sections of a metric function."""
    labels = _LABELS["binary" if "binary" in metric.capabilities else "graded"]
    own = dict(metric.defaults)
    entries = [_DATA[name][1].format(labels=labels) if name in _DATA else
               PARAMS[name].doc + (f"\n    For this metric the default is {own[name]!r}."
                                   if name in own else "")
               for name in signature.parameters]
    parameters = "\n".join("    " + entry.replace("\n", "\n    ") for entry in entries)
    return (f"    Parameters\n    ----------\n{parameters}\n\n"
            f"    Returns\n    -------\n    score : float\n        {_RETURNS[metric.aggregate]}"
            f"\n\n{_RAISES}\n\n")


def _indented(text: str) -> str:
    """Lines after the first indented by four spaces (blank lines left empty)."""
    return "\n".join(("    " + line) if line and i else line
                     for i, line in enumerate(text.split("\n")))


def _constraints(metric: Metric, signature: inspect.Signature) -> dict:
    """Every argument's constraints; checks that the options are the metric's."""
    options = tuple(name for name in signature.parameters if name not in _DATA)
    if options != metric.params:
        raise TypeError(f"The options of the function of {metric.name!r}, {options}, are not "
                        f"those it declares, {metric.params}.")
    missing = [name for name in _DATA if name not in signature.parameters]
    if missing:
        raise TypeError(f"The function of {metric.name!r} takes no {', '.join(missing)}.")
    constraints = {name: list(spec[0]) for name, spec in _DATA.items()}
    for name in options:
        default = signature.parameters[name].default
        if default is not None and default != metric.default(name):
            raise TypeError(f"The function of {metric.name!r} gives {name} the default "
                            f"{default!r}, not None or {metric.default(name)!r}.")
        extra = [None] if default is None and None not in PARAMS[name].constraints else []
        constraints[name] = [*PARAMS[name].constraints, *extra]
    return constraints


def _from_sklearn_scorer() -> bool:
    """Whether a scikit-learn scorer (``make_scorer``) is calling: it passes
    ``y_true`` and the predictions, and no qid unless routed."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == "sklearn.metrics._scorer":
            return True
        frame = frame.f_back
    return False


def no_qid_message(reason: str, caller: str, spec: str) -> str:
    """The message for 1-D input without qid, naming make_ranking_scorer (first
    when a scikit-learn scorer made by ``make_scorer`` is the caller)."""
    fix = (f"In a search or cross-validation, score with "
           f"scoring=sklearn_rank.metrics.make_ranking_scorer({spec!r}): it finds the query "
           f"ids (a routed qid or X's qid column); make_scorer({caller}) gets them only "
           "under metadata routing with .set_score_request(qid=True).")
    if _from_sklearn_scorer():
        return (f"{caller} was called by a scikit-learn scorer (make_scorer) with 1-D "
                f"y_true and y_score and no qid, so the query of each row is unknown. {fix}")
    return f"{reason} {fix}"


def metric_function(metric: Metric) -> Callable:
    """Make the public function of ``metric`` from its signature and docstring.

    The function's own body does not run: every metric function does the
    same — validate its arguments, evaluate the one metric (as
    :func:`evaluate` would), return the mean — and this decorator supplies
    it. The signature lists the data arguments and the metric's options (its
    ``params``, in order; a default is None, meaning the convention's or the
    registry's value, or the registry's default); the docstring holds the
    summary paragraph and the sections after Raises (See Also, Notes,
    References, Examples). The metric is registered with the function's name.
    """
    def decorate(func: Callable) -> Callable:
        signature = inspect.signature(func)
        constraints = _constraints(metric, signature)
        caller = func.__name__
        if func.__doc__:  # None under python -OO
            summary, _, rest = inspect.cleandoc(func.__doc__).partition("\n\n")
            func.__doc__ = (f"{_indented(summary)}\n\n{_sections(metric, signature)}    "
                            f"{_indented(rest)}\n    ")

        @functools.wraps(func)
        def public(*args, **kwargs) -> float:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            options = dict(bound.arguments)
            data = [options.pop(name) for name in _DATA]
            spec = build(metric.name, options, caller)
            plan = Plan.resolved([spec])
            try:
                rows = prepare(*data)
            except ValueError as err:
                if not getattr(err, "no_qid", False):
                    raise
                raise ValueError(no_qid_message(str(err), caller, str(spec))) from None
            return plan.evaluate(rows).mean[str(spec)]

        register(replace(metric, function=caller))
        return validate_params(constraints)(public)

    return decorate
