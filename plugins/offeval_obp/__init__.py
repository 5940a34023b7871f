"""Plugin ``obp``: obp's data structures as offeval's.

:func:`from_obp` reads obp's ``bandit_feedback`` (and its ``action_dist``) as an
:class:`offeval.InteractionLog` and policies (:class:`ActionDistPolicy`);
:func:`from_obp_rewards` reads obp's reward model's ``estimated_rewards_by_reg_model``
as the reward-model columns of the ``rewardmodels`` plugin, which it builds on;
:func:`obp_array` is one of obp's arrays, checked.
"""

from offeval.plugin import lazy_names

#: The plugins this one builds on (their public names are imported here).
REQUIRES = ("rewardmodels",)

__all__ = ["ActionDistPolicy", "from_obp", "from_obp_rewards", "obp_array"]

#: The public names, imported on first use.
__getattr__ = lazy_names(__name__, {"offeval_obp.interop": __all__})
