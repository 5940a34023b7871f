"""Bad banner inputs: the disagreement plugin's logs and the slates logger's logging columns.

Per-banner columns (``shuffled``, ``logging_deterministic``, ``logging_pool``)
must hold one value per trajectory; the scale of ``logging_score`` and
``logging_pool`` is stated (``score_scale``), checked where it can be, and
what CD assumes without the pool column is said once per evaluation.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from offeval import ColumnError, ConfigurationError, InteractionLog, OffevalWarning, evaluate
from offeval_disagreement import CounterfactualDisagreement, PairwiseDisagreement
from offeval_ranking import RerankPolicy


def banner_frame(count: int = 60, n: int = 4, seed: int = 0, **columns) -> pd.DataFrame:
    """``count`` banners of ``n`` products, one click each, ids ``b0``.. and row labels ``r0``.."""
    rng = np.random.default_rng(seed)
    rows = count * n
    click = rng.integers(0, n, count)
    frame = pd.DataFrame(
        {
            "trajectory": np.repeat([f"b{b}" for b in range(count)], n),
            "item": rng.permutation(rows),
            "position": np.tile(np.arange(1, n + 1), count),
            "reward": (np.tile(np.arange(n), count) == np.repeat(click, n)).astype(float),
            "model": rng.normal(size=rows),
            "logging_score": rng.normal(size=rows),
            "logging_pool": np.repeat(rng.normal(size=count), n),
            "shuffled": np.repeat(np.arange(count) % 5 == 0, n),
        },
        index=[f"r{i}" for i in range(rows)],
    )
    return frame.assign(**columns)


def run(frame: pd.DataFrame, *estimators, policies=("model",)):
    return evaluate(
        InteractionLog.from_frame(frame), [RerankPolicy(p) for p in policies], list(estimators)
    )


def caught(call) -> list[warnings.WarningMessage]:
    """The OffevalWarnings ``call`` issues, every one of them (no de-duplication)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    return [w for w in seen if issubclass(w.category, OffevalWarning)]


# -- one value per banner -------------------------------------------------------------------
def test_a_shuffled_flag_that_changes_within_a_banner_names_the_banner_and_rows():
    frame = banner_frame()
    frame.loc["r6", "shuffled"] = not frame.loc["r6", "shuffled"]  # banner b1, its 3rd row
    for estimator in (
        PairwiseDisagreement("shuffled"),
        CounterfactualDisagreement(),
    ):
        with pytest.raises(ColumnError, match=r"'shuffled'.*'b1'.*rows \['r6'\]"):
            run(frame, estimator)


def test_a_pool_that_changes_within_a_banner_names_the_banner_and_rows():
    frame = banner_frame()
    frame.loc["r9", "logging_pool"] += 1.0  # banner b2 (not shuffled), its 2nd row
    with pytest.raises(ColumnError, match=r"'logging_pool'.*'b2'.*rows \['r9'\]"):
        run(frame, CounterfactualDisagreement())


def test_a_deterministic_flag_that_changes_within_a_banner_names_the_banner():
    frame = banner_frame(logging_deterministic=False)
    frame.loc["r7", "logging_deterministic"] = True
    with pytest.raises(ColumnError, match=r"'logging_deterministic'.*'b1'.*rows \['r7'\]"):
        run(frame, CounterfactualDisagreement())


def slates_log(**change) -> tuple[pd.DataFrame, object]:
    """A simulated Plackett-Luce log with row labels ``s0``.., and a target for RIPS."""
    from offeval_simulation import Environment

    env = Environment(seed=0, n_contexts=50, n_items=40, n_candidates=5, n_positions=3)
    frame = env.simulate(env.logging_policy(), 200, seed=1).frame
    frame.index = [f"s{i}" for i in range(len(frame))]
    return frame.assign(**change), env.candidate_policies(2)[1]


@pytest.mark.parametrize("column", ["shuffled", "logging_deterministic", "logging_pool"])
def test_the_slates_logger_takes_no_per_trajectory_value_from_the_first_row(column):
    from offeval_slates import RIPS

    frame, target = slates_log(logging_deterministic=False)
    ordered = frame.index[~frame["shuffled"].to_numpy()]
    row = ordered[4]  # trajectory of the 5th ordered row, not its first row
    trajectory = frame.loc[row, "trajectory"]
    if column == "logging_pool":
        frame.loc[row, column] += 0.5
    else:
        frame.loc[row, column] = not frame.loc[row, column]
    pattern = rf"'{column}'.*\[{trajectory}\].*rows \['{row}'\]"
    with pytest.raises(ColumnError, match=pattern) as err:
        evaluate(InteractionLog.from_frame(frame), [target], [RIPS()])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("estimator", ["rips", "pi"])
