"""Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*
(AISTATS 2021, arXiv:2103.05032) — every numbered statement as a claim.

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

import functools
import itertools
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import scipy.optimize
import sympy as sp

from fedtheory.algorithms.local_update import (
    LocalUpdate,
    ServerOpt,
    _finite_sum_messages,
    client_pseudo_gradients,
    run_local_update,
)
from fedtheory.algorithms.maml import MAML, maml_messages, maml_theta
from fedtheory.algorithms.surrogate import (
    distortion_eigenvalues,
    kappa,
    kappa_bound_last,
    kappa_bound_uniform,
    lemma5_bound,
    matrix_weighted_discrepancy,
    matrix_weighted_mean,
    mean_absolute_deviation,
    minimizer_distance,
    phi,
    psi,
    surrogate_grad,
    surrogate_hessian,
    surrogate_minimizer,
)
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import (
    iteration_polynomials,
    iteration_spectral_radius,
    rate_with_constant_one,
    suboptimality_delta,
    table2_rate,
    transient_constant,
    tuned_server,
    worst_case_contraction,
)
from fedtheory.certify.params import Box, Custom, NonnegWeights, Product, quadratic_instance_param
from fedtheory.certify.probe import probe
from fedtheory.claims.core import Control, Reading, claim
from fedtheory.content import load_module
from fedtheory.plotting.spec import FigureContext
from fedtheory.problems.finite_sum import LeastSquaresFederation
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic
from fedtheory.symbolic import distortion as sym
from fedtheory.symbolic import tradeoff as symt

EPS = float(np.finfo(np.float64).eps)
_FEV = {False: {"maxfev": 120}, True: {"maxfev": 2000}}   # Nelder–Mead evaluations per probe start
MOMENTA = {"no-momentum": "gd", "nesterov": "nesterov", "heavy-ball": "heavy_ball"}
HERE = Path(__file__).resolve().parent
FIGURES = HERE.parent / "figures" / "localupdate.py"
TRAINING_CLAIMS = HERE / "localupdate_training.py"

# --------------------------------------------------------------------------------------------
# inventory
# --------------------------------------------------------------------------------------------

PAPER_LABELS = (
    ("Assumption 1", "Assumption 2", "Algorithm 1", "Algorithm 2")
    + tuple(f"Theorem {i}" for i in range(1, 7))
    + tuple(f"Lemma {i}" for i in range(1, 15))
    + ("Corollary 1", "Corollary 2", "Definition 1", "Definition 2", "Definition 3")
    + ("Table 1", "Table 2", "Table 3")
    + tuple(f"Figure {i}" for i in range(1, 14))
)


def _training_figure_claims(n: int) -> list[str] | str:
    """The ids of paper_checks/localupdate_training.py's claims about Figure n (built by another engineer)."""
    reason = "built in paper_checks/localupdate_training.py (network-training figures)"
    if not TRAINING_CLAIMS.exists():
        return reason
    try:
        from fedtheory.content import module_claims

        ids = sorted(c.id for c in module_claims(load_module(TRAINING_CLAIMS))
                     if c.id.startswith(f"localupdate/figure-{n}/"))
    except Exception:  # a broken sibling must not break this paper's inventory
        return reason
    return ids or reason


def _figure_claim_ids(n: int) -> list[str]:
    return sorted(c for c in _ALL_IDS if c.startswith(f"localupdate/figure-{n}/"))


_ALL_IDS: list[str] = []   # filled at the end of the module from the claims defined here


