"""Metric names that experiment trackers accept: ``ndcg(gain='linear')@10`` ->
``ndcg_gain_linear_at_10``.

MLflow refuses ``@``, parentheses, quotes and ``=`` in a metric's key (it takes
letters, digits, ``_ - . /`` and spaces); Prometheus, TensorBoard tags and
most databases are stricter still. :func:`safe_name` spells a metric spec in
lower-case letters, digits and underscores only, starting with a letter, and
gives different specs different names.

The rule, applied to the canonical spelling of the spec
(``str(parse_metric(spec))``, the key of an
:class:`~sklearn_rank.metrics.Evaluation`):

- the metric name stays: ``map`` -> ``map``;
- ``@k`` becomes ``_at_k``: ``ndcg@10`` -> ``ndcg_at_10``;
- the ``-`` suffix (empty queries score 0) becomes ``_minus``: ``ndcg@10-`` ->
  ``ndcg_at_10_minus``;
- an option becomes ``_option_value``: ``ndcg(gain='linear')@10`` ->
  ``ndcg_gain_linear_at_10``, ``p(capped=True)@5`` -> ``p_capped_true_at_5``;
- a number is its ``repr`` with ``.`` -> ``p``, ``-`` -> ``neg`` and no ``+``:
  ``2`` -> ``2``, ``-1`` -> ``neg1``, ``2.5`` -> ``2p5``, ``1e-05`` ->
  ``1eneg05``, ``1e+20`` -> ``1e20``; ``True``, ``False``, ``None`` ->
  ``true``, ``false``, ``none``;
- a list is ``list`` then its items, a dict ``dict`` then its keys and values:
  ``discount=[1, 0.5]`` -> ``discount_list_1_0p5``, ``gain={0: 0, 1: 1.5}``
  -> ``gain_dict_0_0_1_1p5``;
- a callable, printed ``<my_gain>`` in a canonical spec, is ``fn_my_gain``
  (lower case: a callable is known by its ``__name__`` only, in the
  canonical spec as here).

Options keep the canonical order. The names are injective on canonical specs:
metric and option names are registry words, every number starts with a digit
or ``neg`` (no option name does) and holds no ``_``, lists and dicts are
marked, so the name reads back to one spec (tested over thousands of specs).
A long gain table makes a long name: MLflow takes keys of at most 250
characters.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from .spec import parse_metric

__all__ = ["safe_name"]

_CANONICAL = re.compile(r"(?P<name>[a-z][a-z0-9_]*)(?:\((?P<options>.*)\))?"
                        r"(?:@(?P<k>[0-9]+))?(?P<minus>-?)", re.DOTALL)
_CALLABLE = re.compile(r"<([^<>]*)>")
_WORD = re.compile(r"[a-z0-9_]+")


def safe_name(spec) -> str:
    """The name of a metric spec in lower-case letters, digits and underscores.

    Parameters
    ----------
    spec : str or MetricSpec
        A metric spec in any spelling :func:`~sklearn_rank.metrics.parse_metric`
        reads (``"ndcg@10"``, ``"ndcg_cut.10"``, ir_measures' ``"nDCG@10"``), or
        the canonical key of an :class:`~sklearn_rank.metrics.Evaluation`.
        ir_measures' spellings get the prefix ``irm_`` (``irm_ndcg_at_10``):
        they differ from the lower-case registry metrics.

    Returns
    -------
    name : str
        Matches ``[a-z][a-z0-9_]*``; two specs with different canonical
        spellings get different names.

    Raises
    ------
    ValueError
        For text that is not a metric spec.

    Examples
    --------
    >>> from sklearn_rank.metrics._vocab.names import safe_name
    >>> safe_name("ndcg@10"), safe_name("ndcg(gain='linear')@10"), safe_name("ndcg@10-")
    ('ndcg_at_10', 'ndcg_gain_linear_at_10', 'ndcg_at_10_minus')
    >>> safe_name("p(threshold=2)@5"), safe_name("nDCG@10"), safe_name("ndcg_cut.10")
    ('p_threshold_2_at_5', 'irm_ndcg_at_10', 'ndcg_gain_linear_at_10')
    """
    text = spec if isinstance(spec, str) else None
    parsed = spec if text is None else None
    if text is not None and not _CALLABLE.search(text):  # any spelling, made canonical
        parsed = parse_metric(text)
    prefix = []
    if parsed is not None:
        # its canonical spelling (a trec_eval name, "P_5", is the spec "p@5")
        text = str(replace(parsed, trec=None))
        if parsed.label is not None:  # ir_measures' spelling: 'nDCG@10' -> irm_ndcg_at_10
            prefix, text = ["irm"], text.lower()
    match = _CANONICAL.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a canonical metric spec "
                         "(name[(option=value, ...)][@k][-]).")
    parts = [*prefix, match["name"]]
    if match["options"]:
        parts += _options(match["options"], text)
    if match["k"]:
        parts += ["at", match["k"]]
    if match["minus"]:
        parts.append("minus")
    return "_".join(parts)


def _options(options: str, text: str) -> list[str]:
    """``option, value`` words of ``gain='linear', k=3``, in their order."""
    # A callable is printed <name>: make it a Python name ast can read.
    source = _CALLABLE.sub(lambda m: "__fn__" + re.sub(r"\W", "_", m[1]), options)
    try:
        call = ast.parse(f"f({source})", mode="eval").body
    except SyntaxError:
        raise ValueError(f"{text!r} is not a canonical metric spec.") from None
    if not isinstance(call, ast.Call) or call.args:
        raise ValueError(f"{text!r} is not a canonical metric spec.")
    words = []
    for keyword in call.keywords:
        words += [keyword.arg, _value(keyword.value, text)]
    return words


def _value(node: ast.expr, text: str) -> str:
    if isinstance(node, ast.List):
        return "_".join(["list", *(_scalar(item, text) for item in node.elts)])
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return "_".join(["dict", *(_scalar(n, text) for pair in pairs for n in pair)])
    return _scalar(node, text)


def _scalar(node: ast.expr, text: str) -> str:
    if isinstance(node, ast.Name) and node.id.startswith("__fn__"):
        return "fn_" + node.id.removeprefix("__fn__").lower()
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    value = node.operand.value if negative and isinstance(node.operand, ast.Constant) \
        else getattr(node, "value", ...)
    if value is None or isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        # repr: the canonical spelling; '.' -> 'p', '-' -> 'neg', '+' dropped
        number = repr(value).replace(".", "p").replace("-", "neg").replace("+", "")
        return ("neg" if negative else "") + number
    if isinstance(value, str) and not negative and _WORD.fullmatch(value):
        return value
    raise ValueError(f"{text!r}: the option value {ast.unparse(node)} has no safe name.")
