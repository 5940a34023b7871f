"""Conformance kit: checks any estimator against the protocol and against exact truth.

As scikit-learn's ``check_estimator``: :func:`check_estimator` runs the checks that apply
(:func:`checks_for`: the :data:`ROLE_CHECKS`, then those of what the estimator declares),
:func:`parametrize_with_checks` makes each a pytest case. They run on logs of
:class:`~offeval.kitworld.KitWorld`, whose exact values are computed, or of the environment
an estimator names as its ``kit_environment``. An interval method takes
:func:`check_interval_method`.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib.metadata import entry_points
from types import SimpleNamespace

import numpy as np

from offeval.data.log import InteractionLog
from offeval.engine.accumulator import Accumulator
from offeval.engine.declaration import Declaration, declaration_of
from offeval.engine.estimator import Estimator
from offeval.engine.evaluation import evaluate
from offeval.engine.fold import FIRST_CHUNK_ROWS
from offeval.engine.intervals import interval_method
from offeval.engine.result import Estimate
from offeval.errors import OffevalError, RegistryError
from offeval.kitworld import KitIS, KitWorld
from offeval.registry.manager import ENTRY_POINT_GROUP, REQUIRES, active_registry

Check = Callable[[Estimator], None]

#: The seed of the world the kit draws its logs and truth from.
SEED = 5
#: Trajectories of the large log on which estimates must match the truth.
LARGE = 100_000
#: Independent small logs (of LARGE / REPLICATES trajectories) for the unbiasedness check.
REPLICATES = 200
#: The columns every log has (the rest may be removed to test declared requirements).
CORE_COLUMNS = ("trajectory", "context", "item", "position", "reward")


@lru_cache(maxsize=8)
def _environment(name: str | None, assumptions: tuple):
    """The kit's world (``name`` None) or a registered environment, under the assumptions."""
    if name is not None:
        registry = active_registry()
        if name not in registry.names("environment"):
            raise AssertionError(
                f"the kit checks this estimator in environment {name!r} (its kit_environment), "
                f"which no loaded plugin registers: load the plugin its plugin REQUIRES"
            )
        return registry.create("environment", name, seed=SEED, **dict(assumptions))
    try:
        return KitWorld(seed=SEED, **dict(assumptions))
    except (TypeError, OffevalError) as exc:
        raise AssertionError(
            f"the kit's world cannot meet the assumptions {dict(assumptions)} ({exc}): name an "
            "environment that can as the estimator's kit_environment"
        ) from None


@lru_cache(maxsize=16)
def _log(where: tuple, n: int, seed: int, candidates: bool) -> InteractionLog:
    env = _environment(*where)
    return env.simulate(env.logging_policy(), n, seed=seed, with_candidates=candidates)


def kit_setup(estimator: Estimator, n: int = 4_000, seed: int = 0):
    """The environment, a log of ``n`` trajectories and two target policies for ``estimator``
    (the log with the candidate table if required, and its ``prepare_kit_log``'s columns)."""
    declared = declaration_of(estimator)
    where = (declared.kit_environment, tuple(sorted(declared.assumptions.items())))
    env = _environment(*where)
    policies = list(env.candidate_policies(4))
    log = _log(where, n, seed, "candidates" in declared.requires)
    prepare = declared.prepare_kit_log
    return env, log if prepare is None else prepare(log), [policies[0], policies[-1]]


def _estimate(estimator: Estimator, log, policy, **kw) -> Estimate:
    return evaluate(log, [policy], [estimator], **{"progress": False, **kw}).estimate(policy.name)


def _close(a: float, b: float, rtol: float = 1e-9) -> bool:
    return bool(np.isclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True))


def _same(a: Estimate, b: Estimate, what: str) -> None:
    """Assert that ``a`` and ``b`` (differing in ``what``) have the same value, se and interval."""
    assert _close(a.value, b.value), f"value depends on {what}"
    assert _close(a.se, b.se), f"se depends on {what}"
    assert _close(a.ci_low, b.ci_low) and _close(a.ci_high, b.ci_high), (
        f"{a.interval_method} interval depends on {what}"
    )


def check_protocol(estimator: Estimator) -> None:
    """Follows the Estimator protocol; declares its promises as :func:`declaration_of` checks."""
    assert isinstance(estimator, Estimator), "does not follow offeval.Estimator"
    assert isinstance(estimator.get_params(), dict), "get_params() must return a dict"
    try:
        declaration_of(estimator)
    except OffevalError as exc:
        raise AssertionError(str(exc)) from None