def _build_inventory() -> dict:
    inv: dict[str, list[str] | str] = {
        "Assumption 1": "hypothesis, not a statement: every instance is generated with μI ⪯ A_i ⪯ LI, both extremes attained",
        "Assumption 2": "hypothesis, not a statement: every instance is generated with ‖c_i‖ ≤ C, the bound attained",
        "Algorithm 1": ["localupdate/section-4.2/deterministic-is-serveropt-on-surrogate", "localupdate/theorem-1/monte-carlo",
                        "localupdate/section-a/fedavg-is-localupdate"],
        "Algorithm 2": ["localupdate/theorem-1", "localupdate/theorem-1/minibatch-exact", "localupdate/theorem-1/monte-carlo"],
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


#: certified replacements for the failing floor bounds (paper_checks/localupdate_certified.py)
_CERTIFIED_CLAIMS = {
    "Lemma 5": ["localupdate/lemma-5/certified", "localupdate/lemma-5/certified-fast-grid",
                "localupdate/lemma-5/certified-fedprox", "localupdate/lemma-5/certified-grid",
                "localupdate/lemma-5/certified-limit", "localupdate/lemma-5/corrected",
                "localupdate/lemma-5/corrected-limit",
                "localupdate/section-4.3/smooth-floor-larger",
                # the law of the certified floor (paper_checks/localupdate_law.py)
                "localupdate/floor-law/reduction", "localupdate/floor-law/limits",
                "localupdate/floor-law/certified", "localupdate/floor-law/small-step",
                "localupdate/floor-law/grid"],
    "Theorem 4": ["localupdate/lemma-5/certified", "localupdate/lemma-5/certified-fast-grid",
                  "localupdate/lemma-5/corrected"],
    "Corollary 1": ["localupdate/corollary-1/certified"],
    "Theorem 5": ["localupdate/theorem-5/certified-d1"],
}


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------

def _random_instance(rng, *, aligned: bool = False, n_max: int = 4, d_max: int = 5, K_max: int = 30):
    """A random federated quadratic (d ≥ 2, unequal weights) and LocalUpdate hyperparameters in Lemma 1's regime.

    ``aligned``: all clients share one eigenbasis, so the surrogate Hessian attains μ̃ and L̃ of eq. (9).
    """
    n, d = int(rng.integers(1, n_max + 1)), int(rng.integers(2, d_max + 1))
    L = float(10 ** rng.uniform(0.2, 3))
    problem = make_quadratic(n, d, mu=1.0, L=L, C=float(rng.uniform(0.5, 5)), weights="random",
                             commuting=aligned, seed=rng)
    kind = rng.choice(["uniform", "last", "general"])
    K = int(rng.integers(1, K_max))
    theta = {"uniform": Theta.uniform, "last": Theta.last}.get(kind, lambda k: Theta(rng.exponential(size=k) + 0.01))(K)
    alpha = float(rng.choice([0.0, rng.uniform(0, 2 * L)]))
    gamma = float(rng.uniform(0, 1)) / (L + alpha)
    return problem, theta, alpha, gamma


def _instance_json(problem, theta, alpha, gamma, **extra) -> dict:
    out = {"problem": problem.to_json(), "theta": theta.to_json(), "alpha": float(alpha), "gamma": float(gamma)}
    out.update(extra)
    return out


def _instance_from_json(cex: dict):
    return (QuadraticFederation.from_json(cex["problem"]), Theta.from_json(cex["theta"]),
            float(cex["alpha"]), float(cex["gamma"]))


def _probe_instances(violation, rng, ctx, *, n=3, d=3, target=None, starts=(), commuting=False, K=8, L=(10 ** 0.2, 1e3),
                     n_random=(24, 160), n_starts=(2, 8), maxiter=(40, 300), maxfev=(100, 1500)):
    """A probe over :func:`quadratic_instance_param` with fast/full budgets (evaluations capped per start: the
    parameterization has ~40 reals, so Nelder–Mead's simplex and shrink steps would otherwise dominate)."""
    full = ctx.full
    return probe(violation, quadratic_instance_param(n=n, d=d, commuting=commuting, K=K, L=L), seed=rng,
                 n_random=n_random[full], n_starts=n_starts[full], maxiter=maxiter[full], target=target,
                 starts=starts, options={"maxfev": maxfev[full]})


#: the exact symbolic proofs behind the symbolic claims (each counts as its claim's control)
_PROOFS = {
    "client_loss": "sympy: ∇(f_i − ½‖A_i^{1/2}(x − c_i)‖²) ≡ 0 for three symbolic examples (generic symmetric B_z, "
                   "symbolic c_z)",
    "theorem_1": "sympy: Lemma 7's step (generic symmetric 3×3 A), QA = (QA)ᵀ, and the direct expansion of E[Σθ_k "
                 "g_k] (d = 2, K ≤ 3 or 5, symbolic θ) expand to zero",
    "theorem_1_minibatch_exact": "sympy Rational: the exact expectation over every batch path and client draw equals "
                                 "∇f̃_i (zero residual)",
    "lemma_7": "sympy: the step residual (generic symmetric 3×3 A) and E[g_k] − (I − γA)^{k−1}A(x_1 − c) (k ≤ 3, "
               "exact enumeration) are zero",
    "theorem_2": "sympy: f(X_{K+1}(x)) differentiated through the inner steps minus ∇f̃(Θ_{2K+1}) is zero (d = 1, K "
                 "≤ 4; generic symmetric 2×2, K ≤ 2 or 3)",
    "maml_proximal": "sympy: the proximal MAML gradient minus ∇f̃(Θ') is zero (symbolic α; d = 1, K ≤ 3; d = 2, K ≤ 2)",
    "maml_minibatch": "sympy Rational: the exact expected MAML message has a Jacobian G with GA − AG ≠ 0, so G ≠ "
                      "Q(A)A for every Θ",
    "lemma_3_derivative": "sympy: eq. (33) and the derivative identity hold for symbolic K (zero residuals)",
    "lemma_4_derivative": "sympy: ψ′(λ) − ζ^{K−2}(1 − γ(Kλ + α)) simplifies to zero for symbolic K",
    "lemma_11": "sympy Rational: ∇f̃ vanishes exactly at E[Q_iA_i]^{-1}E[Q_iA_ic_i] (two clients, d = 2)",
    "heavy_ball_symmetry": "sympy: ρ_HB(κ) = g(κ) and Δ(κ) = g(κ₀/κ) with g(r) = (√r − 1)/(√r + 1) (zero residuals), "
                           "so (ρ, Δ) ↦ (Δ, ρ) is κ ↦ κ₀/κ",
    "fig2_order": "sympy: (κ+1)² − (3κ+1) = κ(κ−1) and (3κ+1) − (√κ+1)² = 2√κ(√κ−1), so ρ_HB < ρ_N < ρ_GD for every "
                  "κ > 1",
}


#: Table 1's (and Appendix A's) negative control: the same comparison with one local step too many on the
#: driver's side (an off-by-one in K, which changes every iterate: one more gradient, or mini-batch draw, per client)
_TABLE1_CONTROL = Control("extra-local-step", "the driver run with K(Θ) + 1 local steps (the last weight repeated) "
                          "against the literal K-step reference: an off-by-one in K, false a priori",
                          {"extra_step": True})


def _proved_if(ctx, proof: str, ok: bool, **kw):
    """``verified`` by the exact symbolic proof named in ``proof`` when ``ok`` (it counts as the claim's control:
    an exact residual could not have vanished for a false identity), else ``refuted``."""
    return ctx.proved(proof, **kw) if ok else ctx.refuted(**kw)


def _probe_phases(result) -> dict:
    """The best violation of a probe's random phase and of its optimizer, reported apart (a control that only the
    optimizer can find shows the search did more than sample)."""
    return {"probe_random_phase_worst": result.random_worst_value, "probe_optimizer_worst": result.optimized_worst_value}


def _mp_matrix(a) -> mpmath.matrix:
    return mpmath.matrix(np.asarray(a, dtype=np.float64).tolist())


def _mp_distortion(A: mpmath.matrix, alpha, gamma, theta: Theta) -> mpmath.matrix:
    """Q = Σ θ_k (I − γ(A + αI))^{k−1} by explicit matrix powers in the current mpmath precision."""
    d = A.rows
    M = mpmath.eye(d) - mpmath.mpf(gamma) * (A + mpmath.mpf(alpha) * mpmath.eye(d))
    Q, P = mpmath.zeros(d, d), mpmath.eye(d)
    for t in theta.weights:
        if t:
            Q += mpmath.mpf(float(t)) * P
        P = P * M
    return Q


def _mp_minimizers(problem, alpha, gamma, theta: Theta, dps: int = 60) -> dict:
    """x*(α,γ,Θ), x*, a, b, C in `dps`-digit arithmetic from the stored float matrices (exact inputs)."""
    with mpmath.workdps(dps):
        d = problem.d
        H, b_vec = mpmath.zeros(d, d), mpmath.zeros(d, 1)
        Hq, bq = mpmath.zeros(d, d), mpmath.zeros(d, 1)
        q_eigs = []
        for i in range(problem.n):
            A = _mp_matrix(problem.A[i])
            c = mpmath.matrix(problem.c[i].tolist())
            p = mpmath.mpf(float(problem.p[i]))
            Q = _mp_distortion(A, alpha, gamma, theta)
            H += p * A
            b_vec += p * A * c
            Hq += p * Q * A
            bq += p * Q * A * c
            q_eigs.extend(mpmath.eigsy(0.5 * (Q + Q.T))[0])
        x_tilde = mpmath.lu_solve(Hq, bq)
        x_star = mpmath.lu_solve(H, b_vec)
        C = max(mpmath.norm(mpmath.matrix(ci.tolist())) for ci in problem.c)
        return {"x_tilde": x_tilde, "x_star": x_star, "dist": mpmath.norm(x_tilde - x_star),
                "a": min(q_eigs), "b": max(q_eigs), "C": C, "Hq": Hq}


def _figure(n: int):
    """Figure n's spec from figures/localupdate.py (claims about a figure call its data function)."""
    module = load_module(FIGURES)
    return getattr(module, f"figure_{n}")


def _figure_data(n: int, seed: int = 0) -> dict:
    return _figure(n).data(FigureContext(seed=seed))


def _series_by_label(panel: dict) -> dict:
    return {s["label"]: s for s in panel["series"]}


def _xy(s: dict) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(s["x"], dtype=float), np.asarray(s["y"], dtype=float)


def _distance_to_curve(px: np.ndarray, py: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Euclidean distance from each point (px, py) to the polyline (cx, cy) (segments between consecutive points)."""
    P = np.stack([px, py], axis=1)[:, None, :]
    A = np.stack([cx[:-1], cy[:-1]], axis=1)[None]
    B = np.stack([cx[1:], cy[1:]], axis=1)[None]
    AB = B - A
    t = np.clip(np.sum((P - A) * AB, axis=2) / np.maximum(np.sum(AB * AB, axis=2), 1e-300), 0.0, 1.0)
    proj = A + t[..., None] * AB
    return np.sqrt(np.min(np.sum((P - proj) ** 2, axis=2), axis=1))


# ============================================================================================
# Section 2: the client losses
# ============================================================================================

@claim(
    id="localupdate/section-2/client-loss-is-quadratic",
    ref="Section 2",
    title="f_i(x) = E_z[½‖B_z^{1/2}(x − c_z)‖²] equals ½‖A_i^{1/2}(x − c_i)‖² up to an additive constant",
    statement=r"With $A_i:=\mathbb E_{z\sim\mathcal D_i}[B_z]$ and $c_i:=A_i^{-1}\mathbb E_{z\sim\mathcal D_i}[B_zc_z]$ (3): "
              r"\"one can show that up to some additive constant, $f_i(x)=\tfrac12\|A_i^{1/2}(x-c_i)\|^2$\".",
    kind="symbolic",
)
def client_loss(ctx):
    """Exact: a client with three equally likely examples with generic symmetric 2×2 B_z (symbols) and symbolic c_z;
    the difference is independent of x (its gradient vanishes identically)."""
    x = sp.Matrix(sp.symbols("x1:3"))
    Bs = [sym.symmetric_matrix(2, name=f"b{j}") for j in range(3)]
    cs = [sp.Matrix(sp.symbols(f"c{j}_1:3")) for j in range(3)]
    f = sum((((x - c).T * B * (x - c))[0, 0] / 2 for B, c in zip(Bs, cs)), sp.Integer(0)) / 3
    A = sum(Bs, sp.zeros(2, 2)) / 3
    b = sum((B * c for B, c in zip(Bs, cs)), sp.zeros(2, 1)) / 3
    adj, det = A.adjugate(), A.det()                       # c_i = A^{-1} b = adj(A) b / det(A)
    ci = adj * b / det
    quad = ((x - ci).T * A * (x - ci))[0, 0] / 2
    grad = [sp.simplify(sp.diff(f - quad, v)) for v in x]
    ok = all(g == 0 for g in grad)
    return _proved_if(ctx, _PROOFS["client_loss"], ok, measured={"gradient_of_difference": str(grad)}, tolerance="exact (sympy, symbolic B_z, c_z)",
                      notes="The constant is E[½c_zᵀB_zc_z] − ½c_iᵀA_ic_i. Needs A_i invertible (Assumption 1).")


# ============================================================================================
# Section 3: Theorem 1, Lemma 7, Theorem 2
# ============================================================================================

@claim(
    id="localupdate/theorem-1",
    ref="Theorem 1",
    title="ClientUpdate is, in expectation, the gradient of the surrogate loss (symbolic, every K)",
    statement=r"For all clients $i$, all $x$, $\alpha\ge0$, $\gamma\ge0$ and $\Theta\ge0$ with finite non-zero support, "
              r"$\mathbb{E}[\textsc{ClientUpdate}(i,x,\alpha,\gamma,\Theta)] = \nabla\tilde f_i(x,\alpha,\gamma,\Theta)$ with "
              r"$\tilde f_i = \tfrac12\|(Q_iA_i)^{1/2}(x-c_i)\|^2$ and $Q_i=\sum_{k=1}^{K(\Theta)}\theta_k(I-\gamma(A_i+\alpha I))^{k-1}$ "
              r"(eqs. 6–7), where $A_i=\mathbb{E}_z[B_z]$, $c_i=A_i^{-1}\mathbb{E}_z[B_zc_z]$ (eq. 3).",
    kind="symbolic",
)
def theorem_1(ctx):
    """Proof for every K: Lemma 7's step (symbolic, generic symmetric 3×3 A, with noise), g_1 = A(x − c),
    and QA symmetric; cross-checked by direct expansion (d = 2, K ≤ 3, symbolic θ) and float64 at d = 10."""
    proved = []
    if symt.lemma7_residual(3) != sp.zeros(3, 1):
        return ctx.refuted(measured={"step": "lemma 7"}, notes="Lemma 7's step residual did not expand to zero")
    proved.append("E[g_{k+1}] = (I − γ(A+αI))E[g_k], generic symmetric 3×3 A, any noise with zero mean")
    alpha, gamma = sp.symbols("alpha gamma", real=True)
    A3 = sym.symmetric_matrix(3)
    if sym.qa_asymmetry(A3, alpha, gamma, sp.symbols("theta1:5")) != sp.zeros(3, 3):
        return ctx.refuted(measured={"step": "QA symmetric"}, notes="QA − (QA)ᵀ did not expand to zero")
    proved.append("Q A symmetric (so ∇½(x−c)ᵀQA(x−c) = QA(x−c))")
    # Direct expansion as a cross-check of the induction (no use of Lemma 7).
    A = sym.symmetric_matrix(2)
    c, x = sp.symbols("c1:3", real=True), sp.symbols("x1:3", real=True)
    for K in range(1, 4 if not ctx.full else 6):
        theta = sp.symbols(f"theta1:{K + 1}", nonnegative=True)
        if sym.theorem1_residual(A, c, x, alpha, gamma, theta) != sp.zeros(2, 1):
            return ctx.refuted(measured={"K": K}, counterexample={"d": 2, "K": K}, notes="direct expansion residual ≠ 0")
        proved.append(f"direct expansion d=2 K={K}")

    # float64 at d = 10 against explicit matrix powers (the driver's stepwise path).
    rng = ctx.rng
    worst = 0.0
    for _ in range(4):
        problem = make_quadratic(4, 10, mu=0.5, L=20.0, C=3.0, weights="random", seed=rng)
        K = int(rng.integers(1, 25))
        theta = Theta(rng.uniform(0, 1, K) * (rng.uniform(size=K) < 0.7) + np.eye(K)[-1])
        alpha = float(rng.uniform(0, 3))
        gamma = float(rng.uniform(0, 1)) / (problem.L + alpha)
        x = rng.normal(size=10) * 2
        message = np.asarray(client_pseudo_gradients(problem, x, LocalUpdate(theta, alpha, gamma, ServerOpt("gd", 1.0)),
                                                     path="stepwise"))
        for i in range(problem.n):
            M = np.eye(10) - gamma * (problem.A[i] + alpha * np.eye(10))
            Q = sum(t * np.linalg.matrix_power(M, k) for k, t in enumerate(theta.weights))
            expected = Q @ problem.A[i] @ (x - problem.c[i])
            scale = np.linalg.norm(Q, 2) * np.linalg.norm(problem.A[i], 2) * np.linalg.norm(x - problem.c[i])
            worst = max(worst, np.linalg.norm(message[i] - expected) / scale)
    tol = 25 * 10 * EPS * 10
    return _proved_if(ctx, _PROOFS["theorem_1"], worst <= tol,
        measured={"symbolic_steps_proved": len(proved), "numeric_worst_relative_residual": worst},
        tolerance={"numeric_relative": tol, "why": "forward error of K ≤ 24 products with ‖I − γ(A+αI)‖ ≤ 1 at d = 10: K·d·eps, ×10"},
        notes="Proved: " + "; ".join(proved) + ". Induction: g_1 = A(x−c) (+ noise), E[g_{k+1}] = M E[g_k] ⇒ "
              "E[Σθ_k g_k] = Σθ_k M^{k−1}A(x−c) = QA(x−c) = ∇f̃_i for every K (Lemma 7 with A ← A + αI, c ← c_α, "
              "as the paper's proof).",
    )


# ---- mini-batches, exact -------------------------------------------------------------------

_EXACT_SAMPLES = [  # two clients of a least-squares federation, rational features/targets (d = 2)
    [((1, 0), 1), ((1, 2), -1), ((0, 1), 2)],
    [((2, 1), 0), ((1, -1), 1), ((1, 1), 3), ((0, 2), -2)],
]
_EXACT_P = (Fraction(1, 3), Fraction(2, 3))


def _exact_client_population(samples):
    """A_i = E[a aᵀ], E[a y] and c_i = A_i^{-1}E[a y] in exact rationals (eq. 3 for ℓ = ½(aᵀx − y)²)."""
    m = len(samples)
    A = sp.zeros(2, 2)
    b = sp.zeros(2, 1)
    for a, y in samples:
        av = sp.Matrix(a)
        A += av * av.T / m
        b += av * y / m
    return A, A.inv() * b


def _exact_expected_message(samples, x, alpha, gamma, theta, B):
    """E over all batch paths (each step: a uniform B-subset, independently) of Σθ_k g_k: exact."""
    subsets = list(itertools.combinations(range(len(samples)), B))
    total = sp.zeros(2, 1)
    for path in itertools.product(subsets, repeat=len(theta)):
        xk = x
        msg = sp.zeros(2, 1)
        for theta_k, S in zip(theta, path):
            g = sum((sp.Matrix(samples[j][0]) * (sp.Matrix(samples[j][0]).T * xk - sp.Matrix([samples[j][1]]))
                     for j in S), sp.zeros(2, 1)) / B + alpha * (xk - x)
            msg += theta_k * g
            xk = xk - gamma * g
        total += msg
    return total / len(subsets) ** len(theta)


@claim(
    id="localupdate/theorem-1/minibatch-exact",
    ref="Theorem 1",
    title="Theorem 1 with mini-batches and client sampling: exact expectation over every batch path",
    statement=r"With mini-batches $S_k$ of size $B$ drawn independently from $\mathcal D_i$ (Algorithm 2) and $M$ clients "
              r"sampled per round (Algorithm 1), $\mathbb{E}[\textsc{ClientUpdate}(i,x,\alpha,\gamma,\Theta)]=\nabla\tilde f_i$ "
              r"and $\mathbb{E}[q_t]=\nabla\tilde f(x_t,\alpha,\gamma,\Theta)$.",
    kind="symbolic",
)
def theorem_1_minibatch_exact(ctx):
    """Two least-squares clients (3 and 4 rational samples), B = 2, K = 3, rational Θ, α, γ, x; all C(m,2)^3
    batch paths and all client draws enumerated in exact rationals; the driver's ClientUpdate on each path agrees."""
    theta = [Fraction(1, 2), Fraction(0), Fraction(3, 2)]
    alpha, gamma = sp.Rational(1, 3), sp.Rational(1, 7)
    x = sp.Matrix([sp.Rational(2, 3), sp.Rational(-1, 5)])
    B = 2
    per_client = []
    for samples in _EXACT_SAMPLES:
        A, c = _exact_client_population(samples)
        mean = _exact_expected_message(samples, x, alpha, gamma, [sp.Rational(t) for t in theta], B)
        M = sp.eye(2) - gamma * (A + alpha * sp.eye(2))
        Q = sum((sp.Rational(t) * M ** k for k, t in enumerate(theta)), sp.zeros(2, 2))
        grad = Q * A * (x - c)
        if (mean - grad).applyfunc(sp.simplify) != sp.zeros(2, 1):
            return ctx.refuted(measured={"client": len(per_client)}, counterexample={"samples": str(samples)},
                               notes="exact E[ClientUpdate] differs from ∇f̃_i")
        per_client.append(mean)
    # Client sampling (Algorithm 1): with replacement, M = 2, q = ½Σ q^i; without replacement, M = 1, weight n p_i/M.
    p = [sp.Rational(f.numerator, f.denominator) for f in _EXACT_P]
    target = p[0] * per_client[0] + p[1] * per_client[1]
    with_repl = sum((p[i] * p[j] * (per_client[i] + per_client[j]) / 2 for i in range(2) for j in range(2)), sp.zeros(2, 1))
    without = sum((p[i] * 2 * per_client[i] for i in range(2)), sp.zeros(2, 1)) / 2   # each client w.p. 1/2, weight 2p_i
    ok_sampling = (with_repl - target).applyfunc(sp.simplify) == sp.zeros(2, 1) and \
        (without - target).applyfunc(sp.simplify) == sp.zeros(2, 1)
    # The driver's ClientUpdate on each batch path equals the exact path message (float64).
    fed = LeastSquaresFederation([np.array([s[0] for s in c], float) for c in _EXACT_SAMPLES],
                                 [np.array([s[1] for s in c], float) for c in _EXACT_SAMPLES], p=[1 / 3, 2 / 3])
    arrays = fed.on("numpy")
    algo = LocalUpdate(Theta([float(t) for t in theta]), float(alpha), float(gamma), ServerOpt("gd", 1.0))
    worst = 0.0
    subsets = list(itertools.combinations(range(3), B))
    for path in itertools.product(subsets, repeat=3):
        batches = np.array([[list(S), list(S)] for S in path])      # both clients use the same index pairs
        msg = _finite_sum_messages(arrays, np.array([2 / 3, -1 / 5]), algo, np.arange(2), batches,
                                   arrays["backend"])
        for i, samples in enumerate(_EXACT_SAMPLES):
            xk, ref = np.array([2 / 3, -1 / 5]), np.zeros(2)
            for t, S in zip(theta, path):
                g = sum(np.array(samples[j][0], float) * (np.dot(samples[j][0], xk) - samples[j][1]) for j in S) / B \
                    + float(alpha) * (xk - np.array([2 / 3, -1 / 5]))
                ref += float(t) * g
                xk = xk - float(gamma) * g
            worst = max(worst, float(np.max(np.abs(msg[i] - ref))))
    ok = ok_sampling and worst <= 1e-14
    return _proved_if(ctx, _PROOFS["theorem_1_minibatch_exact"], ok,
        measured={"batch_paths_per_client": [math.comb(len(s), B) ** 3 for s in _EXACT_SAMPLES],
                  "exact_mean_minus_gradient": "0 (both clients, rational)", "sampling_unbiased": ok_sampling,
                  "driver_vs_exact_path_max_abs": worst},
        tolerance={"exact": "sympy Rational, zero residual", "driver": "1e-14 absolute (O(1) numbers, K = 3 float64 steps)"},
        notes="Least squares ℓ = ½(aᵀx − y)² is the paper's f(x; z) with B_z = aaᵀ and B_z c_z = a y; A_i = E[aaᵀ] "
              "and c_i = A_i^{-1}E[a y] (eq. 3). Batches: uniform B-subsets without replacement within a step, "
              "independent across steps (the driver's sample_batches).",
    )


@claim(
    id="localupdate/theorem-1/monte-carlo",
    ref="Theorem 1",
    title="Theorem 1 on the running driver: mini-batch pseudo-gradients average to ∇f̃ (Monte Carlo, standard errors)",
    statement=r"$\mathbb{E}[q_t\mid x_t]=\nabla\tilde f(x_t,\alpha,\gamma,\Theta)$ for LocalUpdate with mini-batches of size $B$ "
              r"and $M$ sampled clients.",
    kind="simulation",
    controls=[Control("extra-local-step", "E[q_t] compared with ∇f̃ for Θ extended by one step (θ_5 = 2): a "
                                          "different gradient, false a priori; the deviation is then O(γ‖A‖²‖x − "
                                          "c‖), far beyond the standard errors", {"extra_step": True})],
)
def theorem_1_monte_carlo(ctx):
    """One long run of the driver with a tiny server step: each round's q_t = (x_t − x_{t+1})/η, and the deviations
    q_t − ∇f̃(x_t) are martingale differences, so their mean is zero within standard errors (z-test, Bonferroni)."""
    rng = ctx.rng
    fed = LeastSquaresFederation.random(5, [8, 10, 12, 9, 15], 3, noise=0.3, seed=rng)
    quad = fed.to_quadratic()
    theta = Theta([0.5, 1.0, 0.0, 2.0])
    alpha, gamma = 0.4, 0.5 / (quad.L + 0.4)
    eta = 1e-3
    rounds = 3000 if not ctx.full else 30000
    z_max = 0.0
    results = {}
    for scheme, M in (("with_replacement", 3), ("without_replacement", 2)):
        algo = LocalUpdate(theta, alpha, gamma, ServerOpt("gd", lr=eta))
        h = run_local_update(fed, algo, rng.normal(size=3), rounds, batch_size=3, clients_per_round=M,
                             client_sampling=scheme, seed=rng).to_numpy()
        q = (h.x[:-1] - h.x[1:]) / eta
        # control: ∇f̃ with one more local step (Θ extended by θ_K), which E[q_t] is not
        reference = Theta(np.r_[theta.weights, theta.weights[-1]]) if ctx.param("extra_step", False) else theta
        dev = q - surrogate_grad(quad, h.x[:-1], alpha, gamma, reference)
        mean, se = dev.mean(axis=0), dev.std(axis=0, ddof=1) / math.sqrt(rounds)
        z = np.abs(mean) / se
        z_max = max(z_max, float(z.max()))
        results[scheme] = {"mean_deviation": mean.tolist(), "standard_error": se.tolist(), "z": z.tolist()}
    threshold = 4.0    # 6 coordinates, Bonferroni at 1e-3: |z| ≤ 4 with probability ≈ 0.9996
    return ctx.decide(
        z_max <= threshold,
        measured={"max_abs_z": z_max, "rounds": rounds, **results},
        tolerance={"z": threshold, "why": "two-sided z-test on 6 coordinates, Bonferroni, false-alarm ≈ 4e-4"},
        notes="q_t recovered as (x_t − x_{t+1})/η from the driver's own iterates (η = 1e-3, rounding ≲ 1e-13 relative). "
              "Least-squares federation, B = 3, Θ = (½, 1, 0, 2), α = 0.4, γ = ½/(L + α).",
    )


@claim(
    id="localupdate/lemma-7",
    ref="Lemma 7",
    title="Stochastic local steps on a quadratic: E[g_{k+1}] = (I − γA)E[g_k]",
    statement=r"For $h(x)=\frac12\|A^{1/2}(x-c)\|^2$, $A\succ0$, independent $g_k$ with $\mathbb{E}[g_k]=\nabla h(x_k)$ and "
              r"$x_{k+1}=x_k-\gamma g_k$: $\mathbb{E}[g_{k+1}]=(I-\gamma A)\mathbb{E}[g_k]$ (20) and "
              r"$\mathbb{E}[g_k]=(I-\gamma A)^{k-1}A(x_1-c)$ (21).",
    kind="symbolic",
)
def lemma_7(ctx):
    """Symbolic: g_{k+1} − (I − γA)g_k is a zero-mean noise difference (generic symmetric 3×3 A, α = 0 and α ≠ 0);
    exact enumeration of E[g_k] for k ≤ 3 on a rational mini-batch client."""
    if symt.lemma7_residual(3) != sp.zeros(3, 1):
        return ctx.refuted(notes="symbolic residual ≠ 0")
    samples = _EXACT_SAMPLES[0]
    A, c = _exact_client_population(samples)
    gamma = sp.Rational(1, 5)
    x1 = sp.Matrix([1, -2])
    subsets = list(itertools.combinations(range(3), 2))
    ok = True
    for k in range(1, 4):
        total = sp.zeros(2, 1)
        for path in itertools.product(subsets, repeat=k):
            xk = x1
            for step, S in enumerate(path):
                g = sum((sp.Matrix(samples[j][0]) * (sp.Matrix(samples[j][0]).T * xk - sp.Matrix([samples[j][1]]))
                         for j in S), sp.zeros(2, 1)) / 2
                if step < k - 1:
                    xk = xk - gamma * g
            total += g
        mean = total / len(subsets) ** k
        ok &= (mean - (sp.eye(2) - gamma * A) ** (k - 1) * A * (x1 - c)).applyfunc(sp.simplify) == sp.zeros(2, 1)
    return _proved_if(ctx, _PROOFS["lemma_7"], ok, measured={"symbolic_step": "0", "exact_E_g_k_for_k_le_3": ok},
                      tolerance="exact (sympy)",
                      notes="The noise enters linearly, so the residual's expectation vanishes by linearity for any "
                            "zero-mean, independent noise; (21) follows by induction from E[g_1] = A(x_1 − c).")


@claim(
    id="localupdate/theorem-2",
    ref="Theorem 2",
    title="MAML with full-batch inner steps is LocalUpdate with Θ_{2K+1}",
    statement=r"If $X_K^i(x)$ runs $K$ steps of gradient descent on $\mathcal D_i$ with rate $\gamma$ from $x$, then "
              r"$\nabla m_K^i(x)=\nabla_x\tilde f_i(x,0,\gamma,\Theta_{2K+1})$, $m_K^i(x)=f_i(X_K^i(x))$.",
    kind="symbolic",
)
def theorem_2(ctx):
    """sympy differentiates f(X_{K+1}(x)) through the inner steps (d = 1, K ≤ 4; generic symmetric 2×2, K ≤ 2)
    and compares with ∇f̃(Θ_{2K+1}); then the library's MAML (closed-form reverse recursion, and torch autograd
    when available) against the dense Jacobian product at d = 8, K up to 60, and on the driver."""
    cases = [(1, K) for K in range(0, 5)] + [(2, K) for K in range(0, 3 if not ctx.full else 4)]
    for d, K in cases:
        if symt.maml_theorem2_residual(d, K) != sp.zeros(d, 1):
            return ctx.refuted(measured={"d": d, "K": K}, counterexample={"d": d, "K": K}, notes="symbolic residual ≠ 0")
    rng = ctx.rng
    worst, worst_autograd = 0.0, 0.0
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    for K in (1, 7, 60):
        problem = make_quadratic(3, 8, mu=1.0, L=50.0, weights="random", seed=rng)
        gamma = float(rng.uniform(0.1, 1.0)) / problem.L
        x = rng.normal(size=8) * 3
        algo = MAML(K, gamma, ServerOpt("gd", 1.0))
        ref = client_pseudo_gradients(problem, x, LocalUpdate(Theta.last(2 * K + 1), 0.0, gamma, algo.server))
        scale = problem.L * np.linalg.norm(x[None] - problem.c, axis=1)[:, None]
        worst = max(worst, float(np.max(np.abs(maml_messages(problem, x, algo) - ref) / scale)))
        if have_torch:
            worst_autograd = max(worst_autograd, float(np.max(np.abs(maml_messages(problem, x, algo, method="autograd")
                                                                    - ref) / scale)))
    tol = 2 * 60 * 8 * EPS * 10
    ok = worst <= tol and worst_autograd <= tol
    return _proved_if(ctx, _PROOFS["theorem_2"], ok,
        measured={"symbolic_cases": len(cases), "closed_form_worst_relative": worst,
                  "autograd_worst_relative": worst_autograd if have_torch else "torch not installed"},
        tolerance={"relative": tol, "why": "2K steps of d×d products with ‖I − γA‖ ≤ 1 (K ≤ 60, d = 8): 2K·d·eps, ×10"},
        notes="The symbolic side writes no chain rule: X_{K+1}(x) is built as an expression and differentiated. "
              "The paper's proof has an exponent typo in (28) ((I−γA)^{K−1} for (I−γA)^K); the statement holds.",
    )


@claim(
    id="localupdate/section-3/maml-proximal-analogue",
    ref="Section 3",
    title="MAML with proximal inner steps is LocalUpdate with Θ' = coefficients of (m^K + γαΣ_{j<K} m^j)²",
    statement=r"\"An analogous result holds if the clients perform proximal updates ($\alpha>0$)\": with "
              r"$X_{k+1}=X_k-\gamma(\nabla f_i(X_k)+\alpha(X_k-x))$, $\nabla m_K^i(x)=\nabla\tilde f_i(x,\alpha,\gamma,\Theta')$ "
              r"for the non-negative $\Theta'$ with $\sum_k\theta'_k m^{k-1}=(m^K+\gamma\alpha\sum_{j<K}m^j)^2$.",
    kind="symbolic",
)
def maml_proximal(ctx):
    """The paper gives no Θ'; the one derived here (J_{K+1} = p(M), p(m) = m^K + γαΣ_{j<K}m^j, because the anchor x
    is differentiated too) is proved symbolically with symbolic α and checked numerically at d = 6."""
    alpha = sp.Symbol("alpha", positive=True)
    cases = [(1, K) for K in range(1, 4)] + [(2, 1), (2, 2)]
    for d, K in cases:
        if symt.maml_theorem2_residual(d, K, alpha) != sp.zeros(d, 1):
            return ctx.refuted(measured={"d": d, "K": K}, notes="symbolic residual ≠ 0")
    rng = ctx.rng
    worst = 0.0
    for K in (2, 9):
        problem = make_quadratic(3, 6, mu=1.0, L=20.0, weights="random", seed=rng)
        a = float(rng.uniform(0.1, 5))
        gamma = float(rng.uniform(0.1, 1.0)) / (problem.L + a)
        x = rng.normal(size=6)
        algo = MAML(K, gamma, ServerOpt("gd", 1.0), alpha=a)
        ref = client_pseudo_gradients(problem, x, LocalUpdate(maml_theta(K, gamma, a), a, gamma, algo.server),
                                      path="stepwise")
        scale = (problem.L + a) * np.linalg.norm(x[None] - problem.c, axis=1)[:, None]
        worst = max(worst, float(np.max(np.abs(maml_messages(problem, x, algo) - ref) / scale)))
    tol = 2 * 9 * 6 * EPS * 10
    return _proved_if(ctx, _PROOFS["maml_proximal"], worst <= tol, measured={"symbolic_cases": len(cases), "numeric_worst_relative": worst},
                      tolerance={"relative": tol},
                      notes="Reconstruction of the paper's unstated analogue. With the anchor held fixed (a stop-gradient) "
                            "one gets instead the coefficients of m^K(m^K + γαΣ_{j<K}m^j), also non-negative.")


@claim(
    id="localupdate/section-3/maml-not-localupdate-with-minibatches",
    ref="Section 3",
    title="With mini-batches, MAML is not LocalUpdate in expectation",
    statement=r"\"While MAML is not a special case of LocalUpdate, [...] if the clients use gradient descent, MAML is "
              r"equivalent in expectation to LocalUpdate with $\Theta=\Theta_{2K+1}$\": with mini-batch inner steps the "
              r"expected MAML message is not $\nabla\tilde f_i(x,0,\gamma,\Theta)$ for any $\Theta$.",
    kind="symbolic",
)
def maml_minibatch(ctx):
    """Exact rational enumeration: one least-squares client, B = 1, K = 1, fresh outer sample. E[message] = G(x − c')
    with G not commuting with A, so G ≠ Q(A)A for every Θ (Q(A) commutes with A)."""
    samples = [((1, 0), 1), ((1, 2), 0), ((0, 1), -1)]
    A, c = _exact_client_population(samples)
    gamma = sp.Rational(1, 4)
    xs = sp.symbols("x1:3")
    x = sp.Matrix(xs)
    total = sp.zeros(2, 1)
    for j in range(3):                               # inner batch S_1 = {j}; the outer gradient's expectation is ∇f_i
        aj = sp.Matrix(samples[j][0])
        Hj = aj * aj.T
        X2 = x - gamma * (aj * (aj.T * x - sp.Matrix([samples[j][1]])))
        total += (sp.eye(2) - gamma * Hj).T * (A * (X2 - c))
    mean = (total / 3).applyfunc(sp.expand)
    G = mean.jacobian(x)
    commutator = (G * A - A * G).applyfunc(sp.simplify)
    theta3 = (sp.eye(2) - gamma * A) ** 2 * A
    differs = (G - theta3).applyfunc(sp.simplify) != sp.zeros(2, 2)
    ok = commutator != sp.zeros(2, 2) and differs
    # And the library's MAML (exact gradients through the inner step) agrees with this enumeration.
    fed = LeastSquaresFederation([np.array([s[0] for s in samples], float)], [np.array([s[1] for s in samples], float)])
    xnum = np.array([0.3, -0.7])
    lib = np.mean([maml_messages(fed, xnum, MAML(1, 0.25, ServerOpt("gd", 1.0), outer="full"),
                                 inner_batches=np.array([[[j]]]))[0] for j in range(3)], axis=0)
    exact = np.array([float(v) for v in mean.subs({xs[0]: sp.Rational(3, 10), xs[1]: sp.Rational(-7, 10)})])
    lib_err = float(np.max(np.abs(lib - exact)))
    ok = ok and lib_err <= 1e-14
    return _proved_if(ctx, _PROOFS["maml_minibatch"], ok, measured={"E_message_jacobian": str(G.tolist()), "commutator_GA_minus_AG": str(commutator.tolist()),
                                    "library_vs_exact": lib_err},
                      tolerance="exact (sympy Rational); library 1e-14",
                      notes="E[(I − γH_S)ᵀ A (X_2 − c)] involves E[(I − γH_S)²]-type terms that are not polynomials in "
                            "A = E[H_S]; a LocalUpdate message Q(A)A(x − c) always commutes with A.")


# ============================================================================================
# Section 4.1: Lemma 1 (and Lemmas 8–10), Lemmas 2–4, condition numbers
# ============================================================================================

def _lemma1_min_q(lam, alpha, gamma, theta: Theta, dps: int = 50) -> mpmath.mpf:
    """min_j Σ_k θ_k (1 − γ(λ_j + α))^{k−1} in high precision (no under/overflow, exact signs)."""
    with mpmath.workdps(dps):
        values = []
        for lj in np.ravel(lam):
            m = 1 - mpmath.mpf(gamma) * (mpmath.mpf(float(lj)) + mpmath.mpf(alpha))
            if theta.kind == "uniform":
                values.append(mpmath.mpf(theta.K) if m == 1 else (1 - m ** theta.K) / (1 - m))
            elif theta.kind == "last":
                values.append(m ** (theta.K - 1))
            else:
                values.append(mpmath.polyval([mpmath.mpf(float(t)) for t in theta.weights[::-1]], m))
        return min(values)


@claim(
    id="localupdate/lemma-1",
    ref="Lemma 1",
    title="γ < 1/(L+α) makes every distortion matrix positive definite and f̃ strongly convex",
    statement=r"Under Assumption 1, if $\gamma<(L+\alpha)^{-1}$ then for all $i$, $Q_i(\alpha,\gamma,\Theta)\succ0$ and "
              r"$\tilde f(x,\alpha,\gamma,\Theta)$ is strongly convex (any $\alpha\ge0$, $\gamma\ge0$, $\Theta\ge0$ with finite non-zero support).",
    kind="probe",
    controls=[Control('q-floor-1e-3', "Q_i ⪰ 10⁻³·w(Θ)·I claimed (a uniform positive floor): false a priori, min q/w "
                                      "→ 0 as γ → 1/(L+α) with Θ = (θ₁, θ₂), θ₁ → 0 (q(L) = θ₁ + θ₂(1 − γ(L+α))) Run "
                                      "with the check's plain random sampling off: the probe's random phase stays on "
                                      "the true side (min q/w ≈ 1e-2), only its optimizer crosses (≈ 2e-5) — a probe "
                                      "that stopped sampling early would miss it.",
                                      {'q_floor': 0.001, 'plain_sampling': False})],
)
def lemma_1(ctx):
    """Random sampling and an adversarial probe over (Θ, α, γ, spectra, rotations, weights).

    Q_i = U_i diag(q(λ_ij)) U_iᵀ exactly, so Q_i ≻ 0 ⟺ min_j q(λ_ij) > 0; the sign is decided in
    50-digit arithmetic from the exact eigenvalues (float64 underflows q for K ~ 10⁶).
    """
    rng = ctx.rng
    n_samples = (400 if ctx.full else 100) if ctx.param("plain_sampling", True) else 0
    floor = ctx.param("q_floor", 0.0)          # a control's claimed lower bound on min q / w(Θ)
    worst_min_q = mpmath.inf
    worst_hessian_ratio = np.inf
    for _ in range(n_samples):
        d = int(rng.integers(2, 6))
        mu = float(10 ** rng.uniform(-2, 0))
        L = mu * float(10 ** rng.uniform(0, 3))
        kind = rng.choice(["uniform", "last", "general"])
        K = int(10 ** rng.uniform(0, 6)) if kind != "general" else int(rng.integers(1, 40))
        theta = {"uniform": lambda: Theta.uniform(K), "last": lambda: Theta.last(K),
                 "general": lambda: Theta(rng.exponential(size=K) * (rng.uniform(size=K) < 0.5) + np.eye(K)[-1])}[kind]()
        alpha = float(rng.choice([0.0, 10 ** rng.uniform(-3, 1)]))
        gamma = (1 - float(10 ** rng.uniform(-12, 0))) / (L + alpha)  # often within 1e-12 of the bound
        problem = make_quadratic(int(rng.integers(1, 5)), d, mu=mu, L=L, weights="random", seed=rng)
        min_q = _lemma1_min_q(problem.eigvals, alpha, gamma, theta)
        worst_min_q = min(worst_min_q, min_q / theta.w)
        # Strong convexity of f̃ in float64: by Weyl, λ_min(Σp_iQ_iA_i) ≥ Σ_i p_i min_j q(λ_ij)λ_ij =: lb, checked
        # where lb is above eigvalsh's resolution; below it, positivity rests on the exact min_q above.
        H = surrogate_hessian(problem, alpha, gamma, theta)
        ev = np.linalg.eigvalsh(H)
        qlam = np.asarray(distortion_eigenvalues(problem.eigvals, alpha, gamma, theta)) * problem.eigvals
        lb = float(np.dot(problem.p, qlam.min(axis=1)))
        resolution = 16 * problem.d * EPS * ev[-1]
        if lb > 1e3 * resolution:
            worst_hessian_ratio = min(worst_hessian_ratio, (ev[0] + resolution) / lb)
        if min_q <= floor * theta.w:
            return ctx.refuted(measured={"min_q": float(min_q)},
                               counterexample={"problem": problem.to_json(), "alpha": alpha, "gamma": gamma,
                                               "theta": theta.weights.tolist()})

    def violation(inst):
        th = Theta(inst["theta"])
        return -float(_lemma1_min_q(np.asarray(inst["lam"]), inst["alpha"], inst["gamma"], th, dps=30)) / th.w

    def decode(z):
        raw = Product(theta=NonnegWeights(8), alpha=Box(0.0, 10.0), frac=Box(0.0, 1.0, open_hi=True),
                      lam=Custom(4, lambda u: np.sort(1 + 99 * (1 + np.sin(u)) / 2))).decode(z)
        lam = raw["lam"]
        lam[0], lam[-1] = 1.0, 100.0  # μ = 1 and L = 100 attained
        return {"theta": raw["theta"], "alpha": raw["alpha"], "gamma": raw["frac"] / (100.0 + raw["alpha"]), "lam": lam}

    param = Custom(14, decode, sample=lambda r: r.normal(size=14) * 2)
    result = probe(violation, param, seed=rng, n_random=48 if not ctx.full else 256, n_starts=4 if not ctx.full else 8,
                   maxiter=60 if not ctx.full else 300, target=0.0, options=_FEV[ctx.full])
    probe_worst = -result.worst_value
    ok = worst_min_q > floor and probe_worst > floor and worst_hessian_ratio >= 1
    return ctx.decide(
        ok,
        measured={"random_min_q_over_w": mpmath.nstr(worst_min_q, 6), "probe_min_q_over_w": probe_worst,
                  "min_hessian_eig_over_weyl_bound": float(worst_hessian_ratio), "probe_evaluations": result.n_evaluations,
                  **_probe_phases(result)},
        tolerance={"sign": "decided in 50-digit arithmetic (30 in the probe), strict > 0",
                   "hessian": "λ_min(∇²f̃) + 16·d·eps·‖∇²f̃‖ ≥ Weyl bound Σp_i min_j q(λ_ij)λ_ij where that bound "
                              "exceeds 10³× the eigvalsh resolution"},
        counterexample=None if ok else {"probe": result.to_json()},
        notes="Q_i is diagonal in A_i's eigenbasis with entries q(λ)=Σθ_k m^{k−1}, m=1−γ(λ+α)∈(0,1] under the hypothesis. "
              "K log-uniform up to 10⁶ for Θ_{1:K} and Θ_K; γ within 1e-12 of 1/(L+α). At γ = 1/(L+α) the conclusion "
              "fails (Θ_2: q(L) = 0), so the strict hypothesis is needed.",
    )


@claim(
    id="localupdate/lemma-8",
    ref="Lemma 8",
    title="E[λ_min(B)] I ⪯ E[B] ⪯ E[λ_max(B)] I for random symmetric B",
    statement=r"For a random symmetric $B\in\mathbb R^{d\times d}$ with finite $\mathbb E[B]$, "
              r"$\tau_1 I\preceq\mathbb E[B]\preceq\tau_2I$ with $\tau_1=\mathbb E[\lambda_{\min}(B)]$, $\tau_2=\mathbb E[\lambda_{\max}(B)]$.",
    kind="probe",
    controls=[Control('bound-tightened-0.015', "E[B] ⪯ (τ₂ − 0.015(τ₂ − τ₁))I claimed: false a priori, commuting B's "
                                               "with aligned top eigenvectors attain λ_max(E B) = τ₂ Run with the "
                                               "check's plain random sampling off: the probe's random phase stays on "
                                               "the true side (slack ≈ −0.023), only its optimizer crosses (≈ "
                                               "−0.010) — a probe that stopped sampling early would miss it.",
                                               {'margin': 0.015, 'plain_sampling': False})],
)
def lemma_8(ctx):
    """Discrete distributions of symmetric (indefinite) matrices, unequal weights, d ∈ 2..6; random and probe
    maximize (λ_max(E B) − τ₂)/(τ₂ − τ₁) and (τ₁ − λ_min(E B))/(τ₂ − τ₁)."""
    rng = ctx.rng

    def violation(inst):
        Bs, p = inst
        ev = np.linalg.eigvalsh(Bs)
        t1, t2 = float(p @ ev[:, 0]), float(p @ ev[:, -1])
        e = np.linalg.eigvalsh(np.einsum("n,nij->ij", p, Bs))
        return max(e[-1] - t2, t1 - e[0]) / max(t2 - t1, 1e-300)

    def decode(z):
        n, d = 4, 3
        S = z[: n * d * d].reshape(n, d, d)
        Bs = (S + np.swapaxes(S, 1, 2)) * np.exp(z[n * d * d: n * d * d + n])[:, None, None]
        w = np.exp(z[-n:] - z[-n:].max())
        return Bs, w / w.sum()

    worst = -np.inf
    for _ in range((200 if not ctx.full else 2000) if ctx.param("plain_sampling", True) else 0):
        n, d = int(rng.integers(1, 6)), int(rng.integers(2, 7))
        S = rng.normal(size=(n, d, d)) * np.exp(rng.normal(size=(n, 1, 1)) * 2)
        worst = max(worst, violation((S + np.swapaxes(S, 1, 2), rng.dirichlet(np.ones(n) * 0.5) + 1e-12)))
    result = probe(violation, Custom(4 * 9 + 4 + 4, decode), seed=rng, n_random=32, n_starts=2 if not ctx.full else 6,
                   maxiter=80 if not ctx.full else 400, options=_FEV[ctx.full])
    worst = max(worst, result.worst_value)
    tol = 64 * EPS - ctx.param("margin", 0.0)       # a control's tightened bound
    return ctx.decide(worst <= tol, measured={"worst_violation_relative": worst, "probe_worst": result.worst_value,
                                              **_probe_phases(result)},
                      tolerance={"relative": tol, "why": "eigvalsh backward error ~d·eps·‖B‖ on each side"},
                      notes="vᵀE[B]v = E[vᵀBv] ∈ [E λ_min, E λ_max] for unit v (Rayleigh). Zero violation is attained "
                            "by commuting B's with aligned eigenvectors, so the bound is tight.")


@claim(
    id="localupdate/lemma-9",
    ref="Lemma 9",
    title="Spectra of Q_i and Q_iA_i: q(λ) and q(λ)λ at each eigenvalue λ of A_i, same multiplicities",
    statement=r"For each eigenvalue $\lambda$ of $A_i$, $Q_i(\alpha,\gamma,\Theta)$ has the eigenvalue "
              r"$\sum_k\theta_k(1-\gamma(\lambda+\alpha))^{k-1}$ (29) and $Q_iA_i$ the eigenvalue "
              r"$\sum_k\theta_k(1-\gamma(\lambda+\alpha))^{k-1}\lambda$ (30), with the multiplicity of $\lambda$.",
    kind="numeric",
    controls=[Control("exponent-k", "(29) with exponents k in place of k − 1: Σθ_k(1 − γ(λ + α))^k, off by a factor "
                                    "1 − γ(λ + α) ≠ 1 (γ > 0): false a priori", {"exponent_shift": True})],
)
def lemma_9(ctx):
    """Dense Q by explicit matrix powers (independent of the spectral code) vs the formula, with repeated eigenvalues,
    general Θ and γ also beyond 1/(L + α) (the lemma has no step-size hypothesis); eigenvectors shared."""
    rng = ctx.rng
    worst = 0.0
    for _ in range(60 if not ctx.full else 400):
        d = int(rng.integers(2, 7))
        lam = rng.uniform(0.5, 5, size=d)
        lam[: int(rng.integers(1, d))] = lam[0]                  # a repeated eigenvalue
        U, _ = np.linalg.qr(rng.normal(size=(d, d)))
        A = (U * lam) @ U.T
        K = int(rng.integers(1, 12))
        theta = Theta(rng.exponential(size=K) * (rng.uniform(size=K) < 0.7) + np.eye(K)[-1])
        alpha = float(rng.uniform(0, 2))
        gamma = float(rng.uniform(0, 2)) / (lam.max() + alpha)
        M = np.eye(d) - gamma * (A + alpha * np.eye(d))
        Q = sum(t * np.linalg.matrix_power(M, k) for k, t in enumerate(theta.weights))
        # control: the formula with exponents k instead of k − 1 (Θ shifted by one step)
        formula_theta = Theta(np.r_[0.0, theta.weights]) if ctx.param("exponent_shift", False) else theta
        q = np.asarray(distortion_eigenvalues(lam, alpha, gamma, formula_theta))
        for mat, expected in ((Q, q), (Q @ A, q * lam)):
            got = np.sort(np.linalg.eigvals(mat).real)
            scale = np.abs(expected).max() * K
            worst = max(worst, float(np.max(np.abs(got - np.sort(expected))) / scale))
        worst = max(worst, float(np.abs(Q @ U - U * q).max() / (np.abs(q).max() * K)))
    tol = 1e-10
    return ctx.decide(worst <= tol, measured={"worst_relative_error": worst}, tolerance={"relative": tol,
                      "why": "eigvals of a non-normal product Q·A perturbs eigenvalues by ~sqrt(eps)·‖·‖ at worst; "
                             "observed errors are ~1e-14"},
                      notes="Multiplicities: sorted spectra compared entrywise, with repeated λ planted.")


@claim(
    id="localupdate/lemma-10",
    ref="Lemma 10",
    title="f̃ is L̃-smooth and μ̃-strongly convex with L̃ = E λ_max(Q_iA_i), μ̃ = E λ_min(Q_iA_i)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, $\tilde f$ is $\tilde L$-smooth and $\tilde\mu$-strongly convex with "
              r"$\tilde L=\mathbb E_i[\lambda_{\max}(Q_iA_i)]$ (31), $\tilde\mu=\mathbb E_i[\lambda_{\min}(Q_iA_i)]$ (32).",
    kind="probe",
    controls=[Control('slack-tightened-1e-3', "L̃ and μ̃ claimed to bound the spectrum of ∇²f̃ with a relative "
                                              "margin 10⁻³: false, since aligned clients (a shared eigenbasis, "
                                              "each attaining μ and L on the same eigenvectors) have λ_max(∇²f̃) = "
                                              "L̃; the check evaluates one aligned instance on every run, where the "
                                              "slack is 0 > −10⁻³, so the control fires by construction at any "
                                              "seed (plain random sampling off).",
                                              {'margin': 0.001, 'plain_sampling': False})],
)
def lemma_10(ctx):
    rng = ctx.rng

    n_plain = (60 if not ctx.full else 400) if ctx.param("plain_sampling", True) else 0
    worst = max((_hessian_slack(*_random_instance(rng)) for _ in range(n_plain)), default=-np.inf)
    result = _probe_instances(lambda inst: _hessian_slack(*inst), rng, ctx)
    # an attaining instance, every run: clients sharing one eigenbasis reach μ̃ and L̃ exactly (slack 0 to
    # rounding), so a bound tightened by any margin fails here by construction, whatever the seed
    attained = _hessian_slack(*_random_instance(np.random.default_rng(20260), aligned=True))
    worst = max(worst, result.worst_value, attained)
    tol = 64 * EPS - ctx.param("margin", 0.0)       # a control's tightened bound
    return ctx.decide(worst <= tol, measured={"worst_normalized_slack": worst, "probe_worst": result.worst_value,
                                              "attaining_instance_slack": attained,
                                              "probe_evaluations": result.n_evaluations, **_probe_phases(result)},
                      tolerance={"normalized": tol, "why": "eigvalsh is backward stable: each eigenvalue is off by ≤ c·d·eps·‖H‖"},
                      notes="Slack max(λ_max(∇²f̃) − L̃, μ̃ − λ_min(∇²f̃))/L̃ ≤ 0 by Lemma 8 applied to Q_iA_i; normalized "
                            "by ‖∇²f̃‖ ≤ L̃ because μ̃ can be ~1e-12·L̃ (Θ_K with γ near 1/(L+α)), where a ratio would "
                            "measure rounding, not the lemma.")


def _hessian_slack(problem, theta, alpha, gamma) -> float:
    """max(λ_max(∇²f̃) − L̃, μ̃ − λ_min(∇²f̃)) / L̃: ≤ 0 exactly when L̃, μ̃ of (31)–(32) bound the spectrum."""
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    return max(ev[-1] - L_t, mu_t - ev[0]) / L_t


@claim(
    id="localupdate/lemma-2",
    ref="Lemma 2",
    title="cond(f̃) ≤ κ(α, γ, Θ) of eq. (9)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, then $\operatorname{cond}(\tilde f)\le\kappa(\alpha,\gamma,\Theta)="
              r"\mathbb E_i[\lambda_{\max}(Q_iA_i)]/\mathbb E_i[\lambda_{\min}(Q_iA_i)]$.",
    kind="probe",
    controls=[Control('slack-tightened-4e-4', "L̃ and μ̃ claimed to bound the spectrum of ∇²f̃ with a relative "
                                              "margin 4·10⁻⁴ (a cond(f̃) bound below κ): false, since aligned "
                                              "clients attain κ; the check evaluates one aligned (attaining) "
                                              "instance on every run, where the slack is 0 > −4·10⁻⁴, so the "
                                              "control fires by construction at any seed (plain random sampling "
                                              "off, as the probe alone need not get that close).",
                                              {'margin': 0.0004, 'plain_sampling': False})],
)
def lemma_2(ctx):
    rng = ctx.rng

    def cond_ratio(inst):
        problem, theta, alpha, gamma = inst
        kap = kappa(problem, alpha, gamma, theta)[0]
        ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
        return (ev[-1] / ev[0]) / kap if ev[-1] / ev[0] < 1e6 else np.nan

    worst, ratios, tight = -np.inf, [np.nan], [np.nan]
    for trial in range((80 if not ctx.full else 400) if ctx.param("plain_sampling", True) else 0):
        inst = _random_instance(rng, aligned=trial % 2 == 0)
        worst = max(worst, _hessian_slack(*inst))
        r = cond_ratio(inst)
        ratios.append(r)
        if trial % 2 == 0:
            tight.append(r)
    result = _probe_instances(lambda inst: _hessian_slack(*inst), rng, ctx)
    # an attaining instance, every run: clients sharing one eigenbasis reach μ̃ and L̃ exactly (slack 0 to
    # rounding), so a bound tightened by any margin fails here by construction, whatever the seed
    attained = _hessian_slack(*_random_instance(np.random.default_rng(20260), aligned=True))
    worst = max(worst, result.worst_value, attained)
    tol = 64 * EPS - ctx.param("margin", 0.0)       # a control's tightened bound
    return ctx.decide(worst <= tol, measured={"worst_normalized_slack": worst, "probe_worst": result.worst_value,
                                              "attaining_instance_slack": attained, **_probe_phases(result),
                                              "cond_over_kappa_max_where_cond_le_1e6": _nanmax_or_none(ratios),
                                              "aligned_cond_over_kappa_max": _nanmax_or_none(tight)},
                      tolerance={"normalized": tol, "why": "eigvalsh backward error ≤ c·d·eps·‖∇²f̃‖"},
                      notes="cond(f̃) ≤ L̃/μ̃ = κ because μ̃ ≤ λ_min and λ_max ≤ L̃ (checked as a normalized slack, since "
                            "μ̃ can be ~1e-12·L̃ where float64 cannot resolve cond itself). Aligned instances attain κ "
                            "(ratio 1 to rounding where cond ≤ 10⁶): the bound is tight.")


def _nanmax_or_none(values) -> float | None:
    """The largest finite value, or None when there is none (a control that skips the plain sampling)."""
    finite = [v for v in values if np.isfinite(v)]
    return float(max(finite)) if finite else None


def _uniform_check(problem, alpha, gamma, K):
    """(λ_max(∇²f̃)/φ(L), φ(μ)/λ_min(∇²f̃), κ(9)/(φ(L)/φ(μ))) for Θ_{1:K} (Lemma 3)."""
    theta = Theta.uniform(K)
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    kap = kappa(problem, alpha, gamma, theta)[0]
    pL, pmu = phi(problem.L, alpha, gamma, K), phi(problem.mu, alpha, gamma, K)
    return ev[-1] / pL, pmu / ev[0], kap / (pL / pmu)


def _last_check(problem, alpha, gamma, K):
    theta = Theta.last(K)
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    kap = kappa(problem, alpha, gamma, theta)[0]
    pL, pmu = psi(problem.L, alpha, gamma, K), psi(problem.mu, alpha, gamma, K)
    return ev[-1] / pL, pmu / ev[0], kap / kappa_bound_last(problem.mu, problem.L, alpha, gamma, K)


def _lemma34_param(last: bool) -> Custom:
    """(problem, α, γ, K): 3 clients, d = 3, L ∈ [1.5, 10³], α ∈ [0, 2L], K ∈ [1, 10⁴] (log), γ inside the lemma's regime."""
    base = quadratic_instance_param(n=3, d=3, K=1)

    def decode(z):
        problem, _, _, _ = base.decode(z[: base.size])
        L = problem.L
        alpha = 2 * L * (1 + math.sin(z[-3])) / 2
        K = int(round(10 ** (4 * (1 + math.sin(z[-2])) / 2)))
        limit = 1 / (K * L + alpha) if last else 1 / (L + alpha)
        gamma = limit * (1 + math.sin(z[-1])) / 2 * (1 - 1e-12)
        return problem, alpha, gamma, K

    return Custom(base.size + 3, decode)


def _lemma34_claim(last: bool):
    name, fn = ("psi", "ψ") if last else ("phi", "φ")
    check_fn = _last_check if last else _uniform_check

    def check(ctx):
        rng = ctx.rng
        worst = np.zeros(3)
        aligned_tight = 0.0
        for trial in range((60 if not ctx.full else 400) if ctx.param("plain_sampling", True) else 0):
            n, d = int(rng.integers(1, 4)), int(rng.integers(2, 5))
            L = float(10 ** rng.uniform(0.2, 3))
            problem = make_quadratic(n, d, mu=1.0, L=L, weights="random", commuting=trial % 2 == 0, seed=rng)
            alpha = float(rng.choice([0.0, rng.uniform(0, 2 * L)]))
            K = int(10 ** rng.uniform(0, 5))
            limit = 1 / (K * L + alpha) if last else 1 / (L + alpha)
            gamma = float(rng.uniform(0, 1)) * limit
            r = np.array(check_fn(problem, alpha, gamma, K))
            worst = np.maximum(worst, r)
            if trial % 2 == 0:
                aligned_tight = max(aligned_tight, r[2])
        param = _lemma34_param(last)
        parts = list(ctx.param("parts", (0, 1, 2)))      # a control may check the smoothness part alone
        result = probe(lambda inst: max(np.asarray(check_fn(*inst))[parts]), param, seed=rng, n_random=24 if not ctx.full else 160,
                       n_starts=2 if not ctx.full else 8, maxiter=40 if not ctx.full else 300, options=_FEV[ctx.full])
        worst_all = max(float(worst.max()), result.worst_value)
        tol = (1 + 1e-9) * (1 - ctx.param("margin", 0.0))        # a control's tightened bound
        return ctx.decide(
            worst_all <= tol,
            measured={f"lambda_max_over_{name}_L": float(worst[0]), f"{name}_mu_over_lambda_min": float(worst[1]),
                      "kappa_over_bound": float(worst[2]), "aligned_kappa_over_bound_max": aligned_tight,
                      "probe_worst": result.worst_value, "probe_evaluations": result.n_evaluations,
                      **_probe_phases(result)},
            tolerance={"ratio": tol, "why": "eigvalsh and log-space closed forms, cond(∇²f̃) ≤ 10³·K: ≲ 1e-10 relative"},
            notes=f"K up to 10⁵ (random) and 10⁴ (probe); aligned instances attain the bound (tightness is the "
                  f"separate '/tightness' claim). {fn} is increasing in λ on [μ, L] under the hypothesis (the "
                  f"'/derivative' claim).",
        )

    return check


lemma_3 = claim(
    id="localupdate/lemma-3",
    ref="Lemma 3",
    title="Θ_{1:K}: f̃ is φ(L)-smooth, φ(μ)-strongly convex and κ(α,γ,Θ_{1:K}) ≤ φ(L)/φ(μ)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, $\tilde f(x,\alpha,\gamma,\Theta_{1:K})$ is $\phi(L,\alpha,\gamma,K)$-smooth, "
              r"$\phi(\mu,\alpha,\gamma,K)$-strongly convex, and $\kappa(\alpha,\gamma,\Theta_{1:K})\le\phi(L,\alpha,\gamma,K)/"
              r"\phi(\mu,\alpha,\gamma,K)$ (11), $\phi(\lambda,\alpha,\gamma,K)=\sum_{k=1}^K(1-\gamma(\lambda+\alpha))^{k-1}\lambda$ (10).",
    kind="probe",
    controls=[Control('smoothness-tightened', "f̃ claimed (1 − 0.008)·φ(L)-smooth: false a priori, aligned clients "
                                              "(one eigenbasis, L on the same eigenvector) have λ_max(∇²f̃) = φ(L) "
                                              "exactly (Appendix B.3) Run with the check's plain random sampling "
                                              "off: the probe's random phase stays on the true side (ratio ≈ 0.984), "
                                              "only its optimizer crosses (≈ 0.998) — a probe that stopped sampling "
                                              "early would miss it.",
                                              {'margin': 0.008, 'parts': [0], 'plain_sampling': False})],
)(_lemma34_claim(last=False))

lemma_4 = claim(
    id="localupdate/lemma-4",
    ref="Lemma 4",
    title="Θ_K: f̃ is ψ(L)-smooth, ψ(μ)-strongly convex and κ(α,γ,Θ_K) ≤ ((1−γ(L+α))/(1−γ(μ+α)))^{K−1} L/μ",
    statement=r"If $\gamma<(KL+\alpha)^{-1}$, $\tilde f(x,\alpha,\gamma,\Theta_K)$ is $\psi(L,\alpha,\gamma,K)$-smooth, "
              r"$\psi(\mu,\alpha,\gamma,K)$-strongly convex and $\kappa(\alpha,\gamma,\Theta_K)\le\left(\frac{1-\gamma(L+\alpha)}"
              r"{1-\gamma(\mu+\alpha)}\right)^{K-1}\frac L\mu$ (13), $\psi(\lambda,\alpha,\gamma,K)=(1-\gamma(\lambda+\alpha))^{K-1}\lambda$ (12).",
    kind="probe",
    controls=[Control('smoothness-tightened', "f̃ claimed (1 − 0.008)·ψ(L)-smooth: false a priori, aligned clients "
                                              "(one eigenbasis, L on the same eigenvector) have λ_max(∇²f̃) = ψ(L) "
                                              "exactly (Appendix B.3) Run with the check's plain random sampling "
                                              "off: the probe's random phase stays on the true side (ratio ≈ 0.984), "
                                              "only its optimizer crosses (≈ 0.998) — a probe that stopped sampling "
                                              "early would miss it.",
                                              {'margin': 0.008, 'parts': [0], 'plain_sampling': False})],
)(_lemma34_claim(last=True))


@claim(
    id="localupdate/lemma-3/as-printed-typo",
    ref="Lemma 3",
    title="Lemma 3 as printed (typo): cond(f̃(Θ_{1:K})) ≤ κ(α, γ, Θ_K) — Θ_K is a typo for Θ_{1:K}",
    statement=r"As printed: if $\gamma<(L+\alpha)^{-1}$, $\operatorname{cond}(\tilde f(x,\alpha,\gamma,\Theta_{1:K}))\le"
              r"\kappa(\alpha,\gamma,\Theta_K)$. The intended reading ($\Theta_{1:K}$ on both sides) is localupdate/lemma-3.",
    kind="numeric",
    expect="refuted",
    typo=True,
)
def lemma_3_as_printed(ctx):
    """One client with A = diag(L, μ): cond(f̃(Θ_{1:K})) = φ(L)/φ(μ) > ψ(L)/ψ(μ) = κ(α,γ,Θ_K) for K ≥ 2, γ > 0."""
    problem = QuadraticFederation(A=[[[10.0, 0.0], [0.0, 1.0]]], c=[[0.0, 0.0]], p=[1.0])
    alpha, gamma, K = 0.0, 0.05, 5
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, Theta.uniform(K)))
    kap_last = kappa(problem, alpha, gamma, Theta.last(K))[0]
    ratio = (ev[-1] / ev[0]) / kap_last
    cex = _instance_json(problem, Theta.uniform(K), alpha, gamma, K=K)
    return ctx.decide(ratio <= 1, measured={"cond_over_kappa_theta_K": float(ratio)}, counterexample=cex,
                      notes="A typo, not an error: the proof derives κ(α,γ,Θ_{1:K}) ≤ φ(L)/φ(μ) (verified in "
                            "localupdate/lemma-3). Since (ξ_L/ξ_μ)^{k−1} is decreasing in k, φ(L)/φ(μ) > ψ(L)/ψ(μ) "
                            "whenever K ≥ 2, γ > 0, L > μ.")


