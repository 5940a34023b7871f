"""Support of the slate estimators: target mass where the logger never shows the candidate.

Each slot of a log's candidate table lists the candidates the logger could
show there, with the logger's ``propensity`` (its probability of the
candidate at the slot's position). Where that is 0 and the target's is
not, no logged trajectory can carry the target's reward there and every
estimator misses it (biased low for positive rewards):

- rank-marginal estimators (IIPS, PI) miss the target's marginal
  pi(c at k) on such cells: their unsupported mass is the sum of those;
- prefix estimators (RIPS, Cascade-DR) miss the target's prefixes ending in
  such a candidate: their unsupported mass at a slot is
  w_1:k-1 pi(c | logged items above), an importance-weighted estimate of
  the target's probability of a prefix first unsupported at k. A logger
  whose marginal is positive may still never show a given prefix (a
  Plackett-Luce logger with finite logits, two-stage or not, always does).

``support`` says what to do with a trajectory holding a violation, as the
DCG family's parameter does (``offeval.plugin.exposure.check_support``):
``fail`` raises :class:`offeval.SupportError` naming them, ``warn`` warns,
``drop`` excludes them (counted as ``support``). Without a candidate table,
or with unknown (NaN) propensities, support is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from offeval import PolicyView
from offeval.stats import Tally
from offeval_ranking import exposure


@dataclass(frozen=True)
class SupportCheck:
    """Which trajectories stay after the support policy, and what was excluded."""

    included: np.ndarray | None  # per trajectory; None when all stay
    excluded: dict[str, int]


def logger_zero(view: PolicyView) -> np.ndarray | None:
    """Per candidate row: the logger never shows the candidate at the slot (None: unknown)."""
    log = view.log
    if not log.has_candidates or "propensity" not in log.candidates:
        return None
    mu = log.candidates["propensity"].to_numpy(dtype=float)
    return None if np.isnan(mu).any() else mu == 0


def marginal_mass(view: PolicyView) -> np.ndarray | None:
    """Per candidate row: the target's pi(c at k) where the logger's is 0 (None: unchecked)."""
    zero = logger_zero(view)
    if zero is None:
        return None
    if not zero.any():  # nothing to ask the target
        return np.zeros(zero.size)
    return np.where(zero, view.candidate_probabilities(), 0.0)


def apply_support(
    view: PolicyView, mass: np.ndarray | None, policy: str, tally: Tally
) -> SupportCheck:
    """Count violations and their mass into ``tally``, then apply the support ``policy``."""
    log = view.log
    if mass is None:
        return SupportCheck(None, {})
    bad = mass > 0
    unit = log.unit_index[log.candidates["slot"].to_numpy()]
    per_unit = np.bincount(unit[bad], minlength=log.n_units)
    total = float(mass[bad].sum())
    exposure.check_support(per_unit > 0, total, log.unit_ids, policy)
    tally.count("support_violations", int(bad.sum()))
    tally.add("unsupported_mass", total)
    tally.add("slots", log.n_rows)
    dropped = int(np.count_nonzero(per_unit)) if policy == "drop" else 0
    if not dropped:
        return SupportCheck(None, {})
    return SupportCheck(per_unit == 0, {"support": dropped})


def support_diagnostics(tally: Tally) -> dict[str, float]:
    """Violations (candidate cells) and the unsupported target mass per slot, when checked."""
    if "slots" not in tally.sums:
        return {}
    slots = tally.sums["slots"]
    return {
        "support_violations": tally.counts.get("support_violations", 0),
        "unsupported_mass_per_slot": tally.sums["unsupported_mass"] / slots if slots else 0.0,
    }
