"""The documentation site: every public name has a page in the API reference,
every code block of the guide runs and prints what the page shows, the HTML
builds with warnings as errors, and QueryRanker's HTML repr links to its page.

Building the HTML needs the ``docs`` extra (``pip install -e ".[docs]"``);
without it that test is skipped. The guide's code needs only the ``test``
extra (which includes Optuna, for the tuning page).
"""

import ast
import doctest
import importlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn
from _registry import registry_restored

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
API_INDEX = DOCS / "api" / "index.rst"
PUBLIC_MODULES = [
    "sklearn_rank",
    "sklearn_rank.metrics",
    "sklearn_rank.model_selection",
    "sklearn_rank.estimators",
    "sklearn_rank.inspection",
    "sklearn_rank.datasets",
    "sklearn_rank.trec",
    "sklearn_rank.stats",
    "sklearn_rank.dask",
    "sklearn_rank.recsys",
    "sklearn_rank.fusion",
    "sklearn_rank.spark",
]
GENERATED = ("_build", "auto_examples", "generated", "sg_execution_times.rst")
ALL_PAGES = sorted(p for p in DOCS.rglob("*.rst")
                   if not set(p.relative_to(DOCS).parts) & {*GENERATED, "_templates"})
# Pages with Python files to write (``code-block:: python``), which
# tests/test_register_metric.py writes and runs; the '>>>' of the contributor
# page are a docstring's, inside a file, run there as that module's doctests.
FILE_PAGES = ("user_guide/custom_metrics.rst", "contributing/adding_a_metric.rst")
PAGES = [p for p in ALL_PAGES if ">>> " in p.read_text(encoding="utf-8")  # with code
         and p.relative_to(DOCS).as_posix() != "contributing/adding_a_metric.rst"]
# Pages whose code needs the docs extra's packages beyond the test extra (none:
# the test extra installs Optuna, which the tuning page runs).
NEEDS: dict[str, tuple[str, ...]] = {}
BUILD_NEEDS = ("sphinx", "numpydoc", "pydata_sphinx_theme", "sphinx_gallery", "sphinx_copybutton",
               "matplotlib")
DOCS_EXTRA = "the docs extra is not installed: pip install -e '.[docs]'"


# -- the API reference lists every public name ---------------------------------------------

def documented_names(text: str) -> set:
    """Full names that docs/api/index.rst documents: autosummary entries and
    ``py:data`` directives, under the module of the last ``currentmodule``."""
    names, module, in_autosummary = set(), None, False
    for line in text.splitlines():
        directive = re.match(r"\.\. (?:currentmodule|py:module|automodule):: (\S+)", line)
        if directive:
            module, in_autosummary = directive.group(1), False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif line.startswith(".. py:data:: "):
            names.add(f"{module}.{line.split()[-1]}")
        elif in_autosummary and line.strip() and not line.startswith("   "):
            in_autosummary = False
        elif in_autosummary and re.fullmatch(r" {3}\w+", line):
            names.add(f"{module}.{line.strip()}")
    return names


def missing_names(text: str) -> list:
    """Public names (``__all__`` of every public module) the API reference lacks.

    A top-level re-export counts as documented when its object is documented
    under its subpackage and the page names the re-export."""
    documented = documented_names(text)
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            full = f"{module_name}.{name}"
            if full in documented:
                continue
            obj = getattr(module, name)
            reexport = any(
                f"{other}.{name}" in documented
                and getattr(importlib.import_module(other), name, None) is obj
                for other in PUBLIC_MODULES[1:])
            if not (reexport and f"``{full}``" in text):
                missing.append(full)
    return missing


def test_every_public_name_is_in_the_api_reference():
    assert missing_names(API_INDEX.read_text(encoding="utf-8")) == []


def test_api_reference_documents_only_public_names():
    public = {f"{m}.{n}" for m in PUBLIC_MODULES for n in importlib.import_module(m).__all__}
    assert documented_names(API_INDEX.read_text(encoding="utf-8")) - public == set()