@lemma_3_as_printed.replayer
def _(cex, ctx):
    """Rebuild the stored instance and recompute both sides in 50 digits: cond(Σp_iQ_iA_i) for Θ_{1:K} and κ of
    eq. (9) for Θ_K, from explicit matrix powers of the stored A_i."""
    problem, _, alpha, gamma = _instance_from_json(cex)
    K = int(cex["K"])
    with mpmath.workdps(50):
        def hessian(theta):
            H = mpmath.zeros(problem.d, problem.d)
            q_lam = []
            for i in range(problem.n):
                A = _mp_matrix(problem.A[i])
                QA = _mp_distortion(A, alpha, gamma, theta) * A
                H += mpmath.mpf(float(problem.p[i])) * QA
                ev = mpmath.eigsy(0.5 * (QA + QA.T))[0]
                q_lam.append((max(ev), min(ev)))
            return H, q_lam

        H, _ = hessian(Theta.uniform(K))
        ev = mpmath.eigsy(0.5 * (H + H.T))[0]
        _, q_lam = hessian(Theta.last(K))
        p = [mpmath.mpf(float(v)) for v in problem.p]
        kap_last = sum(pi * hi for pi, (hi, _) in zip(p, q_lam)) / sum(pi * lo for pi, (_, lo) in zip(p, q_lam))
        ratio = (max(ev) / min(ev)) / kap_last
    return ctx.decide(ratio <= 1, measured={"cond_over_kappa_theta_K_50_digits": float(ratio)},
                      notes="replayed in 50-digit arithmetic from the stored matrices (Q by explicit matrix powers)")


def _tightness_claim(last: bool):
    def check(ctx):
        rng = ctx.rng
        worst = 0.0
        for _ in range(200 if not ctx.full else 2000):
            L = float(10 ** rng.uniform(0.05, 4))
            alpha = float(rng.choice([0.0, rng.uniform(0, 3 * L)]))
            K = int(10 ** rng.uniform(0, 6))
            limit = 1 / (K * L + alpha) if last else 1 / (L + alpha)
            gamma = float(rng.uniform(0, 1)) * limit
            problem = QuadraticFederation(A=[[[L, 0.0], [0.0, 1.0]]], c=[[0.0, 0.0]], p=[1.0])
            theta = Theta.last(K) if last else Theta.uniform(K)
            ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
            # controls: Lemma 3's bound at K + 1; for Θ_K, Lemma 3's bound φ(L)/φ(μ) in place of ψ(L)/ψ(μ)
            Kb = K + ctx.param("k_offset", 0)
            last_bound = last and not ctx.param("uniform_bound", False)
            bound = kappa_bound_last(1.0, L, alpha, gamma, Kb) if last_bound else kappa_bound_uniform(1.0, L, alpha, gamma, Kb)
            worst = max(worst, abs((ev[-1] / ev[0]) / bound - 1))
        tol = 1e-12
        return ctx.decide(worst <= tol, measured={"max_relative_gap": worst}, tolerance={"relative": tol},
                          notes="Appendix B.3's instance: one client, one example, B_z = diag(L, μ), c_z = 0 (μ = 1). "
                                "The printed ratios 'φ(L)/φ(L)' and 'ψ(L)/ψ(L)' are typos for φ(L)/φ(μ), ψ(L)/ψ(μ).")
    return check


lemma_3_tightness = claim(
    id="localupdate/lemma-3/tightness", ref="Lemma 3",
    title="Lemma 3 is tight: A = diag(L, μ) attains cond(f̃) = φ(L)/φ(μ) (Appendix B.3)",
    statement=r"For one client with $A=\operatorname{diag}(L,\mu)$, $c=0$ and $\gamma<(L+\alpha)^{-1}$: "
              r"$\operatorname{cond}(\tilde f(\alpha,\gamma,\Theta_{1:K}))=\phi(L,\alpha,\gamma,K)/\phi(\mu,\alpha,\gamma,K)$.",
    kind="numeric",
    controls=[Control("bound-at-k-plus-1", "cond(f̃) at K equated with the bound at K + 1: false a priori, the bound "
                                           "is strictly decreasing in K for γ > 0 (the proofs of Lemmas 3 and 4)",
                                           {"k_offset": 1})])(_tightness_claim(False))

lemma_4_tightness = claim(
    id="localupdate/lemma-4/tightness", ref="Lemma 4",
    title="Lemma 4 is tight: A = diag(L, μ) attains cond(f̃) = ψ(L)/ψ(μ) (Appendix B.3)",
    statement=r"For one client with $A=\operatorname{diag}(L,\mu)$, $c=0$ and $\gamma<(KL+\alpha)^{-1}$: "
              r"$\operatorname{cond}(\tilde f(\alpha,\gamma,\Theta_K))=\psi(L,\alpha,\gamma,K)/\psi(\mu,\alpha,\gamma,K)$.",
    kind="numeric",
    controls=[Control("lemma-3-bound", "cond(f̃(Θ_K)) equated with Lemma 3's φ(L)/φ(μ): false a priori for K ≥ 2, "
                      "γ > 0, L > μ (φ(L)/φ(μ) > ψ(L)/ψ(μ), as for the typo of Lemma 3)",
                      {"uniform_bound": True})])(_tightness_claim(True))


@claim(
    id="localupdate/lemma-3/derivative",
    ref="Lemma 3",
    title="Eq. (33) and the derivative identity in Lemma 3's proof (symbolic K); φ increasing on [μ, L]",
    statement=r"For $\gamma(L+\alpha)<1$: $\phi(\lambda,\alpha,\gamma,K)=\frac{1-(1-\gamma(\lambda+\alpha))^K}{\gamma}"
              r"\frac{\lambda}{\lambda+\alpha}$ (33) and $\gamma(\lambda+\alpha)g'(\lambda)=K\lambda\gamma\xi^{K-1}+(1-\xi^K)"
              r"\frac{\alpha}{\lambda+\alpha}\ge0$, $\xi=1-\gamma(\lambda+\alpha)$.",
    kind="symbolic",
)
def lemma_3_derivative(ctx):
    r1, r2 = symt.phi_closed_form_residual(), symt.phi_derivative_residual()
    return _proved_if(ctx, _PROOFS["lemma_3_derivative"], r1 == 0 and r2 == 0, measured={"eq33_residual": str(r1), "derivative_residual": str(r2)},
                      tolerance="exact (sympy, symbolic K)",
                      notes="With ξ ∈ [0, 1) both terms of the right-hand side are ≥ 0, so g' ≥ 0 on [μ, L].")


@claim(
    id="localupdate/lemma-4/derivative",
    ref="Lemma 4",
    title="ψ'(λ) = ζ^{K−2}(1 − γ(Kλ + α)) (symbolic K): ψ increasing on [μ, L] iff γ ≤ 1/(KL + α)",
    statement=r"For $h(\lambda)=\psi(\lambda,\alpha,\gamma,K)$ and $\zeta=1-\gamma(\lambda+\alpha)$: "
              r"$h'(\lambda)=\zeta^{K-2}(1-\gamma(K\lambda+\alpha))$, so $h'\ge0$ on $[\mu,L]$ when $\gamma<(KL+\alpha)^{-1}$.",
    kind="symbolic",
)
def lemma_4_derivative(ctx):
    r = symt.psi_derivative_residual()
    return _proved_if(ctx, _PROOFS["lemma_4_derivative"], r == 0, measured={"derivative_residual": str(r)}, tolerance="exact (sympy, symbolic K)",
                      notes="For γ > 1/(KL + α) the factor 1 − γ(Kλ + α) changes sign inside [μ, L], so ψ has an interior "
                            "maximum (see localupdate/section-4.1/theta-k-beyond-threshold).")


@claim(
    id="localupdate/lemma-6",
    ref="Lemma 6",
    title="cond(Q_i) ≤ κ₀/κ(α, γ, Θ) for Θ_{1:K} (γ < 1/(L+α)) and Θ_K (γ < 1/(KL+α))",
    statement=r"If (I) $\gamma<(L+\alpha)^{-1}$, $\Theta=\Theta_{1:K}$ or (II) $\gamma<(KL+\alpha)^{-1}$, $\Theta=\Theta_K$, "
              r"then for all $i$, $\operatorname{cond}(Q_i(\alpha,\gamma,\Theta))\le\kappa_0\kappa(\alpha,\gamma,\Theta)^{-1}$, "
              r"$\kappa_0=L/\mu$.",
    kind="probe",
    controls=[Control("bound-tightened-1pc", "cond(Q_i) ≤ 0.99·κ₀/κ claimed: false a priori, with K = 1 (or γ → 0) "
                                             "Q_i = w(Θ)I and κ = κ₀, so both sides are 1 (the check's random "
                                             "spectra reach it; no instance class only the optimizer reaches is "
                                             "known here)", {"margin": 0.01})],
)
def lemma_6(ctx):
    """Both readings of κ: eq. (9) and the bounds (11)/(13) (the stronger statement, used by Theorem 4). Ratio
    max_i cond(Q_i) · κ/κ₀ ≤ 1. Both sides depend only on the clients' spectra and weights (Q_i and Q_iA_i are
    functions of A_i), so instances are spectra: n ≤ 4 clients, d ≤ 5 eigenvalues in [μ, L] — not necessarily
    attaining μ or L per client — with κ₀ = L/μ of Assumption 1."""
    rng = ctx.rng
    worst = {}
    phases = {}
    for last, tag in ((False, "I"), (True, "II")):
        if ctx.param("plain_sampling", True):
            lam, p, alpha, gamma, K, mu, L = _spectra_batch(rng, 3000 if not ctx.full else 30000, last)
            r9, rb = _lemma6_ratios(lam, p, alpha, gamma, K, mu, L, last)
            worst[f"{tag}_eq9"], worst[f"{tag}_bound"] = float(r9.max()), float(rb.max())
        res = probe(lambda inst: float(max(x.max() for x in _lemma6_ratios(*inst, last))), _spectra_param(last),
                    seed=rng, n_random=64, n_starts=3 if not ctx.full else 10, maxiter=200 if not ctx.full else 2000,
                    options=_FEV[ctx.full])
        worst[f"{tag}_probe"] = res.worst_value
        phases[tag] = _probe_phases(res)
    top = max(worst.values())
    tol = (1 + 1e-9) * (1 - ctx.param("margin", 0.0))        # a control's tightened bound
    return ctx.decide(top <= tol, measured={**worst, "probe_phases": phases}, tolerance={"ratio": tol, "why": "log-space closed forms, ≲ 1e-12"},
                      notes="Tight (ratio 1) when every client attains μ and L. The proof's displays have an index typo "
                            "(exponent K−1 for k−1); the statement holds.")


def _log_q(lam, alpha, gamma, K, last):
    """log q(λ) for Θ_K / Θ_{1:K}, broadcasting (..., d) spectra against (...,) hyperparameters."""
    s = gamma[..., None] * (lam + alpha[..., None])
    Kb = K[..., None].astype(float)
    if last:
        return (Kb - 1) * np.log1p(-s)
    from fedtheory.algorithms.theta import geometric_sum
    return np.log(geometric_sum(s, Kb))


def _lemma6_ratios(lam, p, alpha, gamma, K, mu, L, last):
    """(cond(Q_i)·κ(9)/κ₀, cond(Q_i)·κ_bound/κ₀) maximized over clients; lam (B, n, d), p (B, n), others (B,)."""
    lq = _log_q(lam, alpha[:, None], gamma[:, None], K[:, None], last)          # (B, n, d)
    log_cond_q = (lq.max(axis=2) - lq.min(axis=2)).max(axis=1)
    lqa = lq + np.log(lam)
    L_t = np.sum(p * np.exp(lqa.max(axis=2) - lqa.max()), axis=1)
    mu_t = np.sum(p * np.exp(lqa.min(axis=2) - lqa.max()), axis=1)
    log_k9 = np.log(L_t) - np.log(mu_t)
    if last:
        log_kb = (K - 1) * (np.log1p(-gamma * (L + alpha)) - np.log1p(-gamma * (mu + alpha))) + np.log(L / mu)
    else:
        from fedtheory.algorithms.theta import geometric_sum
        log_kb = np.log(L / mu) + np.log(geometric_sum(gamma * (L + alpha), K.astype(float))) \
            - np.log(geometric_sum(gamma * (mu + alpha), K.astype(float)))
    log_k0 = np.log(L / mu)
    return np.exp(log_cond_q + log_k9 - log_k0), np.exp(log_cond_q + log_kb - log_k0)


def _spectra_batch(rng, B, last, n=3, d=4):
    """B random instances: spectra (B, n, d) in [μ, L] = [1, L] (extremes attained somewhere), weights, α, γ, K."""
    L = 10 ** rng.uniform(0.05, 3.5, size=B)
    lam = 1 + (L[:, None, None] - 1) * rng.uniform(size=(B, n, d))
    lam[:, 0, 0], lam[:, -1, -1] = 1.0, L
    p = rng.dirichlet(np.ones(n) * 0.5, size=B) + 1e-12
    p /= p.sum(axis=1, keepdims=True)
    alpha = np.where(rng.uniform(size=B) < 0.5, 0.0, 10 ** rng.uniform(-2, 3, size=B))
    K = np.round(10 ** rng.uniform(0, 5, size=B)).astype(np.int64)
    gamma = rng.uniform(size=B) * (1 - 1e-12) / ((K * L if last else L) + alpha)
    return lam, p, alpha, gamma, K, np.ones(B), L


def _spectra_param(last, n=3, d=4) -> Custom:
    """One spectra instance (batch of 1) from z, inside the hypotheses by construction."""
    def decode(z):
        L = np.array([10 ** (0.05 + 3.45 * (1 + math.sin(z[0])) / 2)])
        lam = (1 + (L[0] - 1) * (1 + np.sin(z[1:1 + n * d])) / 2).reshape(1, n, d)
        lam[0, 0, 0], lam[0, -1, -1] = 1.0, L[0]
        w = np.exp(np.clip(z[1 + n * d:1 + n * d + n], -30, 30))
        p = (w / w.sum())[None]
        alpha = np.array([0.0 if z[-3] < 0 else 10 ** (3 * math.sin(z[-3]))])
        K = np.array([int(round(10 ** (5 * (1 + math.sin(z[-2])) / 2)))])
        gamma = (1 + np.sin(z[-1:])) / 2 * (1 - 1e-12) / ((K * L if last else L) + alpha)
        return lam, p, alpha, gamma, K, np.ones(1), L

    return Custom(1 + n * d + n + 3, decode)


@claim(
    id="localupdate/lemma-11",
    ref="Lemma 11",
    title="x*(α,γ,Θ) = E[Q_iA_i]^{-1} E[Q_iA_ic_i]",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, $x^*(\alpha,\gamma,\Theta)=\mathbb E[Q_iA_i]^{-1}\mathbb E[Q_iA_ic_i]$.",
    kind="symbolic",
)
def lemma_11(ctx):
    """Exact: two clients with rational symmetric A_i (d = 2), rational Θ, α, γ, weights: ∇f̃ (sympy differentiation
    of ½Σp_i(x−c_i)ᵀQ_iA_i(x−c_i)) vanishes at the formula; float64: the library's minimizer zeroes ∇f̃."""
    A = [sp.Matrix([[3, 1], [1, 2]]), sp.Matrix([[5, -2], [-2, 4]])]
    c = [sp.Matrix([1, -1]), sp.Matrix([sp.Rational(1, 2), 2])]
    p = [sp.Rational(1, 3), sp.Rational(2, 3)]
    theta = [sp.Rational(1, 2), 1, 2]
    alpha, gamma = sp.Rational(1, 2), sp.Rational(1, 9)
    xs = sp.Matrix(sp.symbols("x1:3"))
    Q = [sym.distortion_matrix(Ai, alpha, gamma, theta) for Ai in A]
    loss = sum((p[i] * ((xs - c[i]).T * Q[i] * A[i] * (xs - c[i]))[0, 0] / 2 for i in range(2)), sp.Integer(0))
    H = sum((p[i] * Q[i] * A[i] for i in range(2)), sp.zeros(2, 2))
    bvec = sum((p[i] * Q[i] * A[i] * c[i] for i in range(2)), sp.zeros(2, 1))
    x_formula = H.inv() * bvec
    grad = sp.Matrix([sp.diff(loss, v) for v in xs]).subs(dict(zip(xs, x_formula))).applyfunc(sp.simplify)
    exact_ok = grad == sp.zeros(2, 1)
    rng = ctx.rng
    worst = 0.0
    for _ in range(20):
        problem, theta_n, a_n, g_n = _random_instance(rng)
        x_lib = surrogate_minimizer(problem, a_n, g_n, theta_n)
        g = surrogate_grad(problem, x_lib, a_n, g_n, theta_n)
        H_n = surrogate_hessian(problem, a_n, g_n, theta_n)
        scale = np.linalg.norm(H_n, 2) * (np.linalg.norm(x_lib) + np.abs(problem.c).max())
        worst = max(worst, float(np.linalg.norm(g) / scale))
    tol = 1e3 * 8 * EPS
    return _proved_if(ctx, _PROOFS["lemma_11"], exact_ok and worst <= tol, measured={"exact_gradient_at_formula": str(grad.T.tolist()),
                                                           "float_worst_relative_gradient": worst},
                      tolerance={"float_relative": tol, "why": "backward error of a d×d solve, cond ≤ 10³"},
                      notes="f̃ is a strongly convex quadratic under Lemma 1, so its unique stationary point is the minimizer.")


# ============================================================================================
# Section 4.3 and Appendix C: distance between minimizers
# ============================================================================================

def _two_client_rotation_family() -> Custom:
    """Two clients A_i = R_i diag(L, 1) R_iᵀ at angles ±φ/2, centres on the unit circle, weight p, Θ_{1:K} or
    general Θ, α, γ in Lemma 1's regime: the family where the Lemma 5 bound fails (non-commuting, large L/μ).
    Every z decodes to an instance of Assumptions 1–2 with μ = 1, C = 1."""
    def decode(z):
        L = 10 ** (0.2 + 3.3 * (1 + math.sin(z[0])) / 2)
        phi_angle = math.pi * (1 + math.sin(z[1])) / 2
        th = np.array([phi_angle / 2, -phi_angle / 2])
        R = np.stack([[[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]] for t in th])
        lam = np.array([[1.0, L], [1.0, L]])
        V = R[:, :, ::-1]                                       # columns: eigenvectors for (1, L)
        A = np.einsum("nij,nj,nkj->nik", V, lam, V)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        ang = np.array([z[2], z[3]])
        c = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        p1 = 0.02 + 0.96 * (1 + math.sin(z[4])) / 2
        problem = QuadraticFederation(A=A, c=c, p=[p1, 1 - p1], eigvals=lam, eigvecs=V)
        K = 1 + int(round(40 * (1 + math.sin(z[5])) / 2))
        alpha = 0.0 if z[6] < 0 else float(L * (1 + math.sin(z[6])) / 2)
        gamma = (1 + math.sin(z[7])) / 2 * (1 - 1e-9) / (L + alpha)
        return problem, Theta.uniform(max(K, 2)), alpha, gamma

    return Custom(8, decode)


def _lemma5_ratio(inst, constant: float = 8.0) -> float:
    problem, theta, alpha, gamma = inst
    bound = lemma5_bound(problem, alpha, gamma, theta, constant=constant)
    if not bound > 1e-8 * problem.C:          # Q_i ≈ equal to 1e-8: float64 cannot resolve the distance there
        return 0.0
    H = surrogate_hessian(problem, alpha, gamma, theta)
    ev = np.linalg.eigvalsh(H)
    if not ev[0] > 1e-10 * ev[-1]:            # ∇²f̃ ≻ 0 (Lemma 1) but below float64's resolution: skip the instance
        return 0.0
    return minimizer_distance(problem, alpha, gamma, theta) / bound


def _search_lemma5(ctx, constant: float):
    rng = ctx.rng
    worst, worst_inst = 0.0, None
    for _ in range(40 if not ctx.full else 400):
        inst = _random_instance(rng, n_max=3, d_max=3, K_max=12)
        r = _lemma5_ratio(inst, constant)
        if r > worst:
            worst, worst_inst = r, inst
    fam = _two_client_rotation_family()
    res_fam = probe(lambda inst: _lemma5_ratio(inst, constant), fam, seed=rng, n_random=48 if not ctx.full else 400,
                    n_starts=3 if not ctx.full else 10, maxiter=60 if not ctx.full else 400, options=_FEV[ctx.full])
    res_gen = _probe_instances(lambda inst: _lemma5_ratio(inst, constant), rng, ctx, n=2, d=2, K=6,
                               n_random=(16, 160), n_starts=(2, 6), maxiter=(30, 300))
    best = max((worst, worst_inst, "random"), (res_fam.worst_value, res_fam.worst_instance, "rotation-family probe"),
               (res_gen.worst_value, res_gen.worst_instance, "general probe"), key=lambda t: t[0])
    return best, {"random_worst": worst, "rotation_family_probe_worst": res_fam.worst_value,
                  "general_probe_worst": res_gen.worst_value,
                  "probe_evaluations": res_fam.n_evaluations + res_gen.n_evaluations}


def _decide_lemma5(ctx, best: tuple, measured: dict, notes: str):
    """Verdict of a Lemma-5-type search: ``best`` = (worst ratio, its instance, where it was found); a ratio above
    1 + 1e-9 refutes, with the instance stored (and replayed in 60 digits)."""
    worst, inst, where = best
    refuted = worst > 1 + 1e-9
    return ctx.decide(not refuted, measured={"worst_ratio": worst, "found_by": where, **measured},
                      counterexample=_instance_json(*inst) if refuted else None,
                      tolerance={"ratio": "1 + 1e-9 (minimizer distance and bound in float64; a stored instance is "
                                          "replayed in 60 digits)"}, notes=notes)


def _lemma5_replay(cex, ctx, constant: float, label: str):
    problem, theta, alpha, gamma = _instance_from_json(cex)
    with mpmath.workdps(60):
        r = _mp_minimizers(problem, alpha, gamma, theta, dps=60)
        bound = constant * r["C"] * (mpmath.sqrt(r["b"]) - mpmath.sqrt(r["a"])) / (mpmath.sqrt(r["b"]) + mpmath.sqrt(r["a"]))
        ratio = r["dist"] / bound
    return ctx.decide(ratio <= 1, measured={f"{label}_ratio_60_digits": float(ratio), "distance": float(r["dist"]),
                                            "bound": float(bound)},
                      counterexample=cex, notes="replayed in 60-digit arithmetic from the stored matrices")


_LEMMA5_NOTES = ("Which step fails: Lemma 14 (‖P₁P⁻¹‖ ≤ 1) is false for non-commuting P₁, P₂ — the proof equates the norm "
                 "of the non-symmetric P₁P⁻¹ with that of the similar symmetric P^{-1/2}P₁P^{-1/2}; Theorem 6's proof "
                 "does the same with ‖C⁻¹C₁‖ = 1/λ_min(CC₁⁻¹) and treats T₁, T₂ as PSD. With commuting A_i (or d = 1) the "
                 "bound holds (Lemma 12). The violation grows with L/μ: x*(α,γ,Θ) − x* ≈ (ΣpQA)⁻¹Σp(Q_i − Q̄)A_i(c_i − x*), "
                 "whose size carries a factor up to L/μ that (√b − √a)/(√b + √a) does not.")


@claim(
    id="localupdate/lemma-5",
    ref="Lemma 5",
    title="‖x*(α,γ,Θ) − x*‖ ≤ 8C(√b − √a)/(√b + √a)",
    statement=r"With $b=\max_i\lambda_{\max}(Q_i(\alpha,\gamma,\Theta))$, $a=\min_i\lambda_{\min}(Q_i(\alpha,\gamma,\Theta))$ "
              r"(and Lemma 1's $\gamma<(L+\alpha)^{-1}$, Assumptions 1–2): $\|x^*(\alpha,\gamma,\Theta)-x^*\|\le 8C\frac{\sqrt b-\sqrt a}"
              r"{\sqrt b+\sqrt a}$ (15).",
    kind="probe",
    expect="refuted",
)
def lemma_5(ctx):
    return _decide_lemma5(ctx, *_search_lemma5(ctx, 8.0), _LEMMA5_NOTES)


@lemma_5.replayer
def _(cex, ctx):
    return _lemma5_replay(cex, ctx, 8.0, "lemma5")


@claim(
    id="localupdate/section-4.3/conjecture-constant-2c",
    ref="Section 4.3",
    title="The authors' conjecture: Lemma 5 holds with 2C in every dimension",
    statement=r"Conjecture (Section 4.3): for all $d$, $\|x^*(\alpha,\gamma,\Theta)-x^*\|\le 2C\frac{\sqrt b-\sqrt a}{\sqrt b+\sqrt a}$.",
    kind="probe",
    expect="refuted",
)
def conjecture_2c(ctx):
    return _decide_lemma5(ctx, *_search_lemma5(ctx, 2.0),
                          "Refuted for d = 2 (it holds for d = 1: localupdate/lemma-12). " + _LEMMA5_NOTES)


@conjecture_2c.replayer
def _(cex, ctx):
    return _lemma5_replay(cex, ctx, 2.0, "conjecture_2c")


def _commuting_family(d: int, n: int = 4) -> Custom:
    """n diagonal clients in R^d (every commuting family is one up to a common rotation, which changes neither
    distance nor bound): eigenvalues free in [1, L] per client and coordinate (μ = 1 and L attained), centres in
    the ball of radius C = 1 (attained), weights, Θ_{1:K}, Θ_K or a general Θ with K ≤ 300, α, γ in Lemma 1's regime."""
    def decode(z):
        L = 10 ** (0.2 + 3.3 * (1 + math.sin(z[0])) / 2)
        lam = (1 + (L - 1) * (1 + np.sin(z[1:1 + n * d])) / 2).reshape(n, d)
        lam[0, 0], lam[-1, -1] = 1.0, L
        v = np.sin(z[1 + n * d:1 + 2 * n * d]).reshape(n, d)
        top = float(np.linalg.norm(v, axis=1).max())
        c = v / top if top > 0 else v
        w = np.exp(np.clip(z[1 + 2 * n * d:1 + 2 * n * d + n], -30, 30))
        K = 1 + int(round(10 ** (2.5 * (1 + math.sin(z[-4])) / 2)))
        kind = z[-3]
        theta = Theta.last(K) if kind > 0.5 else Theta.uniform(K) if kind > -0.5 else \
            Theta(np.abs(np.sin(np.arange(1, K + 1) * kind)) + 1e-3)
        alpha = 0.0 if z[-2] < 0 else float(L * (1 + math.sin(z[-2])) / 2)
        gamma = (1 + math.sin(z[-1])) / 2 * (1 - 1e-9) / (L + alpha)
        order = np.argsort(lam, axis=1)
        problem = QuadraticFederation(A=np.stack([np.diag(l) for l in lam]), c=c, p=w / w.sum(),
                                      eigvals=np.take_along_axis(lam, order, axis=1),
                                      eigvecs=np.stack([np.eye(d)[:, o] for o in order]))
        return problem, theta, alpha, gamma

    return Custom(1 + 2 * n * d + n + 4, decode)


_COMMUTING_DIMS = (2, 3, 5, 8)


def _search_commuting(ctx, constant: float):
    """Worst Lemma-5 ratio over commuting clients, d ∈ 2..8: random draws of the family, then a probe per d."""
    rng = ctx.rng
    best, measured = (0.0, None, None), {}
    for d in (_COMMUTING_DIMS if not ctx.full else range(2, 9)):
        fam = _commuting_family(d)
        ratio = functools.partial(_lemma5_ratio, constant=constant)
        worst = 0.0
        if ctx.param("plain_sampling", True):
            for _ in range(60 if not ctx.full else 600):
                inst = fam.decode(rng.normal(size=fam.size) * 2)
                r = ratio(inst)
                if r > worst:
                    worst = r
                if r > best[0]:
                    best = (r, inst, f"random d={d}")
        # the fast tier spends most of its search on d = 2, where the 2C counterexamples are cheapest to reach
        first = d == 2
        res = probe(ratio, fam, seed=rng, n_random=(64 if first else 24) if not ctx.full else 256,
                    n_starts=(4 if first else 2) if not ctx.full else 10,
                    maxiter=(400 if first else 40) if not ctx.full else 500,
                    options={"maxfev": 500} if first and not ctx.full else _FEV[ctx.full])
        if res.worst_value > best[0]:
            best = (res.worst_value, res.worst_instance, f"probe d={d}")
        measured[f"d={d}"] = {"random_worst": worst, "probe_worst": res.worst_value, **_probe_phases(res)}
    return best, measured


_COMMUTING_NOTES = (
    "Commuting (simultaneously diagonalizable) clients decouple into d one-dimensional problems, one per shared "
    "eigenvector. Lemma 12 (d = 1, constant 2) in each coordinate gives |x̃_j − x*_j| ≤ 2C_j(√b − √a)/(√b + √a) with "
    "C_j = max_i |c_ij|, and Σ_j C_j² ≤ d·C², so ‖x̃ − x*‖ ≤ 2√d·C(√b − √a)/(√b + √a): 8C holds for d ≤ 16, while 2C "
    "can fail from d = 2 on (the coordinates' worst cases come from different clients).")


@claim(
    id="localupdate/lemma-5/commuting-2c",
    ref="Lemma 5",
    title="Lemma 5 with Lemma 12's constant 2C for commuting clients in d ≥ 2",
    statement=r"For commuting (simultaneously diagonalizable) $A_i$ in $d\ge2$ (Lemma 1's regime, Assumptions 1–2): "
              r"$\|x^*(\alpha,\gamma,\Theta)-x^*\|\le2C\frac{\sqrt b-\sqrt a}{\sqrt b+\sqrt a}$ — Lemma 12's $d=1$ constant, "
              r"which the paper conjectures for every $d$ (Section 4.3).",
    kind="probe",
    expect="refuted",
)
def lemma_5_commuting_2c(ctx):
    return _decide_lemma5(ctx, *_search_commuting(ctx, 2.0),
                          "Refuted even without the non-commuting mechanism of Lemma 14. " + _COMMUTING_NOTES)


@lemma_5_commuting_2c.replayer
def _(cex, ctx):
    return _lemma5_replay(cex, ctx, 2.0, "commuting_2c")


@claim(
    id="localupdate/lemma-5/commuting-8c",
    ref="Lemma 5",
    title="Lemma 5 (constant 8C) holds for commuting clients, d = 2..8",
    statement=r"For commuting (simultaneously diagonalizable) $A_i$ in $2\le d\le8$ (Lemma 1's regime, Assumptions 1–2): "
              r"$\|x^*(\alpha,\gamma,\Theta)-x^*\|\le8C\frac{\sqrt b-\sqrt a}{\sqrt b+\sqrt a}$ (15).",
    kind="probe",
    controls=[Control(
        "constant-2c",
        "Lemma 12's constant 2C in place of 8C: false for commuting clients in d = 2 (a replayable 60-digit "
        "counterexample is stored for localupdate/lemma-5/commuting-2c; per coordinate the bound is 2C_j, and the "
        "C_j come from different clients). Run with the check's plain random sampling off: the probe's random "
        "phase stays below ratio 1, only its optimizer exceeds it",
        {"constant": 2.0, "plain_sampling": False})],
)
def lemma_5_commuting_8c(ctx):
    return _decide_lemma5(ctx, *_search_commuting(ctx, ctx.param("constant", 8.0)),
                          _COMMUTING_NOTES + " The non-commuting case fails (localupdate/lemma-5).")


def _theorem4_ratio(inst) -> float:
    problem, alpha, gamma, K, kind = inst
    theta = Theta.last(K) if kind == "last" else Theta.uniform(K)
    kap9 = kappa(problem, alpha, gamma, theta)[0]
    k0 = problem.L / problem.mu
    bound = 8 * problem.C * float(suboptimality_delta(k0, min(kap9, k0)))
    if not bound > 1e-8 * problem.C:
        return 0.0
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    if not ev[0] > 1e-10 * ev[-1]:            # below float64's resolution (see _lemma5_ratio)
        return 0.0
    return minimizer_distance(problem, alpha, gamma, theta) / bound


def _theorem4_family() -> Custom:
    fam = _two_client_rotation_family()

    def decode(z):
        problem, theta, alpha, gamma = fam.decode(z[:8])
        kind = "last" if z[8] > 0 else "uniform"
        K = theta.K
        if kind == "last":
            gamma = gamma * (problem.L + alpha) / (K * problem.L + alpha)
        return problem, alpha, gamma, K, kind

    return Custom(9, decode)


