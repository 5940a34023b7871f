"""Pairwise and counterfactual disagreement as estimators of the engine (Gilotte et al., 2019).

One banner is one unit. Algorithm 1 (pairwise disagreement, PD) draws the
clicked product P+ and a non-clicked product P- of the same banner uniformly;
algorithm 2 (counterfactual disagreement, CD) takes as P- the product at the
clicked rank r of a re-sampled ordering of the banner, drawn from the logging
policy's ordering distribution given the displayed set. Both reject ties of
the test model's scores (CD also rejects a P- that was clicked, P+ itself
included) and return 1 when the test model scores P- above P+. The metric is
the expected result given no rejection: mean(numerator) / mean(denominator)
over banners, where a banner's numerator and denominator are the exact
probabilities of "disagree" and "not rejected" for that banner. A banner with
several clicks draws its P+ uniformly among them; a banner with no click, or
no product left unclicked, is always rejected and counted as excluded; so,
for CD, is a banner whose logging ranker was deterministic (every re-drawn
ordering is the displayed one).

Lower is better: a perfect model disagrees with no click, a random one with
half of them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from offeval import BaseEstimator, ConfigurationError, Contribution, OffevalWarning, PolicyView
from offeval.plugin import check_choice, check_whole, hash_ids
from offeval.stats import Linearisation, Tally, ratio_of_means
from offeval_disagreement import streams
from offeval_disagreement.banners import SUBSETS, Group, clicked, groups, in_subset
from offeval_disagreement.given_set import METHODS
from offeval_disagreement.ordering import LOGGING, SCALES, fixed, ordering

#: Counts of the ordering computation reported in every estimate's diagnostics.
REPORTED = ("pool_assumed", "monte_carlo_banners")


class _Disagreement(BaseEstimator):
    """Banner subsets, exclusions and the ratio shared by every disagreement estimator (a
    rate: normal intervals are clipped to [0, 1])."""

    banners = "all"
    higher_is_better = False
    value_range = (0.0, 1.0)

    @property
    def requires(self) -> tuple[str, ...]:
        """The test model's scores, and the shuffled flag when a subset is asked for."""
        return ("scores()",) + (("shuffled",) if self.banners != "all" else ())

    def contribute(self, view: PolicyView) -> Contribution:
        """Unit columns: each banner's probability of disagreeing and of not being rejected."""
        log = view.log
        scores = view.scores()
        click = clicked(log)
        taken = in_subset(log, self.banners)
        num, den = np.zeros(log.n_units), np.zeros(log.n_units)
        tally = Tally()
        clicks = np.add.reduceat(click.astype(int), log.unit_starts)
        sizes = np.diff(np.r_[log.unit_starts, log.n_rows])
        usable = taken & (clicks > 0) & (clicks < sizes)
        always_rejected = usable & self._fixed(log)
        excluded = {
            f"not_{self.banners}": int((~taken).sum()),
            "no_click": int((taken & (clicks == 0)).sum()),
            "no_unclicked_product": int((taken & (clicks > 0) & (clicks == sizes)).sum()),
            "deterministic_logging": int(always_rejected.sum()),
        }
        counted = usable & ~always_rejected
        for group in groups(log):
            keep = counted[group.units]
            if not keep.any():
                continue
            used = Group(group.n, group.units[keep], group.rows[keep])
            s, c = scores[used.rows], click[used.rows]
            num[used.units], den[used.units] = self._banner(view, used, s, c, tally)
        tally.add("banners", int(counted.sum()))
        tally.add("kept", float(den[counted].sum()))
        return Contribution(
            unit_columns={"disagree": num, "kept": den},
            tally=tally,
            excluded={k: v for k, v in excluded.items() if v},
        )

    def _fixed(self, log) -> np.ndarray:
        """Banners every sample of which the algorithm rejects, whatever the test model."""
        return np.zeros(log.n_units, dtype=bool)

    def combine(self, stats) -> Linearisation:
        """P(disagree | not rejected): the ratio of the two columns' means."""
        return ratio_of_means(stats, "disagree", "kept")

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Banners counted and their mean probability of not being rejected."""
        s = tally.sums
        banners = s.get("banners", 0.0)
        return {
            "banners": int(banners),
            "kept_share": s.get("kept", 0.0) / banners if banners else float("nan"),
        }


def _pairs(s: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(banners, n, n) indicators over (positive i, negative j): clicked i, unclicked j,
    j scored above i, and j scored differently from i."""
    positive = c[:, :, None] & ~c[:, None, :]
    above = s[:, None, :] > s[:, :, None]
    differ = s[:, None, :] != s[:, :, None]
    return positive, above, differ


