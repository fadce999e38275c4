"""Symbolic distortion matrices, ClientUpdate and surrogate losses (sympy).

Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and
Meta-Learning* (arXiv:2103.05032), Section 3: for a quadratic client
``f_i(x) = ½ (x − c)ᵀ A (x − c)``, LocalUpdate's ClientUpdate returns ``Σ_k θ_k g_k`` and

* eq. (6):  ``Q(α, γ, Θ) = Σ_{k=1}^{K(Θ)} θ_k (I − γ(A + αI))^{k−1}``
* eq. (7):  ``f̃(x) = ½ ‖(Q A)^{1/2}(x − c)‖² = ½ (x − c)ᵀ Q A (x − c)``  (QA is symmetric PSD)
* Theorem 1: ``E[ClientUpdate(x)] = ∇ f̃(x)``.

Everything here works on scalars and on explicit sympy matrices, so identities can be proved by
expanding a residual to zero.

>>> import sympy as sp
>>> a, g, al, x, c = sp.symbols("a gamma alpha x c")
>>> th = sp.symbols("theta1:4")
>>> msg = client_update(sp.Matrix([[a]]), sp.Matrix([c]), sp.Matrix([x]), al, g, th)
>>> sp.expand(msg[0] - surrogate_gradient(sp.Matrix([[a]]), sp.Matrix([c]), sp.Matrix([x]), al, g, th)[0])
0
"""

from __future__ import annotations

import itertools
from typing import Sequence

import sympy as sp


def _as_matrix(A) -> sp.Matrix:
    return A if isinstance(A, sp.MatrixBase) else sp.Matrix([[A]])


def symmetric_matrix(d: int, name: str = "a") -> sp.Matrix:
    """A generic symmetric ``d×d`` matrix of real symbols ``a_ij`` (i ≤ j).

    >>> symmetric_matrix(2)
    Matrix([
    [a_11, a_12],
    [a_12, a_22]])
    """
    entries = {}
    for i in range(d):
        for j in range(i, d):
            entries[(i, j)] = entries[(j, i)] = sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True)
    return sp.Matrix(d, d, lambda i, j: entries[(i, j)])