@claim(
    id="localupdate/theorem-4",
    ref="Theorem 4",
    title="‖x*(α,γ,Θ) − x*‖ ≤ 8C(√κ₀ − √κ)/(√κ₀ + √κ) for Θ_{1:K} and Θ_K",
    statement=r"Under the settings of Lemma 6 ((I) $\gamma<(L+\alpha)^{-1}$, $\Theta_{1:K}$; (II) $\gamma<(KL+\alpha)^{-1}$, "
              r"$\Theta_K$): $\|x^*(\alpha,\gamma,\Theta)-x^*\|\le8C\frac{\sqrt{\kappa_0}-\sqrt{\kappa(\alpha,\gamma,\Theta)}}"
              r"{\sqrt{\kappa_0}+\sqrt{\kappa(\alpha,\gamma,\Theta)}}$ (16).",
    kind="probe",
    expect="refuted",
)
def theorem_4(ctx):
    """κ read as eq. (9) from the matrices (the most lenient reading: κ(9) ≤ the bounds (11)/(13), so the right-hand
    side is largest); cases I and II both searched."""
    rng = ctx.rng
    res = probe(_theorem4_ratio, _theorem4_family(), seed=rng, n_random=48 if not ctx.full else 400,
                n_starts=3 if not ctx.full else 10, maxiter=60 if not ctx.full else 400, options=_FEV[ctx.full])
    worst, inst = res.worst_value, res.worst_instance
    by_case = {}
    for kind in ("uniform", "last"):
        vals = [_theorem4_ratio(_theorem4_family().decode(np.r_[rng.normal(size=8) * 2, 1.0 if kind == "last" else -1.0]))
                for _ in range(30)]
        by_case[kind] = max(vals)
    cex = None
    if worst > 1:
        problem, alpha, gamma, K, kind = inst
        cex = _instance_json(problem, Theta.last(K) if kind == "last" else Theta.uniform(K), alpha, gamma, case=kind)
    return ctx.decide(worst <= 1 + 1e-9, measured={"worst_ratio": worst, "random_worst_case_I": by_case["uniform"],
                                                   "random_worst_case_II": by_case["last"],
                                                   "probe_evaluations": res.n_evaluations},
                      counterexample=cex, tolerance={"ratio": "1 + 1e-9 (replayed in 60 digits)"},
                      notes="Theorem 4 = Lemma 5 + Lemma 6; Lemma 6 holds (localupdate/lemma-6) and Lemma 5 fails. " + _LEMMA5_NOTES)


@theorem_4.replayer
def _(cex, ctx):
    problem, theta, alpha, gamma = _instance_from_json(cex)
    with mpmath.workdps(60):
        r = _mp_minimizers(problem, alpha, gamma, theta)
        q_lam = []
        for i in range(problem.n):
            A = _mp_matrix(problem.A[i])
            ev = mpmath.eigsy(0.5 * ((_mp_distortion(A, alpha, gamma, theta) * A) + (_mp_distortion(A, alpha, gamma, theta) * A).T))[0]
            q_lam.append((max(ev), min(ev)))
        p = [mpmath.mpf(float(v)) for v in problem.p]
        kap = sum(pi * hi for pi, (hi, lo) in zip(p, q_lam)) / sum(pi * lo for pi, (hi, lo) in zip(p, q_lam))
        k0 = mpmath.mpf(problem.L) / mpmath.mpf(problem.mu)
        bound = 8 * r["C"] * (mpmath.sqrt(k0) - mpmath.sqrt(kap)) / (mpmath.sqrt(k0) + mpmath.sqrt(kap))
        ratio = r["dist"] / bound
    return ctx.decide(ratio <= 1, measured={"theorem4_ratio_60_digits": float(ratio), "kappa_eq9": float(kap)},
                      counterexample=cex, notes="replayed in 60-digit arithmetic (κ of eq. 9 from the stored matrices)")


@claim(
    id="localupdate/corollary-1",
    ref="Corollary 1",
    title="‖x_T − x*‖ ≤ ρ^T‖x_0 − x*(α,γ,Θ)‖ + 8C(√κ₀ − √κ)/(√κ₀ + √κ) for the iterates of LocalUpdate",
    statement=r"Under Theorem 3's settings, for some hyperparameters of ServerOpt, the iterates satisfy "
              r"$\|x_T-x^*\|\le\rho^T\|x_0-x^*(\alpha,\gamma,\Theta)\|+8C\frac{\sqrt{\kappa_0}-\sqrt\kappa}{\sqrt{\kappa_0}+\sqrt\kappa}$.",
    kind="simulation",
    expect="refuted",
)
def corollary_1(ctx):
    """The driver (full participation, tuned server GD of Table 2) on instances of Theorem 4's search; every iterate is
    compared with the bound (κ of eq. 9, the lenient reading). Once ρ^T‖x_0 − x*(α,γ,Θ)‖ has decayed, x_T ≈ x*(α,γ,Θ)
    and the bound is Theorem 4's, which fails."""
    rng = ctx.rng
    res = probe(_theorem4_ratio, _theorem4_family(), seed=rng, n_random=32 if not ctx.full else 200,
                n_starts=2 if not ctx.full else 6, maxiter=40 if not ctx.full else 300, options=_FEV[ctx.full])
    problem, alpha, gamma, K, kind = res.worst_instance
    theta = Theta.last(K) if kind == "last" else Theta.uniform(K)
    kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    rho = table2_rate(kap, "gd")
    server = tuned_server("gd", mu_t, L_t)
    x_tilde = surrogate_minimizer(problem, alpha, gamma, theta)
    # Start next to x*(α,γ,Θ): the ρ^T term is then negligible from T = 0 and every iterate faces Theorem 4's bound
    # (from far away the violation appears only once ρ^T‖x_0 − x*(α,γ,Θ)‖ has decayed).
    x0 = x_tilde + 1e-6 * problem.C * rng.normal(size=problem.d)
    T = 400
    h = run_local_update(problem, LocalUpdate(theta, alpha, gamma, server), x0, T).to_numpy()
    k0 = problem.L / problem.mu
    bound = rho ** np.arange(T + 1) * np.linalg.norm(x0 - x_tilde) + 8 * problem.C * float(suboptimality_delta(k0, kap))
    ratios = h.dist_empirical / bound
    t_worst = int(np.argmax(ratios))
    worst = float(ratios[t_worst])
    cex = _instance_json(problem, theta, alpha, gamma, x0=x0.tolist(), T=t_worst, server_lr=server.lr)
    return ctx.decide(worst <= 1 + 1e-9, measured={"worst_ratio": worst, "at_T": t_worst, "rho": rho,
                                                   "theorem4_ratio_of_instance": res.worst_value},
                      counterexample=cex if worst > 1 else None, tolerance={"ratio": "1 + 1e-9 (replayed in 60 digits)"},
                      notes="Refuted for every ServerOpt: as T → ∞ any convergent server reaches x*(α,γ,Θ), where the "
                            "bound reduces to Theorem 4's. " + _LEMMA5_NOTES)


@corollary_1.replayer
def _(cex, ctx):
    problem, theta, alpha, gamma = _instance_from_json(cex)
    with mpmath.workdps(60):
        r = _mp_minimizers(problem, alpha, gamma, theta)
        Hq, xt = r["Hq"], r["x_tilde"]
        x0 = mpmath.matrix(cex["x0"])
        x = x0
        eta = mpmath.mpf(cex["server_lr"])
        for _ in range(int(cex["T"])):
            x = x - eta * Hq * (x - xt)
        ev = mpmath.eigsy(0.5 * (Hq + Hq.T))[0]
        _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
        kap = mpmath.mpf(L_t) / mpmath.mpf(mu_t)
        rho = (kap - 1) / (kap + 1)
        k0 = mpmath.mpf(problem.L) / mpmath.mpf(problem.mu)
        delta = (mpmath.sqrt(k0) - mpmath.sqrt(kap)) / (mpmath.sqrt(k0) + mpmath.sqrt(kap))
        bound = rho ** int(cex["T"]) * mpmath.norm(x0 - xt) + 8 * r["C"] * delta
        ratio = mpmath.norm(x - r["x_star"]) / bound
        del ev
    return ctx.decide(ratio <= 1, measured={"corollary1_ratio_60_digits": float(ratio), "T": int(cex["T"])},
                      counterexample=cex, notes="server GD iterated T rounds in 60-digit arithmetic on the exact surrogate")


# ---- Appendix C.1: mean absolute deviations, d = 1 ------------------------------------------

def _rational_distribution(rng, n: int, a: Fraction, b: Fraction, interior: bool):
    """Random rational values in [a, b] (at least one strictly inside when ``interior``) and rational probabilities."""
    vals = []
    for j in range(n):
        if interior and j == 0:
            t = Fraction(int(rng.integers(1, 99)), 100)
        elif interior:
            t = Fraction(int(rng.choice([0, 100, int(rng.integers(0, 101))])), 100)
        else:
            t = Fraction(int(rng.choice([0, 1])))            # supported on {a, b}
        vals.append(a + (b - a) * t)
    w = [Fraction(int(rng.integers(1, 50))) for _ in range(n)]
    total = sum(w)
    return vals, [x / total for x in w]


def _mad_param(n: int = 5) -> Custom:
    """A distribution on [0, 1]: n values (1 + sin z)/2 and softmax probabilities (Theorem 5's and Corollary 2's
    search; [a, b] = [0, 1] by affine invariance)."""
    def decode(z):
        vals = (1 + np.sin(z[:n])) / 2
        w = np.exp(z[n:] - z[n:].max())
        return vals, w / w.sum()

    return Custom(2 * n, decode)


def _exact_mad(vals, probs):
    mean = sum(v * p for v, p in zip(vals, probs))
    return sum(abs(v - mean) * p for v, p in zip(vals, probs)), mean


@claim(
    id="localupdate/theorem-5",
    ref="Theorem 5",
    title="Mean absolute deviation analogue of Bhatia–Davis: D(X) ≤ 2(b − EX)(EX − a)/(b − a), equality iff X ∈ {a, b}",
    statement=r"For a discrete random variable $X$ with values in $[a,b]$, $a<b$: $D(X)\le\frac{2(b-\mathbb E X)(\mathbb E X-a)}{b-a}$, "
              r"with equality iff $X$ is supported on $\{a,b\}$.",
    kind="probe",
    controls=[Control('bound-tightened-2pc', "D(X) ≤ 0.98·2(b − EX)(EX − a)/(b − a) claimed: false a priori, "
                                             "equality holds for every X supported on {a, b} (proved exactly in this "
                                             "claim) Run with the check's plain random sampling off: the probe's "
                                             "random phase stays on the true side (ratio ≈ 0.92), only its optimizer "
                                             "crosses (≈ 0.9996) — a probe that stopped sampling early would miss it.",
                                             {'margin': 0.02, 'plain_sampling': False})],
)
def theorem_5(ctx):
    """Inequality: random and probed distributions (float64, ratio); equality and strictness: exact rationals."""
    rng = ctx.rng

    def ratio(inst):
        vals, probs = inst
        mean = float(probs @ vals)
        rhs = 2 * (1 - mean) * mean          # [a, b] = [0, 1] without loss of generality (affine invariance)
        return float(probs @ np.abs(vals - mean)) / rhs if rhs > 1e-12 else 0.0

    def decode(z):
        n = 5
        vals = (1 + np.sin(z[:n])) / 2
        w = np.exp(z[n:] - z[n:].max())
        return vals, w / w.sum()

    n_plain = (400 if not ctx.full else 4000) if ctx.param("plain_sampling", True) else 0
    worst = max((ratio(decode(rng.normal(size=10) * 2)) for _ in range(n_plain)), default=0.0)
    res = probe(ratio, Custom(10, decode), seed=rng, n_random=64, n_starts=3 if not ctx.full else 10,
                maxiter=150 if not ctx.full else 800, options=_FEV[ctx.full])
    worst = max(worst, res.worst_value)
    equality_ok = strict_ok = True
    min_gap = None
    for _ in range(60 if not ctx.full else 600):
        a = Fraction(int(rng.integers(-5, 5)))
        b = a + Fraction(int(rng.integers(1, 9)), int(rng.integers(1, 4)))
        for interior in (False, True):
            vals, probs = _rational_distribution(rng, int(rng.integers(1, 6)), a, b, interior)
            D, mean = _exact_mad(vals, probs)
            rhs = 2 * (b - mean) * (mean - a) / (b - a)
            if interior:
                gap = rhs - D
                strict_ok &= gap > 0
                min_gap = gap / (b - a) if min_gap is None else min(min_gap, gap / (b - a))
            else:
                equality_ok &= D == rhs
    sym_ok = symt.two_point_mad_residual() == (0, 0)
    ok = worst <= (1 + 1e-12) * (1 - ctx.param("margin", 0.0)) and equality_ok and strict_ok and sym_ok
    return ctx.decide(ok, measured={"worst_ratio": worst, "probe_worst": res.worst_value, **_probe_phases(res),
                                    "two_point_equality_exact": equality_ok, "interior_mass_strict_exact": strict_ok,
                                    "min_relative_gap_with_interior_mass": float(min_gap), "two_point_symbolic": sym_ok},
                      tolerance={"ratio": "1 + 1e-12 (float64); exact rationals for equality/strictness"},
                      notes="Affine invariance: D(αX + β) = |α|D(X) and the right-hand side scales alike, so [a, b] = [0, 1] "
                            "in the float64 search. The paper writes D(x) for D(X).")


