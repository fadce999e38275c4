"""Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*
(AISTATS 2021, arXiv:2103.05032) — every numbered statement as a claim, one module per section of the paper:

* ``surrogate.py`` — Sections 2–3: the client losses, Theorem 1 and its mini-batch versions, Lemma 7, Theorem 2, MAML;
* ``condition_numbers.py`` — Section 4.1: Lemma 1 (and Lemmas 8–10), Lemmas 2–4, 6 and 11;
* ``rates.py`` — Section 4.2: Table 2 and Theorem 3;
* ``accuracy_floor.py`` — Section 4.3 and Appendix C: Lemma 5, Theorem 4, Corollary 1 (refuted for d ≥ 2);
* ``certified_floor.py`` and ``floor_law.py`` — the certified replacements of the floor bounds and their law;
* ``appendix_c.py`` — Appendix C.1 and C.3: Theorem 5, Corollary 2, Lemma 12, Definitions 1–3, Lemmas 13–14, Theorem 6;
* ``section_statements.py`` — what Sections 3–5 state without a number;
* ``appendix_a.py`` — Appendix A and Table 1;
* ``figure_statements.py`` and ``training_figures.py`` — the statements about the figures.

This ``__init__`` holds the paper's metadata (``PAPER``), its labels and the ``INVENTORY``; it defines no claims.
``_common.py`` holds what the sections share. The modules are loaded by path (``fedtheory.content``).

Setting (Section 2): clients f_i(x) = ½‖A_i^{1/2}(x − c_i)‖² with weights p_i,
Assumption 1 (μI ⪯ A_i ⪯ LI) and Assumption 2 (‖c_i‖ ≤ C). LocalUpdate (Algorithms 1–2) runs
K(Θ) proximal local steps with client rate γ and proximal weight α, returns Σ_k θ_k g_k, and the
server applies ServerOpt to the average.

Findings (refuted claims, each with a stored counterexample replayed in high precision):

* Lemma 14 (‖P₁P⁻¹‖ ≤ 1 for SPD P₁, P₂, P = P₁ + P₂) is false: P₁P⁻¹ is not symmetric, so its norm is
  not its spectral radius (the proof equates the two). Theorem 6 (M(X|Y) ≤ 2(b − a)/b), whose proof uses
  the same step, is false; so are Lemma 5 (the 8C bound), Theorem 4, Corollary 1 and the 2C conjecture
  for d ≥ 2: with non-commuting clients ‖x*(α,γ,Θ) − x*‖ exceeds the bounds by factors that grow with
  L/μ. The d = 1 results (Theorem 5, Corollary 2, Lemma 12) hold. With commuting clients in d = 2..8 the
  8C bound holds (per coordinate Lemma 12 gives 2√d·C), but Lemma 12's 2C does not carry over: ratio > 1 in
  d = 2 (``localupdate/lemma-5/commuting-2c``, replayed in 60 digits).
* Lemma 13 holds under both faithful readings (the spectrum of the non-symmetric f(X|Y), the Loewner order of the
  symmetric matrix it is similar to); the quadratic-form reading of f(X|Y) is not the paper's (⪯ is defined for
  symmetric matrices) and fails — Theorem 6's proof leans on it.
* Theorem 3 with momentum: Table 2's ρ is the spectral radius of the tuned iteration (verified), but the
  tuned iteration has a Jordan block, so ‖x_T − x*‖ ≤ ρ^T‖x_0 − x*‖ (constant 1, all T) fails for
  every hyperparameter setting the adversary tries. The constant 1 + (1 + ρ)T suffices for both momentum
  types and is attained for heavy-ball (proved and checked in ``localupdate/theorem-3/*-corrected``).
* Negative controls: every verified claim runs a known-false variant of its statement (a tightened constant at
  an attaining instance, an off-by-one in K, a wrong weight or limit, a planted departure) that must come out
  refuted; the probe claims' controls are calibrated so only the probe's optimizer reaches them
  (tests/test_localupdate_controls.py); symbolic claims are verified by their exact sympy proof.
* Section 4.1: "κ(α,γ,Θ_{1:K}) = L/μ iff α = 0 and (γ = 0 or K = 1)" fails (α > 0 with γ = 0 or K = 1
  also gives equality), and "increasing α decreases κ" fails for Θ_{1:K} at large K (it holds for Θ_K).
* Lemma 3 as printed compares with κ(α,γ,Θ_K), a typo for Θ_{1:K}: the literal reading is false (a typo claim,
  ``localupdate/lemma-3/as-printed-typo``), the intended one holds (``localupdate/lemma-3``).
"""

