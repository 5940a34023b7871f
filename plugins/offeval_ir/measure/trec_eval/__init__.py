"""trec_eval compatibility as a provider: trec_eval's own measures, as its C sources (version
10.0, its ``m_*.c`` files) define them, vectorised over users.

Each module declares its measures (``MEASURES``) with kernels ``kernel(lists, param, k)``
over :class:`~offeval_ir.measure.trec_eval.lists.Lists`, the lists as trec_eval's
form_res_rels.c sees them: the whole lists are read (a cut-off k cuts each list at k
first, as trec_eval's ``-M k``), ranks in the order the conventions give (trec_eval:
score, ties by docno descending), a rank relevant when its label's grade is at least
``relevance_threshold`` (``-l``). Gain measures read trec_eval's gains: a label's grade
unless a parameter ``grade=gain`` says otherwise.

Where trec_eval's own output is not a function of the per-query values, the caller
reproduces it: under ``-c`` its ``all`` line of ``num_rel`` counts the qrels lines of
grade > 0 whatever ``-l`` says (m_num_rel.c), where offeval sums the per-query values
(the same at ``-l1``); ``-N`` (collection size) adds d N to ``utility.a,b,c,d``'s
per-query value and scores a list emptied by ``-M 0`` or ``-J`` as trec_eval does (not as
a query missing from the run),
``-J`` drops the unjudged documents from the run before ranking, and ``-l 0`` is ``-l 1``
on grades raised by 1 for the measures reading relevance.
Every other value, per query and in the ``all`` line, matched trec_eval 10.0's on its
test collection and on random collections (ties, text docnos, -1 grades, -l1 to -l3,
-c), except where trec_eval itself is undefined (see
:func:`offeval_ir.measure.trec_eval.rbp.trec_rbp`, and :meth:`Lists.gains` for gains
less than 1 apart).
"""
