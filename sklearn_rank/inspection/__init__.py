"""Model inspection that keeps queries whole: permutation importance for rankers."""

from ._permutation import permutation_importance

__all__ = ["permutation_importance"]
