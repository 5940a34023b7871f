"""obp's names and parameters as aliases: each is its original's numbers under the name the
user typed (against the original on the kit's simulator logs, and against obp 0.5.7's pinned
numbers), the default run runs originals only, and a parameter under the other library's name
is one line naming both."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_checks import USER_NAMES, evaluate_args, one_line_error, write_csv

from offeval import evaluate, get_registry
from offeval.cli.shell import main
from offeval.errors import ConfigurationError
from offeval.testing import kit_setup
from offeval_obp import from_obp

PINNED_FILE = Path(__file__).parent / "importance" / "obp_reference" / "pinned.json"
PINNED = json.loads(PINNED_FILE.read_text())
#: obp's class -> the registered name an obp user types (``dm``, ``dr``, ``sndr``: offeval's too).
OBP_CLASSES = {
    "InverseProbabilityWeighting": "ipw",
    "SelfNormalizedInverseProbabilityWeighting": "snipw",
    "DirectMethod": "dm",
    "DoublyRobust": "dr",
    "SelfNormalizedDoublyRobust": "sndr",
    "SwitchDoublyRobust": "switch-dr",
    "DoublyRobustWithShrinkage": "dr-os",
}
#: A value for each numeric parameter other than its default (inside every alias's range).
CHANGED = 0.5


def _aliases() -> list[str]:
    return sorted(c.name for c in get_registry().components("estimator") if c.alias is not None)


def _pairs(name: str) -> list[tuple[object, object]]:
    """(alias, original with the mapped parameters): at the alias's defaults, and with each
    numeric parameter changed."""
    registry = get_registry()
    comp = registry.get("estimator", name)
    alias = registry.create("estimator", name)
    numeric = {k: v for k, v in alias.get_params().items() if isinstance(v, float)}
    settings = [{}] + [{k: CHANGED} for k in numeric]
    out = []
    for given in settings:
        built = registry.create("estimator", name, **given)
        mapped = {comp.alias.rename.get(k, k): v for k, v in built.get_params().items()}
        out.append((built, registry.create("estimator", comp.alias.original, **mapped)))
    return out


def test_obps_names_are_registered_as_aliases_left_out_of_the_default_set():
    registry = get_registry()
    expected = {"ipw", "snipw", "clipped_ipw", "switch-dr", "dr-os"}
    assert expected <= set(_aliases())
    assert not set(_aliases()) & set(registry.distinct("estimator"))
    assert {"dm", "dr", "sndr"} <= set(registry.distinct("estimator"))  # obp's names already


@pytest.mark.parametrize("name", _aliases())
def test_an_alias_gives_its_originals_numbers_on_the_kit_log(name):
    for alias, original in _pairs(name):
        _, log, policies = kit_setup(original, n=1_500, seed=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = evaluate(log, policies, [alias, original], progress=False)
        for policy in policies:
            a, b = ev.estimate(policy.name, alias.label), ev.estimate(policy.name, original.label)
            assert np.isfinite(b.value), (name, original.label)
            assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-15), (alias.label, policy)
            assert a.se == pytest.approx(b.se, rel=1e-9), (alias.label, policy)
        assert alias.label.startswith(name) and type(alias).__mro__[1] is type(original)


def _synthetic():
    data = PINNED["synthetic"]
    feedback = {k: np.asarray(data[k]) for k in ("action", "reward", "pscore", "context")}
    feedback["n_actions"] = data["n_actions"]
    dists = {name: np.asarray(p["action_dist"]) for name, p in data["policies"].items()}
    q = np.asarray(data["estimated_rewards_by_reg_model"])
    log, policies = from_obp(feedback, dists, with_candidates=True)
    from offeval_obp import from_obp_rewards

    return from_obp_rewards(log, q).attach(log), policies


def test_obps_names_give_obps_numbers_on_its_synthetic_bandit():
    """obp 0.5.7's estimates, each under obp's name and parameters; obp's defaults included:
    SwitchDoublyRobust() is DR and DoublyRobustWithShrinkage() is DM in obp."""
    log, policies = _synthetic()
    specs = {}
    for key, entry in PINNED["synthetic"]["estimates"]["0.5.7"]["eps_greedy"].items():
        if entry["class"] not in OBP_CLASSES:
            continue  # the other estimators' tests check their obp names
        params = ",".join(f"{k}={v}" for k, v in entry["kwargs"].items())
        specs[key] = OBP_CLASSES[entry["class"]] + (f":{params}" if params else "")
    assert specs["switch_dr_5"] == "switch-dr:lambda_=5" and specs["ipw_clip_5"] == "ipw:lambda_=5"
    specs["obp_default_switch_dr_is_dr"] = "switch-dr"
    specs["obp_default_dr_os_is_dm"] = "dr-os"
    specs["ipw_clip_5_clipped"] = "clipped_ipw:lambda_=5"
    registry = get_registry()
    estimators = {key: registry.create_from_spec("estimator", s) for key, s in specs.items()}
    ev = evaluate(log, policies, list(estimators.values()), progress=False)
    for policy in policies:
        theirs = PINNED["synthetic"]["estimates"]["0.5.7"][policy.name]
        theirs = {
            **theirs,
            "obp_default_switch_dr_is_dr": theirs["dr"],
            "obp_default_dr_os_is_dm": theirs["dm"],
            "ipw_clip_5_clipped": theirs["ipw_clip_5"],
        }
        for key, estimator in estimators.items():
            ours = ev.estimate(policy.name, estimator.label).value
            assert ours == pytest.approx(theirs[key]["policy_value"], abs=1e-12), (key, policy)


@pytest.fixture(scope="module")
def user_log(env, tmp_path_factory):
    log = env.simulate(env.logging_policy(), 2_000, seed=5)
    frame = log.frame.rename(columns=USER_NAMES)
    for p in env.candidate_policies(2):
        frame[f"pi_{p.name}"] = p.probabilities(log.frame)
    return write_csv(frame, tmp_path_factory.mktemp("obp_names") / "log.csv")


def test_the_default_run_runs_each_estimator_once(user_log, tmp_path):
    out = tmp_path / "all"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(evaluate_args(user_log, "--out", str(out))) == 0
    estimates = pd.read_csv(out / "estimates.csv")
    labels = list(estimates.drop_duplicates("estimator")["estimator"])
    assert not set(labels) & set(_aliases())
    assert len(estimates) == 2 * len(labels)  # once per policy
    registry = get_registry()
    behaviours = [(type(registry.create("estimator", n)).__name__) for n in labels]
    assert len(set(behaviours)) == len(behaviours)  # no class twice at its defaults


def test_a_named_alias_gives_the_originals_numbers_under_the_typed_name(user_log, tmp_path):
    out = tmp_path / "named"
    specs = ["ipw:lambda_=5", "cis:cap=5", "snipw", "ncis:cap=inf"]
    argv = evaluate_args(user_log, *[a for s in specs for a in ("--estimator", s)])
    assert main([*argv, "--out", str(out)]) == 0
    table = pd.read_csv(out / "estimates.csv").set_index(["policy", "estimator"])["value"]
    for policy in table.index.get_level_values(0).unique():
        assert table[policy, "ipw(lambda_=5)"] == pytest.approx(table[policy, "cis(cap=5)"])
        assert table[policy, "snipw"] == pytest.approx(table[policy, "ncis(cap=inf)"])


@pytest.mark.parametrize(
    "spec, ours, theirs",
    [
        ("switch_dr:lambda_=5", "switch_dr:tau=5", "switch-dr:lambda_=5"),
        ("switch-dr:tau=5", "switch_dr:tau=5", "switch-dr:lambda_=5"),
        ("cis:lambda_=10", "cis:cap=10", "ipw:lambda_=10"),
        ("ipw:cap=10", "cis:cap=10", "ipw:lambda_=10"),
    ],
)
def test_a_parameter_under_the_other_name_is_one_line_naming_both(
    user_log, capsys, spec, ours, theirs
):
    line = one_line_error(capsys, evaluate_args(user_log, "--estimator", spec))
    assert line.endswith(f"write {theirs} or {ours}"), line


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ipw:lambda_=-1", r"^lambda_ must be a positive number or inf, got -1$"),
        ("b-ipw:lambda_=-1", r"^lambda_ must be a positive number or inf, got -1$"),
        ("switch-dr:lambda_=-1", r"^lambda_ must be a number >= 0 or inf, got -1$"),
    ],
)
def test_an_alias_names_its_own_parameter_in_a_mistake(spec, message):
    """obp's names answer with obp's parameter names (was: about cap, a name not typed)."""
    with pytest.raises(ConfigurationError, match=message):
        get_registry().create_from_spec("estimator", spec)
