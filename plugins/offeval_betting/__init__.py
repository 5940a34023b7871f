"""Plugin ``betting``: betting confidence intervals for importance-weighted rewards.

The interval method ``betting`` (``evaluate(..., interval="betting")``, ``--interval
betting``): the predictable plug-in bets of Waudby-Smith and Ramdas (2023), "Estimating
means of bounded random variables by betting" (JRSS B), on the off-policy companions of the
rewards, valid whatever the tails of the weights given the rewards' bounds known before the
data. An estimator offers it by declaring its ``betting_columns`` (see
:mod:`offeval_betting.betting`); the book's chapter "Intervals you can trust" measures it.
"""

from offeval import hookimpl
from offeval.plugin import Deferred, lazy_names


@hookimpl
def register_intervals(register):
    """Register ``betting`` (imported when first used)."""
    register("betting", Deferred("offeval_betting.betting:Betting"))


__all__ = [
    "BETTING_ROLES",
    "MAX_BET",
    "STEPS",
    "Betting",
    "BettingFold",
    "betting_interval",
    "capital",
]

#: The public names, imported on first use (loading the plugin imports none).
__getattr__ = lazy_names(__name__, {"offeval_betting.betting": __all__})
