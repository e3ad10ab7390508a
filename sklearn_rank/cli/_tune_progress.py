"""``sklearn-rank tune``'s progress: a scorer that reports each scored fit.

Imported when the search starts (it imports scikit-learn, which the other
commands never need).
"""

from __future__ import annotations

import threading
import time

from .._utils.compat import ScorerHooksMixin

__all__ = ["ProgressScorer"]


class ProgressScorer(ScorerHooksMixin):
    """Wraps the search's scorer to report each scored fit on stderr.

    The fits run on threads of one process (``sklearn-rank tune``'s searches),
    which share this object: the count and the line are updated under a lock.
    """

    def __init__(self, scorer, total: int, stream):
        self.scorer = scorer
        self.total = total
        self.done = 0
        self.stream = stream
        self.start = time.perf_counter()
        self._lock = threading.Lock()

    def __call__(self, estimator, X, y_true, **kwargs):
        value = self.scorer(estimator, X, y_true, **kwargs)
        with self._lock:
            self.done += 1
            self._report()
        return value

    def _report(self) -> None:
        text = (f"  cross-validating: {self.done}/{self.total} fits "
                f"({time.perf_counter() - self.start:.0f} s)")
        if getattr(self.stream, "isatty", lambda: False)():
            self.stream.write("\r" + text + ("\n" if self.done == self.total else ""))
        elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
            self.stream.write(text + "\n")  # a log, not a terminal: a line per tenth
        self.stream.flush()

    def __repr__(self) -> str:
        return repr(self.scorer)

    def get_metadata_routing(self):
        return self.scorer.get_metadata_routing()
