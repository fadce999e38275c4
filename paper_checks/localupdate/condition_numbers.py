"""Charles & Konečný, arXiv:2103.05032, Section 4.1: Lemma 1 (and Lemmas 8–10), Lemmas 2–4, 6 and 11 —
the surrogate's condition number κ(α, γ, Θ).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from fedtheory.algorithms.surrogate import (
    distortion_eigenvalues,
    kappa,
    kappa_bound_last,
    kappa_bound_uniform,
    phi,
    psi,
    surrogate_grad,
    surrogate_hessian,
    surrogate_minimizer,
)
from fedtheory.algorithms.theta import Theta
from fedtheory.certify.params import Box, Custom, NonnegWeights, Product, quadratic_instance_param
from fedtheory.claims.agreement import decide_within
from fedtheory.claims.controls import tightened_past_attaining
from fedtheory.claims.core import Control, claim
from fedtheory.claims.probing import probe_phases as _probe_phases
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic
from fedtheory.symbolic import distortion as sym
from fedtheory.symbolic import tradeoff as symt

from ._common import (
    _PROOFS,
    EPS,
    _aligned_instance,
    _attaining,
    _instance_from_json,
    _instance_json,
    _mp_distortion,
    _mp_matrix,
    _probe_instances,
    _probe_nelder_mead,
    _proved_if,
    _random_instance,
)

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
                values.append(mpmath.mpf(theta.K) if m == 1 else (1 - m**theta.K) / (1 - m))
            elif theta.kind == "last":
                values.append(m ** (theta.K - 1))
            else:
                values.append(mpmath.polyval([mpmath.mpf(float(t)) for t in theta.weights[::-1]], m))
        return min(values)


#: Lemma 1's near-attaining instance: Θ = (10⁻⁶, 1), α = 0, spectrum {μ, L} = {1, 100}, γ = (1 − 10⁻⁹)/L, where
#: q(L) = θ₁ + θ₂(1 − γL) = 10⁻⁶ + 10⁻⁹: positive (the lemma holds) but far below any uniform floor
_LEMMA1_NEAR_ZERO_Q = {"theta": [1e-6, 1.0], "alpha": 0.0, "gamma": (1 - 1e-9) / 100.0, "lam": [1.0, 100.0]}


@claim(
    id="localupdate/lemma-1",
    ref="Lemma 1",
    title="γ < 1/(L+α) makes every distortion matrix positive definite and f̃ strongly convex",
    statement=r"Under Assumption 1, if $\gamma<(L+\alpha)^{-1}$ then for all $i$, $Q_i(\alpha,\gamma,\Theta)\succ0$ and "
    r"$\tilde f(x,\alpha,\gamma,\Theta)$ is strongly convex (any $\alpha\ge0$, $\gamma\ge0$, $\Theta\ge0$ with finite non-zero support).",
    kind="probe",
    controls=[
        tightened_past_attaining(
            'q-floor-1e-3',
            'Q_i ⪰ 10⁻³·w(Θ)·I claimed (a uniform positive floor)',
            'min q/w → 0 as γ → 1/(L+α) with Θ = (θ₁, θ₂), θ₁ → 0 (q(L) = θ₁ + θ₂(1 − γ(L+α)))',
            'such an instance (θ₁ = 10⁻⁶, γ(L+α) = 1 − 10⁻⁹)',
            'min q/w ≈ 1.0e-6 < 10⁻³',
            {'q_floor': 0.001},
            "without that instance only the probe's optimizer crosses, ≈ 2e-5",
        )
    ],
)
def lemma_1(ctx):
    """Random sampling and an adversarial probe over (Θ, α, γ, spectra, rotations, weights).

    Q_i = U_i diag(q(λ_ij)) U_iᵀ exactly, so Q_i ≻ 0 ⟺ min_j q(λ_ij) > 0; the sign is decided in
    50-digit arithmetic from the exact eigenvalues (float64 underflows q for K ~ 10⁶).
    """
    rng = ctx.rng
    n_samples = (400 if ctx.full else 100) if ctx.param("plain_sampling", True) else 0
    floor = ctx.param("q_floor", 0.0)  # a control's claimed lower bound on min q / w(Θ)
    worst_min_q = mpmath.inf
    worst_hessian_ratio = np.inf
    for _ in range(n_samples):
        d = int(rng.integers(2, 6))
        mu = float(10 ** rng.uniform(-2, 0))
        L = mu * float(10 ** rng.uniform(0, 3))
        kind = rng.choice(["uniform", "last", "general"])
        K = int(10 ** rng.uniform(0, 6)) if kind != "general" else int(rng.integers(1, 40))
        theta = {
            "uniform": lambda: Theta.uniform(K),
            "last": lambda: Theta.last(K),
            "general": lambda: Theta(rng.exponential(size=K) * (rng.uniform(size=K) < 0.5) + np.eye(K)[-1]),
        }[kind]()
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
            return ctx.refuted(
                measured={"min_q": float(min_q)},
                counterexample={
                    "problem": problem.to_json(),
                    "alpha": alpha,
                    "gamma": gamma,
                    "theta": theta.weights.tolist(),
                },
            )

    def violation(inst):
        th = Theta(inst["theta"])
        return -float(_lemma1_min_q(np.asarray(inst["lam"]), inst["alpha"], inst["gamma"], th, dps=30)) / th.w

    def decode(z):
        raw = Product(
            theta=NonnegWeights(8),
            alpha=Box(0.0, 10.0),
            frac=Box(0.0, 1.0, open_hi=True),
            lam=Custom(4, lambda u: np.sort(1 + 99 * (1 + np.sin(u)) / 2)),
        ).decode(z)
        lam = raw["lam"]
        lam[0], lam[-1] = 1.0, 100.0  # μ = 1 and L = 100 attained
        return {"theta": raw["theta"], "alpha": raw["alpha"], "gamma": raw["frac"] / (100.0 + raw["alpha"]), "lam": lam}

    param = Custom(14, decode, sample=lambda r: r.normal(size=14) * 2)
    result = _probe_nelder_mead(
        ctx, violation, param, n_random=(48, 256), n_starts=(4, 8), maxiter=(60, 300), target=0.0
    )
    probe_worst = -result.worst_value
    near_zero = -_attaining(violation, _LEMMA1_NEAR_ZERO_Q, neutral=-np.inf)
    ok = worst_min_q > floor and probe_worst > floor and near_zero > floor and worst_hessian_ratio >= 1
    return ctx.decide(
        ok,
        measured={
            "random_min_q_over_w": mpmath.nstr(worst_min_q, 6),
            "probe_min_q_over_w": probe_worst,
            "near_attaining_instance_min_q_over_w": near_zero,
            "min_hessian_eig_over_weyl_bound": float(worst_hessian_ratio),
            "probe_evaluations": result.n_evaluations,
            **_probe_phases(result),
        },
        tolerance={
            "sign": "decided in 50-digit arithmetic (30 in the probe), strict > 0",
            "hessian": "λ_min(∇²f̃) + 16·d·eps·‖∇²f̃‖ ≥ Weyl bound Σp_i min_j q(λ_ij)λ_ij where that bound "
            "exceeds 10³× the eigvalsh resolution",
        },
        counterexample=None if ok else {"probe": result.to_json()},
        notes="Q_i is diagonal in A_i's eigenbasis with entries q(λ)=Σθ_k m^{k−1}, m=1−γ(λ+α)∈(0,1] under the hypothesis. "
        "K log-uniform up to 10⁶ for Θ_{1:K} and Θ_K; γ within 1e-12 of 1/(L+α). At γ = 1/(L+α) the conclusion "
        "fails (Θ_2: q(L) = 0), so the strict hypothesis is needed.",
    )


#: Lemma 8's attaining pair: commuting (diagonal) B's whose largest and smallest eigenvalues sit on the same
#: coordinates, so λ_max(E B) = τ₂ and λ_min(E B) = τ₁ exactly (violation 0, every entry exact in binary)
_LEMMA8_ALIGNED = (np.array([np.diag([1.0, 2.0, 5.0]), np.diag([-1.0, 0.0, 3.0])]), np.array([0.25, 0.75]))


@claim(
    id="localupdate/lemma-8",
    ref="Lemma 8",
    title="E[λ_min(B)] I ⪯ E[B] ⪯ E[λ_max(B)] I for random symmetric B",
    statement=r"For a random symmetric $B\in\mathbb R^{d\times d}$ with finite $\mathbb E[B]$, "
    r"$\tau_1 I\preceq\mathbb E[B]\preceq\tau_2I$ with $\tau_1=\mathbb E[\lambda_{\min}(B)]$, $\tau_2=\mathbb E[\lambda_{\max}(B)]$.",
    kind="probe",
    controls=[
        tightened_past_attaining(
            'bound-tightened-0.015',
            'E[B] ⪯ (τ₂ − 0.015(τ₂ − τ₁))I claimed',
            "commuting B's with aligned top eigenvectors attain λ_max(E B) = τ₂",
            'such a pair',
            'the violation is 0 > −0.015',
            {'margin': 0.015},
            "without that pair only the probe's optimizer crosses, ≈ −0.010",
        )
    ],
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
        Bs = (S + np.swapaxes(S, 1, 2)) * np.exp(z[n * d * d : n * d * d + n])[:, None, None]
        w = np.exp(z[-n:] - z[-n:].max())
        return Bs, w / w.sum()

    worst = -np.inf
    for _ in range((200 if not ctx.full else 2000) if ctx.param("plain_sampling", True) else 0):
        n, d = int(rng.integers(1, 6)), int(rng.integers(2, 7))
        S = rng.normal(size=(n, d, d)) * np.exp(rng.normal(size=(n, 1, 1)) * 2)
        worst = max(worst, violation((S + np.swapaxes(S, 1, 2), rng.dirichlet(np.ones(n) * 0.5) + 1e-12)))
    result = _probe_nelder_mead(
        ctx, violation, Custom(4 * 9 + 4 + 4, decode), n_random=32, n_starts=(2, 6), maxiter=(80, 400)
    )
    attained = _attaining(violation, _LEMMA8_ALIGNED, neutral=-np.inf)
    return _decide_at_rounding(
        ctx,
        (worst, result, attained),
        ("worst_violation_relative", "attaining_instance_violation", "relative"),
        why="eigvalsh backward error ~d·eps·‖B‖ on each side",
        notes="vᵀE[B]v = E[vᵀBv] ∈ [E λ_min, E λ_max] for unit v (Rayleigh). Zero violation is attained "
        "by commuting B's with aligned eigenvectors, so the bound is tight.",
    )


def _decide_at_rounding(ctx, found, names, *, why, notes, measured=None):
    """Decide a probe-type check whose quantity must stay at rounding: ``found`` = (the samples' worst, the probe's
    result, the attaining instance's value); the worst of the three must be ≤ 64·eps less a control's ``margin``
    (the attaining instance reaches 0, so any margin fails there by construction). ``names`` = (the key of the
    worst, the key of the attaining value, the tolerance's key) in the measured record, which also keeps the
    probe's worst and phases.

    >>> from types import SimpleNamespace
    >>> ctx = SimpleNamespace(param=lambda name, default: default, decide=lambda ok, **kw: ok)
    >>> probe = SimpleNamespace(worst_value=-1.0, random_worst_value=-1.5, optimized_worst_value=-1.0)
    >>> _decide_at_rounding(ctx, (-2.0, probe, 0.0), ("worst", "attained", "relative"), why="", notes="")
    True
    """
    sampled_worst, result, attained = found
    worst_key, attained_key, tolerance_key = names
    worst = max(sampled_worst, result.worst_value, attained)
    tol = 64 * EPS - ctx.param("margin", 0.0)  # a control's tightened bound
    return ctx.decide(
        worst <= tol,
        measured={
            worst_key: worst,
            "probe_worst": result.worst_value,
            attained_key: attained,
            **_probe_phases(result),
            **(measured or {}),
        },
        tolerance={tolerance_key: tol, "why": why},
        notes=notes,
    )


@claim(
    id="localupdate/lemma-9",
    ref="Lemma 9",
    title="Spectra of Q_i and Q_iA_i: q(λ) and q(λ)λ at each eigenvalue λ of A_i, same multiplicities",
    statement=r"For each eigenvalue $\lambda$ of $A_i$, $Q_i(\alpha,\gamma,\Theta)$ has the eigenvalue "
    r"$\sum_k\theta_k(1-\gamma(\lambda+\alpha))^{k-1}$ (29) and $Q_iA_i$ the eigenvalue "
    r"$\sum_k\theta_k(1-\gamma(\lambda+\alpha))^{k-1}\lambda$ (30), with the multiplicity of $\lambda$.",
    kind="numeric",
    controls=[
        Control(
            "exponent-k",
            "(29) with exponents k in place of k − 1: Σθ_k(1 − γ(λ + α))^k, off by a factor "
            "1 − γ(λ + α) ≠ 1 (γ > 0): false a priori",
            {"exponent_shift": True},
        )
    ],
)
def lemma_9(ctx):
    """Dense Q by explicit matrix powers (independent of the spectral code) vs the formula, with repeated eigenvalues,
    general Θ and γ also beyond 1/(L + α) (the lemma has no step-size hypothesis); eigenvectors shared."""
    rng = ctx.rng
    worst = 0.0
    for _ in range(60 if not ctx.full else 400):
        d = int(rng.integers(2, 7))
        lam = rng.uniform(0.5, 5, size=d)
        lam[: int(rng.integers(1, d))] = lam[0]  # a repeated eigenvalue
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
    return decide_within(
        ctx,
        worst,
        tol,
        name="worst_relative_error",
        tolerance={
            "relative": tol,
            "why": "eigvals of a non-normal product Q·A perturbs eigenvalues by ~sqrt(eps)·‖·‖ at worst; "
            "observed errors are ~1e-14",
        },
        notes="Multiplicities: sorted spectra compared entrywise, with repeated λ planted.",
    )


@claim(
    id="localupdate/lemma-10",
    ref="Lemma 10",
    title="f̃ is L̃-smooth and μ̃-strongly convex with L̃ = E λ_max(Q_iA_i), μ̃ = E λ_min(Q_iA_i)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, $\tilde f$ is $\tilde L$-smooth and $\tilde\mu$-strongly convex with "
    r"$\tilde L=\mathbb E_i[\lambda_{\max}(Q_iA_i)]$ (31), $\tilde\mu=\mathbb E_i[\lambda_{\min}(Q_iA_i)]$ (32).",
    kind="probe",
    controls=[
        tightened_past_attaining(
            'slack-tightened-1e-3',
            'L̃ and μ̃ claimed to bound the spectrum of ∇²f̃ with a relative margin 10⁻³',
            'aligned clients (a shared eigenbasis, each attaining μ and L on the same eigenvectors) have λ_max(∇²f̃) = L̃',
            'one aligned instance',
            'the slack is 0 > −10⁻³',
            {'margin': 0.001},
        )
    ],
)
def lemma_10(ctx):
    rng = ctx.rng

    n_plain = (60 if not ctx.full else 400) if ctx.param("plain_sampling", True) else 0
    worst = max((_hessian_slack(*_random_instance(rng)) for _ in range(n_plain)), default=-np.inf)
    return _decide_hessian_slack(
        ctx,
        worst,
        why="eigvalsh is backward stable: each eigenvalue is off by ≤ c·d·eps·‖H‖",
        notes="Slack max(λ_max(∇²f̃) − L̃, μ̃ − λ_min(∇²f̃))/L̃ ≤ 0 by Lemma 8 applied to Q_iA_i; normalized "
        "by ‖∇²f̃‖ ≤ L̃ because μ̃ can be ~1e-12·L̃ (Θ_K with γ near 1/(L+α)), where a ratio would "
        "measure rounding, not the lemma.",
    )


def _hessian_slack(problem, theta, alpha, gamma) -> float:
    """max(λ_max(∇²f̃) − L̃, μ̃ − λ_min(∇²f̃)) / L̃: ≤ 0 exactly when L̃, μ̃ of (31)–(32) bound the spectrum."""
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    ev = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    return max(ev[-1] - L_t, mu_t - ev[0]) / L_t


def _decide_hessian_slack(ctx, sampled_worst, measured=None, *, why, notes):
    """Lemmas 2 and 10 decided alike: the normalized slack of (31)–(32) over the samples, a probe (from
    ``ctx.rng``, after the samples) and one attaining instance must stay at rounding (64·eps, less a control's
    margin). The attaining instance runs every time: clients sharing one eigenbasis reach μ̃ and L̃ exactly (slack 0
    to rounding), so a bound tightened by any margin fails there by construction, whatever the seed."""
    result = _probe_instances(lambda inst: _hessian_slack(*inst), ctx.rng, ctx)
    attained = _attaining(lambda inst: _hessian_slack(*inst), _aligned_instance(), neutral=-np.inf)
    return _decide_at_rounding(
        ctx,
        (sampled_worst, result, attained),
        ("worst_normalized_slack", "attaining_instance_slack", "normalized"),
        why=why,
        notes=notes,
        measured={"probe_evaluations": result.n_evaluations, **(measured or {})},
    )


@claim(
    id="localupdate/lemma-2",
    ref="Lemma 2",
    title="cond(f̃) ≤ κ(α, γ, Θ) of eq. (9)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, then $\operatorname{cond}(\tilde f)\le\kappa(\alpha,\gamma,\Theta)="
    r"\mathbb E_i[\lambda_{\max}(Q_iA_i)]/\mathbb E_i[\lambda_{\min}(Q_iA_i)]$.",
    kind="probe",
    controls=[
        tightened_past_attaining(
            'slack-tightened-4e-4',
            'L̃ and μ̃ claimed to bound the spectrum of ∇²f̃ with a relative margin 4·10⁻⁴ (a cond(f̃) bound below κ)',
            'aligned clients attain κ',
            'one aligned (attaining) instance',
            'the slack is 0 > −4·10⁻⁴',
            {'margin': 0.0004},
            'the probe alone need not get that close',
        )
    ],
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
    return _decide_hessian_slack(
        ctx,
        worst,
        {
            "cond_over_kappa_max_where_cond_le_1e6": _nanmax_or_none(ratios),
            "aligned_cond_over_kappa_max": _nanmax_or_none(tight),
        },
        why="eigvalsh backward error ≤ c·d·eps·‖∇²f̃‖",
        notes="cond(f̃) ≤ L̃/μ̃ = κ because μ̃ ≤ λ_min and λ_max ≤ L̃ (checked as a normalized slack, since "
        "μ̃ can be ~1e-12·L̃ where float64 cannot resolve cond itself). Aligned instances attain κ "
        "(ratio 1 to rounding where cond ≤ 10⁶): the bound is tight.",
    )


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


def _lemma34_attaining(last: bool) -> tuple:
    """(problem, α, γ, K) attaining Lemma 3's (``last``: Lemma 4's) bounds: one client A = diag(L, μ) = diag(100, 1)
    (Appendix B.3's instance), α = ½, K = 5, γ half the lemma's limit."""
    problem = QuadraticFederation(A=[[[100.0, 0.0], [0.0, 1.0]]], c=[[0.0, 0.0]], p=[1.0])
    alpha, K = 0.5, 5
    return problem, alpha, 0.5 / ((K if last else 1) * 100.0 + alpha), K


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
        parts = list(ctx.param("parts", (0, 1, 2)))  # a control may check the smoothness part alone
        result = _probe_nelder_mead(
            ctx,
            lambda inst: max(np.asarray(check_fn(*inst))[parts]),
            param,
            n_random=(24, 160),
            n_starts=(2, 8),
            maxiter=(40, 300),
        )
        # an attaining instance, every run: one client A = diag(L, μ) is aligned with itself, so λ_max(∇²f̃) is
        # exactly φ(L) (ψ(L)) and λ_min exactly φ(μ) (ψ(μ)): every ratio is 1 and a tightened bound fails here
        attained = np.array(_attaining(lambda inst: check_fn(*inst), _lemma34_attaining(last), neutral=(0.0,) * 3))
        worst = np.maximum(worst, attained)
        worst_all = max(float(worst.max()), result.worst_value)
        tol = (1 + 1e-9) * (1 - ctx.param("margin", 0.0))  # a control's tightened bound
        return ctx.decide(
            worst_all <= tol,
            measured={
                f"lambda_max_over_{name}_L": float(worst[0]),
                f"{name}_mu_over_lambda_min": float(worst[1]),
                "kappa_over_bound": float(worst[2]),
                "aligned_kappa_over_bound_max": aligned_tight,
                "attaining_instance_ratios": attained.tolist(),
                "probe_worst": result.worst_value,
                "probe_evaluations": result.n_evaluations,
                **_probe_phases(result),
            },
            tolerance={"ratio": tol, "why": "eigvalsh and log-space closed forms, cond(∇²f̃) ≤ 10³·K: ≲ 1e-10 relative"},
            notes=f"K up to 10⁵ (random) and 10⁴ (probe); aligned instances attain the bound (tightness is the "
            f"separate '/tightness' claim). {fn} is increasing in λ on [μ, L] under the hypothesis (the "
            f"'/derivative' claim).",
        )

    return check


def _smoothness_tightened(fn: str):
    """Lemma 3's and Lemma 4's control (``fn``: "φ" or "ψ", the lemma's smoothness function): f̃ claimed
    (1 − 0.008)·fn(L)-smooth, which aligned clients (one eigenbasis, L on the same eigenvector) break by
    construction, since there λ_max(∇²f̃) = fn(L) exactly (Appendix B.3)."""
    return tightened_past_attaining(
        "smoothness-tightened",
        f"f̃ claimed (1 − 0.008)·{fn}(L)-smooth",
        f"aligned clients (one eigenbasis, L on the same eigenvector) have λ_max(∇²f̃) = {fn}(L) exactly (Appendix B.3)",
        "one such instance",
        "the ratio is 1 > 0.992",
        {"margin": 0.008, "parts": [0]},
        "without it only the probe's optimizer crosses, ≈ 0.998",
    )


lemma_3 = claim(
    id="localupdate/lemma-3",
    ref="Lemma 3",
    title="Θ_{1:K}: f̃ is φ(L)-smooth, φ(μ)-strongly convex and κ(α,γ,Θ_{1:K}) ≤ φ(L)/φ(μ)",
    statement=r"If $\gamma<(L+\alpha)^{-1}$, $\tilde f(x,\alpha,\gamma,\Theta_{1:K})$ is $\phi(L,\alpha,\gamma,K)$-smooth, "
    r"$\phi(\mu,\alpha,\gamma,K)$-strongly convex, and $\kappa(\alpha,\gamma,\Theta_{1:K})\le\phi(L,\alpha,\gamma,K)/"
    r"\phi(\mu,\alpha,\gamma,K)$ (11), $\phi(\lambda,\alpha,\gamma,K)=\sum_{k=1}^K(1-\gamma(\lambda+\alpha))^{k-1}\lambda$ (10).",
    kind="probe",
    controls=[_smoothness_tightened("φ")],
)(_lemma34_claim(last=False))

lemma_4 = claim(
    id="localupdate/lemma-4",
    ref="Lemma 4",
    title="Θ_K: f̃ is ψ(L)-smooth, ψ(μ)-strongly convex and κ(α,γ,Θ_K) ≤ ((1−γ(L+α))/(1−γ(μ+α)))^{K−1} L/μ",
    statement=r"If $\gamma<(KL+\alpha)^{-1}$, $\tilde f(x,\alpha,\gamma,\Theta_K)$ is $\psi(L,\alpha,\gamma,K)$-smooth, "
    r"$\psi(\mu,\alpha,\gamma,K)$-strongly convex and $\kappa(\alpha,\gamma,\Theta_K)\le\left(\frac{1-\gamma(L+\alpha)}"
    r"{1-\gamma(\mu+\alpha)}\right)^{K-1}\frac L\mu$ (13), $\psi(\lambda,\alpha,\gamma,K)=(1-\gamma(\lambda+\alpha))^{K-1}\lambda$ (12).",
    kind="probe",
    controls=[_smoothness_tightened("ψ")],
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
    return ctx.decide(
        ratio <= 1,
        measured={"cond_over_kappa_theta_K": float(ratio)},
        counterexample=cex,
        notes="A typo, not an error: the proof derives κ(α,γ,Θ_{1:K}) ≤ φ(L)/φ(μ) (verified in "
        "localupdate/lemma-3). Since (ξ_L/ξ_μ)^{k−1} is decreasing in k, φ(L)/φ(μ) > ψ(L)/ψ(μ) "
        "whenever K ≥ 2, γ > 0, L > μ.",
    )


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
    return ctx.decide(
        ratio <= 1,
        measured={"cond_over_kappa_theta_K_50_digits": float(ratio)},
        notes="replayed in 50-digit arithmetic from the stored matrices (Q by explicit matrix powers)",
    )


def _tightness_claim(last: bool, control: Control):
    """Lemma 3's (``last``: Lemma 4's) tightness claim: Appendix B.3's instance attains the bound."""
    lemma, symbol, fn, weights, limit_tex = (
        (4, "ψ", r"\psi", r"\Theta_K", "KL") if last else (3, "φ", r"\phi", r"\Theta_{1:K}", "L")
    )

    @claim(
        id=f"localupdate/lemma-{lemma}/tightness",
        ref=f"Lemma {lemma}",
        title=f"Lemma {lemma} is tight: A = diag(L, μ) attains cond(f̃) = {symbol}(L)/{symbol}(μ) (Appendix B.3)",
        statement=r"For one client with $A=\operatorname{diag}(L,\mu)$, $c=0$ and $\gamma<("
        + limit_tex
        + r"+\alpha)^{-1}$: $\operatorname{cond}(\tilde f(\alpha,\gamma,"
        + weights
        + "))="
        + fn
        + r"(L,\alpha,\gamma,K)/"
        + fn
        + r"(\mu,\alpha,\gamma,K)$.",
        kind="numeric",
        controls=[control],
    )
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
            bound = (
                kappa_bound_last(1.0, L, alpha, gamma, Kb)
                if last_bound
                else kappa_bound_uniform(1.0, L, alpha, gamma, Kb)
            )
            worst = max(worst, abs((ev[-1] / ev[0]) / bound - 1))
        return decide_within(
            ctx,
            worst,
            1e-12,
            name="max_relative_gap",
            notes="Appendix B.3's instance: one client, one example, B_z = diag(L, μ), c_z = 0 (μ = 1). "
            "The printed ratios 'φ(L)/φ(L)' and 'ψ(L)/ψ(L)' are typos for φ(L)/φ(μ), ψ(L)/ψ(μ).",
        )

    return check


lemma_3_tightness = _tightness_claim(
    False,
    Control(
        "bound-at-k-plus-1",
        "cond(f̃) at K equated with the bound at K + 1: false a priori, the bound is strictly "
        "decreasing in K for γ > 0 (the proofs of Lemmas 3 and 4)",
        {"k_offset": 1},
    ),
)
lemma_4_tightness = _tightness_claim(
    True,
    Control(
        "lemma-3-bound",
        "cond(f̃(Θ_K)) equated with Lemma 3's φ(L)/φ(μ): false a priori for K ≥ 2, γ > 0, L > μ (φ(L)/φ(μ) "
        "> ψ(L)/ψ(μ), as for the typo of Lemma 3)",
        {"uniform_bound": True},
    ),
)


def _derivative_claim(lemma: int, title: str, statement: str, residuals: dict, notes: str):
    """Lemma 3's (4's) symbolic claim: every exact residual in ``residuals`` (measured name -> its sympy function)
    vanishes, which proves it (symbolic K)."""

    @claim(
        id=f"localupdate/lemma-{lemma}/derivative",
        ref=f"Lemma {lemma}",
        title=title,
        statement=statement,
        kind="symbolic",
    )
    def check(ctx):
        r = {name: residual() for name, residual in residuals.items()}
        return _proved_if(
            ctx,
            _PROOFS[f"lemma_{lemma}_derivative"],
            all(v == 0 for v in r.values()),
            measured={name: str(v) for name, v in r.items()},
            tolerance="exact (sympy, symbolic K)",
            notes=notes,
        )

    return check


lemma_3_derivative = _derivative_claim(
    3,
    "Eq. (33) and the derivative identity in Lemma 3's proof (symbolic K); φ increasing on [μ, L]",
    r"For $\gamma(L+\alpha)<1$: $\phi(\lambda,\alpha,\gamma,K)=\frac{1-(1-\gamma(\lambda+\alpha))^K}{\gamma}"
    r"\frac{\lambda}{\lambda+\alpha}$ (33) and $\gamma(\lambda+\alpha)g'(\lambda)=K\lambda\gamma\xi^{K-1}+(1-\xi^K)"
    r"\frac{\alpha}{\lambda+\alpha}\ge0$, $\xi=1-\gamma(\lambda+\alpha)$.",
    {"eq33_residual": symt.phi_closed_form_residual, "derivative_residual": symt.phi_derivative_residual},
    "With ξ ∈ [0, 1) both terms of the right-hand side are ≥ 0, so g' ≥ 0 on [μ, L].",
)

lemma_4_derivative = _derivative_claim(
    4,
    "ψ'(λ) = ζ^{K−2}(1 − γ(Kλ + α)) (symbolic K): ψ increasing on [μ, L] iff γ ≤ 1/(KL + α)",
    r"For $h(\lambda)=\psi(\lambda,\alpha,\gamma,K)$ and $\zeta=1-\gamma(\lambda+\alpha)$: "
    r"$h'(\lambda)=\zeta^{K-2}(1-\gamma(K\lambda+\alpha))$, so $h'\ge0$ on $[\mu,L]$ when $\gamma<(KL+\alpha)^{-1}$.",
    {"derivative_residual": symt.psi_derivative_residual},
    "For γ > 1/(KL + α) the factor 1 − γ(Kλ + α) changes sign inside [μ, L], so ψ has an interior maximum (see "
    "localupdate/section-4.1/theta-k-beyond-threshold).",
)


@claim(
    id="localupdate/lemma-6",
    ref="Lemma 6",
    title="cond(Q_i) ≤ κ₀/κ(α, γ, Θ) for Θ_{1:K} (γ < 1/(L+α)) and Θ_K (γ < 1/(KL+α))",
    statement=r"If (I) $\gamma<(L+\alpha)^{-1}$, $\Theta=\Theta_{1:K}$ or (II) $\gamma<(KL+\alpha)^{-1}$, $\Theta=\Theta_K$, "
    r"then for all $i$, $\operatorname{cond}(Q_i(\alpha,\gamma,\Theta))\le\kappa_0\kappa(\alpha,\gamma,\Theta)^{-1}$, "
    r"$\kappa_0=L/\mu$.",
    kind="probe",
    controls=[
        Control(
            "bound-tightened-1pc",
            "cond(Q_i) ≤ 0.99·κ₀/κ claimed: false a priori, with K = 1 (or γ → 0) "
            "Q_i = w(Θ)I and κ = κ₀, so both sides are 1 (the check's random "
            "spectra reach it; no instance class only the optimizer reaches is "
            "known here)",
            {"margin": 0.01},
        )
    ],
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
        res = _probe_nelder_mead(
            ctx,
            lambda inst: float(max(x.max() for x in _lemma6_ratios(*inst, last))),
            _spectra_param(last),
            n_random=64,
            n_starts=(3, 10),
            maxiter=(200, 2000),
        )
        worst[f"{tag}_probe"] = res.worst_value
        phases[tag] = _probe_phases(res)
    top = max(worst.values())
    tol = (1 + 1e-9) * (1 - ctx.param("margin", 0.0))  # a control's tightened bound
    return ctx.decide(
        top <= tol,
        measured={**worst, "probe_phases": phases},
        tolerance={"ratio": tol, "why": "log-space closed forms, ≲ 1e-12"},
        notes="Tight (ratio 1) when every client attains μ and L. The proof's displays have an index typo "
        "(exponent K−1 for k−1); the statement holds.",
    )


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
    lq = _log_q(lam, alpha[:, None], gamma[:, None], K[:, None], last)  # (B, n, d)
    log_cond_q = (lq.max(axis=2) - lq.min(axis=2)).max(axis=1)
    lqa = lq + np.log(lam)
    L_t = np.sum(p * np.exp(lqa.max(axis=2) - lqa.max()), axis=1)
    mu_t = np.sum(p * np.exp(lqa.min(axis=2) - lqa.max()), axis=1)
    log_k9 = np.log(L_t) - np.log(mu_t)
    if last:
        log_kb = (K - 1) * (np.log1p(-gamma * (L + alpha)) - np.log1p(-gamma * (mu + alpha))) + np.log(L / mu)
    else:
        from fedtheory.algorithms.theta import geometric_sum

        log_kb = (
            np.log(L / mu)
            + np.log(geometric_sum(gamma * (L + alpha), K.astype(float)))
            - np.log(geometric_sum(gamma * (mu + alpha), K.astype(float)))
        )
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
        lam = (1 + (L[0] - 1) * (1 + np.sin(z[1 : 1 + n * d])) / 2).reshape(1, n, d)
        lam[0, 0, 0], lam[0, -1, -1] = 1.0, L[0]
        w = np.exp(np.clip(z[1 + n * d : 1 + n * d + n], -30, 30))
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
    return _proved_if(
        ctx,
        _PROOFS["lemma_11"],
        exact_ok and worst <= tol,
        measured={"exact_gradient_at_formula": str(grad.T.tolist()), "float_worst_relative_gradient": worst},
        tolerance={"float_relative": tol, "why": "backward error of a d×d solve, cond ≤ 10³"},
        notes="f̃ is a strongly convex quadratic under Lemma 1, so its unique stationary point is the minimizer.",
    )
