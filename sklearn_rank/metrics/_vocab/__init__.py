"""The spec and vocabulary layer: what a metric's name means.

The registry (:mod:`.registry`), the declared parameters (:mod:`.params`), the spec grammar
(:mod:`.spec`, guarded by :mod:`.text`), safe names for outputs (:mod:`.names`), and the two
other vocabularies read into registry specs: trec_eval's measure names (:mod:`.trec_eval`) and
ir_measures' (:mod:`.ir_measures`).
"""