from __future__ import annotations

from pathlib import Path

from fedtheory.claims.core import Claim as _Claim
from fedtheory.content import discover, load_module, module_claims

PAPER = {
    "key": "localupdate",
    "arxiv": "2103.05032",
    "venue": "AISTATS 2021",
    "title": "Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning",
    "authors": "Zachary Charles, Jakub Konečný",
}
HERE = Path(__file__).resolve().parent

PAPER_LABELS = (
    ("Assumption 1", "Assumption 2", "Algorithm 1", "Algorithm 2")
    + tuple(f"Theorem {i}" for i in range(1, 7))
    + tuple(f"Lemma {i}" for i in range(1, 15))
    + ("Corollary 1", "Corollary 2", "Definition 1", "Definition 2", "Definition 3")
    + ("Table 1", "Table 2", "Table 3")
    + tuple(f"Figure {i}" for i in range(1, 14))
)


def _training_figure_claims(n: int) -> list[str] | str:
    """The ids of training_figures.py's claims about Figure n (network training), or why there are none."""
    return _figure_claim_ids(n) or "built in training_figures.py (network-training figures): no claim of it loaded"


def _figure_claim_ids(n: int) -> list[str]:
    return sorted(c for c in _ALL_IDS if c.startswith(f"localupdate/figure-{n}/"))


_ALL_IDS: list[str] = []  # filled at the end of the module from the claims defined here


def _build_inventory() -> dict:
    inv: dict[str, list[str] | str] = {
        "Assumption 1": "hypothesis, not a statement: every instance is generated with μI ⪯ A_i ⪯ LI, both extremes attained",
        "Assumption 2": "hypothesis, not a statement: every instance is generated with ‖c_i‖ ≤ C, the bound attained",
        "Algorithm 1": [
            "localupdate/section-4.2/deterministic-is-serveropt-on-surrogate",
            "localupdate/theorem-1/monte-carlo",
            "localupdate/section-a/fedavg-is-localupdate",
        ],
        "Algorithm 2": [
            "localupdate/theorem-1",
            "localupdate/theorem-1/minibatch-exact",
            "localupdate/theorem-1/monte-carlo",
        ],
        "Table 3": "hyperparameters of the paper's neural-network experiments (FEMNIST, CIFAR-100, Shakespeare); not a statement",
    }
    by_ref: dict[str, list[str]] = {}
    for c in _CLAIMS:
        by_ref.setdefault(c.ref, []).append(c.id)
    for label in PAPER_LABELS:
        if label in inv:
            continue
        if label.startswith("Figure"):
            n = int(label.split()[1])
            if n in (6, 11, 12, 13):
                inv[label] = _training_figure_claims(n)
                continue
            inv[label] = _figure_claim_ids(n)
            continue
        inv[label] = sorted(by_ref.get(label, []))
    # section-level statements are filed under the numbered label they elaborate
    for c in _CLAIMS:
        if c.ref.startswith("Section") or c.ref.startswith("Appendix"):
            target = _SECTION_HOME.get(c.id)
            if target is not None:
                inv[target] = sorted(set(inv[target]) | {c.id})
    for label, ids in _CERTIFIED_CLAIMS.items():
        inv[label] = sorted(set(inv[label]) | set(ids))
    return inv


