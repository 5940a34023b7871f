"""``offeval evaluate LOG --candidates CANDS``: candidate tables read from files (CSV, TSV,
Parquet; their own column names, a composite trajectory key) give the values of the log built
in memory, and the exact value where it is known; streamed in step with the log they give the
values read whole, each batch holding its own trajectories' candidates only; every mistake is
one line, in the user's words (the candidate file's name, lines and columns), found before
the rows are read where the headers tell it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_checks import one_line_error
from oracles import synthetic_log
from reference_estimators import ReferencePlugin

import offeval.cli.evaluate_run as evaluate_run
import offeval.data.candidates as candidates_module
import offeval.data.log as log_module
import offeval.registry.manager as manager
from offeval import BaseEstimator, ColumnError, Contribution, PolicyView, hookimpl
from offeval.cli.shell import main
from offeval.data.log import stream_parquet
from offeval.stats import Linearisation, ratio_of_means

N = 1_500
#: The logging policy, target policy and click rates of :func:`oracles.synthetic_log`
#: (slot x item): the target's exact value is the mean over slots of sum_a pi q.
PI = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
Q = np.array([[0.10, 0.20, 0.30, 0.50], [0.05, 0.10, 0.20, 0.30]])


class CandidateDM(BaseEstimator):
    """The direct method over each slot's candidates: mean over rows of sum_a pi(a) q(a)."""

    name = "cdm"
    estimand = "reward_per_impression"
    requires = ("candidates",)

    def __init__(self, reward_model: str = "reward_model"):
        self.reward_model = reward_model

    def contribute(self, view: PolicyView) -> Contribution:
        """Per row: the sum over its slot's candidates of pi times the predictions."""
        log = view.log
        q = pd.to_numeric(log.candidates[self.reward_model], errors="coerce").to_numpy(float)
        bad = ~np.isfinite(q)
        if bad.any():
            raise ColumnError(
                self.reward_model,
                "predicted rewards must be finite numbers",
                log.candidate_source_rows[bad],
                table="candidate rows",
            )
        slot = log.candidates["slot"].to_numpy()
        value = np.bincount(slot, view.candidate_probabilities() * q, minlength=log.n_rows)
        return Contribution({"v": value, "rows": log.ones})

    def combine(self, stats) -> Linearisation:
        """The mean per row."""
        return ratio_of_means(stats, "v", "rows")


class Plugin:
    @hookimpl
    def register_estimators(self, register) -> None:
        register("cdm", CandidateDM)


@pytest.fixture(autouse=True)
def registry(monkeypatch):
    """The core, the reference estimators and ``cdm``."""
    registry = manager.Registry(entry_points=False)
    registry.add_plugin(ReferencePlugin(), "reference")
    registry.add_plugin(Plugin(), "cdm")
    monkeypatch.setattr(manager, "_default", registry)
    return registry


@pytest.fixture(scope="module")
def tables():
    """The two-slot bandit as a user's log and candidate table, in the user's words: the
    log's session, product, rank, click, mu, target and q; the candidates' sess, prod, slot,
    p_log, target and q (the true click rate of each item at its slot)."""
    log, _, truth = synthetic_log(N, seed=3)
    frame = log.frame
    slot = frame["position"].to_numpy() - 1
    user = pd.DataFrame(
        {
            "session": frame["trajectory"],
            "product": frame["item"],
            "rank": frame["position"],
            "click": frame["reward"],
            "mu": frame["propensity"],
            "target": frame["target"],
            "q": Q[slot, frame["item"].to_numpy()],
            "half": frame["trajectory"] % 2,
        }
    )
    cands = log.candidates
    cand_slot = cands["position"].to_numpy() - 1
    cand_table = pd.DataFrame(
        {
            "sess": cands["trajectory"],
            "prod": cands["item"],
            "slot": cands["position"],
            "p_log": cands["propensity"],
            "target": cands["target"],
            "q": Q[cand_slot, cands["item"].to_numpy()],
        }
    )
    return user, cand_table, truth


