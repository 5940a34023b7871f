"""What ``offeval demo`` and the conformance kit need from a simulation environment (a
registered component)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from offeval.data.log import InteractionLog
from offeval.data.policy import Policy


@runtime_checkable
class Environment(Protocol):
    """A seeded world with exact ground truth.

    ``simulate`` gives logs of a policy (with a ``propensity`` column and, on request, the
    candidate table); ``true_value(policy, estimand)`` the exact value of an estimand (a key
    of :data:`~offeval.engine.declaration.ESTIMANDS`) if ``policy`` served everyone;
    ``ab_test`` one online A/B cell per policy (``policy``, ``mean`` and ``se`` of the reward
    per impression, ``n`` trajectories). Candidate policies give probabilities and exposures.
    """

    def logging_policy(self) -> Policy: ...

    def candidate_policies(self, n: int) -> Sequence[Policy]: ...

    def simulate(
        self, policy: Policy, n_trajectories: int, *, seed: int = 0, with_candidates: bool = False
    ) -> InteractionLog: ...

    def true_value(self, policy: Policy, estimand: str) -> float: ...

    def ab_test(
        self, policies: Sequence[Policy], n_per_cell: int, *, seed: int = 0
    ) -> list[Any]: ...