class PairwiseDisagreement(_Disagreement):
    """Pairwise disagreement (algorithm 1): P- uniform among the banner's unclicked products.

    Position-biased on traffic that is not uniformly shuffled: use
    ``banners="shuffled"`` for the unbiased (but scarce) reference, or
    counterfactual disagreement.
    """

    name = "pd"

    def __init__(self, banners: str = "all"):
        check_choice(banners, "banners", SUBSETS)
        self.banners = banners

    def _banner(self, view, group, s, c, tally):
        positive, above, differ = _pairs(s, c)
        pairs = positive.sum(axis=(1, 2))
        return (positive & above).sum(axis=(1, 2)) / pairs, (positive & differ).sum(
            axis=(1, 2)
        ) / pairs


class CounterfactualDisagreement(_Disagreement):
    """Counterfactual disagreement (algorithm 2): P- at the clicked rank of a re-sampled ordering.

    ``logging`` says where the ordering distribution given the displayed set
    comes from (``auto``: uniform on shuffled banners, Plackett-Luce over
    ``logging_score`` on the others; see :mod:`offeval_disagreement.ordering`).
    ``score_scale`` states what ``logging_score`` and the ``pool`` column
    hold: ``"logit"`` (logits, and the log of the mass of the candidates not
    displayed, as the simulator writes them) or ``"linear"`` (weights
    exp(logit) > 0, and that mass itself). Unstated (None), they are read as
    logits, and a warning says so when they could be weights as well (every
    score > 0, whatever the pool; a score <= 0 is no weight); scores read as
    logits that look like probabilities (in (0, 1], summing to at most 1 per
    banner) warn, and so does a missing pool column (the pool is then taken
    to be the displayed set), once per evaluation with the number of banners
    concerned.
    Banners flagged in the ``deterministic`` column (a deterministic logging
    ranker) are excluded: every re-drawn ordering is the displayed one. Exact
    rank probabilities up to 20 products, Monte Carlo beyond (``method``,
    ``samples``, ``seed``; ``method="exact"`` past 20 is an error). Equals PD,
    banner by banner, on uniformly shuffled traffic.
    """

    name = "cd"

    def __init__(
        self,
        banners: str = "all",
        logging: str = "auto",
        pool: str = "logging_pool",
        prefix: str = "ordering_probability_",
        method: str = "auto",
        samples: int = 10_000,
        seed: int = 0,
        deterministic: str = "logging_deterministic",
        score_scale: str | None = None,
    ):
        check_choice(banners, "banners", SUBSETS)
        check_choice(logging, "logging", LOGGING)
        check_choice(method, "method", METHODS)
        check_choice(score_scale, "score_scale", tuple(SCALES))
        for name, value in (("pool", pool), ("prefix", prefix), ("deterministic", deterministic)):
            if not isinstance(value, str) or not value:
                raise ConfigurationError(f"{name} must name a column, got {value!r}")
        check_whole(samples, "samples", low=2)
        check_whole(seed, "seed", low=0)
        self.banners = banners
        self.logging = logging
        self.pool = pool
        self.prefix = prefix
        self.method = method
        self.samples = samples
        self.seed = seed
        self.deterministic = deterministic
        self.score_scale = score_scale

    @property
    def requires(self) -> tuple[str, ...]:
        """Scores, and what the ordering distribution is read from."""
        needs = {"auto": ("logging_score",), "plackett_luce": ("logging_score",)}
        needs["columns"] = (f"{self.prefix}*",)
        return super().requires + needs.get(self.logging, ())

    def label_params(self) -> dict:
        """Changed parameters, but the logit scale, stated or not (the same computation)."""
        params = self.changed_params()
        if params.get("score_scale") == "logit":
            del params["score_scale"]
        return params

    def _ordering(self, view: PolicyView, group: Group, tally: Tally) -> np.ndarray:
        """q for the group's banners; its counts in the diagnostics and, once per chunk, in the
        sums the warnings read (on the first policy evaluated: the totals of the evaluation)."""
        q, counts = ordering(view.log, group, self)
        for name in REPORTED:
            if name in counts:
                tally.count(name, counts[name])
        if _first_use(view.log, (self.label, group.n, group.units.tobytes())):
            for name, value in counts.items():
                tally.add(f"ordering_{name}", value)
        return q

    def diagnose(self, tally: Tally) -> dict[str, float]:
        """Banners counted and kept share; warns about what the ordering assumed."""
        for message in _assumed(self, tally.sums):
            warnings.warn(message, OffevalWarning, stacklevel=2)
        return super().diagnose(tally)

    def _fixed(self, log) -> np.ndarray:
        """Banners of a deterministic logging ranker (flagged, and not shuffled under auto)."""
        return fixed(log, self)

    def _banner(self, view, group, s, c, tally):
        q = self._ordering(view, group, tally)
        positive, above, differ = _pairs(s, c)
        clicks = c.sum(axis=1)
        weight = positive * q  # [b, i, p]: the clicked i's rank is i
        return (weight * above).sum(axis=(1, 2)) / clicks, (weight * differ).sum(
            axis=(1, 2)
        ) / clicks


