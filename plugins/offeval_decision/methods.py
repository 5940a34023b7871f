"""The ways :func:`offeval_decision.choices.select` picks the policies to test, in a module
that imports nothing: ``offeval decide`` lists them among its choices (and answers a
mistake in its arguments) without loading numpy or scipy."""

#: ``top``: the m most likely to be among the top m; ``sample``: m drawn by their
#: probability of being best.
METHODS = ("top", "sample")
