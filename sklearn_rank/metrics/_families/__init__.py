"""The metric families: each module declares its metrics (``Metric(...)``), their kernels
and public functions; importing it registers them (:mod:`sklearn_rank.metrics` imports them
all). Kernels read ranked blocks of the engine (:mod:`sklearn_rank.metrics._engine`).
"""