def _uniforms(ids: np.ndarray, seed: int, draw: int, stream: int) -> np.ndarray:
    """One uniform number per banner from its id: the same whatever the chunking."""
    return streams.uniforms(streams.states(hash_ids(ids), seed), 2 * draw + stream)


class _Sampled:
    """Gilotte et al.'s (2019) algorithms run as written: ``draws`` seeded samples per banner."""

    def _banner(self, view, group, s, c, tally):
        ids = view.log.unit_ids[group.units]
        negatives = self._negatives(view, group, c, tally)  # (b, n, n): P(P- = p | P+ = i)
        disagree, kept = np.zeros(len(ids)), np.zeros(len(ids))
        rows = np.arange(len(ids))
        for draw in range(self.draws):
            u = _uniforms(ids, self.seed, draw, 0)
            k = np.floor(u * c.sum(axis=1)).astype(int)  # the k-th clicked product is P+
            plus = np.argmax(np.cumsum(c, axis=1) > k[:, None], axis=1)
            cdf = np.cumsum(negatives[rows, plus], axis=1)
            v = _uniforms(ids, self.seed, draw, 1) * cdf[:, -1]
            minus = np.minimum(np.argmax(cdf > v[:, None], axis=1), group.n - 1)
            valid = ~c[rows, minus] & (s[rows, minus] != s[rows, plus])
            kept += valid
            disagree += valid & (s[rows, minus] > s[rows, plus])
        return disagree / self.draws, kept / self.draws


class SampledPairwiseDisagreement(_Sampled, PairwiseDisagreement):
    """Algorithm 1 by sampling: ``draws`` seeded draws of (P+, P-) per banner."""

    name = "pd_sampled"

    def __init__(self, banners: str = "all", draws: int = 1, seed: int = 0):
        super().__init__(banners)
        check_whole(draws, "draws", low=1)
        check_whole(seed, "seed", low=0)
        self.draws = draws
        self.seed = seed

    def _negatives(self, view, group, c, tally) -> np.ndarray:
        unclicked = (~c).astype(float)
        return np.broadcast_to(
            (unclicked / unclicked.sum(1, keepdims=True))[:, None, :], c.shape + c.shape[1:]
        )


class SampledCounterfactualDisagreement(_Sampled, CounterfactualDisagreement):
    """Algorithm 2 by sampling: P- drawn at the clicked rank from the ordering distribution."""

    name = "cd_sampled"

    def __init__(
        self,
        banners: str = "all",
        logging: str = "auto",
        pool: str = "logging_pool",
        prefix: str = "ordering_probability_",
        draws: int = 1,
        seed: int = 0,
        deterministic: str = "logging_deterministic",
        score_scale: str | None = None,
    ):
        super().__init__(
            banners,
            logging,
            pool,
            prefix,
            seed=seed,
            deterministic=deterministic,
            score_scale=score_scale,
        )
        check_whole(draws, "draws", low=1)
        self.draws = draws

    def _negatives(self, view, group, c, tally) -> np.ndarray:
        return self._ordering(view, group, tally)


