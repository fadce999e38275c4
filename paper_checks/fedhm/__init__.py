"""Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank Factorization*
(arXiv:2111.14655) — every numbered statement as a claim, one module per part of the paper:

* ``factorization.py`` — Sections 2.2 and 3.1: Table 1 (parameters and complexity of full-rank and factorized
  layers, counted on torch modules), the Eckart–Young optimality of the truncated SVD, the rank ratio;
* ``model_sizes.py`` — the ResNets of Tables 5–6 against the sizes of Tables 2, 3, 7 and 8, and Table 4;
* ``model_costs.py`` — Figure 7's parameter and compute shares, the cost ratios of Figures 2–4 and Figure 8's model;
* ``results_tables.py`` — the results tables' internal consistency;
* ``training_figures.py`` — the training figures' claims on substitute data;
* Appendix B, the convergence analysis on a problem where every constant is computable (``_problem.py``):
  ``assumptions.py`` (Assumptions 1–5), ``lemmas.py`` (Lemmas 1–3, zero padding, eq. 10), ``theorems.py``
  (Theorems 1–3), ``algorithms.py`` (Algorithms 1–2).

This ``__init__`` holds the paper's metadata (``PAPER``), its labels and the ``INVENTORY``; it defines no claims.
``_sizes.py`` and ``_problem.py`` hold what the sections share. The modules are loaded by path (``fedtheory.content``).
"""

from __future__ import annotations

PAPER = {
    "key": "fedhm",
    "arxiv": "2111.14655",
    "title": "FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank Factorization",
    "authors": "Dezhong Yao et al.",
}

PAPER_LABELS = (
    tuple(f"Assumption {i}" for i in range(1, 6))
    + tuple(f"Lemma {i}" for i in range(1, 4))
    + tuple(f"Theorem {i}" for i in range(1, 4))
    + tuple(f"Table {i}" for i in range(1, 9))
    + tuple(f"Figure {i}" for i in range(1, 9))
    + ("Algorithm 1", "Algorithm 2")
)

_DIAGRAM = "schematic diagram without data or a checkable statement"
INVENTORY: dict[str, list[str] | str] = {
    "Assumption 1": ["fedhm/assumption-3/logistic-constants"],
    "Assumption 2": [
        "fedhm/assumption-4/implied-constants-global",
        "fedhm/assumption-4/implied-constants-on-ball",
        "fedhm/assumption-5/kappa-sigma-identities",
    ],
    "Assumption 3": ["fedhm/assumption-3/logistic-constants", "fedhm/assumption-3/unbiased-factor-gradients"],
    "Assumption 4": ["fedhm/assumption-4/implied-constants-global", "fedhm/assumption-4/implied-constants-on-ball"],
    "Assumption 5": [
        "fedhm/assumption-5/kappa-sigma-identities",
        "fedhm/assumption-5/lipschitz-implied",
        "fedhm/assumption-5/kappa-g-as-lipschitz-constant",
    ],
    "Lemma 1": ["fedhm/lemma-1", "fedhm/section-b.1/zero-padding", "fedhm/section-b.1/factor-gradients-eq-10"],
    "Lemma 2": ["fedhm/lemma-2"],
    "Lemma 3": ["fedhm/lemma-3"],
    "Theorem 1": ["fedhm/theorem-1"],
    "Theorem 2": [
        "fedhm/theorem-2/algebra",
        "fedhm/theorem-2/step-24",
        "fedhm/theorem-2/simulation",
        "fedhm/theorem-2/remark-full-rank-drift-vanishes",
    ],
    "Theorem 3": [
        "fedhm/theorem-3/step-25",
        "fedhm/theorem-3/step-26",
        "fedhm/theorem-3/step-27-and-y-identity",
        "fedhm/theorem-3/step-28",
        "fedhm/theorem-3/algebra",
        "fedhm/theorem-3/simulation",
    ],
    "Table 1": ["fedhm/table-1/params", "fedhm/table-1/macs", "fedhm/section-3.1/balanced-vs-pufferfish"],
    "Table 2": [
        "fedhm/table-2/fedhm-sizes",
        "fedhm/table-2/width-slimming-sizes",
        "fedhm/table-2/split-mix-sizes",
        "fedhm/section-c.2/heterofl-shrinkage-ratios",
        "fedhm/section-2.2/rank-ratio-definition",
        "fedhm/section-4.2/cifar100-smallest-model-gain",
        "fedhm/section-4.2/outperforms-baselines-dynamic",
        "fedhm/section-4.2/server-model-vs-fedavg-dynamic",
        "fedhm/section-4.2/smallest-model-superior-dynamic",
        "fedhm/section-4.2/gain-grows-with-dataset-complexity",
    ],
    "Table 3": [
        "fedhm/table-3/sizes-as-table-2",
        "fedhm/section-4.2/heterofl-drops-fedhm-split-mix-robust",
        "fedhm/section-4.2/split-mix-server-gap-fixed",
        "fedhm/section-4.2/smallest-model-superior-fixed",
        "fedhm/section-4.2/split-mix-beats-heterofl-fixed",
    ],
    "Table 4": ["fedhm/table-4/data-sizes"],
    "Table 5": ["fedhm/table-5/architecture", "fedhm/table-5/rho"],
    "Table 6": ["fedhm/table-6/architecture"],
    "Table 7": [
        "fedhm/table-7/sizes",
        "fedhm/table-7/aggregation-does-not-hurt-small-model",
        "fedhm/table-7/small-model-improves-with-larger-partners",
        "fedhm/table-7/fedhm-column-is-fixed-setting",
        "fedhm/table-7/low-rank-column-is-table-8",
    ],
    "Table 8": [
        "fedhm/table-8/sizes",
        "fedhm/table-8/width-slimming-is-fedavg",
        "fedhm/section-d.1/low-rank-beats-width-slimming",
        "fedhm/section-d.1/low-rank-vs-original",
    ],
    "Figure 1": _DIAGRAM + " (overview of FedHM's steps; the steps are Algorithm 1, run by fedtheory.algorithms.fedhm)",
    "Figure 2": [
        "fedhm/section-4.3/figure-2-smallest-model-sizes",
        "fedhm/figure-2/fedhm-smallest-beats-fedavg",
        "fedhm/figure-2/heterofl-slower-than-fedavg",
    ],
    "Figure 3": ["fedhm/section-4.3/figure-4-cost-ratios", "fedhm/figure-3/lower-communication-comparable-accuracy"],
    "Figure 4": ["fedhm/section-4.3/figure-4-cost-ratios", "fedhm/figure-4/cost-to-target"],
    "Figure 5": _DIAGRAM + " (FedAvg with one architecture on heterogeneous devices)",
    "Figure 6": ["fedhm/table-1/params", "fedhm/section-2.2/eckart-young"],
    "Figure 7": [
        "fedhm/figure-7/later-layers-parameters",
        "fedhm/figure-7/later-layers-macs",
        "fedhm/section-2.2/resnet50-last-blocks",
    ],
    "Algorithm 1": ["fedhm/algorithm-1/shape-alignment-and-softmax-aggregation", "fedhm/section-b.1/zero-padding"],
    "Algorithm 2": ["fedhm/algorithm-2/instance-of-algorithm-1", "fedhm/section-b.1/zero-padding", "fedhm/lemma-1"],
    "Figure 8": [
        "fedhm/section-d.1/vanilla-low-rank-size",
        "fedhm/figure-8/low-rank-beats-width-slimming",
        "fedhm/figure-8/vanilla-low-rank-drops",
    ],
}
