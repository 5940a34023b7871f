"""What the IR commands offer to choose from (file formats, significance tests), in a module
that imports nothing: ``offeval metrics`` and ``offeval compare`` declare their arguments,
and answer a mistake in them, without loading the modules that read files and compute."""

#: Formats of run and qrels files (:func:`offeval_ir.files.read_run`, ``read_qrels``).
FORMATS = ("trec", "csv", "tsv", "parquet", "json")

#: Tests that can decide significance in :meth:`offeval_ir.runs.RunEvaluation.compare`.
TESTS = ("t", "randomization", "tukey")
