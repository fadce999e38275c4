"""Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization* (arXiv:2407.07084,
NeurIPS 2024) — every numbered statement as a claim (the statements are rebuilt: see
``definitions_and_lemmas.py``), one module per part of the paper:

* ``definitions_and_lemmas.py`` — the shared helpers, the definitions, Lemmas 9–14 and Table 1;
* ``theorem_1.py`` — S-DANE with full participation (Sections 2–3): Theorem 1, Lemmas 16–17, Corollary 18,
  Section 2.1's stabilized proximal-point method, Remark 2;
* ``theorem_6.py`` — Acc-S-DANE with full participation (Section 4): Theorem 6, Lemma 24, Corollary 25, the
  Stabilized Catalyst (their shared helpers in ``_full_participation.py``);
* ``algorithms.py``, ``local_solvers.py``, ``partial_participation.py``;
* ``figure_statements.py`` — the statements about the figures (data from figures/sdane.py).

This ``__init__`` holds the paper's metadata (``PAPER``), its labels and the ``INVENTORY``; it defines no claims.
The modules are loaded by path (``fedtheory.content``).
"""

from __future__ import annotations

PAPER = {
    "key": "sdane",
    "arxiv": "2407.07084",
    "venue": "NeurIPS 2024",
    "title": "Stabilized Proximal-Point Methods for Federated Optimization",
    "authors": "Xiaowen Jiang, Anton Rodomanov, Sebastian U. Stich",
}

# --------------------------------------------------------------------------------------------
# inventory: every numbered label of the paper
# --------------------------------------------------------------------------------------------

PAPER_LABELS = (
    ("Definition 1", "Definition 3", "Definition 4", "Definition 5", "Definition 6")
    + ("Theorem 1", "Theorem 5", "Theorem 6", "Theorem 7", "Theorem 21", "Theorem 26")
    + ("Corollary 3", "Corollary 18", "Corollary 22", "Corollary 25", "Corollary 27")
    + tuple(f"Lemma {i}" for i in range(9, 18))
    + ("Lemma 20", "Lemma 23", "Lemma 24")
    + ("Remark 2", "Remark 4", "Remark 8", "Remark 19")
    + ("Algorithm 1", "Algorithm 2", "Algorithm 3")
    + ("Table 1",)
    + tuple(f"Figure {i}" for i in range(1, 6))
)

INVENTORY: dict[str, list[str] | str] = {
    "Definition 1": ["sdane/definition-1/exact-quadratic", "sdane/definition-1/properties"],
    "Definition 3": ["sdane/definition-3"],
    "Definition 4": ["sdane/definition-4", "sdane/section-3/delta-tilde"],
    "Definition 5": ["sdane/definition-5"],
    "Definition 6": ["sdane/definition-6"],
    "Theorem 1": [
        "sdane/theorem-1/runs",
        "sdane/theorem-1/probe",
        "sdane/theorem-1/pep",
        "sdane/section-2.1/stabilized-ppm",
        "sdane/section-2.1/one-gradient-step",
    ],
    "Theorem 5": ["sdane/theorem-5/expectation", "sdane/theorem-5/one-step"],
    "Theorem 6": [
        "sdane/theorem-6/runs",
        "sdane/theorem-6/probe",
        "sdane/theorem-6/pep",
        "sdane/section-4/stabilized-catalyst",
    ],
    "Theorem 7": ["sdane/theorem-7"],
    "Theorem 21": ["sdane/theorem-21"],
    "Theorem 26": ["sdane/theorem-26"],
    "Corollary 3": ["sdane/corollary-3/runs", "sdane/corollary-3/pep"],
    "Corollary 18": ["sdane/corollary-18"],
    "Corollary 22": ["sdane/corollary-22"],
    "Corollary 25": ["sdane/corollary-25"],
    "Corollary 27": ["sdane/corollary-27"],
    "Lemma 9": ["sdane/lemma-9"],
    "Lemma 10": ["sdane/lemma-10"],
    "Lemma 11": ["sdane/lemma-11"],
    "Lemma 12": ["sdane/lemma-12"],
    "Lemma 13": ["sdane/lemma-13"],
    "Lemma 14": ["sdane/lemma-14"],
    "Lemma 15": ["sdane/lemma-15"],
    "Lemma 16": ["sdane/lemma-16", "sdane/lemma-16/pep"],
    "Lemma 17": ["sdane/lemma-17"],
    "Lemma 20": ["sdane/lemma-20"],
    "Lemma 23": ["sdane/lemma-23"],
    "Lemma 24": ["sdane/lemma-24"],
    "Remark 2": ["sdane/remark-2/classical-ppm", "sdane/remark-2/dane-runs"],
    "Remark 4": ["sdane/remark-4"],
    "Remark 8": "a remark on how Catalyzed SVRP and AccSVRS count communication (total information exchanged, "
    "one computing client, periodic full gradients) versus this paper's parallel partial participation; "
    "it describes other works' settings and asserts nothing checkable about S-DANE",
    "Remark 19": ["sdane/remark-19"],
    "Algorithm 1": ["sdane/algorithm-1/exact-solves-are-dane", "sdane/algorithm-1/line-9"],
    "Algorithm 2": ["sdane/algorithm-2/coefficients"],
    "Algorithm 3": ["sdane/algorithm-3/option-2-is-algorithm-1", "sdane/algorithm-3/option-1-vs-fedprox"],
    "Table 1": [
        "sdane/table-1/entries",
        "sdane/table-1/comparisons",
        "sdane/table-1/sdane-rounds-slope",
        "sdane/table-1/acc-sdane-rounds-slope",
    ],
    "Figure 1": ["sdane/figure-1/text"],
    "Figure 2": ["sdane/figure-2/text"],
    "Figure 3": ["sdane/figure-3/full-participation", "sdane/figure-3/client-sampling"],
    "Figure 4": ["sdane/figure-4/text"],
    "Figure 5": ["sdane/figure-5/text"],
}
