"""Plugin ``rewardmodels``: direct-method and doubly robust off-policy estimators.

DM, DR (Dudík et al., ICML 2011), SNDR (obp, after Kallus and Uehara, NeurIPS
2019), Switch-DR (Wang et al., ICML 2017) and DR with optimistic shrinkage
(Su et al., ICML 2020), as obp defines them, on the engine's columns. The
reward model enters as columns (any model); :func:`fit_reward_model`
cross-fits a scikit-learn regressor by trajectory. The reward model's columns,
:class:`RewardPredictions` and :func:`item_position_means` are the core's
(``rewardmodel`` in :mod:`offeval.plugin`), named here for this plugin's users.
"""

from offeval.plugin import hookimpl, rewardmodel
from offeval_rewardmodels.estimators import DM, DR, DROS, SNDR, SwitchDR
from offeval_rewardmodels.fitting import fit_reward_model
from offeval_rewardmodels.interop import from_obp_rewards

DEFAULT_COLUMN = rewardmodel.DEFAULT_COLUMN
RewardPredictions = rewardmodel.RewardPredictions
item_position_means = rewardmodel.item_position_means
ESTIMATORS = (DM, DR, SNDR, SwitchDR, DROS)


@hookimpl
def register_estimators(register):
    """Register dm, dr, sndr, switch_dr and dr_os."""
    for cls in ESTIMATORS:
        register(cls.name, cls)


__all__ = [
    "DEFAULT_COLUMN",
    "DM",
    "DR",
    "DROS",
    "SNDR",
    "RewardPredictions",
    "SwitchDR",
    "fit_reward_model",
    "from_obp_rewards",
    "item_position_means",
]
