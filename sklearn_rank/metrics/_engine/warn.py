"""Warnings that point at the user's line, from any depth of the package."""

from __future__ import annotations

import inspect
import os
import sys
import warnings

__all__ = ["warn"]

#: The folder of the whole package (its top-level ``__init__``), wherever this module sits.
_TOP = sys.modules[__name__.partition(".")[0]]
_PACKAGE = os.path.dirname(os.path.abspath(_TOP.__file__)) + os.sep


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning attributed to the first frame outside ``sklearn_rank``.

    The stack level is counted, not hard-coded (as pandas'
    ``find_stack_level``), so a warning raised in a shared helper points at
    the line that called the public function, whatever the path to it
    (``precision_at_k_score``, ``evaluate``, ``evaluate_run``, a scorer).
    """
    frame = inspect.currentframe()
    level = 2  # warnings.warn's level of our caller (1 is this function)
    try:
        frame = frame.f_back if frame is not None else None
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            frame = frame.f_back
            level += 1
    finally:
        del frame
    warnings.warn(message, category, stacklevel=level)
