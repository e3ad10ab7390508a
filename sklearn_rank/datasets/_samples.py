"""A small TREC test collection shipped with the package: qrels and three runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._utils.validation import validate_params

if TYPE_CHECKING:
    from sklearn.utils import Bunch

__all__ = ["load_sample_trec"]

_FOLDER = Path(__file__).resolve().with_name("data") / "sample_trec"
_RUNS = ("bm25", "rm3", "dense")

_DESCR = """\
Sample TREC collection
----------------------

A small synthetic ad hoc retrieval task in TREC's file formats, for trying
``sklearn-rank evaluate``/``compare``, :func:`sklearn_rank.trec.evaluate_run`
and :mod:`sklearn_rank.stats` without a collection of one's own.

- 25 topics, ids ``401`` to ``425``; document ids ``D`` + six digits.
- ``qrels.txt``: 700 judgments (``topic 0 docno level``) with levels 0
  (non-relevant, 440), 1 (relevant, 131) and 2 (highly relevant, 129);
  1 to 22 relevant documents per topic. As in a pooled TREC collection,
  the judged documents are the top 10 of every run plus the relevant
  documents other systems found and a few non-relevant ones, so every run
  retrieves unjudged documents and misses relevant ones.
- ``bm25.run``, ``rm3.run``, ``dense.run``: 20 documents per topic
  (``topic Q0 docno rank score tag``, 500 lines each); the run tag is the
  file name's stem.

Measured with trec_eval 10.0 (``-m map -m ndcg_cut.10``): map 0.2867,
0.3038 and 0.3833, ndcg_cut_10 0.4329, 0.4549 and 0.5458 for bm25, rm3 and
dense. ``dense`` is better than ``bm25`` beyond chance on both (paired
randomization test); ``rm3``'s small gain is not.

The runs rank documents by a latent relevance seen through each system's
noise (``rm3`` shares most of ``bm25``'s); the files are written by
``maint_tools/make_sample_trec.py`` in the source repository from a fixed
seed. They are not real retrieval results.
"""


@validate_params({})
def load_sample_trec() -> Bunch:
    """Load the paths of a small TREC test collection: qrels and three runs.

    The files are plain text inside the installed package (700 qrels lines,
    three runs of 500 lines), synthetic but shaped like a pooled ad hoc TREC
    task: 25 topics judged on three levels and runs named ``bm25``, ``rm3``
    and ``dense``, of which ``dense`` is better than ``bm25`` beyond chance
    and ``rm3`` is not. Give the paths to the ``sklearn-rank`` command line,
    to :func:`~sklearn_rank.trec.read_qrels` and
    :func:`~sklearn_rank.trec.read_run`, or straight to
    :func:`~sklearn_rank.trec.evaluate_run`. Read them; do not write there.

    Returns
    -------
    sample : sklearn.utils.Bunch
        Dictionary-like object with the attributes:

        qrels : pathlib.Path
            The relevance judgments, ``qrels.txt``.
        runs : dict of str to pathlib.Path
            The runs by name, in the order ``"bm25"``, ``"rm3"``,
            ``"dense"``; each file's run tag is its name, so
            ``sklearn-rank compare --baseline bm25`` finds it.
        folder : pathlib.Path
            The folder holding the four files.
        DESCR : str
            A description of the collection.

    See Also
    --------
    sklearn_rank.trec.evaluate_run : Evaluate a run as trec_eval does.
    sklearn_rank.stats.compare : Compare runs with a baseline, per query.

    Notes
    -----
    The same files every time, in every version of the package that ships
    them; they are written from a fixed seed by
    ``maint_tools/make_sample_trec.py`` in the source repository.

    Examples
    --------
    >>> from sklearn_rank.datasets import load_sample_trec
    >>> from sklearn_rank.trec import evaluate_run
    >>> sample = load_sample_trec()
    >>> sample.qrels.name, list(sample.runs)
    ('qrels.txt', ['bm25', 'rm3', 'dense'])
    >>> ev = evaluate_run(sample.qrels, sample.runs["dense"], ["map", "ndcg_cut.10"])
    >>> ev.n_queries, round(ev.mean["map"], 4), round(ev.mean["ndcg_cut.10"], 4)
    (25, 0.3833, 0.5458)
    """
    from sklearn.utils import Bunch

    return Bunch(qrels=_FOLDER / "qrels.txt",
                 runs={name: _FOLDER / f"{name}.run" for name in _RUNS},
                 folder=_FOLDER, DESCR=_DESCR)