#: certified replacements for the failing floor bounds (certified_floor.py)
_CERTIFIED_CLAIMS = {
    "Lemma 5": [
        "localupdate/lemma-5/certified",
        "localupdate/lemma-5/certified-fast-grid",
        "localupdate/lemma-5/certified-fedprox",
        "localupdate/lemma-5/certified-grid",
        "localupdate/lemma-5/certified-limit",
        "localupdate/lemma-5/corrected",
        "localupdate/lemma-5/corrected-limit",
        "localupdate/section-4.3/smooth-floor-larger",
        # the law of the certified floor (floor_law.py)
        "localupdate/floor-law/reduction",
        "localupdate/floor-law/limits",
        "localupdate/floor-law/certified",
        "localupdate/floor-law/small-step",
        "localupdate/floor-law/grid",
    ],
    "Theorem 4": [
        "localupdate/lemma-5/certified",
        "localupdate/lemma-5/certified-fast-grid",
        "localupdate/lemma-5/corrected",
    ],
    "Corollary 1": ["localupdate/corollary-1/certified"],
    "Theorem 5": ["localupdate/theorem-5/certified-d1"],
}


#: the numbered label each unnumbered (section-level) statement is filed under
_SECTION_HOME = {
    "localupdate/section-2/client-loss-is-quadratic": "Theorem 1",
    "localupdate/section-3/theta-1-no-distortion": "Theorem 1",
    "localupdate/section-3/surrogate-limit": "Theorem 1",
    "localupdate/section-3/maml-proximal-analogue": "Theorem 2",
    "localupdate/section-3/maml-not-localupdate-with-minibatches": "Theorem 2",
    "localupdate/section-4.1/kappa-last-limits": "Lemma 4",
    "localupdate/section-4.1/kappa-uniform-at-most-kappa0": "Lemma 3",
    "localupdate/section-4.1/kappa-uniform-equality-iff": "Lemma 3",
    "localupdate/section-4.1/kappa-uniform-decreasing": "Lemma 3",
    "localupdate/section-4.1/alpha-decreases-kappa-uniform": "Lemma 3",
    "localupdate/section-4.1/alpha-decreases-kappa-last": "Lemma 4",
    "localupdate/section-4.1/theta-k-beyond-threshold": "Lemma 4",
    "localupdate/section-4.2/deterministic-is-serveropt-on-surrogate": "Theorem 3",
    "localupdate/section-4.2/momentum-keeps-accuracy": "Theorem 3",
    "localupdate/section-4.2/kappa-rho-decrease-in-gamma-and-k": "Table 2",
    "localupdate/section-4.3/conjecture-constant-2c": "Lemma 5",
    "localupdate/section-4.3/fedavg-fewer-rounds": "Corollary 1",
    "localupdate/section-5/critical-points-iff": "Theorem 1",
    "localupdate/section-5/rho-delta-in-unit-square": "Theorem 4",
    "localupdate/section-5/heavy-ball-symmetry-conjecture": "Figure 2",
    "localupdate/section-a/fedavg-is-localupdate": "Table 1",
    "localupdate/section-a/model-delta-conflates-rates": "Table 1",
}

#: every claim of the paper's sections (the inventory is computed from them)
_CLAIMS: list[_Claim] = [c for section in discover([str(HERE)], ()) for c in module_claims(load_module(section))]
_CERTIFIED_IDS = {i for ids in _CERTIFIED_CLAIMS.values() for i in ids}
_ALL_IDS.extend(c.id for c in _CLAIMS)
_homeless = [
    c.id
    for c in _CLAIMS
    if (c.ref.startswith("Section") or c.ref.startswith("Appendix"))
    and c.id not in _SECTION_HOME
    and c.id not in _CERTIFIED_IDS
]
if _homeless:
    raise RuntimeError(f"section claims without an inventory label: {_homeless}")
INVENTORY: dict[str, list[str] | str] = _build_inventory()
