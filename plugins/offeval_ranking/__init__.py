"""Plugin ``ranking``: DCG as an unbiased off-policy estimator of online reward (Jeunen et
al., 2024).

Registers the examination models (logarithmic, exponential, reciprocal,
table, cutoff, and ``pbm``, a position-based model with learnt values) and
the estimators ``dcg``, ``ndcg`` and ``pndcg``, and the ranking policy
:class:`RerankPolicy` (``rerank``: ``offeval evaluate --rerank``). The ranking
family's building blocks are public, for the plugins that build on this one
(``slates``, ``simulation``): :mod:`offeval_ranking.ranking` (rank marginals of
deterministic, Plackett-Luce and two-stage rankers, and Plackett-Luce prefixes) and
:mod:`offeval_ranking.exposure` (the target's and the logger's exposures of the logged
items under an examination model, and the support check).
"""

from offeval import hookimpl
from offeval.plugin import lazy_names
from offeval_ranking import hookspecs

#: The plugins this one builds on: IR's agreement statistics between two measures.
REQUIRES = ("ir",)


@hookimpl
def register_hookspecs(register):
    """Bring the ``register_examination_models`` hook."""
    register(hookspecs)


@hookimpl
def register_component_kinds(register):
    """Bring the ``examination`` component kind."""
    register("examination", "register_examination_models", description="examination models")


@hookimpl
def register_examination_models(register):
    """Register the parametric examination models and the learnt PBM."""
    from offeval_ranking.examination import MODELS
    from offeval_ranking.learnt import PositionBasedModel

    for name, factory in MODELS.items():
        register(name, factory)
    register("pbm", PositionBasedModel)


@hookimpl
def register_policies(register):
    """Register ``rerank``: the ranking policy ``offeval evaluate --rerank NAME=COLUMN`` builds."""
    from offeval_ranking.rerank import RerankPolicy

    register("rerank", RerankPolicy)


@hookimpl
def register_estimators(register):
    """Register DCG, nDCG and post-normalised nDCG."""
    from offeval_ranking.estimators import DCG, NDCG, PNDCG

    for cls in (DCG, NDCG, PNDCG):
        register(cls.name, cls)


@hookimpl
def register_demo_estimators(register, environment):
    """DCG with the environment's own examination model, per impression like the truth."""
    from offeval_ranking.estimators import DCG, NDCG, PNDCG

    model = getattr(getattr(environment, "examination", None), "spec", "logarithmic")
    register(DCG(examination=model, per="impression"))
    register(DCG(examination=model, per="impression", cap=2))
    register(NDCG(examination=model))
    register(PNDCG(examination=model))


__all__ = [
    "DCG",
    "NDCG",
    "PNDCG",
    "MODELS",
    "PositionBasedModel",
    "RerankPolicy",
    "examination_model",
    "exposure",
    "ranking",
    "fit_em",
    "fit_shuffled",
]

#: The public names, imported on first use (loading the plugin imports no estimator).
__getattr__ = lazy_names(
    __name__,
    {
        "offeval_ranking.estimators": ("DCG", "NDCG", "PNDCG"),
        "offeval_ranking.examination": ("MODELS", "examination_model"),
        "offeval_ranking.learnt": ("PositionBasedModel", "fit_em", "fit_shuffled"),
        "offeval_ranking.rerank": ("RerankPolicy",),
    },
)