class ResampledBannerDisagreement(_Disagreement):
    """Variant 5.1 of Gilotte et al. (2019): P- at the clicked rank of a whole new banner.

    The logging policy re-draws the banner from its full candidate pool, so P-
    is any candidate the logging policy could have shown at the clicked rank,
    with its logging probability there: the log's candidate table (one row per
    candidate per slot, ``propensity`` = P(candidate at that rank)). The test
    model scores every candidate. A P- that was clicked, or that the model
    ties with P+, is rejected.
    """

    name = "cd_banner"

    def __init__(self, banners: str = "all"):
        check_choice(banners, "banners", SUBSETS)
        self.banners = banners

    @property
    def requires(self) -> tuple[str, ...]:
        """Scores and the candidate table (and the shuffled flag for a subset)."""
        return super().requires + ("candidates",)

    def _banner(self, view, group, s, c, tally):
        log = view.log
        cands = log.require_candidates()
        slot, prop = cands["slot"].to_numpy(), cands["propensity"].to_numpy()
        rows = group.rows
        banner_of_row = np.full(log.n_rows, -1)
        banner_of_row[rows.ravel()] = np.repeat(np.arange(len(rows)), group.n)
        clicked_rows = rows[c]
        at_click = np.isin(slot, clicked_rows)  # candidates for a clicked product's rank
        banner = banner_of_row[slot[at_click]]
        codes = pd.factorize(np.r_[log.column("item"), cands["item"].to_numpy()])[0]
        width = int(codes.max()) + 1
        clicked_keys = banner_of_row[clicked_rows] * width + codes[clicked_rows]
        cand_keys = banner * width + codes[log.n_rows :][at_click]
        negative = ~np.isin(cand_keys, clicked_keys)  # a clicked product is no negative
        score = view.memo(_candidate_scores)[at_click]
        positive = view.scores()[slot[at_click]]
        weight = prop[at_click] * negative
        clicks = c.sum(axis=1)
        num = np.bincount(banner, weights=weight * (score > positive), minlength=len(rows))
        den = np.bincount(banner, weights=weight * (score != positive), minlength=len(rows))
        return num / clicks, den / clicks


def _candidate_scores(view: PolicyView) -> np.ndarray:
    """The test model's score of every row of the candidate table."""
    log = view.log
    cands = log.require_candidates()
    rows = cands.assign(context=log.frame["context"].to_numpy()[cands["slot"].to_numpy()])
    return view.ask("scores", rows=rows, labels=log.candidate_source_rows, table="candidate rows")


def _first_use(log, key) -> bool:
    """Whether this is the first call with ``key`` on this chunk (the first policy's)."""
    seen = log.memo(_seen)
    first = key not in seen
    seen.add(key)
    return first


def _seen(log) -> set:
    return set()


def _assumed(cd: CounterfactualDisagreement, sums: dict[str, float]) -> list[str]:
    """Warnings about how the ordering distribution was read, from the evaluation's totals."""
    placed = int(sums.get("ordering_placed", 0))
    like = int(sums.get("ordering_like_probabilities", 0))
    assumed = int(sums.get("ordering_pool_assumed", 0))
    either = int(sums.get("ordering_either_scale", 0))
    messages = []
    if placed and either == placed and cd.score_scale is None:
        messages.append(
            f"{cd.label}: score_scale not given, and on all {placed:,} banners every "
            f"'logging_score' is > 0, as weights are: read as {SCALES['logit']['score']} and "
            f"{cd.pool!r} as {SCALES['logit']['pool']}; say score_scale='logit', or 'linear' "
            f"for weights such as probabilities (then {cd.pool!r} holds "
            f"{SCALES['linear']['pool']}, not its log)"
        )
    if like and like == placed:
        messages.append(
            f"{cd.label}: 'logging_score' is read as logits, but on all {like:,} banners its "
            "scores lie in (0, 1] and sum to at most 1, as probabilities do: if they are "
            "probabilities (or other weights), say score_scale='linear'"
        )
    if assumed:
        messages.append(
            f"{cd.label}: the log has no column {cd.pool!r}, holding "
            f"{SCALES[cd.score_scale]['pool']}: {assumed:,} banners were computed as if the "
            "logging policy had drawn from the displayed products alone, which changes CD "
            "when it had others to draw from; give the column (-inf, or 0 with "
            "score_scale='linear', where the logger drew from the displayed products alone)"
        )
    return messages