def test_a_name_left_out_of_the_api_reference_is_reported():
    text = API_INDEX.read_text(encoding="utf-8")
    assert "   compare_cv_candidates\n" in text
    assert "``sklearn_rank.QueryRanker``" in text
    without = (text.replace("   compare_cv_candidates\n", "")
               .replace("``sklearn_rank.QueryRanker``", "QueryRanker"))
    assert missing_names(without) == ["sklearn_rank.QueryRanker",
                                      "sklearn_rank.stats.compare_cv_candidates"]


# -- every code block of the guide runs ----------------------------------------------------

def test_every_page_is_checked():
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} == {
        "index.rst", "getting_started.rst", "user_guide/conventions.rst",
        "user_guide/tuning.rst", "user_guide/trec.rst", "user_guide/statistics.rst",
        "user_guide/faq.rst", "user_guide/custom_metrics.rst",
        "user_guide/_recsys_sampled.rst", "user_guide/recommenders.rst",
        "user_guide/fusion.rst", "user_guide/spark.rst"}
    # Python appears only as doctests, which the test below runs, and as the
    # files of FILE_PAGES; other blocks are shell commands (installing, building).
    python_blocks = [p.relative_to(DOCS).as_posix() for p in ALL_PAGES
                     if re.search(r"\.\. (code-block|code|sourcecode):: (python|py|pycon)\b",
                                  p.read_text(encoding="utf-8"))]
    assert sorted(python_blocks) == sorted(FILE_PAGES)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_code_blocks_of_the_page_run(page):
    for module in NEEDS.get(page.relative_to(DOCS).as_posix(), ()):
        pytest.importorskip(module, reason=DOCS_EXTRA)
    text = page.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {"__name__": "__main__"}, page.name,
                                               str(page), 0)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    # a page's set_config, or a metric it registers, must not leak into other tests
    with sklearn.config_context(), registry_restored():
        runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()


# -- the HTML repr links to the API page ---------------------------------------------------

def test_query_ranker_html_repr_links_to_its_api_page():
    from sklearn.linear_model import Ridge
    from sklearn.utils import estimator_html_repr

    from sklearn_rank._utils.compat import API_PAGE, DOCS_URL
    from sklearn_rank.estimators import QueryRanker

    link = QueryRanker(Ridge())._get_doc_link()
    assert link == (DOCS_URL.format(version="stable")
                    + "api/generated/sklearn_rank.estimators.QueryRanker.html")
    assert link.endswith(API_PAGE.format(estimator_module="sklearn_rank.estimators",
                                         estimator_name="QueryRanker"))
    assert f'href="{link}"' in estimator_html_repr(QueryRanker(Ridge()))

    class Mine(QueryRanker):  # defined outside the package: no link, as in scikit-learn
        pass

    assert Mine(Ridge())._get_doc_link() == ""


# -- the HTML builds with warnings as errors -----------------------------------------------

@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    for module in BUILD_NEEDS:
        pytest.importorskip(module, reason=DOCS_EXTRA)
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(DOCS, work / "docs", ignore=shutil.ignore_patterns(*GENERATED))
    shutil.copytree(ROOT / "examples", work / "examples")
    env = {**os.environ, "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(work / "docs"), str(work / "html")],
        capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-20000:]
    return work / "html"


def test_docs_build_without_warnings(built_docs):
    from sklearn_rank._utils.compat import API_PAGE

    assert (built_docs / "index.html").is_file()
    # one page per public name, and the page QueryRanker's HTML repr links to
    names = documented_names(API_INDEX.read_text(encoding="utf-8"))
    pages = {f"{name}.html" for name in names if name != "sklearn_rank.__version__"}
    absent = sorted(p for p in pages if not (built_docs / "api" / "generated" / p).is_file())
    assert absent == [] and len(pages) > 40
    assert (built_docs / API_PAGE.format(estimator_module="sklearn_rank.estimators",
                                         estimator_name="QueryRanker")).is_file()
    # docutils links "NDCG@10" as an e-mail address unless conf.py undoes it
    linked = sorted(p.relative_to(built_docs).as_posix() for p in built_docs.rglob("*.html")
                    if "mailto:" in p.read_text(encoding="utf-8"))
    assert linked == []