LOG_MAP = ["trajectory=session", "item=product", "position=rank", "reward=click", "propensity=mu"]
CAND_MAP = ["trajectory=sess", "item=prod", "position=slot", "propensity=p_log"]


def options(log, cands, *extra, log_map=LOG_MAP, cand_map=CAND_MAP) -> list:
    argv = ["evaluate", str(log), "--candidates", str(cands), "--quiet", "--policy", "t=target"]
    argv += [a for m in log_map for a in ("--map", m)]
    argv += [a for m in cand_map for a in ("--candidates-map", m)]
    return [*argv, "--reward-model", "q", "--estimator", "cdm", "--estimator", "is", *extra]


def estimates(argv, out) -> pd.DataFrame:
    assert main([*map(str, argv), "--out", str(out)]) == 0
    return pd.read_csv(out / "estimates.csv").set_index("estimator")


def write(frame: pd.DataFrame, path, **kw):
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, **kw)
    return path


@pytest.mark.parametrize(
    ("suffix", "kw"),
    [
        (".csv", {}),
        (".tsv", {"sep": "\t"}),
        (".csv", {"sep": ";", "decimal": ","}),
        (".parquet", {}),
    ],
    ids=["csv", "tsv", "semicolons-and-decimal-commas", "parquet"],
)
def test_candidates_from_a_file_give_the_exact_value(tables, tmp_path, suffix, kw):
    user, cands, truth = tables
    log = write(user, tmp_path / f"log{suffix}", **kw)
    cand = write(cands, tmp_path / f"cands{suffix}", **kw)
    table = estimates(options(log, cand), tmp_path / "out")
    assert table.loc["cdm(reward_model=q)", "value"] == pytest.approx(truth, abs=1e-12)
    assert table.loc["cdm(reward_model=q)", "n_units"] == N


