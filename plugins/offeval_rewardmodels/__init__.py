"""Plugin ``rewardmodels``: direct-method and doubly robust off-policy estimators.

DM, DR (Dudík et al., ICML 2011; clipped with ``lambda_``), SNDR (obp, after
Kallus and Uehara, NeurIPS 2019), Switch-DR (Wang et al., ICML 2017), DR with
optimistic shrinkage (Su et al., ICML 2020) and sub-Gaussian DR (Metelli et
al., NeurIPS 2021), as obp defines them, on the engine's columns, and obp's
``*Tuning`` estimators, which choose the clip, switch or shrinkage from the
log by SLOPE or the estimated MSE (``dr_tuning``, ...). The
reward model enters as columns (any model); :func:`fit_reward_model`
cross-fits a scikit-learn regressor by trajectory. The reward model as columns
of the log and its candidate table (:mod:`offeval_rewardmodels.rewardmodel`:
:class:`RewardPredictions`, :func:`item_position_means`, the checks) is public,
for the plugins that build on this one (``slates``' Cascade-DR, ``obp``).
"""

from offeval import hookimpl
from offeval.plugin import Alias, lazy_names

#: The plugins this one builds on: the importance-sampling family's weights and tuning.
REQUIRES = ("importance",)

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
    "item_position_means",
    "rewardmodel",
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
        "offeval_rewardmodels.rewardmodel": (
            "DEFAULT_COLUMN",
            "RewardPredictions",
            "item_position_means",
        ),
    },
    computed={"ESTIMATORS": _estimators},
)
