"""The multiple-testing corrections by name, in a module that imports nothing: a command
lists them among its choices without loading the statistics that apply them
(:func:`offeval.stats.compare.adjusted_p_values`)."""

#: Multiple-comparison corrections accepted by :func:`offeval.stats.compare.pairwise_grid`
#: (statsmodels names).
CORRECTIONS = (
    "bonferroni",
    "holm",
    "sidak",
    "holm-sidak",
    "simes-hochberg",
    "hommel",
    "fdr_bh",
    "fdr_by",
)
