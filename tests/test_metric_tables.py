"""The metric tables of README.md and the user guide are the registry's.

``maint_tools/metric_tables.py`` writes them between marker lines; these
tests regenerate them and fail when the committed text differs, naming the
command that rewrites them, and check that a metric declared in the registry
gets its row without anything else being edited.
"""

import difflib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from sklearn_rank.metrics import get_metric_names
from sklearn_rank.metrics._definition import Metric
from sklearn_rank.metrics._registry import METRICS

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "maint_tools" / "metric_tables.py"
_spec = importlib.util.spec_from_file_location("metric_tables", SCRIPT)
tables = importlib.util.module_from_spec(_spec)
sys.modules["metric_tables"] = tables  # dataclasses look their module up there
_spec.loader.exec_module(tables)


def _between_markers(text: str, fmt: str) -> str:
    begin, end = tables.MARKERS[fmt]
    return text.split(begin + "\n")[1].split(end + "\n")[0]


@pytest.mark.parametrize("page", sorted(tables.TARGETS))
def test_committed_table_is_the_registrys(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    fmt = tables.TARGETS[page]
    want = tables.rewrite(text, fmt)
    diff = "".join(difflib.unified_diff(text.splitlines(True), want.splitlines(True),
                                        f"{page} (committed)", f"{page} (from the registry)", n=1))
    assert text == want, (f"{page}'s metric table differs from the registry: run "
                          f"`{tables.COMMAND}` to rewrite it.\n{diff}")


@pytest.mark.parametrize("page", sorted(tables.TARGETS))
def test_every_registered_metric_has_a_row(page):
    section = _between_markers((ROOT / page).read_text(encoding="utf-8"), tables.TARGETS[page])
    quote = "``" if tables.TARGETS[page] == "rst" else "`"
    for name in get_metric_names():
        spec = f"{name}@k" if "k" in METRICS[name].params else name
        assert f"| {quote}{spec}{quote} |" in section or f"* - {quote}{spec}{quote}\n" in section
        for alias in METRICS[name].aliases:
            assert f"{quote}{alias}{quote}" in section, alias


def test_an_edited_row_fails_the_check():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    edited = text.replace("| `ndcg@k` |", "| `ndcg@k` (edited) |", 1)
    assert edited != text
    assert tables.rewrite(edited, "markdown") == text  # the check would report it
    rst_text = (ROOT / "docs/user_guide/conventions.rst").read_text(encoding="utf-8")
    dropped = rst_text.replace("   * - ``bpref``\n", "   * - ``bpref_typo``\n", 1)
    assert dropped != rst_text and tables.rewrite(dropped, "rst") == rst_text


def _kernel(ranking, options, k):  # never called: the tables only read the declaration
    raise AssertionError


def test_a_newly_registered_metric_gets_a_row(monkeypatch):
    # a metric declared after these tables were written (a trec_eval-only measure
    # without a public function, say): it appears in both formats, and the
    # committed pages are then stale
    new = Metric("zz_new", "a measure declared later: 2**l over a | b", params=(
        "k", "threshold", "ties", "empty", "convention"), capabilities={"binary", "cutoff"},
        kernel=_kernel, aliases=("zz_alias",))
    monkeypatch.setitem(METRICS, "zz_new", new)
    markdown, rst = tables.markdown(), tables.rst()
    assert ("| `zz_new@k` | `zz_alias` | — | a measure declared later: 2\\*\\*l over a \\| b "
            "| `threshold=1.0` |") in markdown
    assert ("   * - ``zz_new@k``\n     - ``zz_alias``\n     - —\n"
            "     - a measure declared later: 2\\*\\*l over a \\| b\n"
            "     - ``threshold=1.0``\n") in rst
    assert tables.stale() == sorted(tables.TARGETS)


def test_options_every_metric_takes_are_named_once():
    shared = tables.shared_options(METRICS.values())
    assert {"ties", "empty", "convention"} <= set(shared) and "k" not in shared
    for row in tables.rows():
        assert not {o.split("=")[0] for o in row.options} & set(shared)
    # a metric without one of them makes it a column entry of the others
    few = {"a": Metric("a", "A", ("k", "ties"), {"cutoff"}, _kernel),
           "b": Metric("b", "B", ("ties", "empty"), set(), _kernel)}
    assert tables.shared_options(few.values()) == ["ties"]
    assert [row.options for row in tables.rows(few)] == [(), ("empty='zero'",)]


def test_a_page_without_its_markers_is_an_error():
    with pytest.raises(ValueError, match="metric-table: end"):
        tables.rewrite("no table here\n", "markdown")


def test_the_script_checks_and_names_the_command():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
