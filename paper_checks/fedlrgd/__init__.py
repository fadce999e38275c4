"""Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions* — every numbered statement as a claim,
one module per part of the paper:

* ``timing.py`` — Definition 1's timing models and Proposition 2;
* ``low_rank.py`` — Lemma 1, Theorem 1, Algorithm 1, Appendix A;
* ``complexity.py`` — Lemmas 2–4, Theorems 2–3, Proposition 1;
* ``figure_statements.py`` — Figures 1–2.

This ``__init__`` holds the paper's metadata (``PAPER``), its labels and the ``INVENTORY``; it defines no claims.
The modules are loaded by path (``fedtheory.content``).
"""

from __future__ import annotations

PAPER = {
    "key": "fedlrgd",
    "arxiv": "2201.01954",
    "title": "Federated Optimization of Smooth Loss Functions",
    "authors": "Ali Jadbabaie, Anuran Makur, Devavrat Shah",
}

# --------------------------------------------------------------------------------------------
# inventory: every numbered label of the paper
# --------------------------------------------------------------------------------------------

PAPER_LABELS = (
    "Definition 1",
    "Lemma 1",
    "Lemma 2",
    "Lemma 3",
    "Lemma 4",
    "Theorem 1",
    "Theorem 2",
    "Theorem 3",
    "Proposition 1",
    "Proposition 2",
    "Algorithm 1",
    "Figure 1",
    "Figure 2",
)

INVENTORY: dict[str, list[str] | str] = {
    "Definition 1": [
        "fedlrgd/definition-1/oracle-complexity",
        "fedlrgd/definition-1/straggler-model",
        "fedlrgd/definition-1/mm1-queue",
    ],
    "Lemma 1": ["fedlrgd/lemma-1"],
    "Lemma 2": ["fedlrgd/lemma-2"],
    "Lemma 3": ["fedlrgd/lemma-3/heterogeneous", "fedlrgd/lemma-3/homogeneous"],
    "Lemma 4": ["fedlrgd/lemma-4"],
    "Theorem 1": ["fedlrgd/theorem-1"],
    "Theorem 2": [
        "fedlrgd/theorem-2/hypotheses",
        "fedlrgd/theorem-2/proof-arithmetic",
        "fedlrgd/theorem-2/complexity",
        "fedlrgd/theorem-2/gradient-error",
        "fedlrgd/section-a/logistic-assumptions",
    ],
    "Theorem 3": ["fedlrgd/theorem-3/closed-form", "fedlrgd/theorem-3/geometric-program"],
    "Proposition 1": ["fedlrgd/proposition-1/hypotheses", "fedlrgd/proposition-1/regime"],
    "Proposition 2": ["fedlrgd/proposition-2"],
    "Algorithm 1": ["fedlrgd/algorithm-1/weights"],
    "Figure 1": ["fedlrgd/figure-1/procedure", "fedlrgd/figure-1/low-rank"],
    "Figure 2": ["fedlrgd/figure-2/procedure", "fedlrgd/figure-2/low-rank"],
}