@claim(
    id="localupdate/corollary-2",
    ref="Corollary 2",
    title="Popoviciu analogue: D(X) ≤ (b − a)/2, equality iff X = a, b with probability ½ each",
    statement=r"For a discrete $X$ on $[a,b]$: $D(X)\le\frac12(b-a)$, with equality iff $X$ takes the values $a$ and $b$ "
              r"with probability $1/2$ each.",
    kind="probe",
    controls=[Control('bound-tightened-5pc', "D(X) ≤ 0.95·(b − a)/2 claimed: false a priori, X = a, b with "
                                             "probability ½ each attains (b − a)/2 (proved exactly in this claim) "
                                             "Run with the check's plain random sampling off: the probe's random "
                                             "phase stays on the true side (ratio ≈ 0.83), only its optimizer "
                                             "crosses (≈ 0.9985) — a probe that stopped sampling early would miss it.",
                                             {'margin': 0.05, 'plain_sampling': False})],
)
def corollary_2(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range((400 if not ctx.full else 4000) if ctx.param("plain_sampling", True) else 0):
        n = int(rng.integers(1, 7))
        vals = rng.uniform(size=n)
        vals[: int(rng.integers(0, n + 1))] = rng.choice([0.0, 1.0])
        probs = rng.dirichlet(np.ones(n))
        worst = max(worst, mean_absolute_deviation(vals, probs) / 0.5)
    res = probe(lambda inst: float(mean_absolute_deviation(*inst)) / 0.5, _mad_param(), seed=rng, n_random=64,
                n_starts=3 if not ctx.full else 10, maxiter=150 if not ctx.full else 800, options=_FEV[ctx.full])
    worst = max(worst, res.worst_value)
    eq = _exact_mad([Fraction(0), Fraction(3)], [Fraction(1, 2)] * 2)[0] == Fraction(3, 2)
    strict = True
    for _ in range(60):
        vals, probs = _rational_distribution(rng, int(rng.integers(1, 5)), Fraction(0), Fraction(1), rng.uniform() < 0.5)
        if not (len(vals) == 2 and set(vals) == {0, 1} and probs[0] == probs[1]):
            D, _ = _exact_mad(vals, probs)
            merged = {}
            for v, p in zip(vals, probs):
                merged[v] = merged.get(v, 0) + p
            if merged == {Fraction(0): Fraction(1, 2), Fraction(1): Fraction(1, 2)}:
                continue
            strict &= D < Fraction(1, 2)
    ok = worst <= (1 + 1e-12) * (1 - ctx.param("margin", 0.0)) and eq and strict     # margin: a control's bound
    return ctx.decide(ok, measured={"worst_ratio": worst, "probe_worst": res.worst_value, **_probe_phases(res),
                                    "equality_case_exact": eq, "strict_otherwise_exact": strict},
                      tolerance="float64 ratio ≤ 1 + 1e-12; exact rationals for the equality characterization",
                      notes="Follows from Theorem 5 and (b − a)² ≥ 4(b − x)(x − a).")


def _d1_instance(z):
    n = 3
    L = 10 ** (0.05 + 3 * (1 + math.sin(z[0])) / 2)
    A = 1 + (L - 1) * (1 + np.sin(z[1:1 + n])) / 2
    A[0], A[1] = 1.0, L
    c = np.sin(z[1 + n:1 + 2 * n])
    c[np.argmax(np.abs(c))] = np.sign(c[np.argmax(np.abs(c))]) or 1.0       # C = 1 attained
    w = np.exp(z[1 + 2 * n:1 + 3 * n] - z[1 + 2 * n:1 + 3 * n].max())
    p = w / w.sum()
    K = 1 + int(round(30 * (1 + math.sin(z[-3])) / 2))
    kind = z[-2]
    alpha = float(L * (1 + math.sin(z[-1])) / 2) if z[-1] > 0 else 0.0
    gamma = (1 + math.sin(z[-1] * 3.1)) / 2 * (1 - 1e-9) / (L + alpha)
    theta = Theta.last(max(K, 1)) if kind > 0.5 else (Theta.uniform(K) if kind > -0.5 else
                                                      Theta(np.abs(np.sin(np.arange(1, K + 1) * kind)) + 1e-3))
    return A, c, p, theta, alpha, gamma


def _lemma12_ratio(inst) -> float:
    A, c, p, theta, alpha, gamma = inst
    q = np.asarray(distortion_eigenvalues(A, alpha, gamma, theta))
    x_star = np.sum(p * A * c) / np.sum(p * A)
    x_tilde = np.sum(p * q * A * c) / np.sum(p * q * A)
    a, b = q.min(), q.max()
    C = np.max(np.abs(c))
    bound = 2 * C * (math.sqrt(b) - math.sqrt(a)) / (math.sqrt(b) + math.sqrt(a))
    # Float floor: both minimizers are weighted means of the c_i, each rounded to ~4·eps·C; below a bound of
    # 1e-10·C (Q_i equal to ~1e-10, e.g. K(Θ) = 1) the ratio would measure rounding, so such instances are skipped.
    return max(abs(x_tilde - x_star) - 16 * EPS * C, 0.0) / bound if bound > 1e-10 * C else 0.0


@claim(
    id="localupdate/lemma-12",
    ref="Lemma 12",
    title="d = 1: ‖x*(α,γ,Θ) − x*‖ ≤ 2C(√b − √a)/(√b + √a)",
    statement=r"For $d=1$ (Lemma 1's regime $\gamma<(L+\alpha)^{-1}$, Assumptions 1–2, finite $\mathcal I$): "
              r"$|x^*(\alpha,\gamma,\Theta)-x^*|\le2C\frac{\sqrt b-\sqrt a}{\sqrt b+\sqrt a}$.",
    kind="probe",
    controls=[Control('bound-tightened-10pc', "|x*(α,γ,Θ) − x*| ≤ 0.9·2C(√b − √a)/(√b + √a) claimed: false a priori, "
                                              "the ratio tends to 1 as K → ∞, p → 1 (Appendix C.2; "
                                              "localupdate/lemma-12/tightness reaches 1 − 3e-6) Run with the check's "
                                              "plain random sampling off: the probe's random phase stays on the true "
                                              "side (ratio ≈ 0.72), only its optimizer crosses (≈ 0.997) — a probe "
                                              "that stopped sampling early would miss it.",
                                              {'margin': 0.1, 'plain_sampling': False})],
)
def lemma_12(ctx):
    rng = ctx.rng
    param = Custom(1 + 3 * 3 + 3, _d1_instance)
    n_plain = (500 if not ctx.full else 5000) if ctx.param("plain_sampling", True) else 0
    worst = max((_lemma12_ratio(_d1_instance(rng.normal(size=param.size) * 2)) for _ in range(n_plain)), default=0.0)
    res = probe(_lemma12_ratio, param, seed=rng, n_random=64, n_starts=4 if not ctx.full else 12,
                maxiter=120 if not ctx.full else 800, options=_FEV[ctx.full])
    worst = max(worst, res.worst_value)
    sym_ok = symt.lemma12_maximum_residual() == (0, 0)
    tol = (1 + 1e-9) * (1 - ctx.param("margin", 0.0))        # a control's tightened bound
    return ctx.decide(worst <= tol and sym_ok, measured={"worst_ratio": worst, "probe_worst": res.worst_value,
                                                         **_probe_phases(res),
                                                              "maximization_step_symbolic": sym_ok},
                      tolerance={"ratio": "1 + 1e-9"},
                      notes="Θ ∈ {Θ_{1:K}, Θ_K, general positive}, K ≤ 31, L/μ up to 10³, three clients with unequal "
                            "weights. Tight as K → ∞, p → 1 (localupdate/lemma-12/tightness).")


@claim(
    id="localupdate/lemma-12/tightness",
    ref="Lemma 12",
    title="Lemma 12 is tight (Appendix C.2): ratio → 1 as K → ∞ and p → 1",
    statement=r"With $A_1=4$, $A_2=1$, $c_1=1$, $c_2=-1$, $\alpha=0$, $\gamma=1/8$, $\Theta_K$ and $P(i=1)=p$: "
              r"$\lim_{K\to\infty}\|x^*(\Theta_K)-x^*\|=\frac{8p}{3p+1}$ (37) and $\lim_K 2\frac{\sqrt b-\sqrt a}{\sqrt b+\sqrt a}=2$ (36).",
    kind="numeric",
    controls=[Control("limit-sign-slip", "(37) with a sign slip, 8p/(3p − 1): false a priori (it differs from 8p/(3p "
                                         "+ 1) by 16p/(9p² − 1) ≈ 2 near p = 1)", {"limit_sign": -1})],
)
def lemma_12_tightness(ctx):
    with mpmath.workdps(50):
        rows = []
        for p, K in ((mpmath.mpf("0.9"), 400), (mpmath.mpf("0.999"), 800), (mpmath.mpf("0.99999"), 1600)):
            Q1, Q2 = mpmath.mpf(1) / 2 ** (K - 1), (mpmath.mpf(7) / 8) ** (K - 1)
            xt = (4 * p * Q1 - (1 - p) * Q2) / (4 * p * Q1 + (1 - p) * Q2)
            xs = (5 * p - 1) / (3 * p + 1)
            dist = abs(xt - xs)
            bound = 2 * (mpmath.sqrt(Q2) - mpmath.sqrt(Q1)) / (mpmath.sqrt(Q2) + mpmath.sqrt(Q1))
            # control: (37) with a sign slip, 8p/(3p − 1)
            limit = 8 * p / (3 * p + ctx.param("limit_sign", 1))
            rows.append((float(p), K, float(dist), float(limit), float(dist / bound)))
    limits_ok = all(abs(d - lim) < 1e-12 for _, _, d, lim, _ in rows)
    approach = rows[-1][4] > 1 - 1e-4 and all(r[4] <= 1 for r in rows)
    return ctx.decide(limits_ok and approach, measured={"rows_p_K_dist_limit_ratio": rows},
                      tolerance="50-digit arithmetic; distance matches 8p/(3p+1) to 1e-12 at large K; ratio ≥ 1 − 1e-4",
                      notes="The paper writes Q_i = (½)^K, (⅞)^K; with Θ_K they are (½)^{K−1}, (⅞)^{K−1} (eq. 6). "
                            "The limits are unaffected.")


# ---- Appendix C.3: matrix-weighted means and discrepancies ---------------------------------

def _commuting_pairs(z, n=3, d=2, lo=1.0, hi=None):
    """X_i = U_i diag(x_i) U_iᵀ with x_i ∈ [a, b] (a, b attained), Y_i = U_i diag(y_i) U_iᵀ ≻ 0: commuting pairs."""
    hi = hi if hi is not None else 10 ** (0.05 + 3 * (1 + math.sin(z[0])) / 2)
    X, Y = [], []
    off = 1
    for i in range(n):
        ang = z[off]
        U = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        xv = lo + (hi - lo) * (1 + np.sin(z[off + 1:off + 3])) / 2
        if i == 0:
            xv = np.array([lo, hi])
        yv = np.exp(3 * np.sin(z[off + 3:off + 5]) * 2)
        X.append((U * xv) @ U.T)
        Y.append((U * yv) @ U.T)
        off += 5
    X, Y = np.array(X), np.array(Y)
    return 0.5 * (X + np.swapaxes(X, 1, 2)), 0.5 * (Y + np.swapaxes(Y, 1, 2)), lo, hi


_PAIRS_SIZE = 1 + 3 * 5


@claim(
    id="localupdate/definition-1",
    ref="Definition 1",
    title="Mean absolute deviation D(X) = E‖X − E[X]‖ (and its two-point value)",
    statement=r"$D(X):=\mathbb E[\|X-\mathbb E[X]\|]$ for $X$ in a Banach space; for $Y\in\{a,b\}$ with $P(Y=b)=p$, "
              r"$D(Y)=2(1-p)p(b-a)$ (used in Theorem 5's proof).",
    kind="numeric",
    controls=[Control("unweighted-centre", "D(X) computed about the unweighted mean of the values instead of E[X]: "
                                           "false a priori for unequal weights", {"unweighted_mean": True})],
)
def definition_1(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(50):
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        X = rng.normal(size=(n, d))
        p = rng.dirichlet(np.ones(n))
        centre = X.mean(axis=0) if ctx.param("unweighted_mean", False) else p @ X   # control: a wrong centre
        direct = sum(p[i] * np.linalg.norm(X[i] - centre) for i in range(n))
        worst = max(worst, abs(mean_absolute_deviation(X, p) - direct) / max(direct, 1e-300))
    sym_ok = symt.two_point_mad_residual() == (0, 0)
    return ctx.decide(worst <= 1e-13 and sym_ok, measured={"library_vs_direct_relative": worst, "two_point_symbolic": sym_ok},
                      tolerance="1e-13 relative (sums of n ≤ 5 norms)",
                      notes="The library's mean_absolute_deviation is the object Theorem 5 and Corollary 2 are checked on.")


@claim(
    id="localupdate/definition-2",
    ref="Definition 2",
    title="Matrix-weighted mean f(X|Y) = (Σ X_iY_i)Y^{-1}: the weighted mean in d = 1, similar to a symmetric P",
    statement=r"$f(X_1..X_n|Y_1..Y_n):=(\sum_iX_iY_i)Y^{-1}$, $Y=\sum_iY_i$ (commuting pairs); for $d=1$, $Y_i>0$ it is the "
              r"mean of $X$ with probabilities $Y_i/Y$; $f(X|Y)$ is similar to $P=Y^{-1/2}(\sum_iY_i^{1/2}X_iY_i^{1/2})Y^{-1/2}$.",
    kind="numeric",
    controls=[Control("uniform-weights", "f(X|Y) in d = 1 equated with the unweighted mean of the x_i (probabilities "
                                         "1/n instead of Y_i/Y): false a priori for unequal Y_i",
                                         {"uniform_weights": True})],
)
def definition_2(ctx):
    rng = ctx.rng
    worst_1d, worst_sim = 0.0, 0.0
    for _ in range(50):
        n = int(rng.integers(1, 6))
        x, y = rng.uniform(-3, 3, n), rng.uniform(0.1, 4, n)
        f = matrix_weighted_mean(x[:, None, None], y[:, None, None])[0, 0]
        ref = x.mean() if ctx.param("uniform_weights", False) else np.dot(x, y) / y.sum()   # control: wrong weights
        worst_1d = max(worst_1d, abs(f - ref) / (np.abs(x).max()))
        X, Y, _, _ = _commuting_pairs(rng.normal(size=_PAIRS_SIZE))
        F = matrix_weighted_mean(X, Y)
        w, V = np.linalg.eigh(Y.sum(axis=0))
        Yh = (V * w ** 0.5) @ V.T
        Yhi = (V * w ** -0.5) @ V.T
        roots = []
        for Yi in Y:
            wi, Vi = np.linalg.eigh(Yi)
            roots.append((Vi * wi ** 0.5) @ Vi.T)
        P = Yhi @ sum(R @ Xi @ R for R, Xi in zip(roots, X)) @ Yhi
        worst_sim = max(worst_sim, float(np.abs(Yhi @ F @ Yh - P).max() / np.abs(P).max()))
    ok = worst_1d <= 1e-14 and worst_sim <= 1e-9
    return ctx.decide(ok, measured={"d1_vs_weighted_mean": worst_1d, "similarity_residual": worst_sim},
                      tolerance={"d1": 1e-14, "similarity": "1e-9 relative (eigen-square-roots of Y with cond up to e^12)"},
                      notes="Y^{-1/2} f Y^{1/2} = Y^{-1/2}(ΣX_iY_i)Y^{-1/2} = P because X_i and Y_i commute "
                            "(Y_i^{1/2}X_iY_i^{1/2} = X_iY_i).")


@claim(
    id="localupdate/definition-3",
    ref="Definition 3",
    title="Normalized matrix-weighted discrepancy M(X|Y); in d = 1, M = D(X)/|E X|",
    statement=r"$M(X|Y)=\sum_i\|Y^{-1}f(X|Y)^{-1}(X_i-f(X|Y))Y_i\|$ (operator norm); for $d=1$, $X_i>0$, $Y_i>0$: "
              r"$M(X|Y)=D(X)/|\mathbb E[X]|$ with probabilities $Y_i/Y$.",
    kind="numeric",
    controls=[Control("uniform-weights", "M(X|Y) in d = 1 equated with D(X)/|E X| under probabilities 1/n instead of "
                                         "Y_i/Y: false a priori for unequal Y_i", {"uniform_weights": True})],
)
def definition_3(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(100):
        n = int(rng.integers(1, 6))
        x, y = rng.uniform(0.1, 5, n), rng.uniform(0.1, 4, n)
        M = matrix_weighted_discrepancy(x[:, None, None], y[:, None, None])
        probs = np.full(n, 1.0 / n) if ctx.param("uniform_weights", False) else y / y.sum()   # control: wrong weights
        ref = mean_absolute_deviation(x, probs) / abs(np.dot(probs, x))
        worst = max(worst, abs(M - ref) / max(ref, 1e-300) if ref > 0 else abs(M))
    return ctx.decide(worst <= 1e-13, measured={"d1_relative_error": worst}, tolerance={"relative": 1e-13},
                      notes="The d = 1 reduction stated after Definition 3.")


#: a commuting-pairs instance (z of :func:`_commuting_pairs`) where ½(f + fᵀ) leaves [a, b] by O(1): the
#: quadratic-form reading of Lemma 13, which is not the paper's (⪯ is defined for symmetric matrices)
_QUADRATIC_FORM_Z = (-1.8047155311413696, -0.350891946009012, -0.6766257496083659, 0.505167035992814, -1.0364342052827673,
                     0.9770529399258017, -1.905847589427965, -0.7295195427751611, 1.079242881104188, 1.342032083779191,
                     -1.0223824498355316, -1.5715687105238478, -0.3699363468385501, 1.4176228468628151,
                     -1.481781863360537, -2.376159579759044)


def _lemma13_violation(X, Y, a, b, reading: str, shrink: float = 0.0) -> float:
    """How far f(X|Y) leaves [a, b − shrink·(b − a)] under a faithful reading of Lemma 13, relative to b − a
    (≤ 0 when it holds): ``spectral`` — the eigenvalues of the non-symmetric f(X|Y) (with their imaginary parts);
    ``similar-symmetric`` — the Loewner order for the symmetric P = Y^{-1/2}(ΣY_i^{1/2}X_iY_i^{1/2})Y^{-1/2}
    of Definition 2, similar to f(X|Y)."""
    hi = b - shrink * (b - a)
    if reading == "spectral":
        ev = np.linalg.eigvals(matrix_weighted_mean(X, Y, rtol=1e-8))
        outside = max((ev.real.max() - hi) / (b - a), (a - ev.real.min()) / (b - a))
        imag = float(np.abs(ev.imag).max()) / (b - a)
        return max(outside, imag) if imag > 0 else outside     # a real spectrum leaves the margin visible
    if reading != "similar-symmetric":
        raise ValueError(f"unknown reading of Lemma 13: {reading!r}")
    w, V = np.linalg.eigh(Y.sum(axis=0))
    Yhi = (V * w ** -0.5) @ V.T
    S = np.zeros_like(X[0])
    for Xi, Yi in zip(X, Y):
        wi, Vi = np.linalg.eigh(Yi)
        R = (Vi * np.sqrt(np.clip(wi, 0, None))) @ Vi.T
        S += R @ Xi @ R
    ev = np.linalg.eigvalsh(Yhi @ (0.5 * (S + S.T)) @ Yhi)
    return max((ev[-1] - hi) / (b - a), (a - ev[0]) / (b - a))


_LEMMA13_READINGS = [
    Reading("spectral", "aI ⪯ f(X|Y) ⪯ bI read for the spectrum of the non-symmetric f(X|Y): its eigenvalues are "
            "real and lie in [a, b] (what the proof shows, through the similarity of Definition 2)",
            {"reading": "spectral"}),
    Reading("similar-symmetric", "the Loewner order (defined for symmetric matrices) applied to the symmetric "
            "P = Y^{-1/2}(ΣY_i^{1/2}X_iY_i^{1/2})Y^{-1/2} that f(X|Y) is similar to (Definition 2): aI ⪯ P ⪯ bI",
            {"reading": "similar-symmetric"}),
]


@claim(
    id="localupdate/lemma-13",
    ref="Lemma 13",
    title="If aI ⪯ X_i ⪯ bI then aI ⪯ f(X|Y) ⪯ bI (spectrum of f(X|Y), or its similar symmetric P, in [a, b])",
    statement=r"If $aI\preceq X_i\preceq bI$ for all $i$ ($X_i,Y_i$ commuting, $Y_i\succ0$), then $aI\preceq f(X|Y)\preceq bI$. "
              r"The paper defines $\preceq$ for symmetric matrices and proves the lemma through the similarity of $f(X|Y)$ "
              r"to the symmetric $P$ of Definition 2; the faithful readings are the spectrum of $f(X|Y)$ and the Loewner "
              r"order of $P$.",
    kind="probe",
    readings=_LEMMA13_READINGS,
    controls=[Control(
        "upper-end-lowered-1e-6",
        "the interval's upper end lowered to b − 10⁻⁶(b − a): false, since b is attained (X_i = bI for every i "
        "gives f(X|Y) = bI); the check evaluates that end instance on every run, where the violation is 10⁻⁶ > "
        "the 10⁻⁹ tolerance, so the control fires by construction at any seed (plain random sampling off).",
        {"shrink": 1e-6, "plain_sampling": False})],
)
def lemma_13(ctx):
    rng = ctx.rng
    reading, shrink = ctx.param("reading", "spectral"), ctx.param("shrink", 0.0)

    def violation(z):
        return _lemma13_violation(*_commuting_pairs(z), reading, shrink)

    worst, worst_high_d = -np.inf, -np.inf
    if ctx.param("plain_sampling", True):
        worst = max(violation(rng.normal(size=_PAIRS_SIZE) * 2) for _ in range(200 if not ctx.full else 2000))
        for _ in range(100 if not ctx.full else 1000):                 # d ∈ {3, 4, 5}, n ≤ 5: Haar eigenbases
            d, n = int(rng.integers(3, 6)), int(rng.integers(1, 6))
            a, b = 1.0, float(10 ** rng.uniform(0.1, 3))
            U = np.linalg.qr(rng.normal(size=(n, d, d)))[0]
            xv = rng.uniform(a, b, size=(n, d))
            xv[0, 0], xv[-1, -1] = a, b
            X = np.einsum("nij,nj,nkj->nik", U, xv, U)
            Y = np.einsum("nij,nj,nkj->nik", U, np.exp(rng.uniform(-5, 5, size=(n, d))), U)
            worst_high_d = max(worst_high_d, _lemma13_violation(0.5 * (X + np.swapaxes(X, 1, 2)),
                                                                0.5 * (Y + np.swapaxes(Y, 1, 2)), a, b, reading, shrink))
    res = probe(violation, Custom(_PAIRS_SIZE, lambda z: z), seed=rng, n_random=32, n_starts=3 if not ctx.full else 8,
                maxiter=100 if not ctx.full else 600, options=_FEV[ctx.full])
    # the interval's ends are attained, every run: X_i = bI (or aI) for all i gives f(X|Y) = bI (aI) exactly, so
    # an interval shrunk at either end fails here by construction, whatever the seed
    Y_end = np.stack([np.diag([1.0, 4.0, 0.5]), np.diag([2.0, 0.25, 3.0])])
    at_ends = max(_lemma13_violation(np.stack([e * np.eye(3)] * 2), Y_end, 1.0, 7.0, reading, shrink)
                  for e in (1.0, 7.0))
    worst = max(worst, worst_high_d, res.worst_value, at_ends)
    tol = 1e-9
    F = matrix_weighted_mean(*_commuting_pairs(np.asarray(_QUADRATIC_FORM_Z))[:2])
    X, Y, a, b = _commuting_pairs(np.asarray(_QUADRATIC_FORM_Z))
    sym_ev = np.linalg.eigvalsh(0.5 * (F + F.T))
    return ctx.decide(worst <= tol, measured={"worst_violation_relative": worst, "probe_worst": res.worst_value,
                                              **_probe_phases(res), "random_d3_to_d5_worst": worst_high_d, "interval_ends_violation": at_ends,
                                              "not_faithful_quadratic_form_violation_at_known_instance":
                                                  float(max(sym_ev[-1] - b, a - sym_ev[0]) / (b - a))},
                      tolerance={"relative": tol, "why": "eigvals/eigvalsh of d×d (d ≤ 5) products with cond(Y_i) ≤ "
                                                         "e^12"},
                      notes="f(X|Y) is similar to the symmetric P of Definition 2, so its eigenvalues are real and in [a, b]. "
                            "Not a faithful reading: the quadratic form aI ⪯ ½(f + fᵀ) ⪯ bI of the non-symmetric "
                            "f(X|Y) "
                            "(⪯ is defined for symmetric matrices only); it fails by O(1) at a known commuting-pairs "
                            "instance (measured, not deciding). Theorem 6's proof leans on it (localupdate/theorem-6).")


_LEMMA14 = ([[2, -3], [-3, 5]], [[5, -3], [-3, 2]])


@claim(
    id="localupdate/lemma-14",
    ref="Lemma 14",
    title="‖P₁P⁻¹‖ ≤ 1 for symmetric positive definite P₁, P₂ and P = P₁ + P₂",
    statement=r"Let $P_1,P_2$ be symmetric positive definite and $P=P_1+P_2$. Then $\|P_1P^{-1}\|\le1$ (spectral norm).",
    kind="probe",
    expect="refuted",
)
def lemma_14(ctx):
    rng = ctx.rng

    def ratio(z):
        P1 = _spd2(z[:3])
        P2 = _spd2(z[3:])
        return float(np.linalg.norm(P1 @ np.linalg.inv(P1 + P2), 2))

    res = probe(ratio, Custom(6, lambda z: z), seed=rng, n_random=64, n_starts=2, maxiter=80, options=_FEV[ctx.full])
    P1, P2 = (np.array(m, float) for m in _LEMMA14)
    integer_case = float(np.linalg.norm(P1 @ np.linalg.inv(P1 + P2), 2))
    return ctx.decide(integer_case <= 1 and res.worst_value <= 1,
                      measured={"probe_worst_norm": res.worst_value, "integer_instance_norm": integer_case},
                      counterexample={"P1": _LEMMA14[0], "P2": _LEMMA14[1]},
                      notes="P₁P⁻¹ is similar to P^{-1/2}P₁P^{-1/2} ⪯ I, so its eigenvalues lie in (0, 1) — but it is not "
                            "symmetric, and similarity preserves eigenvalues, not norms (the proof's last step). The "
                            "correct statement bounds the spectral radius, or ‖P^{-1/2}P₁P^{-1/2}‖.")


def _spd2(z):
    """A 2×2 SPD matrix with eigenvalues e^{z0}, e^{z1} and rotation z2."""
    U = np.array([[math.cos(z[2]), -math.sin(z[2])], [math.sin(z[2]), math.cos(z[2])]])
    return (U * np.exp(np.clip(z[:2], -20, 20))) @ U.T


@lemma_14.replayer
def _(cex, ctx):
    P1, P2 = sp.Matrix(cex["P1"]), sp.Matrix(cex["P2"])
    spd = all(ev > 0 for ev in P1.eigenvals()) and all(ev > 0 for ev in P2.eigenvals()) and P1 == P1.T and P2 == P2.T
    M = P1 * (P1 + P2).inv()
    G = M.T * M                                           # ‖M‖² = λ_max(MᵀM), exact
    lam_max = max(G.eigenvals(), key=lambda e: float(e))
    exceeds = sp.simplify(lam_max - 1) > 0
    return ctx.decide(not (spd and exceeds), measured={"norm_squared_exact": str(sp.nsimplify(lam_max)),
                                                       "norm": float(sp.sqrt(lam_max)), "P1_P2_spd": bool(spd)},
                      counterexample=cex, notes="exact (sympy): λ_max((P₁P⁻¹)ᵀ(P₁P⁻¹)) − 1 > 0")


@claim(
    id="localupdate/theorem-6",
    ref="Theorem 6",
    title="M(X|Y) ≤ 2(b − a)/b for aI ⪯ X_i ⪯ bI and SPD Y_i (commuting pairs)",
    statement=r"For symmetric $X_i$ with $aI\preceq X_i\preceq bI$ and symmetric positive definite $Y_i$ (with $X_i,Y_i$ "
              r"commuting, Appendix C.3): $M(X_1..X_n|Y_1..Y_n)\le\frac{2(b-a)}{b}$.",
    kind="probe",
    expect="refuted",
)
def theorem_6(ctx):
    rng = ctx.rng

    def ratio(z):
        X, Y, a, b = _commuting_pairs(z)
        return matrix_weighted_discrepancy(X, Y) / (2 * (b - a) / b)

    worst = max(ratio(rng.normal(size=_PAIRS_SIZE) * 2) for _ in range(100 if not ctx.full else 1000))
    res = probe(ratio, Custom(_PAIRS_SIZE, lambda z: z), seed=rng, n_random=32, n_starts=2 if not ctx.full else 8,
                maxiter=80 if not ctx.full else 500, options=_FEV[ctx.full])
    z = np.asarray(res.worst_z)
    worst = max(worst, res.worst_value)
    return ctx.decide(worst <= 1 + 1e-9, measured={"worst_ratio": worst, "probe_worst": res.worst_value},
                      counterexample={"z": z.tolist()} if res.worst_value > 1 else None,
                      notes="The splitting step (T₃ = T₁ − T₂, ‖T₁ − T₂‖ ≤ ‖T₁‖ + ‖T₂‖) is fine, but the final "
                            "computation uses ‖C⁻¹C₁‖ = 1/λ_min(CC₁⁻¹) and ‖R⁻¹C₂‖ = 1/(aλ_min(C₁C₂⁻¹) + b), which are "
                            "eigenvalue identities that fail for the non-symmetric products (as in Lemma 14).")


@theorem_6.replayer
def _(cex, ctx):
    X, Y, a, b = _commuting_pairs(np.asarray(cex["z"]))
    with mpmath.workdps(50):
        Xm = [_mp_matrix(x) for x in X]
        Ym = [_mp_matrix(y) for y in Y]
        Ysum = sum(Ym, mpmath.zeros(2, 2))
        F = sum((x * y for x, y in zip(Xm, Ym)), mpmath.zeros(2, 2)) * mpmath.inverse(Ysum)
        pre = mpmath.inverse(F * Ysum)
        total = mpmath.mpf(0)
        for x, y in zip(Xm, Ym):
            T = pre * (x - F) * y
            total += mpmath.sqrt(max(mpmath.eigsy(T.T * T)[0]))
        ratio = total / (2 * (mpmath.mpf(b) - mpmath.mpf(a)) / mpmath.mpf(b))
    return ctx.decide(ratio <= 1, measured={"theorem6_ratio_50_digits": float(ratio)}, counterexample=cex,
                      notes="replayed in 50-digit arithmetic")


# ============================================================================================
# Section 4.2: Table 2 and Theorem 3
# ============================================================================================

def _spectral_radius_ratio(problem, theta, alpha, gamma, momentum, rho_scale: float = 1.0):
    """(radius − ρ, radius/ρ, κ): the tuned iteration's spectral radius on ∇²f̃ against Table 2's ρ(κ)
    (times ``rho_scale``: a negative control's tightened rate)."""
    kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    server = tuned_server(momentum, mu_t, L_t)
    eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    radius = float(np.max(iteration_spectral_radius(server, eigs)))
    rho = table2_rate(kap, momentum) * rho_scale
    return radius - rho, radius / rho if rho > 0 else 1.0, kap


# At a double root of the characteristic polynomial (the tuned momentum methods sit there) an eigenvalue error
# δλ ≤ c·d·eps·‖H‖ (d ≤ 5 here) moves |z| by ~sqrt(η·δλ) = O(sqrt(d·eps)) absolutely (η‖H‖ ≤ 4).
_DOUBLE_ROOT_RADIUS_TOL = 10 * np.sqrt(64 * 5 * EPS)


#: Table 2's negative controls: the rate tightened; heavy-ball's tuned radius is ρ on all of [μ̃, L̃], so any instance reaches it
_TABLE2_CONTROLS = {
    "gd": Control('rate-tightened', "the tuned radius claimed at most 0.995·ρ: false a priori, aligned clients make "
                                    "∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius is exactly ρ (the check "
                                    "evaluates one fixed aligned instance on every run, so the control fires whatever "
                                    "the seed; run with the plain random sampling off)",
                                    {'rho_scale': 0.995, 'plain_sampling': False}),
    "nesterov": Control('rate-tightened', "the tuned radius claimed at most 0.995·ρ: false a priori, aligned clients "
                                          "make ∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius is exactly "
                                          "ρ (the check evaluates one fixed aligned instance on every run, so the "
                                          "control fires whatever the seed; run with the plain random sampling off)",
                                          {'rho_scale': 0.995, 'plain_sampling': False}),
    "heavy_ball": Control("rate-tightened", "the tuned radius claimed at most 0.99·ρ: false a priori, aligned "
                                            "clients make ∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius "
                                            "is exactly ρ (this claim's own aligned draws); for heavy-ball every "
                                            "instance has radius ρ, so the probe's random phase reaches it too",
                                            {"rho_scale": 0.99}),
}


def _table2_claim(slug: str, momentum: str):
    @claim(
        id=f"localupdate/table-2/{slug}",
        ref="Table 2",
        title=f"Table 2 ({slug}): the tuned server iteration on f̃ has spectral radius at most ρ(κ)",
        statement=r"With $\kappa=\kappa(\alpha,\gamma,\Theta)$ of eq. (9), $\gamma<(L+\alpha)^{-1}$ and ServerOpt = gradient descent "
                  + {"gd": r"without momentum, $\rho=\frac{\kappa-1}{\kappa+1}$",
                     "nesterov": r"with Nesterov momentum, $\rho=1-\frac{2}{\sqrt{3\kappa+1}}$",
                     "heavy_ball": r"with heavy-ball momentum, $\rho=\frac{\sqrt\kappa-1}{\sqrt\kappa+1}$"}[momentum]
                  + r" is the convergence rate of LocalUpdate (Lessard et al. 2016, Prop. 1 tuning), read as the spectral radius of "
                    r"the linear iteration; tight when $\nabla^2\tilde f$ attains $\tilde\mu$ and $\tilde L$.",
        kind="probe",
        controls=[_TABLE2_CONTROLS[momentum]],
    )
    def check(ctx):
        rng = ctx.rng
        tol = _DOUBLE_ROOT_RADIUS_TOL
        worst, worst_ratio = -np.inf, 0.0
        tight = []
        scale = ctx.param("rho_scale", 1.0)      # a control's tightened rate
        for trial in range((60 if not ctx.full else 300) if ctx.param("plain_sampling", True) else 0):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 3 == 0)
            diff, ratio, _ = _spectral_radius_ratio(problem, theta, alpha, gamma, momentum, scale)
            worst, worst_ratio = max(worst, diff), max(worst_ratio, ratio)
            if trial % 3 == 0:
                tight.append(diff)
        # one fixed aligned (attaining) instance on every run, controls included: the radius is exactly ρ there, so
        # the tightened-rate control fires whatever the seed draws (issue 24)
        attained = _spectral_radius_ratio(*_random_instance(np.random.default_rng(20260), aligned=True), momentum,
                                          scale)[0]
        worst = max(worst, attained)
        tight.append(attained)
        result = _probe_instances(lambda inst: _spectral_radius_ratio(*inst, momentum, scale)[0], rng, ctx,
                                  n_random=(32, 256), n_starts=(2, 8), maxiter=(40, 300))
        worst = max(worst, result.worst_value)
        tight_gap = float(min(abs(t) for t in tight)) if tight else 0.0
        ok = worst <= tol and tight_gap <= tol
        return ctx.decide(
            ok,
            measured={"worst_radius_minus_rho": worst, "worst_radius_over_rho": worst_ratio,
                      "probe_worst_radius_minus_rho": result.worst_value,
                      "aligned_instances_min_abs_gap": tight_gap,
                      "probe_evaluations": result.n_evaluations, **_probe_phases(result)},
            tolerance={"absolute": tol, "why": "sqrt(eigenvalue backward error) at a double root, d ≤ 5"},
            counterexample=None if ok else {"probe": result.to_json()},
            notes="Spectral radius from the closed-form roots of each eigenvalue's characteristic polynomial; eigenvalues of "
                  "∇²f̃ = Σp_iQ_iA_i. Aligned (commuting) instances attain μ̃, L̃ so the radius equals ρ there (tightness). "
                  "Whether ρ also bounds ‖x_T − x̃*‖/‖x_0 − x̃*‖ with constant 1 is Theorem 3's claim.",
        )

    return check


table_2_no_momentum = _table2_claim("no-momentum", "gd")
table_2_nesterov = _table2_claim("nesterov", "nesterov")
table_2_heavy_ball = _table2_claim("heavy-ball", "heavy_ball")


def _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds, *, corrected=False, rho_scale=1.0):
    """Run LocalUpdate (the real driver, spectral path) with the tuned server; return per-T ratios
    ‖x_T − x*(α,γ,Θ)‖ / (c_T ρ^T ‖x_0 − x*(α,γ,Θ)‖) for the T above float64's floor, and the run's data.

    c_T = 1 is (14) as printed; ``corrected``: c_T = 1 + (1 + ρ)T (:func:`transient_constant`), with ρ
    widened by the double-root radius tolerance of the Table 2 claims (the iteration is tuned from
    float64 eigenvalue bounds, so its radius can exceed ρ by that much). ``rho_scale`` multiplies the rate
    in the bound (a negative control's tightened rate)."""
    kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    rho = table2_rate(kap, momentum)
    server = tuned_server(momentum, mu_t, L_t)
    history = run_local_update(problem, LocalUpdate(theta, alpha, gamma, server), x0, rounds).to_numpy()
    x_star = surrogate_minimizer(problem, alpha, gamma, theta)
    e0 = np.linalg.norm(x0 - x_star)
    T = np.arange(rounds + 1)
    H_eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    # cond(∇²f̃) ≤ κ (Lemma 2); the float eigenvalues cannot stand in for it (λ_min can round to ≤ 0)
    solve_error = 16 * problem.d * EPS * kap * np.linalg.norm(x_star)
    slack = 64 * (T + 1) * problem.d * EPS * (np.linalg.norm(x0) + np.linalg.norm(x_star)) + solve_error
    rho_b = (_widened_rate(rho) if corrected else rho) * rho_scale
    bound = (transient_constant(rho_b, T, momentum) if corrected else 1.0) * rho_b ** T * e0
    usable = bound >= 1e3 * slack
    ratios = (history.dist_surrogate - slack) / bound
    return ratios[usable], {"kappa": kap, "rho": rho, "server": server, "x_star": x_star, "eigs": H_eigs, "T": T[usable]}


def _best_hyperparameters(eigs, momentum: str, T: int = 300, starts: int = 4):
    """min over (η, β) of max_{1≤t≤T} c_t/ρ^t (c_t: exact worst case over x_0, :func:`worst_case_contraction`),
    ρ = Table 2's rate at κ = λ_max/λ_min: < 1 would mean some setting satisfies (14) up to T."""
    kap = float(eigs[-1] / eigs[0])
    rho = table2_rate(kap, momentum)
    tuned = tuned_server(momentum, float(eigs[0]), float(eigs[-1]))
    t = np.arange(1, T + 1)

    def log_excess(z):
        server = ServerOpt(momentum, lr=float(np.exp(z[0])), momentum=float(1 / (1 + np.exp(-z[1]))))
        c = worst_case_contraction(server, eigs, T)[1:]
        with np.errstate(divide="ignore"):
            return float(np.max(np.log(c) - t * np.log(rho)))

    z0 = np.array([math.log(tuned.lr), math.log(max(tuned.momentum, 1e-12) / max(1 - tuned.momentum, 1e-12))])
    best = min((scipy.optimize.minimize(log_excess, z0 + dz, method="Nelder-Mead",
                                        options={"maxiter": 300, "xatol": 1e-10, "fatol": 1e-12})
                for dz in ([0, 0], [0.3, -0.5], [-0.3, 0.5], [0.6, 0.6])[:starts]), key=lambda r: r.fun)
    return {"tuned_max_ratio": float(np.exp(log_excess(z0))), "best_max_ratio_over_eta_beta": float(np.exp(best.fun)),
            "best_eta": float(np.exp(best.x[0])), "best_beta": float(1 / (1 + np.exp(-best.x[1]))),
            "rate_with_constant_one_at_tuned": rate_with_constant_one(tuned, eigs, T), "rho_table2": rho, "T": T}


def _theorem3_claim(slug: str, momentum: str, expect: str):
    @claim(
        id=f"localupdate/theorem-3/{slug}",
        ref="Theorem 3",
        title=f"Theorem 3 ({slug}): ‖x_T − x*(α,γ,Θ)‖ ≤ ρ^T ‖x_0 − x*(α,γ,Θ)‖ for all T ≥ 1",
        statement=r"Suppose $\gamma<(L+\alpha)^{-1}$ and ServerOpt is gradient descent "
                  + {"gd": "with no momentum", "nesterov": "with Nesterov momentum", "heavy_ball": "with heavy-ball momentum"}[momentum]
                  + r". Then for some hyperparameter setting of ServerOpt, and $\rho$ as in Table 2, the iterates of (deterministic, "
                    r"full-participation) LocalUpdate satisfy $\|x_T-x^*(\alpha,\gamma,\Theta)\|\le\rho^T\|x_0-x^*(\alpha,\gamma,\Theta)\|$ (14).",
        kind="simulation",
        expect=expect,
        controls=[Control("rate-tightened-10pc", "the bound with 0.9ρ in place of ρ: false a priori, since for aligned "
                          "clients ∇²f̃ attains μ̃ and L̃ and the tuned iteration contracts exactly by ρ along their "
                          "eigenvectors (half the instances drawn are aligned)", {"rho_scale": 0.9})]
        if expect == "verified" else (),
    )
    def check(ctx):
        rng = ctx.rng
        worst, worst_case, worst_eigs = -np.inf, None, None
        for trial in range(30 if not ctx.full else 200):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 2 == 0)
            x0 = rng.normal(size=problem.d) * float(rng.uniform(0.1, 10))
            ratios, info = _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds=40,
                                            rho_scale=ctx.param("rho_scale", 1.0))
            if ratios.size and ratios.max() > worst:
                worst, worst_eigs = float(ratios.max()), info["eigs"]
                worst_case = {"problem": problem.to_json(), "theta": theta.weights.tolist(), "alpha": alpha,
                              "gamma": gamma, "x0": x0.tolist(), "T": int(np.argmax(ratios)), "momentum": momentum}
        result = None
        if worst <= 1:  # nothing found by sampling: let the adversary search (instances and x0)
            def violation(inst):
                problem, theta, alpha, gamma = inst
                r, _ = _theorem3_ratios(problem, theta, alpha, gamma, momentum, np.ones(problem.d), rounds=25)
                return float(r.max()) if r.size else 0.0
            result = _probe_instances(violation, rng, ctx, n=2, d=3, target=1.0, n_random=(24, 200),
                                      n_starts=(2, 8), maxiter=(30, 300))
            worst = max(worst, result.worst_value)
        measured = {"worst_ratio": worst}
        if result is not None:
            measured.update(probe_worst=result.worst_value, probe_evaluations=result.n_evaluations)
        if worst <= 1:
            return ctx.verified(measured=measured,
                                tolerance={"absolute_slack": "64·(T+1)·d·eps·(‖x0‖+‖x*‖) + 16·d·eps·cond(∇²f̃)·‖x*‖; "
                                                        "T used only while ρ^T‖e0‖ ≥ 10³·slack"},
                                notes="Tuned η = 2/(L̃+μ̃) with κ of eq. (9); gradient descent on f̃ contracts every eigen-direction "
                                      "by |1 − ηλ| ≤ (κ−1)/(κ+1) because μ̃ ≤ λ(∇²f̃) ≤ L̃ (Lemma 2), so the constant is 1.")
        if momentum != "gd":                 # the (η, β) search is about momentum (gd's control has no β)
            measured.update(_best_hyperparameters(worst_eigs, momentum))
        return ctx.refuted(measured=measured, counterexample=worst_case, notes=_THEOREM3_NOTES)

    @check.replayer
    def replay(cex, ctx):
        """Recompute the rounds of the stored instance in 60-digit arithmetic, then search (η, β)."""
        problem = QuadraticFederation.from_json(cex["problem"])
        theta, alpha, gamma = Theta(cex["theta"]), cex["alpha"], cex["gamma"]
        kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
        with mpmath.workdps(60):
            n, d = problem.n, problem.d
            mp = mpmath.mp
            H = mp.zeros(d, d)
            b = mp.zeros(d, 1)
            for i in range(n):
                A = mp.matrix(problem.A[i].tolist())
                Q = _mp_distortion(A, alpha, gamma, theta)
                H += mpmath.mpf(float(problem.p[i])) * Q * A
                b += mpmath.mpf(float(problem.p[i])) * Q * A * mp.matrix(problem.c[i].tolist())
            x_star = mp.lu_solve(H, b)
            mu_m, L_m = mpmath.mpf(mu_t), mpmath.mpf(L_t)
            kap_m = L_m / mu_m
            if momentum == "heavy_ball":
                eta = 4 / (mpmath.sqrt(L_m) + mpmath.sqrt(mu_m)) ** 2
                beta = ((mpmath.sqrt(kap_m) - 1) / (mpmath.sqrt(kap_m) + 1)) ** 2
                rho = (mpmath.sqrt(kap_m) - 1) / (mpmath.sqrt(kap_m) + 1)
            elif momentum == "nesterov":
                eta = 4 / (3 * L_m + mu_m)
                beta = (mpmath.sqrt(3 * kap_m + 1) - 2) / (mpmath.sqrt(3 * kap_m + 1) + 2)
                rho = 1 - 2 / mpmath.sqrt(3 * kap_m + 1)
            else:
                eta, beta, rho = 2 / (L_m + mu_m), mpmath.mpf(0), (kap_m - 1) / (kap_m + 1)
            x_prev = x = mp.matrix(cex["x0"])
            e0 = mpmath.norm(x - x_star)
            worst = mpmath.mpf(0)
            for T in range(1, cex["T"] + 2):
                y = x + beta * (x - x_prev) if momentum == "nesterov" else x
                x_next = (y - eta * H * (y - x_star)) if momentum != "heavy_ball" else \
                    (x - eta * H * (x - x_star) + beta * (x - x_prev))
                x_prev, x = x, x_next
                worst = max(worst, mpmath.norm(x - x_star) / (rho ** T * e0))
        measured = {"replayed_worst_ratio_60_digits": float(worst)}
        if worst > 1 and momentum != "gd":
            measured.update(_best_hyperparameters(np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta)),
                                                  momentum))
        return ctx.decide(worst <= 1, measured=measured, counterexample=cex,
                          notes="replayed in 60-digit arithmetic. " + (_THEOREM3_NOTES if worst > 1 else ""))

    return check


_THEOREM3_NOTES = (
    "Refuted as stated (constant 1 in (14), all T ≥ 1). Table 2's ρ is the spectral radius of the tuned iteration "
    "(verified in localupdate/table-2/*), but at Lessard et al.'s tuned parameters the characteristic polynomial has a "
    "double root at the extreme eigenvalues of ∇²f̃ (a Jordan block), so ‖x_T − x̃*‖ grows like T·ρ^T along those "
    "directions; and the first round (buffer empty, x_{−1} = x_0) is a plain gradient step. 'best_max_ratio_over_eta_beta' "
    "is an adversarial search over all (η, β) of max_{t≤T} (worst-case ‖x_t − x̃*‖/‖x_0 − x̃*‖)/ρ^t: it stays above 1, "
    "so no hyperparameter setting the search finds satisfies (14) — whenever ∇²f̃ attains μ̃ and L̃ (aligned clients), "
    "ρ_HB is the minimal spectral radius, so any other (η, β) has a larger radius and fails for large T. Lessard et al. "
    "give rates in the sense ‖x_T − x*‖ ≤ c·ρ^T‖x_0 − x*‖ (or ρ + ε); the proof of Theorem 3 drops the constant. "
    "With c_T = 1 + (1+ρ)T the bound holds, and for heavy-ball it is attained (localupdate/theorem-3/*-corrected).")

theorem_3_no_momentum = _theorem3_claim("no-momentum", "gd", "verified")
theorem_3_nesterov = _theorem3_claim("nesterov", "nesterov", "refuted")
theorem_3_heavy_ball = _theorem3_claim("heavy-ball", "heavy_ball", "refuted")


def _symbolic_transient_identity(momentum: str, t_max: int = 12) -> dict:
    """Prove, for t ≤ t_max, the identity behind the corrected constant, and (heavy-ball) its attainment.

    Any e_{t+1} = (z₁+z₂)e_t − z₁z₂e_{t−1} with e_{−1} = e_0 = 1 has e_t = h_t − z₁z₂h_{t−1},
    h_t = Σ_{j≤t} z₁^j z₂^{t−j} (so |e_t| ≤ (t+1)r^t + r²·t·r^{t−1} when |z_i| ≤ r). Both tuned
    momentum methods are of this form per eigenvalue (heavy-ball: z₁+z₂ = 1+β−ηλ, z₁z₂ = β; Nesterov:
    z₁+z₂ = (1+β)(1−ηλ), z₁z₂ = β(1−ηλ)). For heavy-ball at λ = L̃, 1+β−ηL̃ = −2ρ and β = ρ², a
    double root at −ρ, where e_t = (−1)^t(1+(1+ρ)t)ρ^t exactly.
    """
    z1, z2 = sp.symbols("z1 z2")
    h = [sum(z1 ** j * z2 ** (t - j) for j in range(t + 1)) for t in range(t_max + 1)]
    prev, cur = sp.Integer(1), sp.Integer(1)
    identity = True
    for t in range(1, t_max + 1):
        prev, cur = cur, sp.expand((z1 + z2) * cur - z1 * z2 * prev)
        identity &= sp.expand(cur - (h[t] - z1 * z2 * h[t - 1])) == 0
    out = {"e_t = h_t - z1 z2 h_{t-1} for t <= %d" % t_max: bool(identity)}
    if momentum == "heavy_ball":
        mu_, L_ = sp.symbols("mu L", positive=True)
        sk = sp.sqrt(L_ / mu_)
        rho_ = (sk - 1) / (sk + 1)
        eta_ = 4 / (sp.sqrt(L_) + sp.sqrt(mu_)) ** 2
        b_at_L = sp.simplify(1 + rho_ ** 2 - eta_ * L_ + 2 * rho_)
        r = sp.symbols("rho", positive=True)
        prev, cur, attained = sp.Integer(1), sp.Integer(1), True
        for t in range(1, t_max + 1):
            prev, cur = cur, sp.expand(-2 * r * cur - r ** 2 * prev)
            attained &= sp.expand(cur - (-1) ** t * (1 + (1 + r) * t) * r ** t) == 0
        out["1 + beta - eta L_tilde = -2 rho"] = b_at_L == 0
        out["e_t = (-1)^t (1+(1+rho)t) rho^t at lambda = L_tilde, t <= %d" % t_max] = bool(attained)
    return out


def _widened_rate(rho: float) -> float:
    """Table 2's ρ plus the double-root radius tolerance: the rate the corrected Theorem 3 bound is checked with."""
    return min(rho + _DOUBLE_ROOT_RADIUS_TOL, 1.0)


def _log_excess(c: np.ndarray, rho: float, momentum: str, scale: float = 1.0,
                constant_one: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """log(c_t / ((1 + (1+ρ)t) ρ^t)) for each row t of ``c`` (ρ > 0), and the rows that count: t ≥ 1 (t = 0 is
    the identity) with ρ^t inside float64's range. A negative control scales the constant by ``scale`` or puts
    1 in its place (``constant_one``: (14) as printed)."""
    t = np.arange(c.shape[0])
    t_col = t.reshape((-1,) + (1,) * (c.ndim - 1))
    constant = np.ones_like(t_col, dtype=float) if constant_one else transient_constant(rho, t_col, momentum)
    with np.errstate(divide="ignore"):
        log_ratio = np.log(c) - np.log(scale * constant) - t_col * np.log(rho)
    return log_ratio, (t >= 1) & (t * np.log(rho) > -600)


def _worst_over_spectrum(kappa_t: float, momentum: str, T: int = 200, grid: int = 801) -> tuple[float, float]:
    """max over t ≤ T and λ ∈ [1, κ̃] (dense grid with both ends) of |P_t(λ)| / (c_t ρ'^t), ρ' = ρ + τ,
    and the same ratio at λ = κ̃ with ρ itself (heavy-ball's attainment): the exact sup over x_0 and over
    every symmetric ∇²f̃ with spectrum in [μ̃, L̃] (μ̃ = 1 by scaling)."""
    lam = np.concatenate([np.linspace(1.0, kappa_t, grid), np.geomspace(1.0, kappa_t, grid)])
    server = tuned_server(momentum, 1.0, kappa_t)
    rho = table2_rate(kappa_t, momentum)
    P = np.abs(iteration_polynomials(server, lam, T))
    if rho == 0:                # κ̃ = 1: one step is exact, the bound says e_t = 0 for t ≥ 1
        return (0.0 if P[1:].max() <= 4 * EPS else np.inf), 1.0
    log_ratio, usable = _log_excess(P, _widened_rate(rho), momentum)
    at_L, usable_at_L = _log_excess(P[:, grid - 1], rho, momentum)
    return float(np.exp(log_ratio[usable].max())), float(np.exp(at_L[usable_at_L]).min())


#: the corrected Theorem 3's negative controls
_THEOREM3_CORRECTED_CONTROLS = {
    "heavy_ball": Control('constant-tightened', "the constant 0.995·(1 + (1+ρ)T): false a priori, tuned heavy-ball "
                                                "attains 1 + (1+ρ)T exactly at λ = L̃ (proved symbolically in this "
                                                "claim) Run with the check's plain random sampling off: the probe's "
                                                "random phase stays on the true side (ratio ≈ 0.994), only its "
                                                "optimizer crosses (≈ 1.004) — a probe that stopped sampling early "
                                                "would miss it.", {'constant_scale': 0.995, 'plain_sampling': False}),
    "nesterov": Control("constant-one", "(14) as printed, constant 1 for all T: false a priori, tuned Nesterov has a "
                                        "double root at +ρ (λ = μ̃) where |e_t| = (1 + (1 − ρ)t)ρ^t > ρ^t (the "
                                        "probe's random phase reaches it: every instance with κ̃ > 1 has that "
                                        "direction)", {"constant_one": True, "plain_sampling": False}),
}


def _theorem3_corrected_plain(ctx, rng, momentum: str, measured: dict) -> tuple[bool, dict | None]:
    """The corrected Theorem 3's non-adversarial part: the exact sup over a dense spectrum grid, the driver on
    random federations, and (heavy-ball) attainment on the driver; fills ``measured``, returns whether it holds
    and the driver run closest to breaking it."""
    tau = _DOUBLE_ROOT_RADIUS_TOL
    ok = True
    # the exact sup over x_0 and over all spectra in [μ̃, L̃]: the polynomial on a dense grid, κ̃ up to 10⁶
    kappas = np.concatenate([[1.0, 1.5, 4.0, 100.0, 1e6], 10 ** rng.uniform(0, 6, size=12 if not ctx.full else 60)])
    spectrum = [_worst_over_spectrum(float(k), momentum) for k in kappas]
    worst_spectrum = max(w for w, _ in spectrum)
    measured["worst_ratio_over_spectrum"] = worst_spectrum
    ok &= worst_spectrum <= 1.0
    if momentum == "heavy_ball":           # attainment at λ = L̃ up to t·τ/ρ (the double root's float split)
        at_L = [a for (_, a), k in zip(spectrum, kappas) if k > 1]
        measured["min_ratio_at_L_tilde"] = min(at_L)
        ok &= min(at_L) >= 1 - 200 * tau / table2_rate(kappas[kappas > 1].min(), momentum)
    # the real driver on random federations (d ≥ 2, unequal weights; aligned ones attain μ̃, L̃)
    worst_run, worst_case = -np.inf, None
    for trial in range(20 if not ctx.full else 120):
        problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 2 == 0)
        x0 = rng.normal(size=problem.d) * float(rng.uniform(0.1, 10))
        ratios, info = _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds=60, corrected=True)
        ratios = ratios[info["T"] >= 1]                     # T = 0 is the identity
        if ratios.size and ratios.max() > worst_run:
            worst_run = float(ratios.max())
            worst_case = _instance_json(problem, theta, alpha, gamma, x0=x0.tolist(), momentum=momentum)
    measured["worst_ratio_driver_runs"] = worst_run
    ok &= worst_run <= 1.0
    if momentum == "heavy_ball":
        # attainment on the driver: aligned clients (∇²f̃ attains L̃), x_0 − x̃* along the top eigenvector,
        # κ̃ ≤ 10⁴ so that x̃* is accurate; at T = 10 the widened ρ lowers the ratio by at most 10·2τ/ρ
        for _ in range(1000):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=True)
            if 2 <= kappa(problem, alpha, gamma, theta)[0] <= 1e4:
                break
        else:
            raise RuntimeError("no aligned instance with 2 <= kappa <= 1e4 in 1000 draws")
        H = surrogate_hessian(problem, alpha, gamma, theta)
        x0 = surrogate_minimizer(problem, alpha, gamma, theta) + np.linalg.eigh(H)[1][:, -1]
        ratios, info = _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds=10, corrected=True)
        measured["driver_ratio_top_eigenvector_T10"] = float(ratios[-1])
        ok &= ratios.size == 11 and ratios[-1] >= 1 - 10 * 2 * tau / info["rho"] - 1e-9
    return bool(ok), worst_case


