"""The base layer: what every other layer may import, and which imports none of them.

Parameter validation (:mod:`.validation`), scikit-learn version shims (:mod:`.compat`), where
query ids come from when they are not passed (:mod:`.queries`), words for numbers in reports
(:mod:`.text`), and the speed devices shared by
the metrics engine and the TREC readers: 64-bit hashing of ids (:mod:`.hashing`), contiguous
runs of equal values (:mod:`.runs`) and the worker threads (:mod:`.threads`).
"""
