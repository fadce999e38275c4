"""Symbolic identities behind the convergence/accuracy trade-off of LocalUpdate (sympy).

Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*
(arXiv:2103.05032). Each function returns an expression (or matrix) that is identically zero exactly
when the paper's identity holds, so a claim proves it by expanding the residual:

* :func:`lemma7_residual` — one local step maps g_k to (I − γ(A + αI))g_k up to the zero-mean noise
  (Lemma 7's induction step; with it, Theorem 1 for every K);
* :func:`maml_gradient` and :func:`maml_theta_symbolic` — the MAML message by differentiating through
  K inner steps, and the Θ' that Theorem 2 (and its proximal analogue) predict;
* :func:`phi_closed_form_residual`, :func:`phi_derivative_residual`, :func:`psi_derivative_residual` —
  eq. (33) and the derivative identities in the proofs of Lemmas 3 and 4 (symbolic K);
* :func:`heavy_ball_symmetry_residuals` — the swap κ ↦ κ₀/κ exchanges ρ_HB and Δ (Section 5's conjecture);
* :func:`momentum_ordering_factors`, :func:`two_point_mad_residual`, :func:`lemma12_maximum_residual`,
  :func:`lemma5_last_step_factor` — the small algebra of Section 5, Theorem 5 and Lemmas 5 and 12.

>>> import sympy as sp
>>> lemma7_residual(2) == sp.zeros(2, 1)
True
"""

from __future__ import annotations

import sympy as sp

from fedtheory.symbolic.distortion import surrogate_gradient, symmetric_matrix

__all__ = [
    "lemma7_residual",
    "maml_gradient",
    "maml_theta_symbolic",
    "phi_closed_form_residual",
    "phi_derivative_residual",
    "psi_derivative_residual",
    "heavy_ball_symmetry_residuals",
    "momentum_ordering_factors",
    "two_point_mad_residual",
    "lemma12_maximum_residual",
    "lemma5_last_step_factor",
]


def lemma7_residual(d: int) -> sp.Matrix:
    """g_{k+1} − (I − γ(A + αI))g_k − (ξ_{k+1} − ξ_k) for a generic symmetric d×d A.

    g_k = A(x_k − c) + α(x_k − x) + ξ_k is a stochastic gradient of the proximal client loss with noise
    ξ_k, and x_{k+1} = x_k − γ g_k. The residual is identically zero, so g_{k+1} − M g_k is the
    zero-mean term ξ_{k+1} − Mξ_k: taking expectations (E ξ = 0, linearity) gives Lemma 7,
    E[g_{k+1}] = M E[g_k], for every k — the induction step of Theorem 1 for all K at once.

    >>> lemma7_residual(1)
    Matrix([[0]])
    """
    A = symmetric_matrix(d)
    gamma, alpha = sp.symbols("gamma alpha", real=True)
    xk, x, c = (sp.Matrix(sp.symbols(f"{n}1:{d + 1}", real=True)) for n in ("xk", "x", "c"))
    xi_k, xi_next = (sp.Matrix(sp.symbols(f"{n}1:{d + 1}", real=True)) for n in ("xi", "eta"))
    M = sp.eye(d) - gamma * (A + alpha * sp.eye(d))
    g_k = A * (xk - c) + alpha * (xk - x) + xi_k
    x_next = xk - gamma * g_k
    g_next = A * (x_next - c) + alpha * (x_next - x) + xi_next
    return (g_next - M * g_k - (xi_next - xi_k)).applyfunc(sp.expand)


def maml_gradient(A, c, x, alpha, gamma, K: int) -> sp.Matrix:
    """∇_x ½(X_{K+1} − c)ᵀA(X_{K+1} − c) by sympy differentiation, X_{k+1} = X_k − γ(A(X_k − c) + α(X_k − x)).

    No chain rule written by hand: the K inner steps are built as expressions in the entries of ``x``
    and differentiated (the proximal anchor is x itself).

    >>> import sympy as sp
    >>> a, g, x = sp.symbols("a gamma x")
    >>> sp.factor(maml_gradient(sp.Matrix([[a]]), [0], [x], 0, g, 1)[0])
    a*x*(a*gamma - 1)**2
    """
    A = A if isinstance(A, sp.MatrixBase) else sp.Matrix([[A]])
    x = sp.Matrix(x)
    c = sp.Matrix(c)
    X = x
    for _ in range(int(K)):
        X = X - gamma * (A * (X - c) + alpha * (X - x))
    loss = ((X - c).T * A * (X - c))[0, 0] / 2
    return sp.Matrix([sp.expand(sp.diff(loss, xi)) for xi in x])