def check_params_roundtrip(estimator: Estimator) -> None:
    """Rebuilding from get_params() gives the same parameters and estimate."""
    clone = type(estimator)(**estimator.get_params())
    assert clone.get_params() == estimator.get_params(), "parameters not stored as given"
    _, log, (policy, _) = kit_setup(estimator)
    a, b = _estimate(estimator, log, policy), _estimate(clone, log, policy)
    assert _close(a.value, b.value, 1e-12), "clone estimates differently"


def check_estimate_fields(estimator: Estimator) -> None:
    """Finite value and se, interval around the value, every unit used or excluded."""
    _, log, (policy, _) = kit_setup(estimator)
    est = _estimate(estimator, log, policy)
    assert np.isfinite(est.value), f"value is {est.value}"
    assert np.isfinite(est.se) and est.se >= 0, f"standard error is {est.se}"
    assert est.ci_low <= est.value <= est.ci_high, "interval does not contain the value"
    assert est.n_units + est.n_excluded == log.n_units, (
        f"{est.n_units} units used + {est.n_excluded} excluded != {log.n_units} in the log"
    )
    assert est.n_units > 0, "no unit was used"
    for key, value in est.diagnostics.items():
        assert isinstance(value, (int, float, np.integer, np.floating)), f"diagnostic {key}"
    narrow = _estimate(estimator, log, policy, level=0.80)
    assert narrow.ci_high - narrow.ci_low < est.ci_high - est.ci_low or est.se == 0, (
        "an 80% interval must be narrower than a 95% one"
    )


def check_chunking_invariance(estimator: Estimator) -> None:
    """Chunked, or fed as an iterable of logs, the numbers equal one pass over the whole log."""
    check_interval_chunking(None, estimator)


def check_unit_order_invariance(estimator: Estimator) -> None:
    """Shuffling the order of trajectories does not change the estimate (on a log longer
    than the engine's first chunk, so the order decides which trajectories share one)."""
    check_interval_unit_order(None, estimator)


def _reduced(log: InteractionLog, columns: list[str], candidates: bool = True) -> InteractionLog:
    """The log without ``columns``, and without its candidate table unless ``candidates``."""
    tables = (log.candidates, log.candidate_source_rows) if candidates else ()
    return InteractionLog(
        log.frame.drop(columns=columns), log.source_rows, log.unit_starts, *tables
    )


def check_requirements(estimator: Estimator) -> None:
    """Removing a declared requirement raises an OffevalError naming it; nothing else is needed."""
    _, log, (policy, _) = kit_setup(estimator, 2_000)
    requires = declaration_of(estimator).requires
    bare = SimpleNamespace(name=policy.name, probabilities=policy.probabilities)  # no exposure
    for requirement in requires:
        log_, policy_ = log, policy
        if requirement.endswith("()"):
            policy_ = bare
        elif requirement == "candidates":
            log_ = _reduced(log, [], candidates=False)
        else:  # a column, or columns by prefix (``prefix_*``)
            prefix = requirement[:-1] if requirement.endswith("*") else None
            drop = [c for c in log.frame if c == requirement or (prefix and c.startswith(prefix))]
            assert drop, f"the kit's log has no column {requirement!r} to remove"
            log_ = _reduced(log, drop)
        try:
            _estimate(estimator, log_, policy_)
        except OffevalError as exc:
            stem = requirement.rstrip("()*").split("_")[0].rstrip("s")
            assert stem in str(exc), f"the error does not name {requirement!r}: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 - the point is to name the wrong type
            raise AssertionError(
                f"without {requirement!r}: raised {type(exc).__name__} instead of an OffevalError"
            ) from exc
        raise AssertionError(f"declares it requires {requirement!r} but runs without it")
    optional = [c for c in log.frame.columns if c not in CORE_COLUMNS]
    keep = {r.rstrip("*") for r in requires}
    drop = [c for c in optional if not any(c == k or c.startswith(k) for k in keep if k)]
    minimal = _reduced(log, drop, candidates="candidates" in requires)
    methods = any(r.endswith("()") for r in requires)
    try:
        _estimate(estimator, minimal, policy if methods else bare)
    except Exception as exc:  # noqa: BLE001 - any failure here is an undeclared requirement
        raise AssertionError(
            f"needs more than it declares ({requires}): without {drop} and policy methods "
            f"beyond probabilities() it raised {type(exc).__name__}: {exc}"
        ) from exc


