"""Evaluating recommender systems: top-k lists from user-item frames, beyond-accuracy metrics."""
