"""Plugin ``rewardmodels``: direct-method and doubly robust off-policy estimators.

DM, DR (Dudík et al., ICML 2011; clipped with ``lambda_``), SNDR (obp, after
Kallus and Uehara, NeurIPS 2019), Switch-DR (Wang et al., ICML 2017), DR with
optimistic shrinkage (Su et al., ICML 2020) and sub-Gaussian DR (Metelli et
al., NeurIPS 2021), as obp defines them, on the engine's columns, and obp's
``*Tuning`` estimators, which choose the clip, switch or shrinkage from the
log by SLOPE or the estimated MSE (``dr_tuning``, ...). The
reward model enters as columns (any model); :func:`fit_reward_model`
cross-fits a scikit-learn regressor by trajectory. The reward model's columns,
:class:`RewardPredictions` and :func:`item_position_means` are the core's
(``rewardmodel`` in :mod:`offeval.plugin`), named here for this plugin's users.
"""

from offeval.plugin import Alias, hookimpl, lazy_names

#: obp's names for this plugin's estimators, with obp's parameter names and defaults
#: (``dm``, ``dr`` and ``sndr`` are obp's names already).
OBP_NAMES = {
    "switch-dr": Alias(
        "switch_dr",
        rename={"lambda_": "tau"},
        defaults={"lambda_": float("inf")},
        source="obp's SwitchDoublyRobust",
    ),
    "dr-os": Alias("dr_os", defaults={"lambda_": 0.0}, source="obp's DoublyRobustWithShrinkage"),
    "sg-dr": Alias("sg_dr", source="obp's SubGaussianDoublyRobust"),
}


def _estimators() -> tuple:
    """dm, dr, sndr, switch_dr, dr_os, sg_dr and the tuning ones (``ESTIMATORS``)."""
    from offeval_rewardmodels.estimators import DM, DR, DROS, SNDR, SubGaussianDR, SwitchDR
    from offeval_rewardmodels.tuning import (
        DROSTuning,
        DRTuning,
        SubGaussianDRTuning,
        SwitchDRTuning,
    )

    tuned = (DRTuning, SwitchDRTuning, DROSTuning, SubGaussianDRTuning)
    return (DM, DR, SNDR, SwitchDR, DROS, SubGaussianDR, *tuned)


def _core(name: str):
    """A function giving the core's ``rewardmodel.<name>`` (imported when first read)."""

    def value():
        from offeval.plugin import rewardmodel

        return getattr(rewardmodel, name)

    return value


def _from_obp_rewards():
    """The core's :func:`from_obp_rewards` (obp's reward model for a log from ``from_obp``)."""
    from offeval.plugin import from_obp_rewards

    return from_obp_rewards


@hookimpl
def register_estimators(register):
    """Register the estimators, and obp's switch-dr, dr-os and sg-dr as aliases."""
    for cls in _estimators():
        register(cls.name, cls)
    for name, alias in OBP_NAMES.items():
        register(name, alias)


@hookimpl
def register_reward_models(register):
    """Register the scikit-learn fitters of ``offeval evaluate --fit-reward-model``."""
    from offeval_rewardmodels.fitters import FITTERS

    for cls in FITTERS:
        register(cls.name, cls)


__all__ = [
    "DEFAULT_COLUMN",
    "DM",
    "DR",
    "DROS",
    "DROSTuning",
    "DRTuning",
    "SNDR",
    "RewardPredictions",
    "SubGaussianDR",
    "SubGaussianDRTuning",
    "SwitchDR",
    "SwitchDRTuning",
    "fit_reward_model",
    "from_obp_rewards",
    "item_position_means",
]

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_rewardmodels.estimators": (
            "DM",
            "DR",
            "DROS",
            "SNDR",
            "SubGaussianDR",
            "SwitchDR",
        ),
        "offeval_rewardmodels.tuning": (
            "DROSTuning",
            "DRTuning",
            "SubGaussianDRTuning",
            "SwitchDRTuning",
        ),
        "offeval_rewardmodels.fitting": ("fit_reward_model",),
    },
    computed={
        "ESTIMATORS": _estimators,
        "from_obp_rewards": _from_obp_rewards,
        **{n: _core(n) for n in ("DEFAULT_COLUMN", "RewardPredictions", "item_position_means")},
    },
)
