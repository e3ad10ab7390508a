"""The core layer: from flat rows to ranked blocks, the same for every metric.

:mod:`.inputs` checks and prepares the arguments, :mod:`.qid` and :mod:`.grouping` put the rows
of each query together (:mod:`.ids` gives validated ids to callers outside the inputs: the
scorers, splitters, estimators, chunked and Dask evaluation), :mod:`.data` holds the prepared
rows (:class:`~.data.Data`), :mod:`.ranking` sorts queries of similar length as 2-D blocks
(:class:`~.blocks.Ranking`) under a tie policy, and :mod:`.columns` (:mod:`.scaled`: gains
scaled per query for NDCG) and :mod:`.ties` are what kernels read from a block, whose ideal
rankings :mod:`.descending` sorts. :mod:`.aggregate` turns per-query values into a summary.
Nothing here imports the metric definitions, the spec grammar or anything above them. A module
without a leading underscore is this folder's interface to the rest of the package; one with it is
used only inside the folder.
"""
