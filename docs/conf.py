"""Sphinx configuration of the sklearn_rank documentation.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

``-D plot_gallery=0`` builds the gallery without running the examples.
"""

import re
import sys
from datetime import date
from pathlib import Path

import sklearn_rank

sys.path.insert(0, str(Path(__file__).parent))  # _docs_helpers.py

project = "sklearn_rank"
author = "sklearn_rank developers"
copyright = f"{date.today().year}, {author}"  # noqa: A001 - Sphinx's name
version = release = sklearn_rank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
]

templates_path = ["_templates"]
# user_guide/_*.rst are fragments other pages ``.. include::`` (not pages themselves)
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json",
                    "user_guide/_*.rst"]
default_role = "literal"  # `x` in docstrings and pages is code, not a broken reference
nitpicky = False
toc_object_entries_show_parents = "hide"  # "fit()" in the page TOC, not "QueryRanker.fit()"

# -- Copy buttons --------------------------------------------------------------
# The button on every code block copies the code without the doctest prompts
# (">>> ", "... ") or a shell's "$ ": in a block with prompts only the lines
# that have one are copied, so the output lines are left out too. (Excluding
# Pygments' prompt and output classes instead would leave a blank line for
# every output line.)
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_exclude = ".linenos"

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # the class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False  # no intersphinx: the build runs without network

# -- Gallery -----------------------------------------------------------------
# Every example runs when the docs are built, except the Dask and Spark ones:
# the Dask one starts a LocalCluster of worker processes and takes minutes on a
# small machine (the test suite runs it as a script: tests/test_examples.py);
# the Spark one starts a JVM and trains seven XGBoost models through Spark (the
# test suite runs it in its own Spark session: tests/test_spark_search.py).
_NOT_RUN = ("dask_lightgbm.py", "spark_xgboost_ranker.py")


sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"^(?!.*(" + "|".join(map(re.escape, _NOT_RUN)) + r")$)",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "_docs_helpers.ExampleOrder",
    "reset_modules": ("matplotlib", "_docs_helpers.reset_sklearn_config"),
    "reset_modules_order": "both",
    "doc_module": ("sklearn_rank",),
    # Names as the examples import them (sklearn_rank.estimators.QueryRanker),
    # which is where their API pages are, not the shortest importable path.
    "prefer_full_module": {r"^sklearn_rank\."},
    "backreferences_dir": "api/generated/backreferences",
    "reference_url": {"sklearn_rank": None},
    "default_thumb_file": str(Path(__file__).parent / "_static" / "thumbnail.png"),
    "show_memory": False,
    "min_reported_time": 1,
    "remove_config_comments": True,
    "download_all_examples": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_rank {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    # the page's table of contents, except on the gallery's pages: they are
    # code and output, and get the whole width
    "secondary_sidebar_items": {"install": ["page-toc"], "getting_started": ["page-toc"],
                                "performance": ["page-toc"], "user_guide/*": ["page-toc"],
                                "api/**": ["page-toc"]},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# No left sidebar where it would only repeat the page: the landing pages, and
# the API reference, whose index lists every name (a sidebar of 47 dotted
# names reads badly).
html_sidebars = {"index": [], "install": [], "getting_started": [], "performance": [],
                 "api/**": []}


def setup(app):
    from _docs_helpers import resolve_sklearn_references, unlink_email_addresses

    app.connect("autodoc-process-docstring", resolve_sklearn_references)
    app.connect("doctree-read", unlink_email_addresses)