def distortion_matrix(A, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """Q(α, γ, Θ) of eq. (6) for a symbolic (or numeric) matrix ``A``.

    >>> import sympy as sp
    >>> lam, g = sp.symbols("lambda gamma")
    >>> sp.expand(distortion_matrix(lam, 0, g, [1, 1])[0])
    -gamma*lambda + 2
    """
    A = _as_matrix(A)
    d = A.shape[0]
    M = sp.eye(d) - gamma * (A + alpha * sp.eye(d))
    Q = sp.zeros(d, d)
    power = sp.eye(d)
    for theta_k in theta:
        Q += theta_k * power
        power = power * M
    return Q


def client_update(A, c, x, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """Algorithm 2 (full batch): run ``K(Θ) = len(theta)`` proximal GD steps from ``x`` and
    return ``Σ_k θ_k g_k`` with ``g_k = A(x_k − c) + α(x_k − x)``, ``x_{k+1} = x_k − γ g_k``.

    >>> import sympy as sp
    >>> a, g, x = sp.symbols("a gamma x")
    >>> client_update(a, sp.Matrix([0]), sp.Matrix([x]), 0, g, [0, 1])  # Θ_2: the 2nd gradient
    Matrix([[a*(-a*gamma*x + x)]])
    """
    A = _as_matrix(A)
    x = sp.Matrix(x)
    c = sp.Matrix(c)
    xk = x
    message = sp.zeros(*x.shape)
    for theta_k in theta:
        g = A * (xk - c) + alpha * (xk - x)
        message += theta_k * g
        xk = xk - gamma * g
    return message


def stochastic_client_update_mean(samples: Sequence[tuple], x, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """E[ClientUpdate] by exact enumeration over a finite data distribution, batch size 1.

    ``samples`` is a list of equally likely ``(B_z, c_z)`` pairs (scalars or matrices); each local
    step draws one sample independently, so all ``len(samples)**K`` paths are averaged exactly.
    The client's population quantities are ``A = E[B_z]`` and ``c = A^{-1} E[B_z c_z]`` (eq. 3).

    >>> import sympy as sp
    >>> b1, b2, x = sp.symbols("b1 b2 x")
    >>> mean = stochastic_client_update_mean([(b1, 1), (b2, -1)], [x], 0, 0, [1])
    >>> sp.simplify(mean[0] - ((b1 + b2) / 2 * x - (b1 - b2) / 2))
    0
    """
    x = sp.Matrix(x)
    pairs = [(_as_matrix(B), sp.Matrix([cz]) if not isinstance(cz, sp.MatrixBase) else cz) for B, cz in samples]
    K = len(theta)
    total = sp.zeros(*x.shape)
    for path in itertools.product(range(len(pairs)), repeat=K):
        xk = x
        message = sp.zeros(*x.shape)
        for theta_k, z in zip(theta, path):
            B, cz = pairs[z]
            g = B * (xk - cz) + alpha * (xk - x)
            message += theta_k * g
            xk = xk - gamma * g
        total += message
    return total / sp.Integer(len(pairs)) ** K


def surrogate_loss(A, c, x, alpha, gamma, theta: Sequence) -> sp.Expr:
    """f̃(x, α, γ, Θ) of eq. (7), written as ``½ (x − c)ᵀ Q A (x − c)``.

    The paper writes ``½‖(QA)^{1/2}(x − c)‖²``; the two agree because QA is symmetric
    (Q is a polynomial in A) — :func:`qa_asymmetry` proves that part.

    >>> import sympy as sp
    >>> a, x = sp.symbols("a x")
    >>> surrogate_loss(a, [0], [x], 0, 0, [1])
    a*x**2/2
    """
    A = _as_matrix(A)
    e = sp.Matrix(x) - sp.Matrix(c)
    return sp.expand((e.T * distortion_matrix(A, alpha, gamma, theta) * A * e)[0, 0] / 2)


def surrogate_gradient(A, c, x, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """∇_x f̃ by symbolic differentiation of :func:`surrogate_loss` in the entries of ``x``.

    >>> import sympy as sp
    >>> a, x = sp.symbols("a x")
    >>> surrogate_gradient(a, [0], [x], 0, 0, [1])
    Matrix([[a*x]])
    """
    x = sp.Matrix(x)
    loss = surrogate_loss(A, c, x, alpha, gamma, theta)
    return sp.Matrix([sp.diff(loss, xi) for xi in x])


def qa_asymmetry(A, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """``QA − (QA)ᵀ`` expanded; the zero matrix proves QA symmetric.

    >>> qa_asymmetry(symmetric_matrix(2), 0, sp.Symbol("gamma"), [1, 1]) == sp.zeros(2, 2)
    True
    """
    A = _as_matrix(A)
    QA = distortion_matrix(A, alpha, gamma, theta) * A
    return (QA - QA.T).applyfunc(sp.expand)


def theorem1_residual(A, c, x, alpha, gamma, theta: Sequence) -> sp.Matrix:
    """ClientUpdate − ∇f̃, expanded; Theorem 1 (full batch) holds iff this is the zero vector.

    >>> import sympy as sp
    >>> g, al = sp.symbols("gamma alpha")
    >>> theta = sp.symbols("theta1:4")
    >>> theorem1_residual(symmetric_matrix(2), sp.symbols("c1:3"), sp.symbols("x1:3"), al, g, theta)
    Matrix([
    [0],
    [0]])
    """
    lhs = client_update(A, c, x, alpha, gamma, theta)
    rhs = surrogate_gradient(A, c, x, alpha, gamma, theta)
    return (lhs - rhs).applyfunc(sp.expand)


def phi_expr(lam, alpha, gamma, K) -> sp.Expr:
    """φ(λ, α, γ, K) = Σ_{k=1}^{K} (1 − γ(λ + α))^{k−1} λ, eq. (10), as an unevaluated sympy Sum.

    >>> import sympy as sp
    >>> lam, al, g = sp.symbols("lambda alpha gamma", positive=True)
    >>> sp.simplify(phi_expr(lam, al, g, 3).doit() - lam * sum((1 - g * (lam + al))**k for k in range(3)))
    0
    """
    k = sp.Symbol("k", integer=True, positive=True)
    return sp.Sum((1 - gamma * (lam + alpha)) ** (k - 1) * lam, (k, 1, K))


def psi_expr(lam, alpha, gamma, K) -> sp.Expr:
    """ψ(λ, α, γ, K) = (1 − γ(λ + α))^{K−1} λ, eq. (12).

    >>> import sympy as sp
    >>> psi_expr(sp.Symbol("lambda"), 0, 0, 5)
    lambda
    """
    return (1 - gamma * (lam + alpha)) ** (K - 1) * lam


def latex_distortion() -> str:
    r"""LaTeX of eq. (6).

    >>> latex_distortion().startswith("Q_i")
    True
    """
    return r"Q_i(\alpha,\gamma,\Theta) = \sum_{k=1}^{K(\Theta)} \theta_k \left(I - \gamma (A_i + \alpha I)\right)^{k-1}"


def kappa_bound_uniform_expr(mu, L, alpha, gamma, K) -> sp.Expr:
    """φ(L, α, γ, K)/φ(μ, α, γ, K), eq. (11), in the closed form (33) (valid for γ(λ + α) ≠ 0).

    >>> import sympy as sp
    >>> sp.nsimplify(kappa_bound_uniform_expr(1, 4, 0, sp.Rational(1, 5), 2))     # 4·1.2 / 1.8
    8/3
    """

    def phi_closed(lam):
        s = gamma * (lam + alpha)
        return (1 - (1 - s) ** K) / gamma * lam / (lam + alpha)

    return sp.simplify(phi_closed(L) / phi_closed(mu))


def kappa_bound_last_expr(mu, L, alpha, gamma, K) -> sp.Expr:
    """((1 − γ(L + α))/(1 − γ(μ + α)))^{K−1} L/μ, eq. (13) = ψ(L)/ψ(μ).

    >>> import sympy as sp
    >>> kappa_bound_last_expr(1, 10, 0, sp.Rational(1, 100), 2)
    100/11
    """
    return sp.simplify(psi_expr(L, alpha, gamma, K) / psi_expr(mu, alpha, gamma, K))


def latex_surrogate() -> str:
    r"""LaTeX of eqs. (7)–(8), the surrogate loss.

    >>> latex_surrogate().startswith(r"\tilde f")
    True
    """
    return (
        r"\tilde f(x,\alpha,\gamma,\Theta) = \mathbb{E}_{i\sim\mathcal P}\left[\tfrac12\left\|(Q_i(\alpha,\gamma,\Theta)A_i)^{1/2}"
        r"(x-c_i)\right\|^2\right]"
    )


def latex_kappa() -> str:
    r"""LaTeX of eq. (9).

    >>> r"\lambda_{\max}" in latex_kappa()
    True
    """
    return (
        r"\kappa(\alpha,\gamma,\Theta) = \frac{\mathbb{E}_i[\lambda_{\max}(Q_i(\alpha,\gamma,\Theta)A_i)]}"
        r"{\mathbb{E}_i[\lambda_{\min}(Q_i(\alpha,\gamma,\Theta)A_i)]}"
    )


def latex_phi_psi() -> tuple[str, str]:
    r"""LaTeX of eqs. (10) and (12), from the sympy expressions.

    >>> phi_tex, psi_tex = latex_phi_psi()
    >>> r"\sum" in phi_tex, "K - 1" in psi_tex
    (True, True)
    """
    lam, alpha, gamma, K = sp.symbols("lambda alpha gamma K")
    return (
        r"\phi(\lambda,\alpha,\gamma,K) = " + sp.latex(phi_expr(lam, alpha, gamma, K)),
        r"\psi(\lambda,\alpha,\gamma,K) = " + sp.latex(psi_expr(lam, alpha, gamma, K)),
    )