def check_depends_on_data(estimator: Estimator) -> None:
    """The estimate changes with the rewards and with the target policy (no constant answers)."""
    _, log, (policy, other) = kit_setup(estimator)
    base = _estimate(estimator, log, policy)
    assert not _close(base.value, _estimate(estimator, log, other).value, 1e-6), (
        "two different target policies get the same estimate: it ignores the policy"
    )
    shuffled = log.with_columns(reward=np.random.default_rng(2).permutation(log.column("reward")))
    assert not _close(base.value, _estimate(estimator, shuffled, policy).value, 1e-6), (
        "the estimate does not change when the rewards are shuffled across rows: it ignores "
        "which rows were rewarded"
    )


def check_tracks_the_truth(estimator: Estimator) -> None:
    """Declared estimand and guarantee: on a large log, two policies' estimates and their
    paired difference lie within 4.5 standard errors of the exact values."""
    estimand = declaration_of(estimator).estimand
    env, log, policies = kit_setup(estimator, LARGE, seed=7)
    evaluation = evaluate(log, policies, [estimator], progress=False)
    truth = [env.true_value(p, estimand) for p in policies]
    for policy, value in zip(policies, truth, strict=True):
        est = evaluation.estimate(policy.name)
        assert est.se > 0, f"standard error 0 on {log.n_units} trajectories"
        z = (est.value - value) / est.se
        assert abs(z) < 4.5, (
            f"{policy.name}: estimate {est.value:.6g} is {z:.1f} standard errors from the "
            f"exact {estimand} {value:.6g}"
        )
    diff = evaluation.difference(policies[0].name, policies[1].name)
    z = (diff.value - (truth[0] - truth[1])) / diff.se
    assert abs(z) < 4.5, f"paired difference is {z:.1f} standard errors from the exact one"


def _replicates(estimator: Estimator, method: str | None = None):
    """The exact value, the large log, its policy and the estimates on its 200 parts."""
    env, log, (policy, _) = kit_setup(estimator, LARGE, seed=7)
    truth = env.true_value(policy, declaration_of(estimator).estimand)
    size, bounds = log.n_units // REPLICATES, np.r_[log.unit_starts, log.n_rows]
    parts = (
        log.slice_rows(int(bounds[r * size]), int(bounds[(r + 1) * size]))
        for r in range(REPLICATES)
    )
    return truth, log, policy, [_estimate(estimator, p, policy, interval=method) for p in parts]


def check_unbiased(estimator: Estimator) -> None:
    """Guarantee ``unbiased``: over 200 independent small logs, the mean estimate lies within
    4 standard errors of the truth and 95% intervals cover it at least 85% of the time."""
    truth, log, _, estimates = _replicates(estimator)
    values = np.array([est.value for est in estimates])
    covered = np.mean([est.ci_low <= truth <= est.ci_high for est in estimates])
    methods = "/".join(sorted({est.interval_method for est in estimates}))
    z = (values.mean() - truth) / (values.std(ddof=1) / np.sqrt(REPLICATES))
    assert abs(z) < 4, (
        f"mean of {REPLICATES} estimates on {log.n_units // REPLICATES} trajectories each is "
        f"{z:.1f} standard errors from the exact {declaration_of(estimator).estimand}"
    )
    assert covered >= 0.85, f"95% {methods} intervals covered the truth {covered:.0%}"


def check_linear_in_reward(estimator: Estimator) -> None:
    """Tag ``linear_in_reward``: rewards times 3 give estimate and se times 3 (the kit's
    clicks in [0, 1] become rewards in [0, 3], bounds an interval method may be told)."""
    _, log, (policy, _) = kit_setup(estimator, 6_000)
    scaled = log.with_columns(reward=3 * log.column("reward"))
    a = _estimate(estimator, log, policy, reward_range=(0, 1))
    b = _estimate(estimator, scaled, policy, reward_range=(0, 3))
    assert _close(3 * a.value, b.value), "value is not linear in the reward"
    assert _close(3 * a.se, b.se), "se is not linear in the reward"


#: Checks every estimator takes, whatever it declares.
ROLE_CHECKS: tuple[Check, ...] = (
    check_protocol,
    check_params_roundtrip,
    check_estimate_fields,
    check_chunking_invariance,
    check_unit_order_invariance,
    check_requirements,
    check_depends_on_data,
)


def _declaration(estimator: Estimator) -> Declaration | None:
    """The estimator's declaration; None when it is wrong (:func:`check_protocol` says why)."""
    try:
        return declaration_of(estimator)
    except OffevalError:
        return None