def _theorem3_corrected_claim(slug: str, momentum: str):
    name = {"nesterov": "Nesterov", "heavy_ball": "heavy-ball"}[momentum]

    @claim(
        id=f"localupdate/theorem-3/{slug}-corrected",
        ref="Theorem 3",
        title=f"Theorem 3 ({name}) with the constant it needs: ‖x_T − x̃*‖ ≤ (1 + (1+ρ)T) ρ^T ‖x_0 − x̃*‖"
              + (", attained" if momentum == "heavy_ball" else ""),
        statement=r"Under Theorem 3's hypotheses ($\gamma<(L+\alpha)^{-1}$, deterministic full-participation LocalUpdate, "
                  rf"ServerOpt = gradient descent with {name} momentum at Table 2's tuned $(\eta,\beta)$, $x_{{-1}}=x_0$), "
                  r"for every $T\ge 0$: $\|x_T-x^*(\alpha,\gamma,\Theta)\|\le(1+(1+\rho)T)\,\rho^T\,\|x_0-x^*(\alpha,\gamma,\Theta)\|$ "
                  r"with $\rho$ of Table 2 at $\kappa(\alpha,\gamma,\Theta)$. This corrects (14), refuted with constant 1 "
                  rf"(localupdate/theorem-3/{slug}); it is not in the paper."
                  + (r" For heavy-ball the constant is attained: when $\nabla^2\tilde f$ attains $\tilde L$ and $x_0-x^*$ is "
                     r"its eigenvector, equality holds for every $T$." if momentum == "heavy_ball" else ""),
        kind="probe",
        controls=[_THEOREM3_CORRECTED_CONTROLS[momentum]],
    )
    def check(ctx):
        rng = ctx.rng
        tau = _DOUBLE_ROOT_RADIUS_TOL
        measured = {"symbolic": _symbolic_transient_identity(momentum)}
        ok = all(measured["symbolic"].values())
        plain = ctx.param("plain_sampling", True)
        scale, one = ctx.param("constant_scale", 1.0), ctx.param("constant_one", False)    # a control's constant
        worst_case = None
        if plain:
            plain_ok, worst_case = _theorem3_corrected_plain(ctx, rng, momentum, measured)
            ok &= plain_ok
        # the adversary: instances (non-commuting, unequal weights, any Θ, α, γ) maximizing the exact sup over x_0

        def violation(inst):
            problem, theta, alpha, gamma = inst
            kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
            eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
            c = worst_case_contraction(tuned_server(momentum, mu_t, L_t), eigs, 80)
            log_ratio, keep = _log_excess(c, _widened_rate(table2_rate(kap, momentum)), momentum, scale, one)
            return float(np.exp(log_ratio[keep].max())) if keep.any() else 0.0

        result = _probe_instances(violation, rng, ctx, target=1.0)
        measured.update(probe_worst=result.worst_value, probe_evaluations=result.n_evaluations,
                        probe_failed_evaluations=result.n_failed, **_probe_phases(result))
        ok &= result.worst_value <= 1.0 and result.n_failed == 0
        return ctx.decide(
            ok, measured=measured,
            tolerance={"rho_widened_by": tau,
                       "why": "the tuned (η, β) come from float64 bounds μ̃, L̃; at the double root an O(d·eps) eigenvalue error "
                              "moves the radius by O(sqrt(d·eps)) (the Table 2 claims' tolerance), so ρ + τ is used in the bound",
                       "driver_slack": "as localupdate/theorem-3/*: 64·(T+1)·d·eps·(‖x0‖+‖x*‖) + solve error"},
            counterexample=None if ok else {"driver": worst_case, "probe": result.to_json()},
            notes="Proof: the symbolic identity e_t = h_t − z₁z₂h_{t−1} (any two-step recursion with x_{−1} = x_0) and "
                  "|z_i| ≤ ρ (Table 2, localupdate/table-2/*) give |e_t| ≤ (t+1)ρ^t + ρ²·tρ^{t−1} in every eigendirection of "
                  "∇²f̃ = Σp_iQ_iA_i (symmetric, so the norm bound holds for the vector). "
                  + ("At λ = L̃ tuned heavy-ball has the double root −ρ and equality, so 1 + (1+ρ)T cannot be lowered; "
                     "explorer guarantees with heavy-ball use this constant." if momentum == "heavy_ball" else
                     "Tuned Nesterov has its double root at +ρ (λ = μ̃), where |e_t| = (1 + (1−ρ)t)ρ^t, so the constant "
                     "is valid, not shown tight; explorer guarantees with Nesterov use it."),
        )

    return check


theorem_3_nesterov_corrected = _theorem3_corrected_claim("nesterov", "nesterov")
theorem_3_heavy_ball_corrected = _theorem3_corrected_claim("heavy-ball", "heavy_ball")


# ============================================================================================
# Section-level statements
# ============================================================================================

@claim(
    id="localupdate/section-3/theta-1-no-distortion",
    ref="Section 3",
    title="Θ = Θ_1 gives Q_i = I (no distortion)",
    statement=r"\"When $\Theta=\Theta_1$, $Q_i(\alpha,\gamma,\Theta)=I$, in which case there is no distortion.\"",
    kind="numeric",
    controls=[Control("theta-2", "the same statement for Θ_2 = (0, 1): Q_i = I − γ(A_i + αI) ≠ I for γ > 0, false a "
                                 "priori", {"theta_2": True})],
)
def theta_1(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(30):
        problem = make_quadratic(3, 4, mu=1.0, L=float(10 ** rng.uniform(0, 3)), seed=rng)
        alpha, gamma = float(rng.uniform(0, 5)), float(rng.uniform(0, 3))      # any γ: K(Θ_1) = 1 never uses it
        from fedtheory.algorithms.surrogate import distortion_matrices
        theta = Theta.last(2) if ctx.param("theta_2", False) else Theta.uniform(1)   # control: Θ_2, Q = I − γ(A + αI)
        Q = distortion_matrices(problem, alpha, gamma, theta)
        worst = max(worst, float(np.abs(Q - np.eye(4)).max()))
        x = rng.normal(size=4)
        worst = max(worst, float(np.abs(surrogate_grad(problem, x, alpha, gamma, theta) - problem.grad(x)).max()
                                 / (problem.L * (np.abs(x).max() + problem.C))))
    return ctx.decide(worst <= 16 * EPS * 10, measured={"max_abs_Q_minus_I_or_grad_rel": worst},
                      tolerance="reassembly V diag(1) Vᵀ: ~d·eps", notes="q(λ) = θ_1 = 1 exactly for every λ, α, γ.")


@claim(
    id="localupdate/section-3/surrogate-limit",
    ref="Section 3",
    title="As γ → 0 or K → 1, f̃(x, α, γ, Θ) → w(Θ) f(x)",
    statement=r"\"As $\gamma\to0$ or $K\to1$, $\tilde f(x,\alpha,\gamma,\Theta)\to w(\Theta)f(x)$\" (up to the constant of "
              r"$f$; in Hessians and gradients), $w(\Theta)=\sum_k\theta_k$.",
    kind="numeric",
    controls=[Control("first-weight-limit", "the γ → 0 limit claimed as θ_1·f instead of w(Θ)·f: false a priori "
                                            "whenever K(Θ) ≥ 2 (Q(α, 0, Θ) = w(Θ)I)", {"first_weight": True})],
)
def surrogate_limit(ctx):
    """∇²f̃ − w(Θ)∇²f is exactly 0 at γ = 0 and for K(Θ) = 1 (at every γ), and is O(γ) otherwise: the ratio
    ‖·‖/γ converges as γ → 0.

    For K(Θ) = 1 the difference is rounding alone, so ‖·‖/γ grows like eps/γ: those instances are held to the
    exact tolerance at every γ instead of the ratio's convergence (a ratio of rounding errors says nothing about
    the limit). A fixed instance with K(Θ) = 3 (θ_1 = 1 ≠ w = 3) is evaluated on every run, so the control fires
    whatever the seed draws."""
    rng = ctx.rng
    worst_exact, slopes = 0.0, []
    fixed = (make_quadratic(2, 3, mu=1.0, L=10.0, weights="random", seed=20260), Theta.uniform(3), 0.5, 0.0)
    for problem, theta, alpha, _ in [fixed] + [_random_instance(rng) for _ in range(10)]:
        H0 = surrogate_hessian(problem, alpha, 0.0, theta)
        wA = theta.w * problem.mean_hessian()
        # control: the γ → 0 limit claimed as θ_1·f (the first weight) instead of w(Θ)·f
        limit = theta.weights[0] * problem.mean_hessian() if ctx.param("first_weight", False) else wA
        worst_exact = max(worst_exact, float(np.abs(H0 - limit).max() / np.abs(wA).max()))
        H1 = surrogate_hessian(problem, alpha, 0.3 / (problem.L + alpha), Theta([theta.weights[-1]]))
        worst_exact = max(worst_exact, float(np.abs(H1 - theta.weights[-1] * problem.mean_hessian()).max() / np.abs(wA).max()))
        g = np.array([1e-2, 1e-3, 1e-4]) / (problem.L + alpha)
        gaps = [np.abs(surrogate_hessian(problem, alpha, gi, theta) - wA).max() for gi in g]
        if len(theta.weights) == 1:     # K(Θ) = 1: no distortion at any γ, the exact case
            worst_exact = max(worst_exact, float(max(gaps) / np.abs(wA).max()))
            continue
        errs = [gap / gi for gap, gi in zip(gaps, g)]
        slopes.append(abs(errs[-1] - errs[-2]) / max(errs[-1], 1e-300))
    ok = worst_exact <= 64 * EPS and max(slopes) <= 0.1
    return ctx.decide(ok, measured={"exact_cases_max_rel": worst_exact, "O_gamma_ratio_variation_max": float(max(slopes)),
                                    "instances_with_K_at_least_2": len(slopes)},
                      tolerance="exact cases (γ = 0, or K(Θ) = 1 at any γ) ≤ 64·eps; for K(Θ) ≥ 2, ‖∇²f̃ − wĀ‖/γ varies "
                                "by ≤ 10% between γ = 1e-3 and 1e-4 (a limit)",
                      notes="Q(α, 0, Θ) = w(Θ)I and Q = θ_1 I for K(Θ) = 1; otherwise Q = wI + O(γ).")


@claim(
    id="localupdate/section-4.1/kappa-last-limits",
    ref="Section 4.1",
    title="κ(α,γ,Θ_K) → L/μ as K → 1 or γ → 0; exponential reduction in K otherwise",
    statement=r"\"As $K\to1$ or $\gamma\to0$, $\kappa(\alpha,\gamma,\Theta_K)\to L/\mu$ [...] If $\gamma$ is not close to 0, we get "
              r"an exponential reduction (in terms of $K$) of the condition number\" (bound (13)).",
    kind="numeric",
    controls=[Control("doubled-exponent", "log κ claimed to fall by 2·log((1−γ(L+α))/(1−γ(μ+α))) per unit of K "
                                          "(exponent 2(K − 1) in (13)): false a priori for γ > 0, L > μ",
                                          {"step_factor": 2.0})],
)
def kappa_last_limits(ctx):
    rng = ctx.rng
    worst_k1, worst_g0, worst_lin = 0.0, 0.0, 0.0
    for _ in range(100):
        L = float(10 ** rng.uniform(0.1, 4))
        alpha = float(rng.choice([0.0, rng.uniform(0, 3 * L)]))
        worst_k1 = max(worst_k1, abs(kappa_bound_last(1.0, L, alpha, rng.uniform(0, 1) / (L + alpha), 1) / L - 1))
        K = int(10 ** rng.uniform(0.5, 4))
        worst_g0 = max(worst_g0, abs(kappa_bound_last(1.0, L, alpha, 1e-12 / (K * L + alpha), K) / L - 1))
        g = 0.5 / (K * L + alpha)
        logs = np.log(kappa_bound_last(1.0, L, alpha, g, np.array([K, K + 1, K + 2])))
        # control: a step twice as large (log κ read with exponent 2(K − 1))
        step = ctx.param("step_factor", 1.0) * (np.log1p(-g * (L + alpha)) - np.log1p(-g * (1.0 + alpha)))
        worst_lin = max(worst_lin, float(np.abs(np.diff(logs) - step).max() / abs(step)))
    ok = worst_k1 <= 4 * EPS and worst_g0 <= 1e-8 and worst_lin <= 1e-6
    return ctx.decide(ok, measured={"K1_rel_error": worst_k1, "gamma_1e-12_rel_gap": worst_g0,
                                    "log_kappa_step_vs_constant": worst_lin},
                      tolerance="K = 1 exact to 4 eps; γ = 1e-12/(KL+α): gap ≤ 1e-8 (∝ γK(L−μ)); log κ linear in K to 1e-6",
                      notes="log κ = (K−1)·log((1−γ(L+α))/(1−γ(μ+α))) + log(L/μ): geometric (exponential) decay in K "
                            "at a rate that vanishes only as γ → 0.")


def _kappa_uniform_sample(rng):
    L = float(10 ** rng.uniform(0.05, 4))
    alpha = float(rng.choice([0.0, 10 ** rng.uniform(-3, 3)]))
    gamma = float(rng.uniform(0, 1)) / (L + alpha)
    K = int(10 ** rng.uniform(0, 6))
    return L, alpha, gamma, K


@claim(
    id="localupdate/section-4.1/kappa-uniform-at-most-kappa0",
    ref="Section 4.1",
    title="κ(α,γ,Θ_{1:K}) ≤ L/μ",
    statement=r"\"One can show that $\kappa(\alpha,\gamma,\Theta_{1:K})\le L/\mu$\" ($\gamma<(L+\alpha)^{-1}$), for the bound "
              r"(11) and for $\kappa$ of eq. (9).",
    kind="probe",
    controls=[Control("bound-tightened-1pc", "κ(α,γ,Θ_{1:K}) ≤ 0.99·L/μ claimed: false a priori, K = 1 (or γ = 0) "
                                             "gives κ = L/μ exactly (the check's random draws include K = 1, so this "
                                             "control does not isolate the optimizer)", {"margin": 0.01})],
)
def kappa_uniform_le(ctx):
    rng = ctx.rng
    lam, p, alpha, gamma, K, mu, L = _spectra_batch(rng, 3000 if not ctx.full else 30000, last=False)
    worst_bound = max(kappa_bound_uniform(1.0, Li, ai, gi, Ki) / Li for Li, ai, gi, Ki in zip(L, alpha, gamma, K))

    def eq9(inst):
        lam, p, alpha, gamma, K, mu, L = inst
        lq = _log_q(lam, alpha[:, None], gamma[:, None], K[:, None], False) + np.log(lam)
        return np.sum(p * np.exp(lq.max(axis=2)), axis=1) / np.sum(p * np.exp(lq.min(axis=2)), axis=1) / (L / mu)

    worst_eq9 = float(eq9((lam, p, alpha, gamma, K, mu, L)).max())
    res = probe(lambda inst: float(eq9(inst)[0]), _spectra_param(False), seed=rng, n_random=64,
                n_starts=3 if not ctx.full else 10, maxiter=200 if not ctx.full else 2000, options=_FEV[ctx.full])
    worst = max(worst_bound, worst_eq9, res.worst_value)
    return ctx.decide(worst <= (1 + 4 * EPS) * (1 - ctx.param("margin", 0.0)), measured={"worst_bound_over_kappa0": worst_bound, "worst_eq9_over_kappa0": worst_eq9,
                                                    "probe_eq9_worst": res.worst_value},
                      tolerance={"ratio": "1 + 4 eps"},
                      notes="q(λ) = Σ_k ξ^{k−1} is non-increasing in λ, so φ(L)/φ(μ) = (L/μ)·q(L)/q(μ) ≤ L/μ.")


@claim(
    id="localupdate/section-4.1/kappa-uniform-equality-iff",
    ref="Section 4.1",
    title="κ(α,γ,Θ_{1:K}) = L/μ iff α = 0 and (γ = 0 or K = 1)",
    statement=r"\"[...] $\kappa(\alpha,\gamma,\Theta_{1:K})\le L/\mu$, with equality if and only if $\alpha=0$, and either "
              r"$\gamma=0$ or $K=1$.\"",
    kind="symbolic",
    expect="refuted",
)
def kappa_uniform_iff(ctx):
    """α = 1 with K = 1 (FedProx with one local step): κ = L/μ exactly although α ≠ 0 (also α > 0 with γ = 0)."""
    L, alpha, gamma, K = 10.0, 1.0, 0.05, 1
    kap = kappa_bound_uniform(1.0, L, alpha, gamma, K)
    problem = QuadraticFederation(A=[[[L, 0.0], [0.0, 1.0]]], c=[[0.0, 0.0]], p=[1.0])
    k9 = kappa(problem, alpha, gamma, Theta.uniform(K))[0]
    equal = kap == L and k9 == L
    return ctx.decide(not equal, measured={"kappa_bound": kap, "kappa_eq9": k9, "kappa0": L},
                      counterexample={"mu": 1, "L": 10, "alpha": 1, "gamma": "1/20", "K": 1},
                      notes="With one local step the proximal term α(x_1 − x) vanishes, and with γ = 0 every local gradient "
                            "is taken at x; in both cases Q = w(Θ)I and κ = L/μ whatever α. The correct statement: "
                            "equality iff γ = 0 or K = 1 (for L > μ); the 'only if α = 0' part is false.")


@kappa_uniform_iff.replayer
def _(cex, ctx):
    L, mu, K = sp.Integer(cex["L"]), sp.Integer(cex["mu"]), int(cex["K"])
    a, g = sp.Rational(cex["alpha"]), sp.Rational(cex["gamma"])
    lam = sp.Symbol("lambda")
    phi_expr = sum((1 - g * (lam + a)) ** k for k in range(K)) * lam
    kap = sp.simplify(phi_expr.subs(lam, L) / phi_expr.subs(lam, mu))
    also = sp.simplify((sum((1 - 0 * (lam + a)) ** k for k in range(5)) * lam).subs(lam, L)
                       / (sum((1 - 0 * (lam + a)) ** k for k in range(5)) * lam).subs(lam, mu))
    return ctx.decide(not (kap == L / mu and a != 0), measured={"kappa_exact": str(kap), "alpha": str(a),
                                                                "gamma_zero_K5_alpha_1_kappa": str(also)},
                      counterexample=cex, notes="exact (sympy): equality with α ≠ 0")


@claim(
    id="localupdate/section-4.1/kappa-uniform-decreasing",
    ref="Section 4.1",
    title="κ(α,γ,Θ_{1:K}) decreases as K → ∞ or γ → (L + α)^{-1}",
    statement=r"\"$\kappa(\alpha,\gamma,\Theta_{1:K})$ decreases as $K\to\infty$ or $\gamma\to(L+\alpha)^{-1}$\": the bound (11) is "
              r"non-increasing in $K$ and in $\gamma\in[0,(L+\alpha)^{-1})$.",
    kind="probe",
    controls=[Control("uniform-decrease", "κ claimed to fall by a factor 1 − 10⁻³ at each step in K or γ: false a "
                                          "priori, since κ → 1 as K → ∞ (and is flat at γ → 0), so consecutive "
                                          "ratios tend to 1", {"factor": 1 - 1e-3})],
)
def kappa_uniform_decreasing(ctx):
    rng = ctx.rng
    worst_K, worst_g = 0.0, 0.0
    for _ in range(2000 if not ctx.full else 20000):
        L, alpha, gamma, K = _kappa_uniform_sample(rng)
        K2 = K + int(rng.integers(1, 1000))
        k = kappa_bound_uniform(1.0, L, alpha, gamma, np.array([K, K2]))
        worst_K = max(worst_K, k[1] / k[0])
        g2 = gamma + float(rng.uniform(0, 1)) * (1 / (L + alpha) - gamma)
        k = kappa_bound_uniform(1.0, L, alpha, np.array([gamma, g2]), K)
        worst_g = max(worst_g, k[1] / k[0])

    def viol(z):
        L = 10 ** (0.05 + 4 * (1 + math.sin(z[0])) / 2)
        alpha = 10 ** (3 * math.sin(z[1])) if z[5] > 0 else 0.0
        g1 = (1 + math.sin(z[2])) / 2 / (L + alpha) * (1 - 1e-12)
        g2 = g1 + (1 + math.sin(z[3])) / 2 * (1 / (L + alpha) - g1) * (1 - 1e-12)
        K = int(round(10 ** (5 * (1 + math.sin(z[4])) / 2)))
        k = kappa_bound_uniform(1.0, L, alpha, np.array([g1, g2, g1]), np.array([K, K, K + 1]))
        return max(k[1] / k[0], k[2] / k[0])

    res = probe(viol, Custom(6, lambda z: z), seed=rng, n_random=64, n_starts=3 if not ctx.full else 10,
                maxiter=100 if not ctx.full else 600, options=_FEV[ctx.full])
    worst = max(worst_K, worst_g, res.worst_value)
    # control: a uniform rate of decrease, κ(next) ≤ (1 − 10⁻³)κ
    return ctx.decide(worst <= (1 + 8 * EPS) * ctx.param("factor", 1.0),
                      measured={"worst_ratio_K": worst_K, "worst_ratio_gamma": worst_g,
                                                      "probe_worst": res.worst_value},
                      tolerance={"ratio": "1 + 8 eps (log-space closed forms)"},
                      notes="Checked for every α ≥ 0 (the text states it alongside the α-monotonicity claims).")


def _alpha_claim(last: bool, expect: str):
    kind_name = "last" if last else "uniform"

    def pair(L, K, g_frac, a1, a2):
        limit = 1 / ((K * L if last else L) + a2)
        gamma = g_frac * limit
        fn = kappa_bound_last if last else kappa_bound_uniform
        k = fn(1.0, L, np.array([a1, a2]), gamma, K)
        return float(k[1] / k[0]), gamma

    def check(ctx):
        rng = ctx.rng
        worst, worst_args = 0.0, None
        for _ in range(2000 if not ctx.full else 20000):
            L = float(10 ** rng.uniform(0.05, 3))
            K = int(10 ** rng.uniform(0, 4))
            a1 = float(rng.choice([0.0, 10 ** rng.uniform(-2, 2)]))
            a2 = a1 + float(10 ** rng.uniform(-2, 2))
            gf = float(rng.uniform(0, 1))
            r, gamma = pair(L, K, gf, a1, a2)
            if r > worst:
                worst, worst_args = r, {"mu": 1.0, "L": L, "K": K, "gamma": gamma, "alpha1": a1, "alpha2": a2}
        ok = worst <= (1 + 8 * EPS) * ctx.param("factor", 1.0)      # control: a uniform rate of decrease
        return ctx.decide(ok, measured={"worst_kappa_ratio_alpha2_over_alpha1": worst, "instance": worst_args},
                          counterexample=None if ok else dict(worst_args, theta=kind_name),
                          tolerance={"ratio": "1 + 8 eps"},
                          notes=("For Θ_K the ratio (1−γ(L+α))/(1−γ(μ+α)) decreases in α, so (13) decreases (γ fixed "
                                 "and admissible for both α)." if last else
                                 "For Θ_{1:K} and large K, κ → L(μ+α)/(μ(L+α)), which increases from 1 at α = 0: a proximal "
                                 "term prevents the K → ∞ one-shot-averaging limit (the paper's own Figure 3 shows this). "
                                 "For small K the ratio can decrease, so the statement holds only in part."))

    return check


alpha_uniform = claim(
    id="localupdate/section-4.1/alpha-decreases-kappa-uniform", ref="Section 4.1",
    title="Increasing α decreases κ for Θ_{1:K}",
    statement=r"\"For both $\Theta_{1:K}$ and $\Theta_K$, increasing $\alpha$ decreases $\kappa$\" — here $\Theta_{1:K}$, bound (11), "
              r"$\gamma$ fixed with $\gamma<(L+\alpha)^{-1}$ for both $\alpha$.",
    kind="probe", expect="refuted")(_alpha_claim(False, "refuted"))

alpha_last = claim(
    id="localupdate/section-4.1/alpha-decreases-kappa-last", ref="Section 4.1",
    title="Increasing α decreases κ for Θ_K",
    statement=r"\"For both $\Theta_{1:K}$ and $\Theta_K$, increasing $\alpha$ decreases $\kappa$\" — here $\Theta_K$, bound (13), "
              r"$\gamma$ fixed with $\gamma<(KL+\alpha)^{-1}$ for both $\alpha$.",
    kind="probe",
    controls=[Control("uniform-decrease", "κ claimed to fall by a factor 1 − 10⁻³ whenever α increases: false a "
                                          "priori, "
                      "the ratio tends to 1 as α₂ → α₁ or K = 1 (κ = L/μ for every α)", {"factor": 1 - 1e-3})])(
    _alpha_claim(True, "verified"))


@alpha_uniform.replayer
def _(cex, ctx):
    with mpmath.workdps(50):
        L, K, g = mpmath.mpf(cex["L"]), int(cex["K"]), mpmath.mpf(cex["gamma"])

        def kap(a):
            def ph(lam):
                s = g * (lam + a)
                return (1 - (1 - s) ** K) / s * lam
            return ph(L) / ph(mpmath.mpf(1))

        r = kap(mpmath.mpf(cex["alpha2"])) / kap(mpmath.mpf(cex["alpha1"]))
    return ctx.decide(r <= 1, measured={"kappa_ratio_50_digits": float(r)}, counterexample=cex,
                      notes="replayed in 50-digit arithmetic")


@claim(
    id="localupdate/section-4.1/theta-k-beyond-threshold",
    ref="Section 4.1",
    title="For γ ≥ 1/(KL + α), cond(f̃(Θ_K)) depends on intermediate eigenvalues (and (13) no longer bounds it)",
    statement=r"\"When $\gamma\ge(KL+\alpha)^{-1}$, $\operatorname{cond}(\tilde f(x,\alpha,\gamma,\Theta_K))$ depends on intermediate "
              r"eigenvalues of the $A_i$\"; for $\gamma<(KL+\alpha)^{-1}$ it depends only on $\mu$ and $L$ (for clients attaining both).",
    kind="numeric",
    controls=[Control("inside-regime", "the dependence on intermediate eigenvalues claimed at γKL = 0.9 < 1, inside "
                                       "Lemma 4's regime: false a priori (there ψ is increasing on [μ, L], so cond = "
                                       "ψ(L)/ψ(μ))", {"gamma_beyond": 0.9 / 2000})],
)
def beyond_threshold(ctx):
    L, alpha, K = 10.0, 0.0, 200
    mids = np.linspace(1.5, 9.5, 9)

    def cond(gamma, mid):
        problem = QuadraticFederation(A=[np.diag([1.0, mid, L])], c=[[0.0, 0.0, 0.0]], p=[1.0])
        ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, Theta.last(K)))
        return ev[-1] / ev[0]

    inside = [cond(0.5 / (K * L + alpha), m) for m in mids]
    # γ·K·L = 2 ≥ 1; control: "beyond" taken inside the regime (γKL = 0.9), where Lemma 4 says cond depends on μ, L only
    g_beyond = ctx.param("gamma_beyond", 0.001)
    beyond = [cond(g_beyond, m) for m in mids]
    spread_in = (max(inside) - min(inside)) / min(inside)
    spread_out = (max(beyond) - min(beyond)) / min(beyond)
    bound_violated = max(beyond) > float(np.exp((K - 1) * (np.log1p(-g_beyond * L) - np.log1p(-g_beyond))) * L) * (1 + 1e-9)
    ok = spread_in <= 1e-12 and spread_out > 0.1 and bound_violated
    return ctx.decide(ok, measured={"relative_spread_inside_regime": spread_in, "relative_spread_beyond": spread_out,
                                    "cond_beyond_max": max(beyond), "bound13_formula_beyond": float(
                                        np.exp((K - 1) * (np.log1p(-0.001 * L) - np.log1p(-0.001))) * L)},
                      tolerance="inside: spread ≤ 1e-12; beyond: spread > 10%",
                      notes="Beyond the threshold ψ(λ) = (1 − γλ)^{K−1}λ peaks at λ* = 1/(Kγ) ∈ (μ, L), so the intermediate "
                            "eigenvalue nearest λ* sets λ_max; the formula (13) then underestimates cond(f̃).")


@claim(
    id="localupdate/section-4.2/deterministic-is-serveropt-on-surrogate",
    ref="Section 4.2",
    title="Deterministic LocalUpdate is ServerOpt applied to the exact gradients of f̃",
    statement=r"\"Theorem 1 implies that $q_t=\nabla\tilde f(x_t,\alpha,\gamma,\Theta)$, so LocalUpdate is equivalent to applying "
              r"ServerOpt to the true gradients of $\tilde f$\" (all clients, full batches, $q_t=\mathbb E_{i\sim\mathcal P}[q_t^i]$).",
    kind="simulation",
    controls=[Control("reference-step-off", "the driver equated with ServerOpt at a server step 0.1 % larger: a "
                                            "different iteration, false a priori (the iterates drift apart by ~1e-3 "
                                            "relative within 30 rounds)", {"reference_lr_factor": 1.001})],
)
def deterministic_serveropt(ctx):
    """The driver's literal local steps (stepwise path) vs gradient descent, heavy-ball, Nesterov and Adam written here
    on ∇f̃ (surrogate_grad), iterate for iterate."""
    rng = ctx.rng
    worst = 0.0
    for kind in ("gd", "heavy_ball", "nesterov", "adam"):
        problem, theta, alpha, gamma = _random_instance(rng, K_max=12)
        H = surrogate_hessian(problem, alpha, gamma, theta)
        lr = 1.0 / np.linalg.eigvalsh(H)[-1] if kind != "adam" else 0.05
        server = ServerOpt(kind, lr=lr, momentum=None if kind == "adam" else (0.0 if kind == "gd" else 0.6))
        x0 = rng.normal(size=problem.d)
        h = run_local_update(problem, LocalUpdate(theta, alpha, gamma, server), x0, 30, path="stepwise").to_numpy()
        lr = lr * ctx.param("reference_lr_factor", 1.0)        # control: the reference's step off by 0.1 %
        xs, x, x_prev, m, v = [x0], x0.copy(), x0.copy(), 0.0, 0.0
        for t in range(1, 31):
            if kind == "gd":
                x_new = x - lr * surrogate_grad(problem, x, alpha, gamma, theta)
            elif kind == "heavy_ball":
                x_new = x - lr * surrogate_grad(problem, x, alpha, gamma, theta) + 0.6 * (x - x_prev)
            elif kind == "nesterov":
                y = x + 0.6 * (x - x_prev)
                x_new = y - lr * surrogate_grad(problem, y, alpha, gamma, theta)
            else:
                g = surrogate_grad(problem, x, alpha, gamma, theta)
                m = 0.9 * m + 0.1 * g
                v = 0.999 * v + 0.001 * g * g
                x_new = x - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
            x_prev, x = x, x_new
            xs.append(x)
        scale = max(np.abs(np.array(xs)).max(), problem.C)
        worst = max(worst, float(np.abs(h.x - np.array(xs)).max() / scale))
    tol = 1e-10
    return ctx.decide(worst <= tol, measured={"max_relative_iterate_gap": worst},
                      tolerance={"relative": tol, "why": "K ≤ 12 literal local steps vs the spectral gradient, 30 rounds; "
                                                         "Adam divides by √v, amplifying rounding near v ≈ 0"},
                      notes="Momentum buffers start empty (x_{−1} = x_0) in both.")


