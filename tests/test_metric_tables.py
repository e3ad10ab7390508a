"""The metric tables of README.md and the user guide are the registry's.

``maint_tools/metric_tables.py`` writes them between marker lines; these
tests regenerate them and fail when the committed text differs, naming the
command that rewrites them, and check that a metric declared in the registry
gets its row without anything else being edited.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from sklearn_rank.metrics._definition import Metric
from sklearn_rank.metrics._vocab.registry import METRICS

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "maint_tools" / "metric_tables.py"
_spec = importlib.util.spec_from_file_location("metric_tables", SCRIPT)
tables = importlib.util.module_from_spec(_spec)
sys.modules["metric_tables"] = tables  # dataclasses look their module up there
_spec.loader.exec_module(tables)


def _between_markers(text: str, fmt: str) -> str:
    begin, end = tables.MARKERS[fmt]
    return text.split(begin + "\n")[1].split(end + "\n")[0]


def _fresh(*args: str) -> subprocess.CompletedProcess:
    """Run in a new interpreter: the registry holds the package's metrics only,
    not those another test registered in this process."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_committed_tables_are_the_registrys():
    proc = _fresh(str(SCRIPT), "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # names the command, shows the diff
    assert proc.stdout == ""


_METRIC_PAGES = sorted(page for page, fmt in tables.TARGETS.items() if fmt != "rst-other")


@pytest.mark.parametrize("page", _METRIC_PAGES)
def test_every_registered_metric_has_a_row(page):
    section = _between_markers((ROOT / page).read_text(encoding="utf-8"), tables.TARGETS[page])
    quote = "``" if tables.TARGETS[page] == "rst" else "`"
    listing = _fresh("-c", "from sklearn_rank.metrics._vocab.registry import METRICS\n"
                           "for m in METRICS.values(): print(m.name, 'k' in m.params, *m.aliases)")
    assert listing.returncode == 0, listing.stderr
    for line in listing.stdout.splitlines():
        name, cutoff, *aliases = line.split()
        spec = f"{name}@k" if cutoff == "True" else name
        assert f"| {quote}{spec}{quote} |" in section or f"* - {quote}{spec}{quote}\n" in section
        for alias in aliases:
            assert f"{quote}{alias}{quote}" in section, alias


def test_an_edited_row_fails_the_check():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    edited = text.replace("| `ndcg@k` |", "| `ndcg@k` (edited) |", 1)
    # (compared with this process's rewrite of the committed page, which holds
    # any metric another test registered here)
    assert edited != text
    assert tables.rewrite(edited, "markdown") == tables.rewrite(text, "markdown") != edited
    rst_text = (ROOT / "docs/user_guide/conventions.rst").read_text(encoding="utf-8")
    dropped = rst_text.replace("   * - ``bpref``\n", "   * - ``bpref_typo``\n", 1)
    assert dropped != rst_text
    assert tables.rewrite(dropped, "rst") == tables.rewrite(rst_text, "rst") != dropped


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
    assert tables.stale() == _METRIC_PAGES


def test_every_measure_of_the_other_vocabularies_has_a_row_with_its_kernel(monkeypatch):
    """trec_eval's and ir_measures' measures (the registry's OTHER) are listed with
    their registry twin or engine; one declared later makes the page stale."""
    from sklearn_rank.metrics._vocab.registry import OTHER, OtherMeasure

    page = "docs/user_guide/trec.rst"
    section = _between_markers((ROOT / page).read_text(encoding="utf-8"), "rst-other")
    assert len(OTHER) > 50
    for (vocabulary, name), measure in OTHER.items():
        by = (f"registry ``{measure.twin}``" if measure.twin is not None
              else f"{measure.engine} engine")
        assert f"   * - {vocabulary}\n     - ``{name}``\n" in section, name
        assert by in section
    monkeypatch.setitem(OTHER, ("trec_eval", "zz_new"), OtherMeasure(
        "zz_new", "trec_eval", "declared later", engine="trec_eval"))
    assert "     - ``zz_new``\n     - declared later\n     - trec_eval engine" in (
        tables.other_rst())
    assert tables.stale() == [page]


def test_options_every_metric_takes_are_named_once():
    shared = tables.shared_options(METRICS.values())
    assert {"ties", "empty", "convention"} <= set(shared) and "k" not in shared
    for row in tables.rows():
        # (a shared option is listed where the metric has its own default: auc's empty)
        own = dict(METRICS[row.spec.removesuffix("@k")].defaults)
        assert not {o.split("=")[0] for o in row.options} & (set(shared) - set(own))
    assert "empty='skip'" in next(row for row in tables.rows() if row.spec == "auc").options
    # a metric without one of them makes it a column entry of the others
    few = {"a": Metric("a", "A", ("k", "ties"), {"cutoff"}, _kernel),
           "b": Metric("b", "B", ("ties", "empty"), set(), _kernel)}
    assert tables.shared_options(few.values()) == ["ties"]
    assert [row.options for row in tables.rows(few)] == [(), ("empty='zero'",)]


def test_a_page_without_its_markers_is_an_error():
    with pytest.raises(ValueError, match="metric-table: end"):
        tables.rewrite("no table here\n", "markdown")


def test_the_check_fails_on_a_stale_page_and_names_the_command(tmp_path, monkeypatch):
    for page in tables.TARGETS:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((ROOT / page).read_text(encoding="utf-8"), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace(
        "| `bpref` |", "| `bpref` (edited) |", 1), encoding="utf-8")
    monkeypatch.setattr(tables, "ROOT", tmp_path)
    assert tables.stale(tmp_path) == ["README.md"]
    assert tables.main(["--check"]) == 1
    assert readme.read_text(encoding="utf-8").count("(edited)") == 1  # --check writes nothing
    assert tables.main([]) == 0 and tables.stale(tmp_path) == []