def checks_for(estimator: Estimator) -> list[Check]:
    """The checks that apply to an estimator, given what it declares (only
    :func:`check_protocol`, which says what is wrong, when its declaration is wrong)."""
    declared = _declaration(estimator)
    if declared is None:
        return [check_protocol]
    checks = list(ROLE_CHECKS)
    if declared.estimand is not None and declared.guarantee is not None:
        checks.append(check_tracks_the_truth)
    if declared.guarantee == "unbiased":
        checks.append(check_unbiased)
    if declared.linear_in_reward:
        checks.append(check_linear_in_reward)
    return checks


def known_failures(estimator: Estimator) -> dict[str, str]:
    """The estimator's declared known failures, checked: applicable checks, with reasons."""
    declared = _declaration(estimator)
    known = {} if declared is None else declared.expected_failed_checks
    applicable = {check.__name__ for check in checks_for(estimator)}
    for name, reason in known.items():
        if name not in applicable:
            raise AssertionError(
                f"expected_failed_checks names {name!r}, which is not a check of this estimator "
                f"(its checks: {sorted(applicable)})"
            )
        if not reason.strip():
            raise AssertionError(f"expected_failed_checks[{name!r}] needs a reason")
    return dict(known)


def check_estimator(estimator: Estimator) -> None:
    """Run every applicable check except declared known failures; the first failure raises."""
    known = known_failures(estimator)
    _run([c for c in checks_for(estimator) if c.__name__ not in known], repr(estimator), estimator)


def _run(checks: Sequence[Callable], who: str, *args) -> None:
    """Run ``checks`` on ``args``; the first failure raises, naming the check and ``who``."""
    for check in checks:
        try:
            check(*args)
        except AssertionError as exc:
            raise AssertionError(f"{check.__name__} failed for {who}: {exc}") from exc


def parametrize_with_checks(estimators: Sequence[Estimator]):
    """A pytest parametrize decorator: one case per (estimator, check); declared known
    failures are strict expected failures (they must fail)."""
    import pytest

    cases = []
    for estimator in estimators:
        known = known_failures(estimator)
        declared = _declaration(estimator)
        wrong = getattr(estimator, "name", None) or type(estimator).__name__
        label = wrong if declared is None else declared.label
        for check in checks_for(estimator):
            reason = known.get(check.__name__)
            marks = () if reason is None else pytest.mark.xfail(reason=reason, strict=True)
            cases.append(
                pytest.param(estimator, check, id=f"{label}-{check.__name__}", marks=marks)
            )
    return pytest.mark.parametrize(("estimator", "check"), cases)


def check_interval_protocol(method: str, estimator: Estimator) -> None:
    """A registered interval method, offered to ``estimator``, whose estimates it names and
    bounds in order (low <= high)."""
    built = interval_method(method)  # the registry refuses one without the protocol's names
    declared = declaration_of(estimator)
    assert method in declared.intervals, (
        f"{declared.label} is not offered {method!r} intervals (they need {built.needs})"
    )
    _, log, (policy, _) = kit_setup(estimator, 2_000)
    est = _estimate(estimator, log, policy, interval=method)
    assert est.interval_method == method, f"the estimate's interval is {est.interval_method!r}"
    assert est.ci_low <= est.ci_high, f"interval [{est.ci_low}, {est.ci_high}] is empty"


def check_interval_chunking(method: str | None, estimator: Estimator) -> None:
    """Chunked, or fed as an iterable of logs, the interval (None: the estimator's own) and
    the numbers equal one pass's."""
    _, log, (policy, _) = kit_setup(estimator, 6_000)
    whole = _estimate(estimator, log, policy, chunk_rows=log.n_rows, interval=method)
    for other in (
        _estimate(estimator, log, policy, chunk_rows=997, interval=method),
        _estimate(estimator, list(log.chunks(1_500)), policy, interval=method),
    ):
        _same(whole, other, "the chunks")
        assert other.n_units == whole.n_units, "units counted differently in chunks"


def check_interval_unit_order(method: str | None, estimator: Estimator) -> None:
    """Shuffling the trajectories' order does not change the interval (None: the
    estimator's own) or the numbers."""
    _, log, (policy, _) = kit_setup(estimator, 8_000)
    assert log.n_rows > FIRST_CHUNK_ROWS, "the kit's log fits in one chunk"
    order = np.random.default_rng(1).permutation(log.n_units)
    frame = log.frame.set_index("trajectory").loc[order].reset_index()
    cands = None if log.candidates is None else log.candidates.drop(columns="slot")
    shuffled = InteractionLog.from_frame(frame, candidates=cands)
    _same(
        _estimate(estimator, log, policy, interval=method),
        _estimate(estimator, shuffled, policy, interval=method),
        "row order",
    )