@claim(
    id="localupdate/section-4.2/momentum-keeps-accuracy",
    ref="Section 4.2",
    title="Server momentum does not change the point LocalUpdate converges to",
    statement=r"\"Since ServerOpt does not change the surrogate loss, this improvement in convergence does not degrade the "
              r"accuracy of the learned model\": with tuned gradient descent, Nesterov or heavy-ball momentum the iterates "
              r"converge to the same $x^*(\alpha,\gamma,\Theta)$.",
    kind="simulation",
    controls=[Control("empirical-minimizer", "the iterates claimed to converge to x* (the minimizer of f) instead of "
                                             "x*(α,γ,Θ): false a priori for heterogeneous clients with K(Θ) ≥ 2, γ > "
                                             "0 (Section 5: only γ = 0 or K = 1 reaches critical points of f)",
                                             {"target": "empirical"})],
)
def momentum_accuracy(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(4):
        problem, theta, alpha, gamma = _random_instance(rng, K_max=10)
        _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
        x_tilde = surrogate_minimizer(problem, alpha, gamma, theta)
        if ctx.param("target", "surrogate") == "empirical":     # control: the empirical minimizer x* instead
            x_tilde = problem.x_star()
        for m in ("gd", "nesterov", "heavy_ball"):
            h = run_local_update(problem, LocalUpdate(theta, alpha, gamma, tuned_server(m, mu_t, L_t)),
                                 rng.normal(size=problem.d), 3000).to_numpy()
            worst = max(worst, float(np.linalg.norm(h.x[-1] - x_tilde) / max(np.linalg.norm(x_tilde), 1)))
    tol = 1e-8
    return ctx.decide(worst <= tol, measured={"max_final_distance_to_x_tilde": worst},
                      tolerance={"relative": tol, "why": "3000 rounds at rate ≤ (κ−1)/(κ+1), κ ≤ 10³: converged to ~1e-10 "
                                                         "unless κ is near 10³; then the float floor cond·eps"},
                      notes="Every server method's fixed point solves ∇f̃(x) = 0.")


@claim(
    id="localupdate/section-4.2/kappa-rho-decrease-in-gamma-and-k",
    ref="Section 4.2",
    title="Increasing γ or K decreases κ (11), (13) and therefore ρ",
    statement=r"\"Given the bounds (11) and (13) [...] one can show that increasing $\gamma$ or $K$ decreases $\kappa$ (and "
              r"therefore $\rho$)\" — for $\Theta_K$ within $\gamma<(KL+\alpha)^{-1}$.",
    kind="probe",
    controls=[Control("uniform-decrease", "κ and ρ claimed to fall by 10⁻³ (relative) whenever γ or K increases: "
                                          "false a priori, the change tends to 0 as γ₂ → γ₁ or as γ → 0",
                                          {"min_decrease": 1e-3})],
)
def kappa_rho_decrease(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(2000 if not ctx.full else 20000):
        L = float(10 ** rng.uniform(0.05, 3))
        alpha = float(rng.choice([0.0, 10 ** rng.uniform(-2, 2)]))
        K = int(10 ** rng.uniform(0, 4))
        K2 = K + int(rng.integers(1, 100))
        g2 = float(rng.uniform(0, 1)) / (K2 * L + alpha)       # admissible for K and K2
        g1 = g2 * float(rng.uniform(0, 1))
        k = kappa_bound_last(1.0, L, alpha, np.array([g1, g2, g1]), np.array([K, K, K2]))
        for m in ("gd", "nesterov", "heavy_ball"):
            r = table2_rate(k, m)
            worst = max(worst, (r[1] - r[0]) / max(r[0], 1e-300), (r[2] - r[0]) / max(r[0], 1e-300))
        worst = max(worst, k[1] / k[0] - 1, k[2] / k[0] - 1)
    # control: a uniform relative decrease of 10⁻³
    return ctx.decide(worst <= 16 * EPS - ctx.param("min_decrease", 0.0), measured={"worst_relative_increase": worst},
                      tolerance="16 eps", notes="Θ_{1:K} is covered by localupdate/section-4.1/kappa-uniform-decreasing; "
                                                "ρ is increasing in κ for every momentum type.")


@claim(
    id="localupdate/section-4.3/fedavg-fewer-rounds",
    ref="Section 4.3",
    title="FedAvg can reach a neighbourhood of x* in fewer rounds than (mini-batch) SGD, without ever reaching x*",
    statement=r"\"FedAvg can arrive at a neighborhood of a critical point in fewer communication rounds than mini-batch SGD, but "
              r"may not ever actually reach the critical point.\"",
    kind="simulation",
    controls=[Control("reach-x-star", "FedAvg claimed to reach x* itself (radius 0) in fewer rounds: false a priori, "
                                      "its iterates converge to x*(α,γ,Θ) ≠ x* and never hit x* exactly",
                                      {"radius_factor": 0.0})],
)
def fedavg_fewer_rounds(ctx):
    """An instance (clients sharing an eigenbasis, so f itself has L/μ = 100): FedAvg Θ_{1:50}, γ = 1/(2L) vs K = 1 (full-batch gradient descent
    on f, SGD's deterministic limit), both with Table 2's tuned server step; rounds to reach ‖x_t − x*‖ ≤ r."""
    rng = ctx.rng
    problem = make_quadratic(4, 5, mu=1.0, L=100.0, C=1.0, weights="random", commuting=True, seed=rng)
    x0 = problem.x_star() + 10 * rng.normal(size=5)
    results = {}
    for name, theta, gamma in (("fedavg", Theta.uniform(50), 1 / 200), ("sgd", Theta.uniform(1), 0.0)):
        _, L_t, mu_t = kappa(problem, 0.0, gamma, theta)
        h = run_local_update(problem, LocalUpdate(theta, 0.0, gamma, tuned_server("gd", mu_t, L_t)), x0, 2000).to_numpy()
        results[name] = h.dist_empirical
    floor = minimizer_distance(problem, 0.0, 1 / 200, Theta.uniform(50))
    r = ctx.param("radius_factor", 3.0) * floor     # control: radius 0, i.e. FedAvg reaching x* itself
    first = {k: int(np.argmax(v <= r)) if np.any(v <= r) else None for k, v in results.items()}
    ok = first["fedavg"] is not None and first["sgd"] is not None and first["fedavg"] < first["sgd"] \
        and abs(results["fedavg"][-1] - floor) <= 1e-9 * max(floor, 1) and results["fedavg"].min() > 0.1 * floor > 1e-7
    return ctx.decide(ok, measured={"neighbourhood_radius": r, "rounds_to_reach": first,
                                    "fedavg_min_distance": float(results["fedavg"].min()), "fedavg_floor": floor,
                                    "sgd_final_distance": float(results["sgd"][-1])},
                      notes="An existence statement, shown on one seeded instance: FedAvg enters the neighbourhood first, "
                            "then settles at the floor ‖x*(α,γ,Θ) − x*‖ > 0 (its iterates pass closer to x* on the way, "
                            "but never reach it); gradient descent on f converges to x*.")


@claim(
    id="localupdate/section-5/critical-points-iff",
    ref="Section 5",
    title="LocalUpdate is guaranteed to converge to critical points of f only if γ = 0 or K(Θ) = 1",
    statement=r"\"By Theorem 1, LocalUpdate is only guaranteed to converge to critical points of $f$ if $\gamma=0$ or "
              r"$K(\Theta)=1$\": $x^*(\alpha,\gamma,\Theta)=x^*$ for every instance when $\gamma=0$ or $K(\Theta)=1$, and not "
              r"in general otherwise.",
    kind="numeric",
    controls=[Control("two-steps-equal", "x*(α,γ,Θ) = x* claimed for Θ_{1:2} with γ > 0: false a priori for "
                                         "heterogeneous clients (Q_i = 2I − γ(A_i + αI) differ between clients)",
                                         {"two_steps": True})],
)
def critical_points(ctx):
    rng = ctx.rng
    worst_equal, min_unequal = 0.0, np.inf
    for _ in range(30):
        problem, theta, alpha, gamma = _random_instance(rng)
        x = problem.x_star()
        worst_equal = max(worst_equal, float(np.linalg.norm(surrogate_minimizer(problem, alpha, 0.0, theta) - x)
                                             / max(np.linalg.norm(x), 1)))
        one_step = Theta.uniform(2) if ctx.param("two_steps", False) else Theta([2.0])   # control: K = 2 "equal"
        worst_equal = max(worst_equal, float(np.linalg.norm(surrogate_minimizer(problem, alpha, gamma, one_step) - x)
                                             / max(np.linalg.norm(x), 1)))
        if theta.K >= 2 and gamma > 0 and problem.n >= 2:
            min_unequal = min(min_unequal, minimizer_distance(problem, alpha, gamma, theta) / max(np.linalg.norm(x), 1))
    ok = worst_equal <= 1e-10 and min_unequal > 1e-8
    return ctx.decide(ok, measured={"gamma0_or_K1_max_distance": worst_equal, "otherwise_min_distance": min_unequal},
                      tolerance="equal cases ≤ 1e-10 relative (solves with cond ≤ 10³); unequal > 1e-8",
                      notes="'Not in general': random heterogeneous instances with K ≥ 2, γ > 0 all have x*(α,γ,Θ) ≠ x*.")


@claim(
    id="localupdate/section-5/rho-delta-in-unit-square",
    ref="Section 5",
    title="ρ, Δ ∈ [0, 1] for Θ_{1:K} and Θ_K in their lemmas' regimes",
    statement=r"\"Note that $\rho,\Delta\in[0,1]$\" (Table 2 and eq. (17), $\Theta_{1:K}$ with $\gamma<(L+\alpha)^{-1}$, $\Theta_K$ "
              r"with $\gamma<(KL+\alpha)^{-1}$).",
    kind="probe",
    controls=[Control("upper-0.99", "ρ, Δ claimed in [0, 0.99]: false a priori, ρ_GD = (κ₀ − 1)/(κ₀ + 1) > 0.99 at K "
                                    "= 1 once L/μ > 199 (L/μ ranges up to 10⁴)", {"upper": 0.99})],
)
def rho_delta_unit(ctx):
    rng = ctx.rng
    lo, hi = np.inf, -np.inf
    for _ in range(2000 if not ctx.full else 20000):
        L = float(10 ** rng.uniform(0.0, 4))
        alpha = float(rng.choice([0.0, 10 ** rng.uniform(-2, 2)]))
        K = int(10 ** rng.uniform(0, 6))
        last = rng.uniform() < 0.5
        gamma = float(rng.uniform(0, 1)) / ((K * L if last else L) + alpha)
        kap = (kappa_bound_last if last else kappa_bound_uniform)(1.0, L, alpha, gamma, K)
        vals = [table2_rate(kap, m) for m in ("gd", "nesterov", "heavy_ball")] + [suboptimality_delta(L, kap)]
        lo, hi = min(lo, min(vals)), max(hi, max(vals))
    ok = lo >= -8 * EPS and hi <= ctx.param("upper", 1.0)      # control: [0, 0.99]
    return ctx.decide(ok, measured={"min_value": lo, "max_value": hi},
                      tolerance="[−8 eps, 1]: at γ → 0 the bound κ rounds a few ulps above κ₀, so Δ rounds to −1e-16",
                      notes="Needs 1 ≤ κ ≤ κ₀ (the bounds (11), (13) within the lemmas' regimes). Beyond Lemma 4's regime "
                            "(simulated MAML) κ can exceed κ₀ and eq. (17) goes negative; Appendix D.1's Lemma-5 form "
                            "stays in [0, 1] (figures/localupdate.py uses it).")


@claim(
    id="localupdate/section-5/heavy-ball-symmetry-conjecture",
    ref="Section 5",
    title="Conjecture: heavy-ball Pareto frontiers are symmetric about ρ = Δ (for any μ, L) — proved",
    statement=r"\"The Pareto frontiers for heavy-ball momentum appear to be symmetric about the line $\rho=\Delta$. We conjecture "
              r"this is true for any $\mu,L$.\" ($\rho=\frac{\sqrt\kappa-1}{\sqrt\kappa+1}$, $\Delta$ of eq. (17), $\kappa$ ranging "
              r"over $(1,\kappa_0]$.)",
    kind="symbolic",
)
def heavy_ball_symmetry(ctx):
    """Proof: ρ_HB(κ) = g(κ), Δ(κ) = g(κ₀/κ) with g(r) = (√r − 1)/(√r + 1); so the reflection (ρ, Δ) ↦ (Δ, ρ) is
    κ ↦ κ₀/κ, a bijection of [1, κ₀]. Numerically: analytic frontiers for random μ, L (K up to 10⁹) are symmetric to
    the grid's resolution."""
    r = symt.heavy_ball_symmetry_residuals()
    rng = ctx.rng
    worst = 0.0
    for _ in range(6 if not ctx.full else 30):
        L = float(10 ** rng.uniform(0.3, 3))
        alpha = 0.0
        from fedtheory.analysis.pareto import frontier_uniform, log_K_grid
        fr = frontier_uniform(1.0, L, alpha, gammas=1 / (2 * L), Ks=log_K_grid(10**9, 1500), momentum="heavy_ball")
        d = _distance_to_curve(fr["delta"], fr["rho"], fr["rho"], fr["delta"])
        worst = max(worst, float(d.max()))
    ok = r == (0, 0) and worst <= 2e-3
    return _proved_if(ctx, _PROOFS["heavy_ball_symmetry"], ok, measured={"symbolic_residuals": str(r), "max_distance_reflected_to_curve": worst},
                      tolerance={"numeric": "2e-3: the polyline through 1500 log-spaced K interpolates a curve"},
                      notes="The 'root cause' the authors ask for: both coordinates are the same Möbius function of √ of a "
                            "condition-number ratio, ρ of κ/1 and Δ of κ₀/κ. Symmetry of the whole curve needs the path to "
                            "cover κ ∈ [1, κ₀] (α = 0, K → ∞); a proximal α > 0 or a bounded K truncates it.")


@claim(
    id="localupdate/section-a/fedavg-is-localupdate",
    ref="Appendix A",
    title="FedAvg (local SGD with model averaging) is LocalUpdate with Θ_{1:K}, server GD with η = γ",
    statement=r"With $M$ sampled clients each taking $K$ mini-batch SGD steps of rate $\gamma$ and $x_{t+1}=\frac1M\sum_{i\in I_t}x_t^i$: "
              r"$x_{t+1}=x_t-\gamma\frac1M\sum_{i\in I_t}\sum_kg_k^i$, i.e. LocalUpdate with $\Theta_{1:K}$ and ServerOpt = GD, $\eta=\gamma$ "
              r"(FedProx alike with $\alpha>0$).",
    kind="simulation",
    controls=[_TABLE1_CONTROL],
)
def fedavg_is_localupdate(ctx):
    seed = int(ctx.rng.integers(2**31))
    fed = LeastSquaresFederation.random(6, [10, 14, 9, 12, 20, 11], 4, seed=seed)
    worst = 0.0
    for alpha in (0.0, 0.7):
        K, gamma, B, M, T = 5, 0.05, 3, 3, 20
        algo = LocalUpdate(Theta.uniform(K + ctx.param("extra_step", False)), alpha, gamma, ServerOpt("gd", lr=gamma))
        h = run_local_update(fed, algo, np.zeros(4), T, batch_size=B, clients_per_round=M, seed=seed).to_numpy()
        ref = _model_averaging_reference(fed, np.zeros(4), T, K, gamma, alpha, B, M, seed)
        worst = max(worst, float(np.abs(h.x - ref).max() / max(np.abs(ref).max(), 1)))
    return ctx.decide(worst <= 1e-12, measured={"max_relative_iterate_gap": worst}, tolerance={"relative": 1e-12},
                      notes="Reference: clients' models averaged (Appendix A), the same seeded client and batch draws "
                            "as the driver (clients i.i.d. from P, then K batches per client).")


def _ls_batch_grad(fed, i, S, x):
    a, y = fed.a[i, S], fed.y[i, S]
    return a.T @ (a @ x - y) / len(S)


def _draws(rng, fed, M, B, n_batches, scheme="with_replacement"):
    """The driver's draw order per round: clients (Algorithm 1's I_t), then n_batches batches per client."""
    from fedtheory.problems.finite_sum import sample_batches

    if M is None:
        idx = np.arange(fed.n)
    elif scheme == "with_replacement":
        idx = rng.choice(fed.n, size=M, replace=True, p=fed.p / fed.p.sum())
    else:
        idx = rng.choice(fed.n, size=M, replace=False)
    batches = [sample_batches(rng, fed.counts, B, idx) for _ in range(n_batches)] if B is not None else None
    return idx, batches


def _model_averaging_reference(fed, x0, T, K, gamma, alpha, B, M, seed):
    rng = np.random.default_rng(seed)
    x = x0.copy()
    xs = [x.copy()]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, K)
        models = []
        for j, i in enumerate(idx):
            xi = x.copy()
            for k in range(K):
                xi = xi - gamma * (_ls_batch_grad(fed, i, batches[k][j], xi) + alpha * (xi - x))
            models.append(xi)
        x = np.mean(models, axis=0)
        xs.append(x.copy())
    return np.array(xs)


@claim(
    id="localupdate/section-a/model-delta-conflates-rates",
    ref="Appendix A",
    title="Model-delta averaging uses the product ηγ; at γ = 0 it makes no progress, LocalUpdate does",
    statement=r"With $x_{t+1}=x_t-\frac\eta M\sum_{i\in I_t}(x_t-x_t^i)$: $x_{t+1}=x_t-\frac{\eta\gamma}M\sum_i\sum_kg_k^i$ "
              r"(LocalUpdate with server rate $\eta\gamma$), so at $\gamma=0$, $x_{t+1}=x_t$, while LocalUpdate with $\gamma=0$ "
              r"and $\eta>0$ (FedSGD) moves.",
    kind="simulation",
    controls=[Control("server-rate-eta", "model-delta averaging equated with LocalUpdate at server rate η instead of "
                                         "ηγ: false a priori for γ ≠ 1 (the local steps carry the factor γ)",
                                         {"server_rate": "eta"})],
)
def model_delta(ctx):
    seed = int(ctx.rng.integers(2**31))
    fed = LeastSquaresFederation.random(4, 12, 3, seed=seed)
    K, gamma, eta, B, M, T = 4, 0.04, 2.5, 4, 2, 15
    server_lr = eta * gamma if ctx.param("server_rate", "eta*gamma") == "eta*gamma" else eta
    h = run_local_update(fed, LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=server_lr)), np.ones(3), T,
                         batch_size=B, clients_per_round=M, seed=seed).to_numpy()
    rng = np.random.default_rng(seed)
    x = np.ones(3)
    xs = [x.copy()]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, K)
        delta = np.zeros(3)
        for j, i in enumerate(idx):
            xi = x.copy()
            for k in range(K):
                xi = xi - gamma * _ls_batch_grad(fed, i, batches[k][j], xi)
            delta += (x - xi) / M
        x = x - eta * delta
        xs.append(x.copy())
    gap = float(np.abs(h.x - np.array(xs)).max())
    frozen = run_local_update(fed, LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=eta * 0.0 + 1e-300)),
                              np.ones(3), 3, seed=seed).to_numpy()
    moves = run_local_update(fed, LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=0.1)), np.ones(3), 3,
                             seed=seed).to_numpy()
    ok = gap <= 1e-12 and np.abs(frozen.x[-1] - 1).max() < 1e-250 and np.abs(moves.x[-1] - 1).max() > 1e-3
    return ctx.decide(ok, measured={"model_delta_vs_localupdate_eta_gamma": gap,
                                    "localupdate_gamma0_moves_by": float(np.abs(moves.x[-1] - 1).max())},
                      tolerance={"iterates": 1e-12},
                      notes="Model-delta at γ = 0 is LocalUpdate with server rate ηγ = 0 (represented by a 1e-300 step, "
                            "ServerOpt needs lr > 0): x stays put; decoupled LocalUpdate (η independent of γ) is FedSGD.")


# ============================================================================================
# Table 1: special cases of LocalUpdate, run on the driver against literal implementations
# ============================================================================================

def _table1_run(fed, algo, x0, T, *, B, M, seed, scheme="with_replacement", extra_step: bool = False):
    """The driver's iterates; ``extra_step`` (a negative control) appends one local step to Θ (an off-by-one in K)."""
    if extra_step:
        algo = LocalUpdate(Theta(np.r_[algo.theta.weights, algo.theta.weights[-1]]), algo.alpha, algo.gamma, algo.server)
    return run_local_update(fed, algo, x0, T, batch_size=B, clients_per_round=M, client_sampling=scheme,
                            seed=seed).to_numpy().x



def _table1_decide(ctx, gap, what, notes=""):
    return ctx.decide(gap <= 1e-12, measured={"max_relative_iterate_gap": gap}, tolerance={"relative": 1e-12,
                      "why": "same float64 operations up to summation order"},
                      notes=f"Reference: {what}, written literally in this claim; the same seeded client and batch draws "
                            f"as the driver (clients, then each step's mini-batch). " + notes)


def _rel_gap(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1.0))


def _table1_fed(ctx, n):
    seed = int(ctx.rng.integers(2**31))
    return LeastSquaresFederation.random(n, [9 + 2 * i for i in range(n)], 3, seed=seed), seed


@claim(id="localupdate/table-1/minibatch-sgd", ref="Table 1",
       title="Mini-batch SGD = LocalUpdate with Θ_1, |P| = 1, α = 0, γ = 0",
       statement=r"Table 1: with one client, $\Theta=\Theta_1$, $\alpha=0$, $\gamma=0$ and ServerOpt = GD, LocalUpdate is "
                 r"mini-batch SGD $x_{t+1}=x_t-\eta\frac1B\sum_{z\in S_t}\nabla f(x_t;z)$.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_sgd(ctx):
    fed, seed = _table1_fed(ctx, 1)
    eta, B, T = 0.05, 4, 25
    xs = _table1_run(fed, LocalUpdate(Theta.uniform(1), 0.0, 0.0, ServerOpt("gd", lr=eta)), np.zeros(3), T,
                     B=B, M=None, seed=seed, extra_step=ctx.param("extra_step", False))
    rng, x, ref = np.random.default_rng(seed), np.zeros(3), [np.zeros(3)]
    for _ in range(T):
        _, batches = _draws(rng, fed, None, B, 1)
        x = x - eta * _ls_batch_grad(fed, 0, batches[0][0], x)
        ref.append(x.copy())
    return _table1_decide(ctx, _rel_gap(xs, ref), "SGD on the client's mini-batches")


@claim(id="localupdate/table-1/lookahead", ref="Table 1",
       title="Lookahead = LocalUpdate with Θ_{1:K}, |P| = 1, α = 0, γ > 0",
       statement=r"Table 1 (Zhang et al., 2019): $K$ fast SGD steps of rate $\gamma$ from the slow weights $\phi$, then "
                 r"$\phi\leftarrow\phi+a(\theta_K-\phi)$ — LocalUpdate with one client, $\Theta_{1:K}$, server GD with $\eta=a\gamma$.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_lookahead(ctx):
    fed, seed = _table1_fed(ctx, 1)
    K, gamma, a, B, T = 5, 0.05, 0.5, 3, 20
    xs = _table1_run(fed, LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=a * gamma)), np.zeros(3), T,
                     B=B, M=None, seed=seed, extra_step=ctx.param("extra_step", False))
    rng, phi_w, ref = np.random.default_rng(seed), np.zeros(3), [np.zeros(3)]
    for _ in range(T):
        _, batches = _draws(rng, fed, None, B, K)
        fast = phi_w.copy()
        for k in range(K):
            fast = fast - gamma * _ls_batch_grad(fed, 0, batches[k][0], fast)
        phi_w = phi_w + a * (fast - phi_w)
        ref.append(phi_w.copy())
    return _table1_decide(ctx, _rel_gap(xs, ref), "Lookahead's fast/slow weights")


@claim(id="localupdate/table-1/fedsgd", ref="Table 1",
       title="FedSGD = LocalUpdate with Θ_{1:K}, α = 0, γ = 0",
       statement=r"Table 1: with $\gamma=0$ every local gradient is taken at $x_t$, so each client sends $\sum_{k\le K}g_k(x_t)$: "
                 r"FedSGD (McMahan et al., 2017) with $K$ mini-batches per client.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_fedsgd(ctx):
    fed, seed = _table1_fed(ctx, 5)
    K, eta, B, M, T = 3, 0.02, 3, 3, 20
    xs = _table1_run(fed, LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=eta)), np.zeros(3), T,
                     B=B, M=M, seed=seed, extra_step=ctx.param("extra_step", False))
    rng, x, ref = np.random.default_rng(seed), np.zeros(3), [np.zeros(3)]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, K)
        q = sum(sum(_ls_batch_grad(fed, i, batches[k][j], x) for k in range(K)) for j, i in enumerate(idx)) / M
        x = x - eta * q
        ref.append(x.copy())
    return _table1_decide(ctx, _rel_gap(xs, ref), "FedSGD: K mini-batch gradients at the server point per client")


@claim(id="localupdate/table-1/fedavg-reptile", ref="Table 1",
       title="FedAvg / Reptile = LocalUpdate with Θ_{1:K}, α = 0, γ > 0",
       statement=r"Table 1: Reptile (Nichol et al., 2018) — each task runs $K$ SGD steps to $\tilde\phi_i$ and "
                 r"$x\leftarrow x+\epsilon\frac1M\sum_i(\tilde\phi_i-x)$ — is LocalUpdate with $\Theta_{1:K}$, server GD $\eta=\epsilon\gamma$ "
                 r"($\epsilon=1$: FedAvg, Appendix A).",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_reptile(ctx):
    fed, seed = _table1_fed(ctx, 5)
    K, gamma, eps_meta, B, M, T = 4, 0.05, 0.7, 3, 2, 20
    xs = _table1_run(fed, LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=eps_meta * gamma)), np.zeros(3),
                     T, B=B, M=M, seed=seed, scheme="without_replacement", extra_step=ctx.param("extra_step", False))
    rng, x, ref = np.random.default_rng(seed), np.zeros(3), [np.zeros(3)]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, K, scheme="without_replacement")
        step = np.zeros(3)
        for j, i in enumerate(idx):
            phi_i = x.copy()
            for k in range(K):
                phi_i = phi_i - gamma * _ls_batch_grad(fed, i, batches[k][j], phi_i)
            step += (fed.n * fed.p[i] / M) * (phi_i - x)
        x = x + eps_meta * step
        ref.append(x.copy())
    return _table1_decide(ctx, _rel_gap(xs, ref), "Reptile's meta-step on the tasks' adapted weights",
                          "Clients sampled without replacement, weighted n·p_i/M (unbiased; the paper's experiments).")


@claim(id="localupdate/table-1/fedprox", ref="Table 1",
       title="FedProx / MetaMinibatchProx = LocalUpdate with Θ_{1:K}, α > 0, γ > 0",
       statement=r"Table 1: clients take $K$ SGD steps on $f_i(\cdot)+\frac\alpha2\|\cdot-x_t\|^2$ and the server averages the "
                 r"models — LocalUpdate with $\Theta_{1:K}$, $\alpha>0$, server GD $\eta=\gamma$.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_fedprox(ctx):
    fed, seed = _table1_fed(ctx, 5)
    K, gamma, alpha, B, M, T = 5, 0.05, 1.3, 3, 3, 20
    xs = _table1_run(fed, LocalUpdate(Theta.uniform(K), alpha, gamma, ServerOpt("gd", lr=gamma)), np.zeros(3), T,
                     B=B, M=M, seed=seed, extra_step=ctx.param("extra_step", False))
    ref = _model_averaging_reference(fed, np.zeros(3), T, K, gamma, alpha, B, M, seed)
    return _table1_decide(ctx, _rel_gap(xs, ref), "proximal local SGD with model averaging")


@claim(id="localupdate/table-1/fomaml", ref="Table 1",
       title="FOMAML = LocalUpdate with Θ_K, α = 0, γ > 0",
       statement=r"Table 1: first-order MAML — adapt with $K-1$ SGD steps, send the (first-order) gradient at the adapted point, "
                 r"meta-step with rate $\beta$ — is LocalUpdate with $\Theta_K$, server GD $\eta=\beta$.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_fomaml(ctx):
    fed, seed = _table1_fed(ctx, 5)
    K, gamma, beta, B, M, T = 4, 0.05, 0.1, 3, 3, 20
    xs = _table1_run(fed, LocalUpdate(Theta.last(K), 0.0, gamma, ServerOpt("gd", lr=beta)), np.zeros(3), T,
                     B=B, M=M, seed=seed, extra_step=ctx.param("extra_step", False))
    rng, x, ref = np.random.default_rng(seed), np.zeros(3), [np.zeros(3)]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, K)
        g = np.zeros(3)
        for j, i in enumerate(idx):
            phi_i = x.copy()
            for k in range(K - 1):
                phi_i = phi_i - gamma * _ls_batch_grad(fed, i, batches[k][j], phi_i)
            g += _ls_batch_grad(fed, i, batches[K - 1][j], phi_i) / M
        x = x - beta * g
        ref.append(x.copy())
    return _table1_decide(ctx, _rel_gap(xs, ref), "FOMAML's adapted-point gradient")


@claim(id="localupdate/table-1/maml", ref="Table 1",
       title="MAML = LocalUpdate with Θ_{2K+1}, α = 0, on quadratics (full batch; Theorem 2)",
       statement=r"Table 1: MAML with $K$ full-batch inner steps on quadratic clients is LocalUpdate with $\Theta_{2K+1}$, $\alpha=0$.",
       kind="simulation", controls=[_TABLE1_CONTROL])
def table1_maml(ctx):
    """Three runs, iterate for iterate: the driver with MAML clients (exact Jacobians through the inner steps, stepwise
    path), the driver with LocalUpdate(Θ_{2K+1}), and MAML written here with dense Jacobian products."""
    rng = ctx.rng
    problem = make_quadratic(4, 4, mu=1.0, L=20.0, weights="random", seed=rng)
    K, gamma, beta, T = 3, 0.02, 0.05, 25
    server = ServerOpt("gd", lr=beta)
    a = run_local_update(problem, MAML(K, gamma, server), np.zeros(4), T, path="stepwise").to_numpy().x
    # control: Θ_{2K+2} (an off-by-one in K) in place of Θ_{2K+1}
    b = run_local_update(problem, LocalUpdate(Theta.last(2 * K + 1 + ctx.param("extra_step", False)), 0.0, gamma,
                                              server), np.zeros(4), T, path="stepwise").to_numpy().x
    x, ref = np.zeros(4), [np.zeros(4)]
    for _ in range(T):
        g = np.zeros(4)
        for i in range(problem.n):
            X, J = x.copy(), np.eye(4)
            for _k in range(K):
                X = X - gamma * problem.A[i] @ (X - problem.c[i])
                J = (np.eye(4) - gamma * problem.A[i]) @ J
            g += problem.p[i] * (J.T @ problem.A[i] @ (X - problem.c[i]))
        x = x - beta * g
        ref.append(x.copy())
    gap = max(_rel_gap(a, ref), _rel_gap(b, ref))
    return _table1_decide(ctx, gap, "MAML by dense forward Jacobians J = Π(I − γA_i)",
                          "The driver's MAML uses the reverse recursion (numpy) or torch autograd (torch backend).")


# ============================================================================================
# Statements about the figures (computed by figures/localupdate.py's data functions)
# ============================================================================================

def _nonlinearity(x, y) -> float:
    """Max distance of the curve from the chord joining its ends, relative to the chord's length."""
    i, j = int(np.argmax(x)), int(np.argmin(x))
    n = np.array([y[j] - y[i], -(x[j] - x[i])])
    length = float(np.hypot(*n))
    return float(np.abs((x - x[i]) * n[0] + (y - y[i]) * n[1]).max() / length ** 2 * length)


@claim(id="localupdate/figure-1/nearly-identical-for-l5", ref="Figure 1",
       title="Figure 1: for L = 5, varying K and varying γ give nearly identical curves",
       statement=r"\"When $L=5$, we obtain nearly identical curves\" (Figure 1: $\gamma=0.01$, $K$ varied vs $K=100$, $\gamma$ varied).",
       kind="numeric", controls=[Control("l50", "the same reading for L = 50: false a priori, the γ-path there stops "
                                                "at ρ = ρ(1/(1 − (1 − μ/L)^100)) ≈ 0.15 (the closed-form γ-limit of "
                                                "(11)), not ρ ≈ 0", {"series": 1})])
def fig1_identical(ctx):
    d = _figure_data(1, ctx.seed)
    which = ctx.param("series", 0)          # control: L = 50 (series 1)
    kx, ky = _xy(d["panels"][0]["series"][which])
    gx, gy = _xy(d["panels"][1]["series"][which])
    gap = float(_distance_to_curve(gx, gy, kx, ky).max())
    overlap = float(_distance_to_curve(kx[kx >= gx.min()], ky[kx >= gx.min()], gx, gy).max())
    ok = max(gap, overlap) <= 0.01 and gx.min() <= 1e-3
    return ctx.decide(ok, measured={"gamma_curve_to_K_curve_max_distance": gap, "K_curve_to_gamma_curve_max_distance": overlap,
                                    "gamma_path_min_rho": float(gx.min())},
                      tolerance="'nearly identical' read as: every point within 0.01 of the other curve (1% of the unit "
                                "square) in both directions, and both reach ρ ≈ 0 (≤ 1e-3)")


@claim(id="localupdate/figure-1/l50-gamma-path-misses-rho-zero", ref="Figure 1",
       title="Figure 1: for L = 50, fixing K = 100 and varying γ does not reach ρ ≈ 0 (varying K does)",
       statement=r"\"The curves for $L=50$ are similar, except that when we fix $K$ and vary $\gamma$, we do not reach $\rho\approx0$. "
                 r"[...] varying $K$ leads [to] a larger set of attainable $(\rho,\Delta)$.\"",
       kind="numeric", controls=[Control("l5", "the same reading for L = 5: false a priori, there the γ-limit of "
                                               "(11) is 1/(1 − 0.8^100) = 1 + 2e-10, so the γ-path reaches ρ ≈ 0",
                                               {"series": 0})])
def fig1_l50(ctx):
    d = _figure_data(1, ctx.seed)
    which = ctx.param("series", 1)          # control: L = 5 (series 0)
    kx, ky = _xy(d["panels"][0]["series"][which])
    gx, gy = _xy(d["panels"][1]["series"][which])
    similar = float(_distance_to_curve(gx, gy, kx, ky).max())
    ok = gx.min() >= 0.05 and kx.min() <= 1e-3 and similar <= 0.01 and kx.min() < gx.min() and kx.max() >= gx.max()
    return ctx.decide(ok, measured={"gamma_path_min_rho": float(gx.min()), "K_path_min_rho": float(kx.min()),
                                    "gamma_points_to_K_curve": similar},
                      tolerance="ρ ≈ 0 read as ρ ≤ 1e-3; 'does not reach' as min ρ ≥ 0.05; 'similar' as within 0.01",
                      notes="The γ-path's attainable set is a proper subset of the K-path's: same curve, shorter range.")


@claim(id="localupdate/figure-1/gamma-limit-vs-k-limit", ref="Figure 1",
       title="Figure 1: lim_{γ→1/L} κ(0,γ,Θ_{1:K}) = 1/(1 − (1 − μ/L)^K) > 1, while K → ∞ gives κ → 1",
       statement=r"\"Formally, this is because in (11), $\lim_{\gamma\to L^{-1}}(\kappa)\neq0$. Intuitively, $K\to\infty$ recovers "
                 r"one-shot averaging while $\gamma\to L^{-1}$ does not\" — read as: the γ-limit of κ exceeds 1 ($\rho>0$), the "
                 r"$K$-limit equals 1 ($\rho=0$).",
       kind="numeric", controls=[Control("exponent-99", "the γ-limit with exponent K − 1 = 99: false a priori (it "
                                                        "differs from the limit at K = 100 by a factor ~(1 − μ/L)^99 "
                                                        "μ/L ≫ 1e-9 at L = 50)", {"k_offset": -1})])
def fig1_limit(ctx):
    rows = []
    ok = True
    for L in (5.0, 50.0):
        limit = 1 / (1 - (1 - 1 / L) ** (100 + ctx.param("k_offset", 0)))     # control: exponent 99
        near = kappa_bound_uniform(1.0, L, 0.0, (1 - 1e-12) / L, 100)
        far = kappa_bound_uniform(1.0, L, 0.0, 0.01, 10**9)
        rows.append({"L": L, "gamma_limit_closed_form": limit, "gamma_near_1_over_L": near, "K_1e9": far})
        ok &= abs(near / limit - 1) < 1e-9 and limit > 1 and abs(far - 1) < 1e-9
    rho50 = table2_rate(rows[1]["gamma_limit_closed_form"], "gd")
    data_min = float(_xy(_figure_data(1, ctx.seed)["panels"][1]["series"][1])[0].min())
    ok &= abs(data_min - rho50) < 1e-3
    return ctx.decide(ok, measured={"rows": rows, "L50_rho_limit": rho50, "figure_gamma_path_min_rho": data_min},
                      tolerance="closed form vs γ = (1 − 1e-12)/L to 1e-9; figure's minimum within 1e-3 of the limit",
                      notes="κ is always ≥ 1; the paper's '≠ 0' means κ ↛ 1 (ρ ↛ 0): at γ = 1/L, φ(L) = L·1/(γL) and "
                            "φ(μ) = (1 − (1 − μ/L)^K)/γ.")


@claim(id="localupdate/figure-1/closer-to-linear-as-l-decreases", ref="Figure 1",
       title="Figure 1: the trade-off is closer to linear for L/μ = 5 than for 50",
       statement=r"\"Notably, the convergence-accuracy trade-off becomes closer to a linear trade-off as $L/\mu$ decreases.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (L = 5 against L = 5): false a priori (a "
                                                            "strict inequality between equal numbers), so the "
                                                            "check's comparison is seen to come out false",
                                                            {"self": True})])
