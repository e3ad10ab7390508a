"""Write the metric tables of README.md and the user guide from the registry.

Run from the repository's root::

    python maint_tools/metric_tables.py            # rewrite the tables
    python maint_tools/metric_tables.py --check    # exit 1 if one is stale

Each table is the text between two marker lines of its page (an HTML comment
in README.md, a reST comment in ``docs/user_guide/conventions.rst``), which
this script rewrites and nothing else. A row per registered metric (the
registry's :data:`METRICS`, sorted by name, as :func:`get_metric_names` lists
them): its spec (``name@k`` when it takes a cut-off), its aliases, its public
function, the one line of its declaration (``Metric.summary``) and the options
it takes beyond those every metric takes, with their defaults (and a shared
option whose default is the metric's own, ``auc``'s ``empty='skip'``); a sentence after
the table names the shared ones. A metric declared in the registry appears
without further work; ``tests/test_metric_tables.py`` fails when a committed
table differs from what this script writes.

This is a maintenance script rather than a module of the package: the
tables are documentation, written once per change of the registry, and the
installed package has no use for the code that renders them.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

# importing sklearn_rank.metrics (the parent of these) registers every metric
from sklearn_rank.metrics._vocab.params import PARAMS  # noqa: E402
from sklearn_rank.metrics._vocab.registry import METRICS, OTHER  # noqa: E402

COMMAND = "python maint_tools/metric_tables.py"
NOTE = f"generated from the registry by `{COMMAND}`; do not edit by hand"
# The pages and the format of their table.
TARGETS = {"README.md": "markdown", "docs/user_guide/conventions.rst": "rst",
           "docs/user_guide/trec.rst": "rst-other"}
MARKERS = {
    "markdown": (f"<!-- metric-table: {NOTE} -->", "<!-- metric-table: end -->"),
    "rst": (f".. metric-table: {NOTE.replace('`', '``')}", ".. metric-table: end"),
    "rst-other": (f".. measure-table: {NOTE.replace('`', '``')}", ".. measure-table: end"),
}


@dataclass(frozen=True)
class Row:
    """What a table says of one metric."""

    spec: str  # "ndcg@k", or "bpref" for a metric without a cut-off
    aliases: tuple[str, ...]
    function: str | None
    summary: str
    options: tuple[str, ...]  # "gain='exponential'", ...: the options not all metrics take


def shared_options(metrics) -> list[str]:
    """The options every metric takes (``k`` aside), in the first one's order."""
    metrics = list(metrics)
    if not metrics:
        return []
    common = set.intersection(*(set(m.params) for m in metrics)) - {"k"}
    return [p for p in metrics[0].params if p in common]


def _default(name: str, metric=None) -> str:
    """``name=default`` when the default (``metric``'s own, else the shared
    one) is a plain literal, else the name."""
    param = PARAMS.get(name)
    value = getattr(param, "default", None)
    own = dict(getattr(metric, "defaults", ()))
    value = own.get(name, value)
    if value is None or not isinstance(value, (bool, int, float, str)):
        return name
    return f"{name}={value!r}"


def rows(metrics=None) -> list[Row]:
    """A row per metric of ``metrics`` (the registry's by default), sorted by name."""
    metrics = METRICS if metrics is None else metrics
    shared = set(shared_options(metrics.values()))
    table = []
    for name in sorted(metrics):
        metric = metrics[name]
        cutoff = "k" in metric.params
        # its own options, and the shared ones it gives a default of its own
        own = dict(getattr(metric, "defaults", ()))
        options = tuple(_default(p, metric) for p in metric.params
                        if p != "k" and (p not in shared or p in own))
        table.append(Row(f"{name}@k" if cutoff else name, tuple(metric.aliases),
                         metric.function, metric.summary, options))
    return table


# -- the two formats -----------------------------------------------------------------------

def _markdown_text(text: str) -> str:
    """Prose for a Markdown table cell: characters Markdown would read escaped."""
    return re.sub(r"([\\`*|\[\]]|<(?=[A-Za-z/!?]))", r"\\\1", text)


def _rst_text(text: str) -> str:
    """Prose for reST: inline markup characters escaped."""
    text = re.sub(r"([\\`*|])", r"\\\1", text)
    return re.sub(r"(?<=\w)_(?!\w)", r"\\_", text)  # "name_ " would be a reference


