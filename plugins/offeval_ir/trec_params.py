"""trec_eval's measure names and parameters, checked without any numerical library.

:mod:`offeval_ir.trec_measures` computes trec_eval's own measures; what a
parameter after ``:`` may be, and the check of a metric name with its
parameter, live here so that :mod:`offeval_ir.measures` (and through it a
command's argument checks) parses measure names without importing numpy or
pandas. :mod:`offeval_ir.trec_measures` re-exports these names.

trec_eval itself checks none of the values below: it reads ``rbp.p=2``,
``iprec_at_recall.1.5`` or ``Rprec_mult.-1`` and prints a meaningless number
(``rbp_p=2`` gives -1.8e+151 on its test collection, the other two 0.0000);
offeval refuses them, saying so.
"""

from __future__ import annotations

import math

from offeval import ConfigurationError

#: trec_eval's measures that need a cut-off k (their k is part of the definition).
NEEDS_CUTOFF = ("relative_P", "unj")
#: trec_eval's measures that take a parameter after ``:`` (the rest take none).
PARAMETERS = {
    "iprec_at_recall": "a recall level",
    "11pt_avg": "recall levels",
    "Rprec_mult": "a multiple of R",
    "utility": "four coefficients",
    "G": "gains as grade=gain,...",
    "trec_ndcg": "gains as grade=gain,...",
    "ndcg_rel": "gains as grade=gain,...",
    "Rndcg": "gains as grade=gain,...",
    "trec_rbp": "p=persistence and gains as grade=gain,...",
}
#: What trec_eval does with a value these checks refuse (said in the messages).
_TREC_ACCEPTS = "trec_eval accepts it and prints a meaningless value"


def check_trec_metric(metric: str, k: int | None, name: str | None = None):
    """The metric's parameter (:func:`parsed_param`); an error for a cut-off measure
    without a cut-off or a parameter it does not take (``name``: the measure's name in
    the message, default the metric's)."""
    base, colon, param = metric.partition(":")
    if base in NEEDS_CUTOFF and k is None:
        raise ConfigurationError(f"{base} needs a cut-off k")
    if colon and base not in PARAMETERS:
        raise ConfigurationError(f"{base} takes no parameter, got {param!r}")
    if base in ("iprec_at_recall", "Rprec_mult") and not colon:
        raise ConfigurationError(f"{base} needs {PARAMETERS[base]} after ':'")
    return parsed_param(base, param, name)


def parsed_param(base: str, param: str, name: str | None = None):
    """A metric's parameter from its text (None when absent): a recall level in [0, 1]
    (``iprec_at_recall``; each of ``11pt_avg``'s), a multiple of R > 0 (``Rprec_mult``),
    four coefficients (``utility``), or {grade: gain} with ``p`` in (0, 1) for
    ``trec_rbp``."""
    if not param:
        return None
    label = name or base
    try:
        if base in ("iprec_at_recall", "Rprec_mult"):
            value = _finite(param)
        elif base == "11pt_avg":
            value = tuple(_finite(x) for x in param.split(","))
        elif base == "utility":
            value = tuple(_finite(x) for x in param.split(","))
            if len(value) != 4:
                raise ValueError
        else:
            value = gain_pairs(param)
            allowed = ("p",) if base == "trec_rbp" else ()
            if any(not (n.lstrip("+-").isdigit() or n in allowed) for n in value):
                raise ValueError
    except ValueError:
        raise ConfigurationError(
            f"{label}: bad parameter {param!r} (expected {PARAMETERS.get(base, 'none')})"
        ) from None
    if base in ("iprec_at_recall", "11pt_avg"):
        for level in value if isinstance(value, tuple) else (value,):
            if not 0 <= level <= 1:
                raise ConfigurationError(
                    f"{label}: a recall level must be in [0, 1], got {level!r} ({_TREC_ACCEPTS})"
                )
    if base == "Rprec_mult" and not value > 0:
        raise ConfigurationError(
            f"{label}: the multiple of R must be > 0, got {value!r} ({_TREC_ACCEPTS})"
        )
    if base == "trec_rbp" and "p" in value and not 0 < value["p"] < 1:
        raise ConfigurationError(
            f"{label}: RBP's persistence p must be in (0, 1), got {value['p']!r} ({_TREC_ACCEPTS})"
        )
    return value


def gain_pairs(param: str) -> dict[str, float]:
    """``1=3,2=9,p=0.8`` -> {'1': 3.0, '2': 9.0, 'p': 0.8}."""
    pairs = {}
    for part in param.split(","):
        name, equals, value = part.partition("=")
        if not equals or not name.strip():
            raise ValueError
        pairs[name.strip()] = _finite(value)
    return pairs


def _finite(text: str) -> float:
    """A number as float() reads it, refusing NaN and infinities (ValueError)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    return value