def fig1_linear(ctx):
    d = _figure_data(1, ctx.seed)
    dev = [_nonlinearity(*_xy(s)) for s in d["panels"][0]["series"]]
    if ctx.param("self", False):
        dev = [dev[0], dev[0]]
    return ctx.decide(dev[0] < dev[1], measured={"nonlinearity_L5": dev[0], "nonlinearity_L50": dev[1]},
                      tolerance="strict ordering of the max distance from the chord (relative to its length)")


@claim(id="localupdate/figure-2/strict-ordering-of-momentum", ref="Figure 2",
       title="Figure 2: heavy-ball better than Nesterov better than no momentum",
       statement=r"\"We see a strict ordering of the server optimization methods. Heavy-ball momentum is better than Nesterov "
                 r"momentum, which is better than no momentum.\"",
       kind="symbolic")
def fig2_order(ctx):
    d = _figure_data(2, ctx.seed)
    margin = np.inf
    for p in d["panels"]:
        s = _series_by_label(p)
        rg, rn, rh = (np.asarray(s[k]["x"]) for k in ("no momentum", "Nesterov", "heavy-ball"))
        kap = np.asarray(s["no momentum"]["params"]["kappa"])
        inner = kap > 1 + 1e-9
        margin = min(margin, float(np.min(rg[inner] - rn[inner])), float(np.min(rn[inner] - rh[inner])))
        same_delta = np.allclose(s["no momentum"]["y"], s["heavy-ball"]["y"]) and np.allclose(s["no momentum"]["y"], s["Nesterov"]["y"])
        if not same_delta:
            margin = -1.0
    sym_ok = symt.momentum_ordering_factors() == (0, 0)
    return _proved_if(ctx, _PROOFS["fig2_order"], margin > 0 and sym_ok, measured={"min_rho_gap_at_equal_delta": margin, "symbolic": sym_ok},
                      tolerance="strict: positive gaps wherever κ > 1",
                      notes="At each K all three share Δ (eq. 17 depends on κ only) and ρ_HB < ρ_N < ρ_GD for every κ > 1: "
                            "(κ+1)² − (3κ+1) = κ(κ−1) and (3κ+1) − (√κ+1)² = 2√κ(√κ−1) (proved symbolically).")


@claim(id="localupdate/figure-2/momentum-benefit-grows-with-l", ref="Figure 2",
       title="Figure 2: the benefit of momentum is more pronounced as L/μ increases",
       statement=r"\"One important finding is that the benefit of momentum is more pronounced as $L/\mu$ increases.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (every panel replaced by the smallest "
                                                            "L's): false a priori (a strict inequality between equal "
                                                            "numbers), so the check's comparison is seen to come out "
                                                            "false", {"self": True})])
def fig2_benefit(ctx):
    """Benefit = rounds saved: at equal Δ (same K), a server with rate ρ needs ∝ 1/log(1/ρ) rounds, so the speed-up
    of heavy-ball (and Nesterov) over no momentum is log ρ_mom / log ρ_GD; compared at Δ = 0 (K = 1) and at its
    maximum over the frontier. The raw distance ρ_GD − ρ_HB on the plot is reported too (it does not grow)."""
    d = _figure_data(2, ctx.seed)
    speedup_hb, speedup_n, speedup_max, gaps, areas = [], [], [], [], []
    for p in ([d["panels"][0]] * len(d["panels"]) if ctx.param("self", False) else d["panels"]):
        s = _series_by_label(p)
        rg, rn, rh = (np.asarray(s[k]["x"]) for k in ("no momentum", "Nesterov", "heavy-ball"))
        dl = np.asarray(s["no momentum"]["y"])
        inner = rg > 1e-6
        sp_h = np.log(rh[inner]) / np.log(rg[inner])
        speedup_hb.append(float(sp_h[0]))
        speedup_n.append(float(np.log(rn[0]) / np.log(rg[0])))
        speedup_max.append(float(sp_h.max()))
        gaps.append(float(rg[0] - rh[0]))
        order = np.argsort(dl)
        areas.append(float(np.trapezoid((rg - rh)[order], dl[order])))
    ok = all(np.diff(speedup_hb) > 0) and all(np.diff(speedup_n) > 0) and all(np.diff(speedup_max) > 0)
    return ctx.decide(ok, measured={"L": d["params"]["L"], "rounds_speedup_heavy_ball_at_delta0": speedup_hb,
                                    "rounds_speedup_nesterov_at_delta0": speedup_n,
                                    "rounds_speedup_heavy_ball_max_over_frontier": speedup_max,
                                    "plot_gap_rho_gd_minus_hb_at_delta0": gaps, "plot_area_between_gd_and_hb": areas},
                      tolerance="strictly increasing in L (speed-ups in communication rounds)",
                      notes="Read as convergence benefit (rounds to a given accuracy ∝ 1/log(1/ρ)): ~√κ for heavy-ball. "
                            "Measured as horizontal distance on the (ρ, Δ) plot the gap at Δ = 0 shrinks with L (curves "
                            "crowd toward ρ = 1), so the statement holds in rounds, not in plotted ρ.")


@claim(id="localupdate/figure-2/heavy-ball-frontier-symmetric", ref="Figure 2",
       title="Figure 2: the heavy-ball frontiers are symmetric about ρ = Δ",
       statement=r"\"The Pareto frontiers for heavy-ball momentum appear to be symmetric about the line $\rho=\Delta$.\"",
       kind="numeric", controls=[Control("no-momentum", "the no-momentum frontier claimed symmetric about ρ = Δ: "
                                                        "false a priori — its end points are ((κ₀−1)/(κ₀+1), 0) and "
                                                        "(0, (√κ₀−1)/(√κ₀+1)), which are not reflections of each "
                                                        "other", {"series": "no momentum"})])
def fig2_symmetric(ctx):
    d = _figure_data(2, ctx.seed)
    worst = 0.0
    for p in d["panels"]:
        x, y = _xy(_series_by_label(p)[ctx.param("series", "heavy-ball")])     # control: "no momentum"
        worst = max(worst, float(_distance_to_curve(y, x, x, y).max()))
    return ctx.decide(worst <= 5e-3, measured={"max_distance_of_reflected_points_to_curve": worst},
                      tolerance="5e-3: 400 log-spaced K; the reflection of a point lies on the curve but between grid points",
                      notes="Exact for the underlying curve: localupdate/section-5/heavy-ball-symmetry-conjecture.")


def _planted(series: dict, ctx) -> dict:
    """The series, with a point planted at (1.5, 1.5) — outside the unit square every (ρ, Δ) lies in — when a
    negative control asks for it (``planted``)."""
    if not ctx.param("planted", False):
        return series
    return dict(series, x=np.r_[np.asarray(series["x"], float), 1.5], y=np.r_[np.asarray(series["y"], float), 1.5])


def _on_curve_and_range(sub, ref, tol=2e-3):
    sx, sy = _xy(sub)
    rx, ry = _xy(ref)
    dist = float(_distance_to_curve(sx, sy, rx, ry).max())
    return dist, dist <= tol


@claim(id="localupdate/figure-3/alpha-frontier-subset-of-fedavg", ref="Figure 3",
       title="Figure 3: changing α does not bring the frontier closer to 0; α > 0 gives a subset of the α = 0 frontier",
       statement=r"\"In all settings we examined, changing $\alpha$ did not bring the Pareto frontier closer to 0. Instead, the "
                 r"frontier for $\alpha>0$ was simply a subset of the frontier for $\alpha=0$.\" \"FedAvg can always attain the "
                 r"same $(\rho,\Delta)$ as FedProx [...] The reverse is not true, as FedProx cannot recover one-shot averaging.\"",
       kind="numeric", controls=[Control("reversed-inclusion", "the α = 0 frontier claimed a subset of the largest "
                                                               "α's: false a priori, α = 0 reaches one-shot "
                                                               "averaging (κ → 1) while α > 0 caps κ at "
                                                               "L(μ+α)/(μ(L+α)) > 1", {"swap": True})])
def fig3_subset(ctx):
    d = _figure_data(3, ctx.seed)
    series_ = d["panels"][0]["series"]
    if ctx.param("swap", False):        # control: the α = 0 frontier claimed a subset of the largest α's
        series_ = [series_[-1], series_[0]]
    base = series_[0]
    dists = {s["label"]: _on_curve_and_range(s, base)[0] for s in series_[1:]}
    min_rho = {s["label"]: float(np.min(s["x"])) for s in series_}
    ok = max(dists.values()) <= 2e-3 and min_rho[base["label"]] <= 1e-3 and min(list(min_rho.values())[1:]) > 0.05
    return ctx.decide(ok, measured={"max_distance_to_alpha0_curve": dists, "min_rho": min_rho},
                      tolerance="on the α = 0 curve within 2e-3 (polyline interpolation); one-shot averaging = ρ ≤ 1e-3",
                      notes="Every analytic (ρ, Δ) is a function of κ alone, so all frontiers lie on one curve and differ "
                            "only in the κ range they reach; α > 0 caps κ below at L(μ+α)/(μ(L+α)) > 1 as K → ∞.")


@claim(id="localupdate/figure-3/frontier-shrinks-as-alpha-grows", ref="Figure 3",
       title="Figure 3: as α increases, the frontier becomes a smaller subset",
       statement=r"\"As $\alpha$ increases, the frontier becomes a smaller subset of the frontier for $\alpha=0$.\"",
       kind="numeric", controls=[Control("wrong-limit", "the K → ∞ limit taken as (L + α)/(μ + α): false a priori "
                                                        "(it is L(μ+α)/(μ(L+α)), and the two differ for every α ≥ 0 "
                                                        "when L > μ)", {"wrong_limit": True})])
def fig3_shrinks(ctx):
    d = _figure_data(3, ctx.seed)
    kmins = [float(np.min(s["params"]["kappa"])) for s in d["panels"][0]["series"]]
    limits = [10 * (1 + a) / (10 + a) for a in d["params"]["alphas"]]
    if ctx.param("wrong_limit", False):     # control: (L + α)/(μ + α), a wrong limit
        limits = [(10 + a) / (1 + a) for a in d["params"]["alphas"]]
    ok = all(np.diff(kmins) > 0) and np.allclose(kmins, limits, rtol=1e-3)
    return ctx.decide(ok, measured={"alphas": d["params"]["alphas"], "kappa_min": kmins, "kappa_limit_L(mu+a)/(mu(L+a))": limits},
                      tolerance="κ_min strictly increasing in α; equal to the K → ∞ limit to 1e-3 (K = 10⁶)")


@claim(id="localupdate/figure-4/maml-frontier-subset-of-fedavg", ref="Figure 4",
       title="Figure 4: for each ServerOpt the MAML frontier is a subset of the FedAvg frontier (the same when ρ is large)",
       statement=r"\"For each ServerOpt, the MAML frontier is a subset of the FedAvg frontier. [...] these two fundamentally "
                 r"different methods attain the same frontier when $\rho$ is large.\"",
       kind="numeric", controls=[Control("reversed-inclusion", "the FedAvg frontier claimed a subset of MAML's: "
                                                               "false a priori, within Lemma 4\'s regime MAML (Θ_K) "
                                                               "keeps κ ≥ ψ(L)/ψ(μ) > 1 at every admissible K, while "
                                                               "FedAvg reaches κ → 1 (ρ → 0)", {"swap": True})])
def fig4_subset(ctx):
    d = _figure_data(4, ctx.seed)
    rows = {}
    ok = True
    for p in d["panels"]:
        s = _series_by_label(p)
        sub, ref = ("FedAvg (Θ_{1:K})", "MAML (Θ_K)") if ctx.param("swap", False) else ("MAML (Θ_K)", "FedAvg (Θ_{1:K})")
        dist, on = _on_curve_and_range(s[sub], s[ref])          # control: the reversed inclusion
        mx, fx = np.asarray(s["MAML (Θ_K)"]["x"]), np.asarray(s["FedAvg (Θ_{1:K})"]["x"])
        rows[p["title"]] = {"max_distance": dist, "maml_rho_range": [float(mx.min()), float(mx.max())],
                            "fedavg_rho_range": [float(fx.min()), float(fx.max())]}
        ok &= on and abs(mx.max() - fx.max()) < 1e-12 and mx.min() > fx.min()
    return ctx.decide(ok, measured=rows, tolerance="within 2e-3 of the FedAvg polyline; same largest ρ (K = 1, κ = κ₀)")


@claim(id="localupdate/figure-4/momentum-similar-near-rho-zero", ref="Figure 4",
       title="Figure 4: the momentum types reach similar suboptimality as ρ → 0",
       statement=r"\"In Figure 4, the various types of momentum lead to similar suboptimality when the convergence rate is close to 0.\"",
       kind="numeric", controls=[Control("with-maml", "MAML's end point claimed to share FedAvg's Δ near ρ = 0: "
                                                      "false a priori, within Lemma 4\'s regime MAML stops at κ > 1, "
                                                      "i.e. at a smaller Δ and a larger ρ than FedAvg's K = 10⁶ end",
                                                      {"with_maml": True})])
def fig4_near_zero(ctx):
    d = _figure_data(4, ctx.seed)
    ends = {p["title"]: (float(np.min(_series_by_label(p)["FedAvg (Θ_{1:K})"]["x"])),
                         float(np.asarray(_series_by_label(p)["FedAvg (Θ_{1:K})"]["y"])[-1])) for p in d["panels"]}
    if ctx.param("with_maml", False):       # control: the MAML end point joins the comparison
        p = d["panels"][0]
        ends["MAML"] = (float(np.min(_series_by_label(p)["MAML (Θ_K)"]["x"])),
                        float(np.asarray(_series_by_label(p)["MAML (Θ_K)"]["y"])[-1]))
    deltas = [v[1] for v in ends.values()]
    ok = max(deltas) - min(deltas) <= 1e-12 and max(v[0] for v in ends.values()) <= 0.05
    return ctx.decide(ok, measured={"end_points_rho_delta": ends}, tolerance="same Δ to 1e-12 at K = 10⁶, where ρ ≤ 0.05",
                      notes="Δ depends on κ only and κ → 1 for every momentum: one-shot averaging needs no momentum.")


def _simulated_parts(d, panel_index=0):
    s = _series_by_label(d["panels"][panel_index])
    return s["FedAvg (Θ_{1:K})"], [s[k] for k in s if k.startswith("MAML")]


@claim(id="localupdate/figure-5/identical-for-small-k", ref="Figure 5",
       title="Figure 5: simulated MAML and FedAvg frontiers are identical while γ < 1/(KL + α)",
       statement=r"\"The Pareto frontiers are identical for small $K$ (mirroring Figure 4), but diverge when $\gamma\ge(KL+\alpha)^{-1}$.\"",
       kind="numeric", controls=[Control("identical-beyond", "the curves claimed identical also for γKL ≥ 2: false a "
                                                             "priori, beyond Lemma 4\'s regime ψ peaks inside (μ, L) "
                                                             "and κ depends on intermediate eigenvalues (Section 4.1)",
                                                             {"beyond": True})])
def fig5_identical(ctx):
    d = _figure_data(5, ctx.seed)
    fedavg, mamls = _simulated_parts(d)
    fx, fy = _xy(fedavg)
    inside, beyond = 0.0, np.inf
    for s in mamls:
        K = np.asarray(s["params"]["K"])
        x, y = _xy(s)
        dist = _distance_to_curve(x, y, fx, fy)
        regime = K * 10.0 * 0.001 >= 2 if ctx.param("beyond", False) else K * 10.0 * 0.001 < 1   # control: beyond
        inside = max(inside, float(dist[regime].max()))
        beyond = min(beyond, float(dist[K * 10.0 * 0.001 >= 2].min()))
    ok = inside <= 2e-3 and beyond >= 0.02
    return ctx.decide(ok, measured={"max_distance_for_gamma_KL_lt_1": inside, "min_distance_for_gamma_KL_ge_2": beyond},
                      tolerance="identical: within 2e-3 of the FedAvg polyline; diverged: ≥ 0.02 away once γKL ≥ 2",
                      notes="Inside Lemma 4's regime κ = ψ(L)/ψ(μ) and cond(Q) = κ₀/κ, so the point is FedAvg's at that κ.")


@claim(id="localupdate/figure-5/maml-moves-away-from-origin", ref="Figure 5",
       title="Figure 5: beyond the threshold the MAML frontier moves further from 0",
       statement=r"\"The frontier for MAML then moves further from 0.\"",
       kind="numeric", controls=[Control("from-k1", "the distance to the origin claimed non-decreasing from K = 1 "
                                                    "on: false a priori, before the cusp the curve follows FedAvg's "
                                                    "toward smaller ρ (from ρ = (κ₀−1)/(κ₀+1) ≈ 0.82, Δ = 0 at K = 1)",
                                                    {"from_start": True})])
def fig5_away(ctx):
    d = _figure_data(5, ctx.seed)
    _, mamls = _simulated_parts(d)
    rows = {}
    ok = True
    for s in mamls:
        x, y = _xy(s)
        i = 0 if ctx.param("from_start", False) else int(np.argmin(x))    # control: from K = 1, before the cusp
        r = np.hypot(x[i:], y[i:])
        rows[s["label"]] = {"cusp_distance": float(r[0]), "final_point": [float(x[-1]), float(y[-1])],
                            "monotone_fraction": float(np.mean(np.diff(r) >= -1e-12))}
        ok &= np.all(np.diff(r) >= -1e-12) and x[-1] > 0.99 and y[-1] > 0.99
    return ctx.decide(ok, measured=rows, tolerance="distance to the origin non-decreasing in K after the cusp; ends near (1, 1)")


@claim(id="localupdate/figure-5/noisy-for-d5-stable-for-d100", ref="Figure 5",
       title="Figure 5: the MAML frontier is noisy for d = 5 and stabilizes for d = 100",
       statement=r"\"The MAML frontier is noisy for $d=5$ (as $\rho,\Delta$ depend on random eigenvalues of $A$), but stabilizes "
                 r"for $d=100$.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (d = 5's spread against itself): false a "
                                                            "priori (a strict inequality between equal numbers), so "
                                                            "the check's comparison is seen to come out false",
                                                            {"self": True})])
def fig5_noise(ctx):
    curves = {5: [], 100: []}
    for seed in range(8 if not ctx.full else 32):
        _, mamls = _simulated_parts(_figure_data(5, ctx.seed + seed))
        for s in mamls:
            curves[int(s["params"]["d"])].append(np.asarray(s["x"]))
    K = np.asarray(_simulated_parts(_figure_data(5, ctx.seed))[1][0]["params"]["K"])
    window = (K * 0.001 * 10 >= 1) & (K <= 1000)
    spread = {d: float(np.std(np.array(c)[:, window], axis=0).max()) for d, c in curves.items()}
    if ctx.param("self", False):
        spread[100] = spread[5]
    ok = spread[5] > 3 * spread[100]
    return ctx.decide(ok, measured={"max_std_of_rho_over_seeds": spread, "K_window": [int(K[window][0]), int(K[window][-1])]},
                      tolerance="d = 5's seed-to-seed spread of ρ at least 3× d = 100's, over K from the threshold to 10³",
                      notes="Beyond the threshold λ_max(QA) is set by the eigenvalue nearest 1/(Kγ); with d = 100 the "
                            "spectrum fills [μ, L] densely (a Marchenko–Pastur shape), with d = 5 it is a few random points.")


@claim(id="localupdate/figure-5/cusp-at-one-shot-suboptimality", ref="Figure 5",
       title="Figure 5: the MAML curve's cusp sits at the suboptimality of FedAvg's ρ = 0 intercept",
       statement=r"\"The curve for MAML when $d=100$ has a clear cusp. This seems to occur at the same suboptimality (ie. $y$-value) "
                 r"as the intersection of the FedAvg curve with the $y$-axis.\" (The text says Figure 4; only Figure 5 has $d$.)",
       kind="numeric", controls=[Control("rho-form", "the intercept taken as (κ₀ − 1)/(κ₀ + 1) = 0.82 (ρ's form) "
                                                     "instead of (√κ₀ − 1)/(√κ₀ + 1) = 0.52: false a priori",
                                                     {"gd_form": True})])
def fig5_cusp(ctx):
    """The cusp (minimum ρ) and its Δ vs (√κ₀ − 1)/(√κ₀ + 1), on the figure and on a fine K grid. Explanation
    found here: the cusp is where ψ(μ) = ψ(L), i.e. cond(Q) = ((1 − γμ)/(1 − γL))^{K−1} = L/μ = κ₀, so the
    Lemma-5 suboptimality there is exactly (√κ₀ − 1)/(√κ₀ + 1)."""
    from fedtheory.analysis.pareto import frontier_spectrum

    d = _figure_data(5, ctx.seed)
    fedavg, mamls = _simulated_parts(d)
    k0 = 10.0
    intercept = (math.sqrt(k0) - 1) / (math.sqrt(k0) + 1)
    if ctx.param("gd_form", False):          # control: (κ₀ − 1)/(κ₀ + 1), ρ's form instead of Δ's
        intercept = (k0 - 1) / (k0 + 1)
    rows = {}
    ok = True
    for s in mamls:
        x, y = _xy(s)
        i = int(np.argmin(x))
        lam = np.asarray(s["params"]["eigenvalues"])
        fine = frontier_spectrum(lam, gamma=0.001, Ks=np.arange(100, 600), theta="last")
        j = int(np.argmin(fine["rho"]))
        rows[s["label"]] = {"figure_cusp_delta": float(y[i]), "fine_cusp_K": int(fine["K"][j]),
                            "fine_cusp_delta": float(fine["delta"][j]), "log_cond_Q_minus_log_kappa0": float(
                                fine["log_cond_Q"][j] - math.log(k0))}
        ok &= abs(y[i] - intercept) <= 0.01 and abs(fine["delta"][j] - intercept) <= 2e-3
    fed_intercept = float(np.asarray(fedavg["y"])[np.argmin(fedavg["x"])])
    ok &= abs(fed_intercept - intercept) <= 1e-6
    return ctx.decide(ok, measured={"fedavg_y_intercept": fed_intercept, "one_shot_formula": intercept, **rows},
                      tolerance="figure grid: |Δ_cusp − intercept| ≤ 0.01; unit-step K grid: ≤ 2e-3 (one K step moves "
                                "log cond(Q) by γ(L − μ) ≈ 0.009)",
                      notes="Why (the paper is 'unsure'): for γ ≥ 1/(KL), κ = ψ_max / min(ψ(μ), ψ(L)); the minimum over K "
                            "of κ (the cusp in ρ) is at the switch ψ(μ) = ψ(L), where cond(Q) = κ₀ exactly, and Appendix "
                            "D.1's Δ = (√cond(Q) − 1)/(√cond(Q) + 1) is then FedAvg's one-shot value (√κ₀ − 1)/(√κ₀ + 1).")


@claim(id="localupdate/figure-7/discrepancy-grows-with-l", ref="Figure 7",
       title="Figure 7: as L grows the MAML and FedAvg curves diverge sooner (small L: MAML recovers most of FedAvg)",
       statement=r"\"As $L$ increases with respect to $\mu$, the discrepancy between the MAML curves and the FedAvg curves grows. "
                 r"In particular, for small $L/\mu$, the MAML curve recovers most of the FedAvg curve before diverging, while for "
                 r"large $L/\mu$, the two diverge almost immediately.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (every panel replaced by the smallest "
                                                            "L's): false a priori (a strict inequality between equal "
                                                            "numbers), so the check's comparison is seen to come out "
                                                            "false", {"self": True})])
def fig7_discrepancy(ctx):
    d = _figure_data(7, ctx.seed)
    fractions, cusps = [], []
    panels = [d["panels"][0]] * len(d["panels"]) if ctx.param("self", False) else d["panels"]
    for p in panels:
        fedavg, mamls = _simulated_parts(d, d["panels"].index(p))
        fx, fy = _xy(fedavg)
        s = [m for m in mamls if m["params"]["d"] == 100][0]
        x, y = _xy(s)
        dist = _distance_to_curve(x, y, fx, fy)
        dep = int(np.argmax(dist > 0.01))
        fractions.append(float((fx.max() - x[dep]) / (fx.max() - fx.min())))
        cusps.append(float(x.min()))
    ok = all(np.diff(fractions) < 0) and all(np.diff(cusps) > 0) and fractions[0] > 0.8 and fractions[-1] < 0.1
    return ctx.decide(ok, measured={"L": d["params"]["L"], "fraction_of_fedavg_rho_range_traversed_before_departure": fractions,
                                    "maml_min_rho": cusps},
                      tolerance="departure: first K with distance > 0.01 from the FedAvg curve (d = 100); 'most' > 80% at "
                                "L = 2, 'almost immediately' < 10% at L = 100; strictly monotone in L")


@claim(id="localupdate/figure-7/noisy-for-d5", ref="Figure 7",
       title="Figure 7: d = 5 is noisy, d = 100 approaches a limit, for every L",
       statement=r"\"Again, we see that when $d=5$, there is some noise in $(\rho,\Delta)$, which seems to approach some limiting "
                 r"behavior for $d=100$.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (d = 5's spread against itself): false a "
                                                            "priori (a strict inequality between equal numbers), so "
                                                            "the check's comparison is seen to come out false",
                                                            {"self": True})])
def fig7_noise(ctx):
    spreads = {}
    seeds = range(6 if not ctx.full else 24)
    datas = [_figure_data(7, ctx.seed + s) for s in seeds]
    ok = True
    for pi, L in enumerate(datas[0]["params"]["L"]):
        c = {5: [], 100: []}
        for dd in datas:
            for s in _simulated_parts(dd, pi)[1]:
                c[int(s["params"]["d"])].append(np.asarray(s["x"]))
        K = np.asarray(_simulated_parts(datas[0], pi)[1][0]["params"]["K"])
        window = (K * 0.001 * L >= 1) & (K * 0.001 * L <= 50)
        sp5, sp100 = (float(np.std(np.array(c[dd_])[:, window], axis=0).max())
                      for dd_ in ((5, 5) if ctx.param("self", False) else (5, 100)))
        spreads[f"L={L:g}"] = {"d5": sp5, "d100": sp100}
        ok &= sp5 > 2 * sp100
    return ctx.decide(ok, measured={"max_std_of_rho_over_seeds": spreads},
                      tolerance="d = 5's spread > 2× d = 100's in every panel (window 1 ≤ γKL ≤ 50)")


@claim(id="localupdate/figure-8/momentum-helps-maml-and-fedavg", ref="Figure 8",
       title="Figure 8: momentum helps convergence in all cases, FedAvg or MAML",
       statement=r"\"While the differences are not huge, we see that momentum helps convergence in all cases, FedAvg or MAML.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (no momentum against no momentum): false "
                                                            "a priori (a strict inequality between equal numbers), "
                                                            "so the check's comparison is seen to come out false",
                                                            {"self": True})])
def fig8_helps(ctx):
    d = _figure_data(8, ctx.seed)
    panels = {p["title"]: _series_by_label(p) for p in d["panels"]}
    margin = np.inf
    for label in panels["no momentum"]:
        titles = ("no momentum",) * 3 if ctx.param("self", False) else ("no momentum", "Nesterov", "heavy-ball")
        rg, rn, rh = (np.asarray(panels[t][label]["x"]) for t in titles)
        kap = np.asarray(panels["no momentum"][label]["params"]["kappa"])
        inner = (kap > 1 + 1e-9) & (rg < 1 - 1e-12)
        margin = min(margin, float(np.min(rg[inner] - rn[inner])), float(np.min(rn[inner] - rh[inner])))
    return ctx.decide(margin > 0, measured={"min_rho_improvement_at_equal_K": margin},
                      tolerance="strict, wherever κ > 1 and ρ < 1 in float64",
                      notes="The panels share the random matrix (per d), so each K has the same κ and Δ in all three.")


@claim(id="localupdate/figure-8/momentum-changes-maml-concavity", ref="Figure 8",
       title="Figure 8: momentum changes the concavity of the MAML d = 100 frontier (more rounded: heavy-ball > Nesterov)",
       statement=r"\"The type of momentum changes the concavity of the MAML Pareto frontier for $d=100$. As we add momentum, the "
                 r"region to the right of the MAML curve becomes more convex, becoming more rounded for heavy-ball momentum than for "
                 r"Nesterov momentum.\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (the no-momentum area in every panel): "
                                                            "false a priori (a strict inequality between equal "
                                                            "numbers), so the check's comparison is seen to come out "
                                                            "false", {"self": True})])
def fig8_concavity(ctx):
    d = _figure_data(8, ctx.seed)
    areas = {}
    for p in d["panels"]:
        x, y = _xy(_series_by_label(p)["MAML (Θ_K), d = 100"])
        i = int(np.argmin(x))
        ux, uy = x[i:], y[i:]
        areas[p["title"]] = float(np.trapezoid(uy, ux) - 0.5 * (uy[0] + uy[-1]) * (ux[-1] - ux[0]))
    a = [areas["no momentum"], areas["Nesterov"], areas["heavy-ball"]]
    if ctx.param("self", False):
        a = [areas["no momentum"]] * 3
    ok = a[0] < 0 < a[1] < a[2]
    return ctx.decide(ok, measured={"signed_area_of_upper_branch_above_its_chord": areas},
                      tolerance="sign change (no momentum < 0 < Nesterov) and strict ordering Nesterov < heavy-ball",
                      notes="Upper branch: from the cusp to (1, 1). Area above the chord > 0 means the curve bulges up-left, "
                            "i.e. the region to its right is convex (rounded); < 0 means it sags.")


@claim(id="localupdate/figure-9/proximal-alters-extent-not-shape", ref="Figure 9",
       title="Figure 9: a proximal term only changes how much of the MAML frontier is traversed",
       statement=r"\"Adding a proximal term simply alters how much of the Pareto frontier is traversed; it does not change the "
                 r"fundamental shape [...] the only restriction on the shape of the curve seems to be coming from the fact that "
                 r"larger $\alpha$ reduces the set of $\gamma$ satisfying $\gamma<(KL+\alpha)^{-1}$.\"",
       kind="numeric", controls=[Control("planted-point", "a point planted at (ρ, Δ) = (1.5, 1.5) in each compared "
                                                          "curve (a planted departure): false a priori for the "
                                                          "reading 'within 2e-3 of the reference curve', which lies "
                                                          "in [0, 1]² (ρ, Δ ∈ [0, 1]: "
                                                          "localupdate/section-5/rho-delta-in-unit-square), so it is "
                                                          "≥ 0.7 away", {"planted": True})])
def fig9_extent(ctx):
    d = _figure_data(9, ctx.seed)
    series_ = d["panels"][0]["series"]
    base = series_[0]
    dists = {s["label"]: _on_curve_and_range(_planted(s, ctx), base)[0] for s in series_[1:]}
    nK = [len(s["x"]) for s in series_]
    kmin = [float(np.min(s["params"]["kappa"])) for s in series_]
    ok = max(dists.values()) <= 2e-3 and all(np.diff(kmin) <= 0) and all(np.diff(nK) <= 0)
    return ctx.decide(ok, measured={"max_distance_to_alpha0_curve": dists, "admissible_K_points": nK, "kappa_min": kmin},
                      tolerance="on the α = 0 curve within 2e-3 (same shape); the extent moves monotonically with α",
                      notes="At γ = 1e-7 the admissible K (γ(KL + α) < 1) barely depends on α ≤ 10 (K < 10⁶ − α/L) and α "
                            "lowers κ for Θ_K (localupdate/section-4.1/alpha-decreases-kappa-last), so larger α traverses "
                            "marginally further; the curves coincide, as the paper's 'plots of varying width' suggest.")


@claim(id="localupdate/figure-10/alpha-shrinks-fedavg", ref="Figure 10",
       title="Figure 10: increasing α shrinks the FedAvg curve",
       statement=r"\"While increasing $\alpha$ shrinks the space of the Pareto curve of FedAvg [...]\"",
       kind="numeric", controls=[Control("self-comparison", "the statement's strict comparison applied to one curve "
                                                            "against itself (every panel replaced by α = 0's): false "
                                                            "a priori (a strict inequality between equal numbers), "
                                                            "so the check's comparison is seen to come out false",
                                                            {"self": True})])
def fig10_fedavg(ctx):
    d = _figure_data(10, ctx.seed)
    mins = [float(np.min(_simulated_parts(d, 0 if ctx.param("self", False) else i)[0]["x"]))
            for i in range(len(d["panels"]))]
    return ctx.decide(all(np.diff(mins) > 0), measured={"alphas": d["params"]["alphas"], "fedavg_min_rho": mins},
                      tolerance="strictly increasing minimum ρ")


@claim(id="localupdate/figure-10/maml-curves-unchanged", ref="Figure 10",
       title="Figure 10: α does not change the simulated MAML curves by a meaningful amount",
       statement=r"\"[...] it does not seem to change the MAML curves by a meaningful amount.\"",
       kind="numeric", controls=[Control("planted-point", "a point planted at (ρ, Δ) = (1.5, 1.5) in each compared "
                                                          "curve (a planted departure): false a priori for the "
                                                          "reading 'within 0.01 of the reference curve', which lies "
                                                          "in [0, 1]² (ρ, Δ ∈ [0, 1]: "
                                                          "localupdate/section-5/rho-delta-in-unit-square), so it is "
                                                          "≥ 0.7 away", {"planted": True})])
def fig10_maml(ctx):
    d = _figure_data(10, ctx.seed)
    out = {}
    for dim in (5, 100):
        base = [s for s in _simulated_parts(d, 0)[1] if s["params"]["d"] == dim][0]
        bx, by = _xy(base)
        for i in range(1, len(d["panels"])):
            s = [m for m in _simulated_parts(d, i)[1] if m["params"]["d"] == dim][0]
            x, y = _xy(_planted(s, ctx))
            out[f"d={dim}, {d['panels'][i]['title']}"] = max(float(_distance_to_curve(x, y, bx, by).max()),
                                                             float(_distance_to_curve(bx, by, x, y).max()))
    return ctx.decide(max(out.values()) <= 0.01, measured={"hausdorff_distance_to_alpha0_maml_curve": out},
                      tolerance="'not meaningful' read as Hausdorff distance ≤ 0.01 (1% of the unit square)")


# ============================================================================================
# inventory (computed from the claims above)
# ============================================================================================

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

from fedtheory.claims.core import Claim as _Claim  # noqa: E402

_CLAIMS = [v for v in list(globals().values()) if isinstance(v, _Claim)]


_ALL_IDS.extend(c.id for c in _CLAIMS)
_homeless = [c.id for c in _CLAIMS if (c.ref.startswith("Section") or c.ref.startswith("Appendix"))
             and c.id not in _SECTION_HOME]
if _homeless:
    raise RuntimeError(f"section claims without an inventory label: {_homeless}")
INVENTORY: dict[str, list[str] | str] = _build_inventory()