def _sentence(shared: list[str], code) -> str:
    if not shared:
        return ""
    names = [code(_default(p)) for p in shared]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return (f"Every metric also takes {listed}, and every function {code('sample_weight')}. "
            f"A spec ending in {code('@k')} takes a cut-off.")


def markdown(metrics=None) -> str:
    """The table in Markdown, with the sentence on the shared options."""
    metrics = METRICS if metrics is None else metrics
    lines = ["| spec | aliases | function | what it is | its own options |",
             "|---|---|---|---|---|"]
    for row in rows(metrics):
        cells = [f"`{row.spec}`", ", ".join(f"`{a}`" for a in row.aliases),
                 f"`{row.function}`" if row.function else "—", _markdown_text(row.summary),
                 ", ".join(f"`{o}`" for o in row.options)]
        lines.append("| " + " | ".join(cells) + " |")
    sentence = _sentence(shared_options(metrics.values()), lambda s: f"`{s}`")
    return "\n".join(lines) + (f"\n\n{sentence}" if sentence else "") + "\n"


def rst(metrics=None) -> str:
    """The table as a reST list-table, with the sentence on the shared options."""
    metrics = METRICS if metrics is None else metrics
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 16 12 24 32 16", "",
             "   * - spec", "     - aliases", "     - function", "     - what it is",
             "     - its own options"]
    for row in rows(metrics):
        cells = [f"``{row.spec}``", ", ".join(f"``{a}``" for a in row.aliases),
                 f":func:`{row.function}`" if row.function else "—", _rst_text(row.summary),
                 ", ".join(f"``{o}``" for o in row.options)]
        lines.append(f"   * - {cells[0]}")
        lines += [f"     - {cell}".rstrip() for cell in cells[1:]]
    sentence = _sentence(shared_options(metrics.values()), lambda s: f"``{s}``")
    return "\n".join(lines) + (f"\n\n{sentence}" if sentence else "") + "\n"


def other_rst(metrics=None) -> str:
    """The measures of trec_eval's and ir_measures' vocabularies (the registry's
    :data:`OTHER`), each with the kernel that computes it: its registry twin, or
    the engine of the measures that have none. (``metrics`` is not read: the
    registry's own metrics are the other table's.)"""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 14 18 44 24", "",
             "   * - vocabulary", "     - name", "     - what it is", "     - computed by"]
    for (vocabulary, name), measure in sorted(OTHER.items(), key=lambda kv: (
            kv[0][0] != "trec_eval", kv[0][1].lower(), kv[0][1])):
        by = (f"registry ``{measure.twin}``" if measure.twin is not None
              else f"{measure.engine} engine")
        lines += [f"   * - {vocabulary}", f"     - ``{name}``",
                  f"     - {_rst_text(measure.summary)}", f"     - {by}"]
    return "\n".join(lines) + "\n"


RENDER = {"markdown": markdown, "rst": rst, "rst-other": other_rst}


def rewrite(text: str, fmt: str, metrics=None) -> str:
    """``text`` with the table between its markers written anew."""
    begin, end = MARKERS[fmt]
    if text.count(begin + "\n") != 1 or text.count(end + "\n") != 1:
        raise ValueError(f"the page needs one line {begin!r} and, after it, one line {end!r}")
    head, rest = text.split(begin + "\n")
    _, tail = rest.split(end + "\n")
    return f"{head}{begin}\n\n{RENDER[fmt](metrics)}\n{end}\n{tail}"


def stale(root: Path | None = None) -> list[str]:
    """The pages (under ``root``, the checkout by default) whose table is not
    what :func:`rewrite` writes."""
    root = ROOT if root is None else root
    return [page for page, fmt in TARGETS.items()
            if rewrite(text := (root / page).read_text(encoding="utf-8"), fmt) != text]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a table differs from the registry")
    args = parser.parse_args(argv)
    if args.check:
        pages = stale()
        for page in pages:
            text = (ROOT / page).read_text(encoding="utf-8")
            want = rewrite(text, TARGETS[page])
            print(f"{page}: the metric table differs from the registry; run {COMMAND}")
            print("".join(difflib.unified_diff(text.splitlines(True), want.splitlines(True),
                                               f"{page} (committed)",
                                               f"{page} (from the registry)", n=1)))
        return 1 if pages else 0
    for page, fmt in TARGETS.items():
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, fmt)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
