"""Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points* — every numbered
statement as a claim, one module per section of the paper:

* ``recursive_dynamics.py`` — Section 4 (Propositions 1–2, Lemmas 1–4, Remark 1) and the instance generators the other
  sections load;
* ``prediction_error.py`` — Section 5.1; ``model_coefficients.py`` — Section 5.2; ``federation_gains.py`` — Section 5.3;
* ``figure_statements.py`` — the statements about Figures 1–6 (data from figures/nonparam.py).

This ``__init__`` holds the paper's metadata (``PAPER``), its labels and the ``INVENTORY``; it defines no claims.
The modules are loaded by path (``fedtheory.content``).
"""

from __future__ import annotations

PAPER = {
    "key": "nonparam",
    "arxiv": "2106.15216",
    "title": "A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points",
    "authors": "Lili Su, Jiaming Xu, Pengkun Yang",
}

PAPER_LABELS = (
    tuple(f"Proposition {i}" for i in range(1, 4))
    + tuple(f"Lemma {i}" for i in range(1, 12))
    + tuple(f"Theorem {i}" for i in range(1, 7))
    + ("Corollary 1", "Corollary 2", "Definition 1", "Remark 1", "Remark 2", "Example 1", "Example 2")
    + tuple(f"Figure {i}" for i in range(1, 7))
)
INVENTORY: dict[str, list[str] | str] = {
    "Proposition 1": ["nonparam/proposition-1"],
    "Proposition 2": ["nonparam/proposition-2"],
    "Proposition 3": [
        "nonparam/proposition-3",
        "nonparam/proposition-3/delta-1",
        "nonparam/proposition-3/delta-2",
        "nonparam/section-5.1/variance-term-dynamics",
    ],
    "Lemma 1": ["nonparam/lemma-1"],
    "Lemma 2": ["nonparam/lemma-2", "nonparam/lemma-2/fedprox-any-gamma"],
    "Lemma 3": ["nonparam/lemma-3"],
    "Lemma 4": ["nonparam/lemma-4"],
    "Lemma 5": ["nonparam/lemma-5"],
    "Lemma 6": ["nonparam/lemma-6"],
    "Lemma 7": ["nonparam/lemma-7"],
    "Lemma 8": ["nonparam/lemma-8"],
    "Lemma 9": ["nonparam/lemma-9"],
    "Lemma 10": ["nonparam/lemma-10"],
    "Lemma 11": ["nonparam/lemma-11"],
    "Theorem 1": [
        "nonparam/theorem-1",
        "nonparam/section-5.1/rate-one-over-t",
        "nonparam/figure-sobolev-rate/bounds-hold",
    ],
    "Theorem 2": ["nonparam/theorem-2/sub-gaussian", "nonparam/theorem-2/heavy-tailed"],
    "Theorem 3": ["nonparam/theorem-3", "nonparam/section-5.1/exponential-finite-rank"],
    "Theorem 4": [
        "nonparam/theorem-4",
        "nonparam/theorem-4/distance",
        "nonparam/section-5.2/limit-unbiased",
        "nonparam/section-1/not-stationary-yet-optimal",
    ],
    "Theorem 5": ["nonparam/theorem-5"],
    "Theorem 6": ["nonparam/theorem-6"],
    # corollary-1 is (26) as printed, a typo (typo=True): it drops α from the contraction factor, which its own proof
    # and Corollary 2's (28) carry; the intended statement is corollary-1/contraction-with-alpha
    "Corollary 1": [
        "nonparam/corollary-1",
        "nonparam/corollary-1/contraction-with-alpha",
        "nonparam/corollary-1/distance",
    ],
    "Corollary 2": ["nonparam/corollary-2", "nonparam/section-5.2.2/coupon-collector"],
    "Definition 1": ["nonparam/definition-1"],
    "Remark 1": ["nonparam/remark-1"],
    "Remark 2": ["nonparam/remark-2"],
    "Example 1": ["nonparam/example-1"],
    "Example 2": ["nonparam/example-2"],
    "Figure 1": ["nonparam/figure-1/stationarity", "nonparam/figure-1/estimation-error"],
    "Figure 2": [
        "nonparam/figure-2/s1-minibatch-not-stationary",
        "nonparam/figure-2/fedprox-tracks-s1",
        "nonparam/figure-2/minibatch-stationarity",
        "nonparam/figure-2/s1-minibatch-not-stationary/reduced-scale",
        "nonparam/figure-2/fedprox-tracks-s1/reduced-scale",
        "nonparam/figure-2/minibatch-stationarity/reduced-scale",
    ],
    "Figure 3": [
        "nonparam/figure-3/minibatch-estimation-error",
        "nonparam/figure-3/minibatch-estimation-error/reduced-scale",
    ],
    "Figure 4": ["nonparam/figure-4/gain-versus-heterogeneity", "nonparam/figure-4/crossing-points"],
    "Figure 5": [
        "nonparam/figure-5/gain-versus-subspace-dimension",
        "nonparam/figure-5/scarce-plateau",
        "nonparam/figure-5/gain-versus-subspace-dimension/reduced-scale",
        "nonparam/figure-5/scarce-plateau/reduced-scale",
    ],
    "Figure 6": ["nonparam/figure-6/polynomial-rates"],
}
