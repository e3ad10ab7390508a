"""The metric registry restored after a test that registers metrics (a plugin, a docs page)."""

import contextlib

from sklearn_rank.metrics._vocab import registry


@contextlib.contextmanager
def registry_restored():
    """The registry as it was, whatever was registered meanwhile."""
    metrics, aliases = dict(registry.METRICS), dict(registry.ALIASES)
    try:
        yield
    finally:
        registry.METRICS.clear()
        registry.METRICS.update(metrics)
        registry.ALIASES.clear()
        registry.ALIASES.update(aliases)
