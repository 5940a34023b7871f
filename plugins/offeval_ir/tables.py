"""The tables of ``offeval compare``: runs x measures with intervals and the letters of the
runs each beats (text and Markdown), one row per run and measure with numbers as numbers
(CSV), a booktabs LaTeX table and its caption, and win/tie/loss counts per pair."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from offeval import OffevalError
from offeval.plugin import check_whole, hint
from offeval.stats import first_maximum
from offeval_ir.choices import MAX_DECIMALS
from offeval_ir.run_statistics import TEST_P

if TYPE_CHECKING:
    from offeval_ir.run_statistics import RunEvaluation

#: The users (queries) a comparison's means and tests are over, as its CSV says.
PAIRED_ON = "queries every run averages"
#: The first line of every LaTeX table: what it needs in the document's preamble.
BOOKTABS = r"% needs \usepackage{booktabs} in the preamble"


def numeric_table(
    evaluation: RunEvaluation, means: pd.DataFrame, pairs: pd.DataFrame, names: list[str]
) -> pd.DataFrame:
    """One row per (run, measure), numbers as numbers: mean, se, interval, queries averaged,
    left out of the comparison, averaged by no run, and excluded by reason, letters of the
    runs it beats, and ``p_vs_<letter>``: the corrected p-value of the test that decides
    significance against each other run."""
    letter, beaten = _letters(names), _beaten(pairs, names)
    table = means.copy()
    table.insert(1, "letter", table["run"].map(letter))
    left_out = table["measure"].map(evaluation.left_out)
    table.insert(table.columns.get_loc("users") + 1, "left_out", left_out)
    not_averaged = {m: sum(n.values()) for m, n in evaluation.not_averaged.items()}
    table.insert(
        table.columns.get_loc("left_out") + 1, "not_averaged", table["measure"].map(not_averaged)
    )
    table.insert(table.columns.get_loc("not_averaged") + 1, "paired_on", PAIRED_ON)
    keys = list(zip(table["run"], table["measure"], strict=True))
    table["beats"] = ["".join(sorted(beaten.get(key, []))) for key in keys]
    chosen = TEST_P[pairs.attrs.get("test", "t")]
    p = {}
    for row in pairs.itertuples(index=False):
        p[(row.a, row.b, row.measure)] = p[(row.b, row.a, row.measure)] = getattr(row, chosen)
    for other in names:
        table[f"p_vs_{letter[other]}"] = [p.get((run, other, m), np.nan) for run, m in keys]
    return table


def _letters(names: list[str]) -> dict[str, str]:
    return {n: chr(ord("a") + i) if i < 26 else f"r{i}" for i, n in enumerate(names)}


def _beaten(pairs: pd.DataFrame, names: list[str]) -> dict[tuple[str, str], list[str]]:
    """Per (run, measure): the letters of the runs it beats significantly."""
    letter = _letters(names)
    beaten: dict[tuple[str, str], list[str]] = {}
    for row in pairs.itertuples(index=False):
        if row.significant:
            winner, loser = (row.a, row.b) if row.difference > 0 else (row.b, row.a)
            beaten.setdefault((winner, row.measure), []).append(letter[loser])
    return beaten


def comparison_table(
    means: pd.DataFrame, pairs: pd.DataFrame, names: list[str], *, decimals: int = 4
) -> tuple[pd.DataFrame, str]:
    """Runs x measures, each cell ``mean [low, high]`` (to ``decimals``) and the letters of
    the runs it beats."""
    d = check_whole(decimals, "decimals", low=0, high=MAX_DECIMALS)
    letter, beaten = _letters(names), _beaten(pairs, names)
    rows = []
    for run in names:
        row = {"run": f"({letter[run]}) {run}"}
        for r in means[means["run"] == run].itertuples(index=False):
            marks = "".join(sorted(beaten.get((run, r.measure), [])))
            cell = f"{r.mean:.{d}f} [{r.ci_low:.{d}f}, {r.ci_high:.{d}f}]"
            row[r.measure] = f"{cell} {marks}".rstrip()
        rows.append(row)
    legend = "letters: the runs a run beats significantly"
    return pd.DataFrame(rows), legend


def latex_table(
    means: pd.DataFrame,
    pairs: pd.DataFrame,
    names: list[str],
    caption: str,
    *,
    label: str | None = None,
    decimals: int = 4,
) -> str:
    """A booktabs table: means (to ``decimals``) with superscript letters of the runs each
    beats, best in bold (means tied within a relative 1e-9: the first run in ``names``);
    ``caption`` (escaped; see :func:`latex_caption`) and, given, ``\\label{label}`` under
    it. Its first line is a comment saying it needs ``\\usepackage{booktabs}``."""
    decimals = check_whole(decimals, "decimals", low=0, high=MAX_DECIMALS)
    letter, beaten = _letters(names), _beaten(pairs, names)
    measures = list(dict.fromkeys(means["measure"]))
    best = {measure: _best(means[means["measure"] == measure], names) for measure in measures}
    lines = [
        BOOKTABS,
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(measures) + "}",
        r"\toprule",
        " & ".join(["Run", *(_tex(m) for m in measures)]) + r" \\",
        r"\midrule",
    ]
    for run in names:
        cells = [f"({letter[run]}) {_tex(run)}"]
        for measure in measures:
            value = means[(means["run"] == run) & (means["measure"] == measure)]["mean"].iloc[0]
            text = f"{value:.{decimals}f}" if np.isfinite(value) else "--"
            if best[measure] == run:
                text = rf"\textbf{{{text}}}"
            marks = "".join(sorted(beaten.get((run, measure), [])))
            cells.append(f"{text}$^{{{marks}}}$" if marks else text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption)}}}",
        *([rf"\label{{{label_checked(label)}}}"] if label else []),
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _best(means: pd.DataFrame, names: list[str]) -> str:
    """The run with the highest mean of one measure; ties within a relative 1e-9 go to the
    first in ``names``."""
    values = means.set_index("run")["mean"].reindex(names).to_numpy()
    return names[first_maximum(values)]


def label_checked(label: str) -> str:
    """A LaTeX label as given; one LaTeX cannot read back is an error naming it."""
    if not label or any(char in label for char in "\\{}%#$&^~ \n"):
        raise OffevalError(
            f"{hint('label', '--label')} {label!r}: a LaTeX label is text without spaces or any "
            "of \\ { } % # $ "
            "& ^ ~ (as in tab:compare)"
        )
    return label


#: The heading of the win/tie/loss table.
WIN_TIE_LOSS = "win/tie/loss: queries where the first run's value is above, equal to, below"

#: The tests as a caption names them.
_TEST_NAMES = {
    "t": "a two-sided paired t-test",
    "randomization": "a two-sided paired randomisation test",
    "tukey": "Tukey's HSD test",
}


def test_phrase(test: str, correction: str | None, alpha: float, resamples: int) -> str:
    """The test, its correction and alpha, as one phrase (``paired t test, holm correction
    over the pairs of each measure, alpha 0.05``)."""
    name = _TEST_NAMES[test]
    if test == "randomization":
        name += f" with {resamples} resamples"
    if test == "tukey":
        how = "over the pairs of each measure, which needs no further correction"
    elif correction:
        how = f"{correction} correction over the pairs of each measure"
    else:
        how = "no correction for multiple pairs"
    return f"{name} {how}, alpha {alpha}" if test == "tukey" else f"{name}, {how}, alpha {alpha}"


def latex_caption(
    evaluation: RunEvaluation,
    test: str,
    correction: str | None,
    alpha: float,
    resamples: int,
    conventions: str = "",
    details: Sequence[str] = (),
) -> str:
    """The caption of a comparison table, in sentences: what the numbers are, over how many
    queries, what a superscript and bold mean, the test with its correction and alpha,
    then ``conventions`` and each of ``details`` (the queries left out, say) as a sentence."""
    users = {
        m: next(iter(evaluation.evaluation.estimate(r, m) for r in evaluation.values)).n_units
        for m in evaluation.measures
    }
    counts = set(users.values())
    if len(counts) == 1:
        over = f"over the {counts.pop()} queries every run averages"
    else:
        each = ", ".join(f"{n} for {m}" for m, n in users.items())
        over = f"over the queries every run averages ({each})"
    runs = len(evaluation.values)
    sentences = [
        f"Means of {runs} runs on each measure, {over}.",
        "A superscript letter marks a run whose mean is significantly higher than the mean "
        f"of the run with that letter ({test_phrase(test, correction, alpha, resamples)}).",
        "The highest mean of each measure is in bold.",
    ]
    if conventions:
        sentences.append(f"{conventions[0].upper()}{conventions[1:]}.")
    sentences += [line if line.endswith(".") else f"{line}." for line in details if line]
    return " ".join(sentences)


def win_tie_loss_table(pairs: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Pairs x measures, each cell ``wins/ties/losses`` of the first run of the pair."""
    letter = _letters(names)
    rows: dict[str, dict[str, str]] = {}
    for row in pairs.itertuples(index=False):
        key = f"({letter[row.a]}) {row.a} vs ({letter[row.b]}) {row.b}"
        rows.setdefault(key, {"pair": key})[row.measure] = f"{row.wins}/{row.ties}/{row.losses}"
    return pd.DataFrame(list(rows.values()))


#: LaTeX's special characters and how to write them.
_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "-": "-{}",  # -- would be set as a dash: options keep their two hyphens
    "\n": ". ",  # the heading's lines, as sentences
}


def frame_latex(table: pd.DataFrame, caption: str) -> str:
    """Any table as a booktabs LaTeX table (cells as :func:`_tex_cell` writes them),
    without pandas' ``to_latex`` (which needs jinja2)."""
    lines = [
        BOOKTABS,
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{" + "".join(_align(table[c]) for c in table) + "}",
        r"\toprule",
        " & ".join(_tex(c) for c in table.columns) + r" \\",
        r"\midrule",
        *(" & ".join(_tex_cell(v) for v in row) + r" \\" for row in table.itertuples(False)),
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex(caption)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _align(column: pd.Series) -> str:
    """Numbers right-aligned, anything else left."""
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    return "r" if numeric else "l"


def _tex_cell(value: object) -> str:
    """One cell: floats to 4 decimals (below 1e-4 in scientific notation, NaN as --),
    anything else as text, escaped."""
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            return "--"
        return f"{value:.4f}" if value == 0 or abs(value) >= 1e-4 else f"{value:.2e}"
    return _tex(value)


def _tex(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_TEX.get(char, char) for char in str(text))