def test_a_composite_trajectory_key_named_differently_in_each_file(tables, tmp_path):
    user, cands, truth = tables
    split = {"user": user["session"] // 10, "visit": user["session"] % 10}
    log = write(user.drop(columns="session").assign(**split), tmp_path / "log.csv")
    parts = {"u": cands["sess"] // 10, "v": cands["sess"] % 10}
    cand = write(cands.drop(columns="sess").assign(**parts), tmp_path / "cands.csv")
    log_map = ["trajectory=user,visit", *LOG_MAP[1:]]
    cand_map = ["trajectory=u,v", *CAND_MAP[1:]]
    table = estimates(options(log, cand, log_map=log_map, cand_map=cand_map), tmp_path / "out")
    assert table.loc["cdm(reward_model=q)", "value"] == pytest.approx(truth, abs=1e-12)
    assert table.loc["cdm(reward_model=q)", "n_units"] == N


def test_a_candidate_file_without_positions_serves_a_log_of_one_row_per_trajectory(
    tables, tmp_path
):
    user, cands, _ = tables
    first = user[user["rank"] == 1].drop(columns="rank")
    log = write(first, tmp_path / "log.csv")
    cand = write(cands[cands["slot"] == 1].drop(columns="slot"), tmp_path / "cands.csv")
    argv = options(
        log, cand, log_map=LOG_MAP[:2] + LOG_MAP[3:], cand_map=CAND_MAP[:2] + CAND_MAP[3:]
    )
    table = estimates(argv, tmp_path / "out")
    assert table.loc["cdm(reward_model=q)", "value"] == pytest.approx(
        (PI[0] * Q[0]).sum(), abs=1e-12
    )


def test_streamed_candidates_give_the_values_read_whole(tables, tmp_path):
    user, cands, _ = tables
    log = write(user, tmp_path / "log.parquet")
    cand = write(cands, tmp_path / "cands.parquet")
    whole = estimates(options(log, cand), tmp_path / "whole")
    # 333-row batches split trajectories (2 rows each) and slots (4 candidates each)
    streamed = estimates(options(log, cand, "--stream", "--chunk-rows", "333"), tmp_path / "s")
    for column in ("value", "se", "ci_low", "ci_high", "n_units"):
        np.testing.assert_allclose(streamed[column], whole[column], rtol=1e-12, atol=1e-15)


def test_each_streamed_batch_holds_its_own_trajectories_candidates_only(tables, tmp_path):
    user, cands, _ = tables
    write(user, tmp_path / "log.parquet")
    write(cands, tmp_path / "cands.parquet")
    stream = stream_parquet(
        tmp_path / "log.parquet",
        dict(m.split("=") for m in LOG_MAP),
        batch_rows=333,
        candidates=tmp_path / "cands.parquet",
        candidates_mapping=dict(m.split("=") for m in CAND_MAP),
    )
    logs = list(stream)
    assert len(logs) > 5 and sum(log.n_units for log in logs) == N
    for log in logs:
        assert len(log.candidates) == 4 * log.n_rows  # four candidates per slot, no more
        slots = log.frame[["trajectory", "position"]].to_numpy()[log.candidates["slot"]]
        assert (slots == log.candidates[["trajectory", "position"]].to_numpy()).all()
    first_rows = np.concatenate([log.candidate_source_rows for log in logs])
    assert np.array_equal(first_rows, np.arange(4 * 2 * N))  # every row once, in file order


@pytest.fixture()
def rows_unread(monkeypatch):
    """Reading rows (not headers) fails the test: the mistake must be found before."""

    def fail(*args, **kwargs):
        pytest.fail("the rows were read")

    for module, name in (
        (log_module, "read_table"),
        (candidates_module, "read_table"),
        (evaluate_run, "stream_parquet"),
    ):
        monkeypatch.setattr(module, name, fail)


def header_mistakes(log, cand, parquet_cand):
    """Mistakes the headers show: (argv, patterns of the one line)."""
    no_cands = [a for a in options(log, cand) if a not in ("--candidates", str(cand))]
    return {
        "map without file": (no_cands, "--candidates-map maps the columns of --candidates FILE"),
        "unknown role": (
            options(log, cand, "--candidates-map", "propensty=p_log"),
            r"--candidates-map propensty=p_log: no candidate role 'propensty' \(did you mean "
            r"propensity\?\)",
        ),
        "column absent": (
            options(log, cand, cand_map=[*CAND_MAP[:3], "propensity=plog"]),
            r"--candidates-map propensity=plog: no column 'plog' in cands\.csv \(did you mean "
            r"p_log\?\)",
        ),
        "role unmapped": (
            options(log, cand, cand_map=CAND_MAP[:3]),
            r"--candidates cands\.csv: no column 'propensity'.*--candidates-map propensity=COLUMN",
        ),
        "policy column absent": (
            options(log, cand, "--policy", "u=qq"),
            r"--policy u=qq: no column 'qq' in log\.csv",
        ),
        "reward model absent": (
            [*options(log, cand)[:-6], "--reward-model", "qhat", "--estimator", "cdm"],
            r"--reward-model qhat: no column 'qhat' in log\.csv",
        ),
        "estimator without candidates": (
            ["evaluate", log, "--quiet", "--policy", "t=target", "--estimator", "cdm"]
            + [a for m in LOG_MAP for a in ("--map", m)],
            r"--estimator cdm: needs the candidate table .* --candidates FILE",
        ),
        "stream of a text file": (
            options(log, cand, "--stream"),
            r"--candidates .*cands\.csv: --stream reads Parquet files only",
        ),
        "no fitter": (
            options(log, cand, "--fit-reward-model", "logistic:features=[x]"),
            r"--fit-reward-model logistic:features=\[x\]: no reward_model named 'logistic'",
        ),
        "fit while streaming": (
            options(log, parquet_cand, "--stream", "--fit-reward-model", "logistic"),
            r"--fit-reward-model logistic: .* needs the log read whole: drop --stream",
        ),
    }


def test_mistakes_the_headers_show_are_one_line_before_any_row_is_read(
    tables, tmp_path, capsys, rows_unread
):
    user, cands, _ = tables
    log = write(user, tmp_path / "log.csv")
    cand = write(cands, tmp_path / "cands.csv")
    parquet = write(cands, tmp_path / "cands.parquet")
    for name, (argv, pattern) in header_mistakes(log, cand, parquet).items():
        line = one_line_error(capsys, argv, pattern)
        assert "Traceback" not in line, name


def row_mistakes(user, cands):
    """Mistakes in the rows: (log, candidates, patterns of the one line)."""
    bad_p = cands.assign(p_log=cands["p_log"].where(cands.index != 5, 1.5))
    missing = cands.drop(index=[8, 9, 10, 11])  # the four candidates of the log's row 2 (line 4)
    orphan = pd.concat([cands, cands.iloc[:1].assign(sess=10**6)], ignore_index=True)
    bad_q = cands.assign(q=cands["q"].astype(object).where(cands.index != 3, "n/a"))
    return {
        "propensity out of range": (
            user,
            bad_p,
            r"column 'p_log' \(role propensity\): candidate propensities must lie in \[0, 1\] "
            r"\(cands\.csv, lines \[7\]\)",
        ),
        "logged item not a candidate": (
            user,
            missing,
            r"column 'product' \(role item\): logged item absent from its slot's candidate set "
            r"\(log\.csv, lines \[4\]\)",
        ),
        "candidate of no slot": (
            user,
            orphan,
            rf"column 'sess' \(role trajectory\): candidate for a slot that is not in the log "
            rf"\(cands\.csv, lines \[{len(cands) + 2}\]\)",
        ),
        "prediction not a number": (
            user,
            bad_q,
            r"column 'q'.*predicted rewards must be finite numbers.*cands\.csv, lines \[5\]",
        ),
        "no positions for a log of two rows per trajectory": (
            user,
            cands.drop(columns="slot"),
            r"^offeval: error: column 'position': the candidate table needs the position of each "
            r"candidate's slot: the log's trajectories have several rows \(--candidates-map "
            r"position=COLUMN\)",
        ),
    }


def test_mistakes_in_the_rows_name_the_files_lines_and_the_users_columns(tables, tmp_path, capsys):
    user, cands, _ = tables
    for name, (log_table, cand_table, pattern) in row_mistakes(user, cands).items():
        log = write(log_table, tmp_path / "log.csv")
        cand = write(cand_table, tmp_path / "cands.csv")
        cand_map = CAND_MAP if "slot" in cand_table else [CAND_MAP[i] for i in (0, 1, 3)]
        argv = options(log, cand, cand_map=cand_map)
        line = one_line_error(capsys, argv, pattern)
        assert "Traceback" not in line, name


def test_a_candidate_file_sorted_otherwise_than_the_log_streamed_is_one_line(
    tables, tmp_path, capsys
):
    user, cands, _ = tables
    log = write(user, tmp_path / "log.parquet")
    late = cands["sess"] == 0  # the first trajectory's candidates come last
    cand = write(pd.concat([cands[~late], cands[late]]), tmp_path / "cands.parquet")
    argv = options(log, cand, "--stream", "--chunk-rows", "500")
    one_line_error(
        capsys,
        argv,
        r"logged item absent from its slot's candidate set \(streamed, the candidate file must "
        r"list the trajectories in the log's order, each one's rows together\) \(rows \[0, 1\]\)",
    )
    ahead = cands["sess"] == N - 1  # the last trajectory's candidates come first
    cand = write(pd.concat([cands[ahead], cands[~ahead]]), tmp_path / "cands.parquet")
    one_line_error(
        capsys,
        argv,
        r"column 'sess' \(role trajectory\): candidate for a slot that is not in the log "
        r"\(streamed, .*\) \(cands\.parquet, candidate rows \[0, 1, 2, 3, 4, 5, 6, 7\]\)",
    )