def maml_theta_symbolic(K: int, gamma, alpha) -> list:
    """Coefficients of p(m)², p(m) = m^K + γα Σ_{j<K} m^j: the Θ' with ∇m_K = ∇f̃(x, α, γ, Θ').

    >>> import sympy as sp
    >>> maml_theta_symbolic(1, sp.Symbol("g"), 0)
    [0, 0, 1]
    """
    m = sp.Symbol("m")
    p = m ** int(K) + gamma * alpha * sum(m**j for j in range(int(K)))
    poly = sp.Poly(sp.expand(p**2), m)
    return [poly.coeff_monomial(m**k) for k in range(2 * int(K) + 1)]


def maml_theorem2_residual(d: int, K: int, alpha=None) -> sp.Matrix:
    """maml_gradient − ∇f̃(x, α, γ, Θ') for a generic symmetric d×d A (α = 0 unless given).

    >>> maml_theorem2_residual(2, 2) == sp.zeros(2, 1)
    True
    """
    A = symmetric_matrix(d)
    gamma = sp.Symbol("gamma", real=True)
    alpha = sp.Integer(0) if alpha is None else alpha
    x, c = (sp.Matrix(sp.symbols(f"{n}1:{d + 1}", real=True)) for n in ("x", "c"))
    theta = maml_theta_symbolic(K, gamma, alpha)
    lhs = maml_gradient(A, c, x, alpha, gamma, K)
    rhs = surrogate_gradient(A, c, x, alpha, gamma, theta)
    return (lhs - rhs).applyfunc(sp.expand)


__all__.append("maml_theorem2_residual")

_lam, _alpha, _gamma = sp.symbols("lambda alpha gamma", positive=True)
_K = sp.Symbol("K", integer=True, positive=True)


def _zero_in_powers(expr: sp.Expr, base: sp.Symbol) -> sp.Expr:
    """Simplify an expression holding powers base^(K + j) of a *symbol*: split them as base^K·base^j,
    name base^K, simplify. sympy does not cancel base^(K−1) against base^K on its own; with base^K a
    fresh symbol Z the expression is rational in the remaining symbols and cancels exactly."""
    Z = sp.Symbol("Z")
    e = sp.expand_power_exp(sp.expand(expr)).subs(base**_K, Z)
    return sp.simplify(sp.together(e))


def _in_xi(_unused=None):
    """(ξ, λ(ξ)) with ξ = 1 − γ(λ + α) a positive symbol: expressions of λ are written in ξ, d/dλ = −γ d/dξ."""
    xi = sp.Symbol("xi", positive=True)
    lam_of_xi = (1 - xi) / _gamma - _alpha
    return xi, lam_of_xi


def phi_closed_form_residual() -> sp.Expr:
    """Σ_{k=1}^{K} ξ^{k−1}λ − (1 − ξ^K)/γ · λ/(λ + α), ξ = 1 − γ(λ + α), for symbolic K (eq. 33), ξ ≠ 1.

    >>> phi_closed_form_residual()
    0
    """
    xi, lam = _in_xi(None)
    k = sp.Symbol("k", integer=True, positive=True)
    total = sp.piecewise_fold(sp.summation(xi ** (k - 1), (k, 1, _K)))
    if isinstance(total, sp.Piecewise):  # keep the ξ ≠ 1 branch
        total = [expr for expr, cond in total.args if cond != sp.Eq(xi, 1)][0]
    return _zero_in_powers(total * lam - (1 - xi**_K) / _gamma * lam / (lam + _alpha), xi)


def phi_derivative_residual() -> sp.Expr:
    """γ(λ + α)g'(λ) − [Kλγξ^{K−1} + (1 − ξ^K)α/(λ + α)] for g = φ(·, α, γ, K) of eq. (33), symbolic K.

    Computed in ξ = 1 − γ(λ + α) with g'(λ) = −γ dg/dξ.

    >>> phi_derivative_residual()
    0
    """
    xi, lam = _in_xi(None)
    g = (1 - xi**_K) / _gamma * lam / (lam + _alpha)
    lhs = _gamma * (lam + _alpha) * (-_gamma) * sp.diff(g, xi)
    rhs = _K * lam * _gamma * xi ** (_K - 1) + (1 - xi**_K) * _alpha / (lam + _alpha)
    return _zero_in_powers(lhs - rhs, xi)


def psi_derivative_residual() -> sp.Expr:
    """h'(λ) − ζ^{K−2}(1 − γ(Kλ + α)) for h = ψ(·, α, γ, K) = ζ^{K−1}λ, ζ = 1 − γ(λ + α), symbolic K.

    >>> psi_derivative_residual()
    0
    """
    zeta, lam = _in_xi(None)
    h = zeta ** (_K - 1) * lam
    return _zero_in_powers(-_gamma * sp.diff(h, zeta) - zeta ** (_K - 2) * (1 - _gamma * (_K * lam + _alpha)), zeta)


