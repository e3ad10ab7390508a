"""Text cells of a report in Markdown and in LaTeX: any text, a table that parses."""

from __future__ import annotations

import re

__all__ = ["LATEX_SPECIAL", "latex_cell", "latex_comment", "latex_pvalue", "latex_row",
           "markdown_cell"]

#: Every character that is not itself in LaTeX text (OT1, no package), and
#: what stands for it: the ten specials, and ``< > |``, which OT1 prints as
#: other glyphs (``¡ ¿ —``). Also the report's own ``Δ``.
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
    "#": r"\#", "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%",
    "~": r"\textasciitilde{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}", "Δ": r"$\Delta$",
}
# pairs TeX's fonts turn into one glyph (-- is an en dash, `` a quote, !` is ¡)
_LIGATURES = {"--", "``", "''", "!`", "?`", ",,"}
_NEWLINES = re.compile(r"\r\n|\r|\n")


def latex_cell(text: str) -> str:
    """``text`` as LaTeX that prints it: every special character escaped,
    ligatures broken, newlines as spaces."""
    text = _NEWLINES.sub(" ", text)
    return "".join(LATEX_SPECIAL.get(ch, ch) + ("{}" if text[i:i + 2] in _LIGATURES else "")
                   for i, ch in enumerate(text))


def latex_comment(text: str) -> str:
    """``text`` as one LaTeX comment line (its newlines as spaces: the text after
    one would be read as LaTeX)."""
    return "% " + _NEWLINES.sub(" ", text)


def latex_row(cells) -> str:
    """One row of a ``tabular``, its cells already LaTeX: ``a & b \\\\``, a
    first cell that starts with ``[`` braced (after the previous row's
    ``\\\\`` it would be read as that command's optional argument)."""
    cells = list(cells)
    if cells and cells[0].startswith("["):
        cells[0] = "{}" + cells[0]
    return " & ".join(cells) + r" \\"


def latex_pvalue(cell: str) -> str:
    """A p-value cell in LaTeX: the significance mark `` *`` as a superscript."""
    if cell.endswith(" *"):
        return latex_cell(cell[:-2]) + r" $^*$"
    return latex_cell(cell)


def markdown_cell(text: str) -> str:
    """``text`` as a cell of a GitHub-flavoured Markdown table: backslashes and
    ``|`` escaped (``\\|`` is a pipe inside a cell), newlines as ``<br>``."""
    return _NEWLINES.sub("<br>", text.replace("\\", "\\\\").replace("|", "\\|"))