def check_interval_merge(method: str, estimator: Estimator) -> None:
    """Its fold state pickles, and two passes over halves of a log, merged (as workers and
    Dask merge them), give the interval of one pass."""
    _, log, (policy, _) = kit_setup(estimator, 6_000)
    chunks = list(log.chunks(1_000))

    def folded(part: list[InteractionLog]) -> Accumulator:
        acc = Accumulator([policy], [estimator], interval=method)
        for chunk in part:
            acc.add(chunk)
        return acc

    half = len(chunks) // 2
    first, second = folded(chunks[:half]), folded(chunks[half:])
    try:
        second = second.with_state(pickle.loads(pickle.dumps(second.state)))
    except Exception as exc:  # what a worker's state meets: any failure to pickle
        raise AssertionError(f"its fold state does not pickle: {exc}") from None
    merged = first.merge(second).result().estimate(policy.name)
    _same(folded(chunks).result().estimate(policy.name), merged, "merging")


def check_interval_covers_the_truth(method: str, estimator: Estimator) -> None:
    """Over 200 independent small logs, 95% intervals cover the exact value at least 85% of
    the time (the kit's bar for an unbiased estimator's intervals), and the interval on the
    whole log (200 times the trajectories) is at most half their mean width."""
    declared = declaration_of(estimator)
    assert declared.guarantee == "unbiased", (
        f"{declared.label} is not declared unbiased: check the method on one that is"
    )
    truth, log, policy, estimates = _replicates(estimator, method)
    size = log.n_units // REPLICATES
    covered = np.mean([est.ci_low <= truth <= est.ci_high for est in estimates])
    width = np.mean([est.ci_high - est.ci_low for est in estimates])
    assert covered >= 0.85, (
        f"95% {method} intervals on {size} trajectories covered the truth {covered:.0%}"
    )
    whole = _estimate(estimator, log, policy, interval=method)
    assert whole.ci_high - whole.ci_low <= 0.5 * width, (
        f"the {method} interval does not narrow as the log grows: width "
        f"{whole.ci_high - whole.ci_low:.3g} on {log.n_units} trajectories, {width:.3g} on {size}"
    )


#: Every interval method's checks, in order.
INTERVAL_CHECKS: tuple[Callable[[str, Estimator], None], ...] = (
    check_interval_protocol,
    check_interval_chunking,
    check_interval_unit_order,
    check_interval_merge,
    check_interval_covers_the_truth,
)


def check_interval_method(method: str, estimator: Estimator | None = None) -> None:
    """Run every interval check of the registered method ``method`` on ``estimator`` (by
    default the kit's own :class:`~offeval.kitworld.KitIS`); the first failure raises."""
    _run(INTERVAL_CHECKS, repr(method), method, KitIS() if estimator is None else estimator)


def declared_plugins(*names: str) -> list[str]:
    """The installed plugins ``names`` and every plugin they build on (their ``REQUIRES``; no
    registry is loaded), sorted, for a plugin's tests to load only what it declares:
    ``os.environ["OFFEVAL_PLUGINS"] = ",".join(declared_plugins("my_plugin"))``. Raises
    :class:`offeval.RegistryError` for a name no installed plugin has and for a ``REQUIRES``
    that is not a tuple of names."""
    installed = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    known = f"(installed: {', '.join(sorted(installed)) or 'none'})"
    found: set[str] = set()
    todo = [(name, None) for name in reversed(names)]
    while todo:
        name, needed_by = todo.pop()
        if name in found:
            continue
        if name not in installed:
            why = "" if needed_by is None else f"plugin {needed_by!r} builds on {name!r}, but "
            raise RegistryError(f"{why}no plugin named {name!r} is installed {known}")
        needs = getattr(installed[name].load(), REQUIRES, ())
        if not isinstance(needs, (tuple, list)) or not all(isinstance(n, str) for n in needs):
            raise RegistryError(
                f"plugin {name!r}: {REQUIRES} must be a tuple of plugin names, got {needs!r}"
            )
        found.add(name)
        todo += [(need, name) for need in reversed(needs)]
    return sorted(found)
