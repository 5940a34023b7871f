"""Kendall's tau between the online and offline orders of Gruson et al. (WSDM 2019)."""

from __future__ import annotations

import pytest

from offeval.stats import kendall_tau

ONLINE = dict(
    zip(
        range(1, 13),
        [1.000, 1.167, 1.340, 1.380, 1.386, 1.391, 1.421, 1.453, 1.472, 1.487, 1.494, 1.559],
        strict=True,
    )
)
TABLES = {
    "table 2: CIS, cap 1e6": (
        [1, 3, 2, 9, 6, 8, 5, 7, 12, 11, 10, 4],
        [1.000, 1.447, 1.450, 1.522, 1.539, 1.906, 1.945, 1.981, 2.008, 2.126, 2.603, 2.608],
        0.424,
        False,
    ),
    "table 3: CIS, cap 100": (
        [1, 6, 3, 5, 9, 12, 2, 7, 8, 11, 10, 4],
        [1.000, 1.968, 2.089, 2.369, 2.386, 2.434, 2.510, 2.528, 2.600, 2.762, 2.824, 3.167],
        0.333,
        False,
    ),
    "table 4: NCIS, cap 1e5": (
        [1, 2, 4, 7, 5, 10, 3, 9, 6, 8, 12, 11],
        [1.000, 1.454, 1.495, 1.745, 1.934, 2.073, 2.154, 2.168, 2.346, 2.540, 2.589, 2.684],
        0.636,
        True,
    ),
    "table 5: IS, shuffled": (
        [1, 6, 3, 9, 2, 5, 12, 4, 10, 8, 11, 7],
        [1.000, 1.147, 1.289, 1.490, 1.646, 1.721, 1.864, 1.944, 2.057, 2.209, 2.283, 2.390],
        0.394,
        False,
    ),
}


@pytest.mark.parametrize("table", TABLES)
def test_published_kendall_tau(table):
    systems, values, tau, significant = TABLES[table]
    offline = dict(zip(systems, values, strict=True))
    result = kendall_tau([ONLINE[s] for s in ONLINE], [offline[s] for s in ONLINE])
    assert round(result.statistic, 3) == tau
    assert (result.p_value < 0.05) == significant