def assigned(path: Path, name: str):
    """The literal assigned to ``name`` at the top level of a docs/ module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.Assign) and node.targets[0].id == name)


THUMBNAIL = re.compile(r"^# sphinx_gallery_thumbnail_path = \"(?P<path>[^\"]+)\"$", re.M)


def test_gallery_places_every_example():
    examples = {p.name for p in (ROOT / "examples").glob("*.py")}
    order = assigned(DOCS / "_docs_helpers.py", "EXAMPLE_ORDER")
    assert sorted(order) == sorted(examples)
    assert set(assigned(DOCS / "conf.py", "_NOT_RUN")) <= examples


def test_every_example_has_a_real_thumbnail():
    # A card's thumbnail is the first figure its example draws when the build runs
    # it; an example the build does not run names an image of its figure.
    not_run = assigned(DOCS / "conf.py", "_NOT_RUN")
    for script in sorted((ROOT / "examples").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        named = THUMBNAIL.search(text)
        if script.name in not_run:
            assert named and (DOCS / named.group("path")).is_file(), script.name
        else:
            assert "plt.show()" in text or named, script.name


def test_an_example_that_is_not_run_says_why_and_shows_its_output():
    for name in assigned(DOCS / "conf.py", "_NOT_RUN"):
        text = (ROOT / "examples" / name).read_text(encoding="utf-8")
        assert "The documentation build does not run this example:" in text, name
        output = re.search(r"^# Output of one run:\n#\n# \.\. code-block:: text\n#\n"
                           r"(?P<lines>(?:#     .*\n)+)", text, re.M)
        assert output and "best parameters:" in output.group("lines"), name


def test_gallery_shows_each_example_with_its_output(built_docs):
    not_run = assigned(DOCS / "conf.py", "_NOT_RUN")
    for script in sorted((ROOT / "examples").glob("*.py")):
        page = (built_docs / "auto_examples" / f"{script.stem}.html").read_text(
            encoding="utf-8")
        ran = "sphx-glr-script-out" in page
        assert ran == (script.name not in not_run), script.name
        text = script.read_text(encoding="utf-8")
        if script.name in not_run:  # its output and figure, from one run
            assert "Output of one run" in page and "best parameters:" in page, script.name
            image = Path(THUMBNAIL.search(text).group("path")).name
            assert f'src="../_images/{image}"' in page, script.name
        elif "plt.show()" in text:
            assert f"sphx_glr_{script.stem}_001.png" in page, script.name
    # the API pages list the examples that use them
    page = built_docs / "api" / "generated" / "sklearn_rank.estimators.QueryRanker.html"
    assert "sphx-glr-thumbcontainer" in page.read_text(encoding="utf-8")
    # every card shows its own picture: no two thumbnails alike (a placeholder
    # would be shared)
    thumbs = {script.stem: (built_docs / "_images" / f"sphx_glr_{script.stem}_thumb.png")
              for script in (ROOT / "examples").glob("*.py")}
    assert len({path.read_bytes() for path in thumbs.values()}) == len(thumbs)


def test_copy_buttons_leave_out_the_prompts(built_docs):
    # sphinx-copybutton writes conf.py's settings into its script: the prompts
    # (">>> ", "... ", "$ ") as a regular expression, only the lines with one
    # copied (no output), and the prompts not excluded before the expression
    # sees them (that would copy the output lines as blank lines)
    page = (built_docs / "getting_started.html").read_text(encoding="utf-8")
    assert "copybutton.js" in page and '<span class="gp">&gt;&gt;&gt; </span>' in page
    script = (built_docs / "_static" / "copybutton.js").read_text(encoding="utf-8")
    assert r"formatCopyText(text, '>>> |\\.\\.\\. |\\$ ', true, true, true," in script
    assert "let exclude = '.linenos';" in script