def test_a_slate_whose_context_changes_within_it_is_named(estimator):
    from offeval_simulation import Environment
    from offeval_slates import RIPS, PseudoInverse

    env = Environment(seed=0, n_contexts=50, n_items=40, n_candidates=5, n_positions=3)
    log = env.simulate(env.logging_policy(), 200, seed=1, with_candidates=True)
    frame = log.frame.set_axis([f"s{i}" for i in range(log.n_rows)])
    row = "s4"  # the second row of trajectory 1
    assert frame.loc[row, "trajectory"] == 1 and frame.loc["s3", "trajectory"] == 1
    frame.loc[row, "context"] = (frame.loc[row, "context"] + 1) % 50
    changed = InteractionLog.from_frame(frame, candidates=log.candidates)
    chosen = RIPS() if estimator == "rips" else PseudoInverse(logging=env.logging_policy())
    with pytest.raises(ColumnError, match=r"'context'.*trajectories \[1\].*rows \['s4'\]"):
        evaluate(changed, [env.candidate_policies(2)[1]], [chosen])


# -- the scale of the logging scores ------------------------------------------------------
def test_score_scale_is_checked_at_construction():
    with pytest.raises(ConfigurationError, match="score_scale"):
        CounterfactualDisagreement(score_scale="log")


def test_linear_weights_stated_as_linear_give_what_their_logits_give():
    frame = banner_frame(count=80)
    weights = frame.assign(
        logging_score=np.exp(frame["logging_score"]), logging_pool=np.exp(frame["logging_pool"])
    )
    logit = run(frame, CounterfactualDisagreement(score_scale="logit")).estimate("model")
    linear = run(weights, CounterfactualDisagreement(score_scale="linear")).estimate("model")
    assert linear.value == pytest.approx(logit.value, rel=1e-9)
    assert linear.se == pytest.approx(logit.se, rel=1e-9)
    # a hidden mass of zero is no pool (-inf on the log scale)
    none = frame.assign(logging_pool=-np.inf)
    zero = weights.assign(logging_pool=0.0)
    a = run(none, CounterfactualDisagreement(score_scale="logit")).estimate("model").value
    b = run(zero, CounterfactualDisagreement(score_scale="linear")).estimate("model").value
    assert a == pytest.approx(b, rel=1e-9)


@pytest.mark.parametrize(
    ("column", "value"), [("logging_score", 0.0), ("logging_score", -0.3), ("logging_pool", -1.0)]
)
def test_linear_weights_must_be_positive(column, value):
    frame = banner_frame()
    frame = frame.assign(
        logging_score=np.exp(frame["logging_score"]), logging_pool=np.exp(frame["logging_pool"])
    )
    rows = ["r8", "r9", "r10", "r11"] if column == "logging_pool" else ["r9"]
    frame.loc[rows, column] = value  # banner b2, not shuffled
    pattern = rf"'{column}'.*score_scale='linear'.*rows \['{rows[0]}'"
    with pytest.raises(ColumnError, match=pattern):
        run(frame, CounterfactualDisagreement(score_scale="linear"))


