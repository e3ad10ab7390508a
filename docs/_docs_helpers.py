"""Helpers of the documentation build, named by string in conf.py (Sphinx
caches a picklable configuration)."""

import re

import sklearn

SKLEARN_DOCS = "https://scikit-learn.org/stable/"
# scikit-learn's own docstrings (the set_*_request methods every estimator
# and splitter inherits) point into scikit-learn's glossary and user guide,
# which this build cannot resolve without intersphinx (no network).
_SKLEARN_REFS = {"metadata_routing": "metadata_routing.html"}
_TERM = re.compile(r":term:`([^`<]+?)(?:\s*<[^>]+>)?`")
_REF = re.compile(r":ref:`([^`<]+?)\s*<([^>]+)>`")


def reset_sklearn_config(gallery_conf, fname):
    """An example's ``sklearn.set_config`` (metadata routing) must not leak into the next."""
    sklearn.set_config(enable_metadata_routing=False)


def _sklearn_ref(match):
    text, label = match.group(1), match.group(2)
    if label in _SKLEARN_REFS:
        return f"`{text} <{SKLEARN_DOCS}{_SKLEARN_REFS[label]}>`__"
    return text


def resolve_sklearn_references(app, what, name, obj, options, lines):
    """Turn scikit-learn's glossary terms into code and its user-guide labels into links."""
    for i, line in enumerate(lines):
        if ":term:`" in line or ":ref:`" in line:
            line = _TERM.sub(r"``\1``", line)
            lines[i] = _REF.sub(_sklearn_ref, line)


def unlink_email_addresses(app, doctree):
    """Docutils reads ``NDCG@10`` in running text as an e-mail address and links
    it (``mailto:``); this documentation has no e-mail address to link."""
    from docutils import nodes

    for node in list(doctree.findall(nodes.reference)):
        if node.get("refuri", "").startswith("mailto:"):
            node.replace_self(nodes.Text(node.astext()))


# The gallery in reading order: metrics first, then tuning, TREC, statistics,
# and the Dask and Spark examples (not run by the build) last.
EXAMPLE_ORDER = (
    "metrics_quickstart.py",
    "custom_metric.py",
    "lightgbm_grid_search.py",
    "qid_column_without_routing.py",
    "pointwise_regressor.py",
    "xgboost_ranker.py",
    "early_stopping.py",
    "position_bias.py",
    "trec_evaluation.py",
    "significance_tests.py",
    "many_systems.py",
    "recommenders.py",
    "dask_lightgbm.py",
    "spark_xgboost_ranker.py",
)


class ExampleOrder:
    """sphinx-gallery sort key: the position in ``EXAMPLE_ORDER`` (others last, by name)."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        position = (EXAMPLE_ORDER.index(filename) if filename in EXAMPLE_ORDER
                    else len(EXAMPLE_ORDER))
        return position, filename

    def __repr__(self):
        return f"<{type(self).__name__}>"
