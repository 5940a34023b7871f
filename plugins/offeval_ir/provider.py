"""offeval as an ir-measures provider: ir-measures' measure objects, offeval's numbers.

ir-measures (https://ir-measur.es) keeps a registry of providers, the
libraries that compute its measures, and has no entry-point group for them:
a provider joins when its module is imported. So::

    import ir_measures
    import offeval_ir.provider  # registers the provider "offeval"

    offeval = ir_measures.providers.registry["offeval"]
    offeval.calc_aggregate([ir_measures.nDCG@10, ir_measures.P(rel=2)@5], qrels, run)
    for metric in offeval.iter_calc([ir_measures.AP, ir_measures.RR], qrels, run):
        print(metric.query_id, metric.measure, metric.value)

``register(default_pipeline=True)`` also puts offeval first in ir-measures'
default pipeline, so that ``ir_measures.calc_aggregate``, ``iter_calc``,
``evaluator`` and the tools built on them (PyTerrier's ``pt.Experiment``)
take offeval's numbers for the measures it supports and leave the others to
the providers after it; :func:`unregister` undoes it. ir-measures is an
optional dependency: nothing else in offeval imports it.

The numbers are ir-measures' own (trec_eval's definitions, as pytrec_eval
computes them): offeval's ``trec_eval`` conventions, a query of the qrels the
run does not answer scoring the measure's default (0), queries of the run
without qrels left out. Supported (see :data:`SUPPORTED`): ``P@k``, ``R@k``,
``AP[@k]``, ``RR[@k]``, ``nDCG[@k]`` (``dcg='log2'`` or ``'exp-log2'``),
``Rprec``, ``Bpref``, ``Success@k``, ``Judged[@k]``, ``ERR[@k]``,
``RBP(rel=N)[@k]``, ``SetP``, ``SetR``, ``SetF``, each with ``rel`` where
ir-measures has it. Declared unsupported, so ir-measures falls back to
another provider: ``judged_only=True``, custom ``gains``, ``SetP(relative=True)``,
``SetF`` with ``beta`` other than 1, ``RBP`` without ``rel`` (ir-measures'
graded RBP; offeval's is binary at ``rel``), ``rel`` below 1, and every
other measure (:mod:`offeval_ir.provider_measures` declares them).

**Intervals**: the same measure objects, qrels and runs go to
:func:`offeval_ir.evaluate_runs`, which gives each mean its standard error and
interval and compares runs pairwise::

    from offeval_ir import PRESETS, evaluate_runs
    evaluation = evaluate_runs(
        {"bm25": run},
        qrels,  # ir-measures' Qrel tuples or frame, a dict-of-dict, ranx Qrels
        [ir_measures.nDCG@10, ir_measures.AP],
        PRESETS["trec_eval"](no_predictions="zero"),  # ir-measures' means
    )
    evaluation.table()  # mean, se, ci_low, ci_high per run and measure

(with the ``trec_eval`` preset's default, ``no_predictions='nan'``, a query
the run does not answer is left out and counted, as trec_eval does without
``-c``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import Metric

from offeval_ir.conventions import PRESETS
from offeval_ir.provider_measures import SUPPORTED, offeval_measure
from offeval_ir.runs import compute_measures

NAME = "offeval"


class OffevalProvider(ir_measures.providers.Provider):
    """offeval's IR plugin: trec_eval's measures, vectorised over queries, with intervals
    through :func:`offeval_ir.evaluate_runs` (see the module docstring)."""

    NAME = NAME
    SUPPORTED_MEASURES = SUPPORTED

    def _evaluator(self, measures: Iterable, qrels: object) -> OffevalEvaluator:
        measures = list(measures)
        for measure in measures:
            offeval_measure(measure)
        frame = ir_measures.util.QrelsConverter(qrels).as_pd_dataframe()
        frame = frame.rename(columns={"query_id": "user", "doc_id": "item"})
        qids = set(frame["user"].unique())
        return OffevalEvaluator(measures, frame[["user", "item", "relevance"]], qids)

    def install_instructions(self) -> str:
        return "pip install offeval"


class OffevalEvaluator(ir_measures.providers.Evaluator):
    """Per-query values of one set of measures on one qrels, for any number of runs."""

    def __init__(self, measures: list, qrels: pd.DataFrame, qids: set):
        super().__init__(measures, qids)
        self.qrels = qrels
        self.names = {offeval_measure(m): m for m in measures}
        # ir-measures' base class gives a qrels query missing from the run its default
        self.conventions = PRESETS["trec_eval"]()

    def _iter_calc(self, run: object) -> Iterator[Metric]:
        frame = ir_measures.util.RunConverter(run).as_pd_dataframe()
        if frame.empty:
            return
        frame = frame.rename(columns={"query_id": "user", "doc_id": "item"})
        result = compute_measures(
            frame[["user", "item", "score"]], self.qrels, list(self.names), self.conventions
        )
        per_user = result.per_user
        for name, measure in self.names.items():
            values = per_user[name].to_numpy(dtype=float)
            keep = ~np.isnan(values)
            for qid, value in zip(per_user.index[keep], values[keep].tolist(), strict=True):
                yield Metric(query_id=qid, measure=measure, value=value)


def register(default_pipeline: bool = False) -> OffevalProvider:
    """The provider, in ir-measures' registry (as ``"offeval"``); with
    ``default_pipeline``, also first in ``ir_measures.DefaultPipeline``, so that
    ``ir_measures.calc_aggregate`` and PyTerrier use it for the measures it supports."""
    provider = ir_measures.providers.registry.get(NAME)
    if not isinstance(provider, OffevalProvider):
        provider = ir_measures.providers.register(OffevalProvider())
    pipeline = ir_measures.DefaultPipeline.providers
    if default_pipeline and provider not in pipeline:
        pipeline.insert(0, provider)
    return provider


def unregister() -> None:
    """Take the provider out of ir-measures' default pipeline and registry."""
    provider = ir_measures.providers.registry.pop(NAME, None)
    pipeline = ir_measures.DefaultPipeline.providers
    pipeline[:] = [p for p in pipeline if p is not provider]


PROVIDER = register()