def test_probabilities_given_as_logits_warn_once_naming_the_column_and_banners():
    frame = banner_frame(count=50)
    logits = frame["logging_score"].to_numpy().reshape(-1, 4)
    probabilities = np.exp(logits) / (np.exp(logits).sum(axis=1, keepdims=True) + 1.0)
    frame = frame.assign(
        logging_score=probabilities.ravel(), logging_pool=-np.inf, model2=-frame["model"]
    )
    ordered = int((~frame["shuffled"]).sum() // 4)
    cd = CounterfactualDisagreement(score_scale="logit")
    seen = caught(lambda: run(frame, cd, policies=("model", "model2")).estimate("model"))
    assert len(seen) == 1, [str(w.message) for w in seen]
    message = str(seen[0].message)
    assert "'logging_score'" in message and f"{ordered} banners" in message
    assert "score_scale='linear'" in message
    # real logits do not look like probabilities
    assert caught(lambda: run(banner_frame(), cd)) == []


def test_an_unstated_scale_warns_once_when_the_scores_could_be_weights():
    frame = banner_frame()
    # every score > 0 and every pool >= 0: logits, or weights exp(logit)? Only the user knows
    frame = frame.assign(
        logging_score=np.exp(frame["logging_score"]),
        logging_pool=np.exp(frame["logging_pool"]),
        other=-frame["model"],
    )
    two = ("model", "other")
    seen = caught(lambda: run(frame, CounterfactualDisagreement(), policies=two))
    assert len(seen) == 1 and "score_scale" in str(seen[0].message)
    assert "> 0" in str(seen[0].message)
    stated = run(frame, CounterfactualDisagreement(score_scale="logit")).estimate("model")
    assert CounterfactualDisagreement(score_scale="logit").label == "cd"
    assert run(frame, CounterfactualDisagreement()).estimate("model").value == stated.value
    # nothing read from logging_score (uniform orderings), nothing to state
    assert caught(lambda: run(frame, CounterfactualDisagreement(logging="uniform"))) == []


def test_an_unstated_scale_is_not_warned_about_when_only_logits_fit():
    # a score <= 0 is no weight: the logit reading is the only one, so a warning would only
    # teach users to ignore it
    seen = caught(lambda: run(banner_frame(), CounterfactualDisagreement()))
    assert seen == [], [str(w.message) for w in seen]


@pytest.mark.parametrize(
    "pool",
    [
        "log",  # the log of the hidden mass, < 0 on some banners (weights beside a log)
        -np.inf,  # no hidden mass, written as a log
    ],
)
def test_an_unstated_scale_warns_on_positive_scores_whatever_the_pool(pool):
    """Weights exp(logit) in logging_score beside a pool written as a log (negative values):
    the scores are read as logits, which moves CD, so the unstated scale is warned about
    whenever every score is > 0, whatever the pool holds."""
    frame = banner_frame()
    assert (frame["logging_pool"] < 0).any()  # log masses of both signs
    weights = frame.assign(logging_score=np.exp(frame["logging_score"]))
    if pool != "log":
        weights = weights.assign(logging_pool=pool)
    seen = caught(lambda: run(weights, CounterfactualDisagreement()))
    assert len(seen) == 1 and "score_scale not given" in str(seen[0].message)
    assert "> 0" in str(seen[0].message)
    # stated, nothing to warn about
    assert caught(lambda: run(weights, CounterfactualDisagreement(score_scale="logit"))) == []


@pytest.mark.parametrize("name", ["cd", "cd_sampled"])
def test_the_registered_defaults_warn_nothing_on_the_simulators_logits(name):
    from offeval import get_registry
    from offeval.testing import kit_setup

    estimator = get_registry().create("estimator", name)
    _, log, (policy, _) = kit_setup(estimator)
    seen = caught(lambda: evaluate(log, [policy], [estimator], progress=False))
    assert seen == [], [str(w.message) for w in seen]


def test_a_missing_pool_warns_once_per_evaluation_naming_the_column_and_banners():
    frame = banner_frame(count=40).drop(columns="logging_pool")
    frame = frame.assign(other=-frame["model"], third=frame["model"] ** 2)
    cd = CounterfactualDisagreement("non_shuffled", score_scale="logit")
    policies = ("model", "other", "third")
    for _ in range(2):  # every evaluation says it
        seen = caught(lambda: run(frame, cd, policies=policies))
        assert len(seen) == 1, [str(w.message) for w in seen]
        used = run(frame, cd).estimate("model").n_units
        message = str(seen[0].message)
        assert "'logging_pool'" in message
        assert re.search(rf"\b{used} banners", message), (used, message)
    # the message says how to state that the logger drew from the displayed products alone:
    # a pool of -inf, which silences it and gives what was assumed
    assert "-inf" in message
    stated = frame.assign(logging_pool=-np.inf)
    assert caught(lambda: run(stated, cd)) == []
    assert run(stated, cd).estimate("model").value == pytest.approx(
        run(frame, cd).estimate("model").value, rel=1e-12
    )
    # with the column, or on shuffled banners only, nothing is assumed
    assert caught(lambda: run(banner_frame(), cd)) == []
    shuffled = CounterfactualDisagreement("shuffled", score_scale="logit")
    assert caught(lambda: run(frame, shuffled)) == []


def test_the_sampled_cd_counts_and_says_the_pool_assumption_too():
    from offeval_disagreement import SampledCounterfactualDisagreement

    frame = banner_frame(count=40).drop(columns="logging_pool")
    cd = SampledCounterfactualDisagreement("non_shuffled", score_scale="logit")
    seen = caught(lambda: run(frame, cd))
    assert len(seen) == 1 and "'logging_pool'" in str(seen[0].message)
    est = run(frame, cd).estimate("model")
    assert est.diagnostics["pool_assumed"] > 0


# -- public names and citations --------------------------------------------------------------
def test_what_the_book_uses_is_public():
    import offeval_disagreement as plugin

    for name in ("rank_rows", "close_models", "figure3", "plot_figure3", "world"):
        assert name in plugin.__all__ and callable(getattr(plugin, name))


def test_user_facing_text_cites_papers_by_authors_and_year():
    import json
    from pathlib import Path

    import offeval_disagreement
    from offeval import get_registry

    texts = [offeval_disagreement.__doc__]
    texts += [
        c.factory.__doc__ or ""
        for c in get_registry().components()
        if c.plugin in ("disagreement", "slates")
    ]
    book = json.loads((Path(__file__).parents[3] / "book" / "disagreement.ipynb").read_text())
    texts += ["".join(cell["source"]) for cell in book["cells"] if cell["cell_type"] == "markdown"]
    text = "\n".join(texts)
    assert not re.search(r"the seed\b|seed 001|seed's", text, re.IGNORECASE)
    assert "Gilotte et al." in offeval_disagreement.__doc__


def test_the_command_line_says_when_the_scale_is_not_stated(tmp_path, capsys):
    from offeval.cli.shell import main

    path = tmp_path / "banners.csv"
    frame = banner_frame(count=80)
    weights = frame.assign(logging_score=np.exp(frame["logging_score"]), logging_pool=0.0)
    weights.rename(columns={"trajectory": "banner"}).to_csv(path)
    args = ["evaluate", str(path), "--map", "trajectory=banner", "--rerank", "m=model"]
    args += ["--quiet", "--estimator"]
    unstated = caught(lambda: main([*args, "cd"]))
    assert unstated and all("score_scale not given" in str(w.message) for w in unstated)
    assert caught(lambda: main([*args, "cd:score_scale=logit"])) == []
    assert "cd " in capsys.readouterr().out


def test_the_command_line_warns_about_a_missing_pool_once_for_the_whole_log(tmp_path):
    from offeval.cli.shell import main
    from offeval.engine.evaluation import PROBE_ROWS

    count = PROBE_ROWS // 4 + 100  # more rows than the probe the command line tries first
    path = tmp_path / "banners.csv"
    frame = banner_frame(count=count).drop(columns="logging_pool")
    frame.rename(columns={"trajectory": "banner"}).to_csv(path)
    args = ["evaluate", str(path), "--map", "trajectory=banner", "--rerank", "m=model", "--quiet"]
    seen = caught(lambda: main([*args, "--estimator", "cd:score_scale=logit"]))
    pool = [str(w.message) for w in seen if "logging_pool" in str(w.message)]
    non_shuffled = sum(1 for b in range(count) if b % 5)
    assert len(pool) == 1 and f"{non_shuffled} banners" in pool[0]


def test_rips_without_logging_columns_names_the_option_on_the_command_line(tmp_path, capsys):
    from cli_checks import one_line_error

    from offeval_slates import RIPS

    frame, _ = slates_log()
    frame = frame.drop(columns=["logging_score", "logging_pool", "shuffled"]).assign(
        score=-frame["position"].astype(float)
    )
    path = tmp_path / "slates.csv"
    frame.to_csv(path, index=False)
    argv = ["evaluate", path, "--rerank", "m=score", "--estimator", "rips"]
    err = one_line_error(capsys, argv)
    assert "--estimator NAME:logging_prefix=COLUMN" in err and "<column>" not in err, err
    with pytest.raises(ColumnError, match=r"with logging_prefix=COLUMN"):
        evaluate(InteractionLog.from_frame(frame), [RerankPolicy("score")], [RIPS()])
