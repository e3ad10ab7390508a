"""Words for numbers in reports and messages: counts with their noun, percentages and
p-values, printed the same by every report, plot and command."""

from __future__ import annotations

__all__ = ["counted", "p_text", "percent"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 win``, ``2 wins``, ``0 losses``: a count with its noun in the
    right number (``plural``: the noun's plural when not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def percent(level: float) -> str:
    """``0.95`` -> ``"95%"``, ``0.975`` -> ``"97.5%"``."""
    return f"{level * 100:.10g}%"


def p_text(p: float, sentence: bool = False) -> str:
    """A p-value as reports print it: three decimals, ``<0.001`` below that (``= 0.012``,
    ``< 0.001`` inside a ``sentence``)."""
    if p < 0.001:
        return "< 0.001" if sentence else "<0.001"
    return f"= {p:.3f}" if sentence else f"{p:.3f}"
