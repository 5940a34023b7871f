"""The decision section of the demo's and evaluate's reports (hook ``register_report_sections``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from offeval import OffevalError
from offeval.plugin import ReportContext, ReportSection, markdown_escape
from offeval.stats import first_maximum
from offeval_decision.choices import select
from offeval_decision.ranks import not_finite, rank_distribution
from offeval_decision.sweeps import plot_sweep, sweep

#: The section's heading.
TITLE = "Which policies deserve an online test"
#: Draws per estimator in reports (the Monte Carlo error of a probability is at most 0.0035).
REPORT_DRAWS = 20_000
#: Width of the report's figure in inches: the reports' page (800 px at their 100 dpi), so
#: that its text is shown at the size it is drawn.
REPORT_WIDTH = 8.0
#: The caps a report sweeps over: 10^0 .. 10^4 and none.
REPORT_CAPS = (1.0, 10.0, 100.0, 1_000.0, 10_000.0, float("inf"))

TEXT = """Each estimator's values and their covariance (one log evaluated every
policy, so the estimates are correlated) define a normal distribution of
possible offline evaluations; {draws:,} draws from it give each policy's
probability of being ranked first (Gruson et al., WSDM 2019, section 3.3).
`p_best` lists them; `selection` lists, per estimator, the {m} policies most
likely to be among the top {m}: the candidates for an online test."""

SWEEP_TEXT = """The figure sweeps the cap of capped importance sampling without and
with normalisation (Gruson et al. 2019, Figure 4): the probability of each policy
being ranked first against log10(cap), the truly best policy drawn thicker; policies
never above 1% are drawn in grey, as one entry of the legend."""


def _alone(context: ReportContext) -> str | None:
    """One line when no summary has two policies to decide between, else None."""
    sizes = {len(s.policies) for s in context.summaries.values()}
    if not sizes or max(sizes) > 1:
        return None
    names = next(iter(context.summaries.values())).policies
    only = markdown_escape(repr(names[0]))
    return f"A decision needs two or more policies; this evaluation has one ({only})."


def decision_section(context: ReportContext, *, draws: int = REPORT_DRAWS, m: int = 3):
    """Rank probabilities and a selection per estimator; a cap sweep when the truth is known.

    With a single policy there is nothing to decide: the section says so in
    one line, with no tables.
    """
    alone = _alone(context)
    if alone is not None:
        return ReportSection(TITLE, alone)
    best, chosen, columns, skipped = {}, {}, {}, {}
    truth = context.truth
    true_best = None if truth is None else truth.index[first_maximum(truth.to_numpy())]
    for label, summary in context.summaries.items():
        bad = not_finite(summary)
        if bad:
            skipped[label] = bad
            continue
        k = len(summary.policies)
        dist = rank_distribution(summary, draws=draws, seed=context.seed, depth=min(m, k))
        best[label] = dist.best
        chosen[label] = ", ".join(select(dist, min(m, k)))
        if context.truth is not None:
            columns[label] = dist.best.get(true_best, np.nan)
    if not best:
        return None
    name = "p_true_best_ranked_first" if context.truth is not None else "p_best_of_pick"
    if context.truth is None:
        columns = {label: float(p.max()) for label, p in best.items()}
    text = TEXT.format(draws=draws, m=m)
    for label, bad in skipped.items():
        text += (
            f"\n\n{markdown_escape(label)}: skipped, values or covariances not finite for "
            f"policies {markdown_escape(', '.join(map(repr, bad)))}."
        )
    section = ReportSection(
        TITLE,
        text,
        tables={
            "p_best": pd.DataFrame(best).rename_axis(index="policy", columns="estimator"),
            "selection": pd.Series(chosen, name=f"top {m}").rename_axis("estimator").to_frame(),
        },
        columns=pd.DataFrame({name: pd.Series(columns)}),
    )
    if context.truth is not None and context.log is not None and context.policies:
        try:
            table = sweep(
                context.log,
                context.policies,
                caps=REPORT_CAPS,
                draws=draws,
                seed=context.seed,
                depth=1,
                progress=False,
                workers=context.workers,
            )
        except OffevalError:  # the capped estimators are not registered, or cannot run here
            return section
        section.text += "\n\n" + SWEEP_TEXT
        import matplotlib.pyplot as plt

        figure = plot_sweep(table, 1, true_best, width=REPORT_WIDTH)
        plt.close(figure)  # a report's figure: written to a file, never shown in a notebook cell
        section.figures["p_best_against_cap"] = figure
    return section