def heavy_ball_symmetry_residuals() -> tuple[sp.Expr, sp.Expr]:
    """(ρ_HB(κ₀/κ) − Δ(κ), Δ(κ₀/κ) − ρ_HB(κ)) with ρ_HB = (√κ−1)/(√κ+1), Δ = (√κ₀−√κ)/(√κ₀+√κ).

    Both vanish identically: the reflection (ρ, Δ) ↦ (Δ, ρ) maps the heavy-ball frontier point at κ to
    the one at κ₀/κ, so a frontier that covers κ ∈ [1, κ₀] is symmetric about ρ = Δ.

    >>> heavy_ball_symmetry_residuals()
    (0, 0)
    """
    k, k0 = sp.symbols("kappa kappa0", positive=True)

    def rho(t):
        return (sp.sqrt(t) - 1) / (sp.sqrt(t) + 1)

    def delta(t):
        return (sp.sqrt(k0) - sp.sqrt(t)) / (sp.sqrt(k0) + sp.sqrt(t))

    return sp.simplify(rho(k0 / k) - delta(k)), sp.simplify(delta(k0 / k) - rho(k))


def momentum_ordering_factors() -> tuple[sp.Expr, sp.Expr]:
    """The two factorizations that order Table 2's rates for κ > 1 (with s = √κ):

    ρ_N < ρ_GD ⟺ √(3κ+1) < κ + 1 ⟺ (κ+1)² − (3κ+1) = κ(κ − 1) > 0;
    ρ_HB < ρ_N ⟺ √κ + 1 < √(3κ+1) ⟺ (3κ+1) − (√κ+1)² = 2√κ(√κ − 1) > 0.
    Returns the two differences minus their factored forms (both 0).

    >>> momentum_ordering_factors()
    (0, 0)
    """
    s = sp.Symbol("s", positive=True)
    k = s**2
    return (
        sp.expand((k + 1) ** 2 - (3 * k + 1) - k * (k - 1)),
        sp.expand((3 * k + 1) - (s + 1) ** 2 - 2 * s * (s - 1)),
    )


def two_point_mad_residual() -> tuple[sp.Expr, sp.Expr]:
    """Theorem 5's two-point case and its replacement step, as residuals (both 0).

    (i) Y ∈ {a, b} with P(Y = b) = p: D(Y) − 2(1−p)p(b−a) and 2(1−p)p(b−a) − 2(b − EY)(EY − a)/(b − a);
    returned is the sum of squares' numerator-free form of both (0 iff both vanish).
    (ii) is checked by the claim numerically; this function covers (i).

    >>> two_point_mad_residual()
    (0, 0)
    """
    a, b, p = sp.symbols("a b p", positive=True)
    mean = (1 - p) * a + p * b
    D = (1 - p) * (mean - a) + p * (b - mean)  # a ≤ E[Y] ≤ b
    return sp.simplify(D - 2 * (1 - p) * p * (b - a)), sp.simplify(
        2 * (1 - p) * p * (b - a) - 2 * (b - mean) * (mean - a) / (b - a)
    )


def lemma12_maximum_residual() -> tuple[sp.Expr, sp.Expr]:
    """The last step of Lemma 12: v ↦ 2(b − v)(v − a)/(v(b − a)) on [a, b] is stationary at v = √(ab),
    where it equals 2(√b − √a)/(√b + √a). Returns (derivative at √(ab), value − claimed), both 0.

    >>> lemma12_maximum_residual()
    (0, 0)
    """
    a, b, v = sp.symbols("a b v", positive=True)
    f = 2 * (b - v) * (v - a) / (v * (b - a))
    vstar = sp.sqrt(a * b)
    claimed = 2 * (sp.sqrt(b) - sp.sqrt(a)) / (sp.sqrt(b) + sp.sqrt(a))
    return sp.simplify(sp.diff(f, v).subs(v, vstar)), sp.simplify(f.subs(v, vstar) - claimed)


def lemma5_last_step_factor() -> sp.Expr:
    """8(√b−√a)/(√b+√a) − 2(b−a)/b minus its factored form 2(√b−√a)(4b − (√b+√a)²)/(b(√b+√a)); 0.

    Since (√b + √a)² ≤ 4b for 0 < a ≤ b, the factored form is ≥ 0: the last inequality of Lemma 5's
    proof holds (the proof's earlier steps are what fail).

    >>> lemma5_last_step_factor()
    0
    """
    ra, rb = sp.symbols("r_a r_b", positive=True)  # √a, √b
    a, b = ra**2, rb**2
    diff = 8 * (rb - ra) / (rb + ra) - 2 * (b - a) / b
    factored = 2 * (rb - ra) * (4 * b - (rb + ra) ** 2) / (b * (rb + ra))
    return sp.simplify(diff - factored)
