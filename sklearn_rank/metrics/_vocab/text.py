"""Guards that let the metric-spec parser take any text.

:func:`~sklearn_rank.metrics.parse_metric` reads a spec with :mod:`ast`, whose
parser and literal evaluator recurse and allocate with the nesting of their
input: left alone, a hostile string raises RecursionError, MemoryError or
NumPy's TypeError, or a Python digit-limit message. Every spec passes through
these checks first, so any string gives a :class:`MetricSpec` or a ValueError
within about ten milliseconds:

- at most :data:`MAX_LENGTH` characters (long gain tables or discount arrays
  are passed as Python objects: ``ndcg_score(..., gain=array)``), ASCII only,
  no ``#`` (Python would read the rest as a comment: ``ndcg#10`` would
  silently be the whole-list ``ndcg``), no number of more than
  :data:`MAX_DIGITS` digits;
- option values are literals of the shapes options take (a string, a number,
  True / False / None, a flat list of finite numbers or a dict of finite
  numbers), never sets, bytes, complex numbers or nested containers;
- integer options are at most 2**63 - 1 in absolute value (a cut-off is
  clipped to the query's length anyway: ``k`` larger than every list is the
  whole list).
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from numbers import Real
from typing import Any

__all__ = ["MAX_DIGITS", "MAX_INT", "MAX_LENGTH", "SYNTAX", "check_text", "literal",
           "parse_expression", "shown"]

#: Longest spec accepted, in characters (room for a table of 150 gains; the
#: longest spec parses in about 10 ms, ~5 µs a character, mostly in Python's parser).
MAX_LENGTH = 2_000
#: Most digits of one number in a spec.
MAX_DIGITS = 100
#: Largest integer option (a cut-off beyond every list is clipped anyway).
MAX_INT = 2**63 - 1

SYNTAX = ("expected name[(param=value, ...)][@k][-], e.g. 'ndcg@10' or "
          "\"ndcg(gain='linear', discount='classic')@5\", or a trec_eval measure name "
          "such as 'ndcg_cut.10', 'P.5', 'map'")
_LITERALS = ("a quoted string, a number, True, False, None, a list of numbers or a dict of "
             "numbers")
_LONG_NUMBER = re.compile(rf"(?<![A-Za-z0-9_])[0-9][0-9_]{{{MAX_DIGITS},}}")


def shown(text: str, limit: int = 80) -> str:
    """``repr(text)``, cut to about ``limit`` characters for messages."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit - 20]!r}... ({len(text)} characters)"


def check_text(spec: str) -> None:
    """Refuse text no spec can be, before :mod:`ast` sees it."""
    if len(spec) > MAX_LENGTH:
        raise ValueError(
            f"Metric spec {shown(spec)} is too long: at most {MAX_LENGTH} characters. "
            "Pass long option values (a gain table, a discount array) as Python objects, "
            "e.g. ndcg_score(..., gain=array)."
        )
    if not spec.isascii():
        at, char = next((i, c) for i, c in enumerate(spec) if not c.isascii())
        raise ValueError(f"Metric spec {shown(spec)} holds the non-ASCII character {char!r} "
                         f"(position {at}); metric names and options are ASCII.")
    if "#" in spec:
        raise ValueError(f"Metric spec {shown(spec)} holds '#' (position {spec.index('#')}); "
                         "write the cut-off after '@', e.g. 'ndcg@10'.")
    if (long := _LONG_NUMBER.search(spec)) is not None:
        raise ValueError(f"Metric spec {shown(spec)} holds a number of {len(long.group())} "
                         f"digits (at most {MAX_DIGITS}); integer options are at most "
                         "2**63 - 1 in absolute value.")


def parse_expression(body: str, spec: str) -> ast.expr:
    """The expression of a spec's text (its ``-`` suffix removed)."""
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" in 'ndcg@1if': not ours
            warnings.simplefilter("ignore")
            return ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        # SyntaxError, or a parser stack / recursion limit on deep nesting
        raise ValueError(f"Could not parse metric spec {shown(spec)}: {SYNTAX}.") from None


def _number(value) -> bool:
    """A finite real number (not a boolean) that converts to a float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def literal(node: ast.expr, option: str, spec: str) -> Any:
    """The value of option ``option`` written as ``node`` in ``spec``."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = ...  # not a literal: an operator, a name, a call, an unhashable key, ...
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple) and all(_number(v) for v in value):
        items = value
    elif isinstance(value, dict) and all(_number(k) and _number(v) for k, v in value.items()):
        items = value
    else:
        raise ValueError(f"In metric spec {shown(spec)}, the value of {option!r} must be a "
                         f"literal: {_LITERALS} (finite numbers, no nesting).")
    if not items:
        raise ValueError(f"In metric spec {shown(spec)}, the value of {option!r} is empty.")
    return value
