"""The MovieLens chapter's picture of DCG against nDCG: readable fonts, a legend for every mark."""

from __future__ import annotations

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from offeval_ir.agreement import FIGURE_WIDTH, MIN_FONT, agreement_figure
from offeval_ir.agreement_statistics import agreement

NAMES = ["EASE(l2=1)", "EASE(l2=10)", "EASE(l2=100)", "ItemKNN(k=5)", "ItemKNN(k=20)", "Random"]
DCG = [0.30, 0.32, 0.33, 0.325, 0.29, 0.05]
NDCG = [0.40, 0.43, 0.45, 0.41, 0.44, 0.08]  # ItemKNN(k=20) inverts 3 pairs, ItemKNN(k=5) 1 more


def _found():
    return agreement(
        pd.DataFrame([NDCG], columns=NAMES),
        pd.DataFrame([DCG], columns=NAMES),
        measures=("nDCG@100", "DCG@100"),
        resamples=0,
    )


def test_the_agreement_figure_is_page_wide_with_fonts_of_nine_points_or_more():
    found = _found()
    close = NAMES[:5]
    fig = agreement_figure(found, {"all 6 models": NAMES, "the 5 close models": close})
    FigureCanvasAgg(fig).draw()
    assert fig.get_size_inches()[0] == FIGURE_WIDTH  # shown at its size: points are points
    texts = [t for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
    assert texts and min(t.get_fontsize() for t in texts) >= MIN_FONT >= 9
    assert [ax.get_xlabel() for ax in fig.axes] == ["DCG@100 (mean over users)"] * 2
    assert [ax.get_title() for ax in fig.axes] == ["all 6 models", "the 5 close models"]


def test_the_agreement_figure_has_a_legend_entry_for_inverted_pairs():
    found = _found()
    assert found.inverted_pairs == 4
    fig = agreement_figure(found)
    legend = fig.axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:3] == ["EASE", "ItemKNN", "Random"]
    assert labels[3] == "pair nDCG@100 orders\nopposite to DCG@100"
    segment = legend.legend_handles[3]
    red = [line for line in fig.axes[0].get_lines() if line.get_color() == "red"]
    assert len(red) == 4 and segment.get_color() == "red"  # the key is the segments' style
