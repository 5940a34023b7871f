"""IR measures, one declaration each: offeval's kernels here, trec_eval's own in
:mod:`offeval_ir.measure.trec_eval`; :mod:`offeval_ir.measure.registry` reads them all
(see :mod:`offeval_ir.measure.declaration` for what a measure module declares)."""
