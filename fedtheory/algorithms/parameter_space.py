r"""FedAvg and FedProx in parameter space (finite-rank kernels, linear regression) on the LocalUpdate driver.

Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points*. With a
d-dimensional feature map ϕ, f = θ·ϕ and ‖f‖_ℋ = ‖θ‖₂ (eq. 3), client i's loss is
ℓ_i(θ) = (1/2n_i)‖Φ_iθ − y_i‖² with Φ_i = ϕ(**x**_i), i.e. the quadratic with
A_i = Φ_iᵀΦ_i/n_i and b_i = Φ_iᵀy_i/n_i, and the paper's algorithms become:

**FedAvg (η, s) = LocalUpdate(Θ_{1:s}, α = 0, γ = η, server GD with lr = η).** LocalUpdate's client
sends q^i = Σ_k g_k = (θ − θ_{i,s})/γ and the server steps θ ← θ − lr·Σ_i p_iq^i; with lr = γ = η and
p_i = w_i = n_i/N this is θ_t = Σ_i w_iθ_{i,t}, eq. (4) exactly (:func:`local_update_fedavg`).

**FedProx (η) = lim_{K→∞} LocalUpdate(Θ_{1:K}, α = 1/η, γ, server GD with lr = γ)** for any
γ ∈ (0, 1/(L + α)): the K proximal gradient steps g_k = ∇ℓ_i(θ_k) + α(θ_k − θ) contract to the
minimizer of ℓ_i(θ') + ‖θ' − θ‖²/(2η) (eq. 5) by the factor ‖I − γ(A_i + αI)‖ ≤ 1 − γα per step, and
the server step with lr = γ returns Σ_i w_iθ_{i,K}. :func:`local_update_fedprox` picks K so that
(1 − γα)^K is below float64's resolution; the exact map θ ↦ (I + ηA_i)^{−1}(θ + ηb_i) is
:func:`exact_prox_round` (``verify/nonparam.py`` checks the limit and the rate).

:class:`ParameterDynamics` is the same recursion in closed form (θ_t = 𝓛θ_{t−1} + o with
𝓛 = Σ w_i(I − ηA_i)^s or Σ w_i(I + ηA_i)^{−1}), diagonalised once, with the exact expectation of
‖θ_t − θ_ref‖² over the noise: the operator that the coefficient claims (Theorem 4, Corollaries 1–2)
and the federation-gain figures use.

>>> import numpy as np
>>> from fedtheory.problems.finite_sum import LeastSquaresFederation
>>> fed = LeastSquaresFederation.random(n=3, m=[20, 30, 50], d=4, seed=0)
>>> lu = local_update_fedavg(eta=0.1, s=5)
>>> lu.K, lu.gamma, lu.server.lr
(5, 0.1, 0.1)
>>> dyn = ParameterDynamics.from_least_squares(fed, "fedavg", 0.1, 5)
>>> from fedtheory.algorithms.local_update import run_local_update
>>> h = run_local_update(least_squares_quadratic(fed), lu, np.zeros(4), 30).to_numpy()
>>> bool(np.allclose(h.x, dyn.trajectory(np.zeros(4), np.arange(31)), atol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.theta import geometric_sum, power_one_minus

__all__ = [
    "least_squares_quadratic",
    "local_update_fedavg",
    "local_update_fedprox",
    "exact_prox_round",
    "ParameterDynamics",
    "ParameterHistory",
    "run_parameter_space",
    "paper_gradient_norm",
]

EPS = float(np.finfo(np.float64).eps)


def _moments(fed) -> tuple[np.ndarray, np.ndarray]:
    """A_i = Φ_iᵀΦ_i/n_i (M, d, d) and b_i = Φ_iᵀy_i/n_i (M, d) of a LeastSquaresFederation (λ = 0 only)."""
    if getattr(fed, "l2", 0.0):
        raise ValueError("the paper's clients are unregularised least squares: l2 must be 0")
    return fed.moments()


def _loss_and_grad_from_moments(fed, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F(θ_t) and ‖∇F(θ_t)‖ for F = Σ p_i ℓ_i from the moments: ∇F = Āθ − b̄ (O(Td²), not O(TNd)).

    F = ½θᵀĀθ − θᵀb̄ + ½Σp_i‖y_i‖²/n_i is expanded (it cancels near the optimum; only the gradient is plotted)."""
    A, b = _moments(fed)
    p = np.asarray(fed.p)
    Abar, bbar = np.einsum("n,nij->ij", p, A), p @ b
    c = 0.5 * float(p @ (np.sum(fed.y**2 * fed.mask, axis=1) / fed.counts))
    g = theta @ Abar - bbar[None, :]
    loss = 0.5 * np.einsum("ti,ij,tj->t", theta, Abar, theta) - theta @ bbar + c
    return loss, np.linalg.norm(g, axis=1)


def least_squares_quadratic(fed):
    """The QuadraticFederation with the same gradients as the paper's (unregularised) least-squares clients,
    singular clients (n_i < d) allowed: :meth:`LeastSquaresFederation.to_quadratic` after checking λ = 0.

    >>> import numpy as np
    >>> from fedtheory.problems.finite_sum import LeastSquaresFederation
    >>> fed = LeastSquaresFederation.random(n=2, m=[3, 8], d=5, seed=1)        # client 0: 3 < d samples
    >>> q = least_squares_quadratic(fed)
    >>> x = np.ones(5)
    >>> bool(np.allclose(q.grad(x), fed.grad(x), atol=1e-12)), q.p.round(4).tolist()
    (True, [0.2727, 0.7273])
    """
    if getattr(fed, "l2", 0.0):
        raise ValueError("the paper's clients are unregularised least squares: l2 must be 0")
    return fed.to_quadratic()


def local_update_fedavg(eta: float, s: int) -> LocalUpdate:
    """The paper's FedAvg (η, s) as LocalUpdate(Θ_{1:s}, α = 0, γ = η, server GD lr = η) (see the module doc).

    >>> local_update_fedavg(0.1, 3)
    LocalUpdate(theta=Theta.uniform(3), alpha=0.0, gamma=0.1, server=ServerOpt(kind='gd', lr=0.1, momentum=0.0))
    """
    return LocalUpdate.fedavg(K=int(s), gamma=float(eta), server=ServerOpt("gd", lr=float(eta)))


def local_update_fedprox(eta: float, L: float, *, K: int | None = None, gamma: float | None = None) -> LocalUpdate:
    """The paper's FedProx (η) as LocalUpdate(Θ_{1:K}, α = 1/η, γ, server GD lr = γ), K → ∞ made finite.

    ``L`` bounds every client's curvature (λ_max(A_i) ≤ L). Default γ = 1/(L + α) (one ulp inside:
    Lemma 1's open interval), the step that contracts fastest, by (1 − γα) = L/(L + α) per step on the
    flattest direction; default K is the smallest with (1 − γα)^K ≤ eps/16, so the K-step client
    equals the exact proximal map to float64 resolution.

    >>> lu = local_update_fedprox(0.1, L=2.0)
    >>> lu.alpha, lu.K, lu.server.lr == lu.gamma
    (10.0, 22, True)
    """
    alpha = 1.0 / float(eta)
    if gamma is None:
        gamma = float(np.nextafter(1.0 / (float(L) + alpha), 0.0))
    if not 0 < gamma < 1.0 / (float(L) + alpha) * (1 + 1e-15):
        raise ValueError(
            f"FedProx through LocalUpdate needs 0 < gamma < 1/(L + 1/eta) = {1 / (L + alpha):g}, got {gamma}"
        )
    if K is None:
        factor = 1.0 - gamma * alpha
        K = 1 if factor <= 0 else int(np.ceil(np.log(EPS / 16) / np.log(factor)))
    return LocalUpdate.fedprox(K=int(K), gamma=float(gamma), alpha=alpha, server=ServerOpt("gd", lr=float(gamma)))


def exact_prox_round(A: np.ndarray, b: np.ndarray, weights: np.ndarray, theta: np.ndarray, eta: float) -> np.ndarray:
    """One exact FedProx round in parameter space: Σ_i w_i (I + ηA_i)^{−1}(θ + ηb_i) (eq. 5 solved exactly).

    >>> A = np.array([[[1.0]], [[3.0]]]); b = np.array([[1.0], [3.0]])
    >>> exact_prox_round(A, b, np.array([0.5, 0.5]), np.zeros(1), 1.0).tolist()      # (½ + ¾)/2
    [0.625]
    """
    d = A.shape[-1]
    rhs = theta[None, :] + eta * b
    local = np.linalg.solve(np.eye(d)[None] + eta * A, rhs[..., None])[..., 0]
    return weights @ local


# --------------------------------------------------------------------------------------------
# the recursion in closed form
# --------------------------------------------------------------------------------------------


def _weighted_sum_of_spectral(V: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Σ_i V_i diag(values_i) V_iᵀ for (M, d, d) eigenvectors and (M, d) values, by batched GEMM."""
    return np.matmul(V * values[:, None, :], np.swapaxes(V, 1, 2)).sum(axis=0)


class ParameterDynamics:
    r"""θ_t = 𝓛θ_{t−1} + o in closed form, with its exact noise covariance.

    Per client (eigendecomposition A_i = V_i diag(a_i) V_iᵀ, once): the round map is
    θ ↦ V_i diag(m_i)V_iᵀθ + V_i diag(q_i)V_iᵀb_i with m = (1 − ηa)^s, q = ηΣ_{τ<s}(1 − ηa)^τ
    (FedAvg) or m = (1 + ηa)^{−s}, q = Σ_{τ=1}^{s}η(1 + ηa)^{−τ} (FedProx, s exact proximal steps;
    the paper's s = 1). 𝓛 = Σ w_i V_i diag(m_i)V_iᵀ is symmetric; 𝓛 = U diag(ℓ)Uᵀ once, so
    θ_t = U diag(ℓ^t)Uᵀθ_0 + U diag(Σ_{τ<t}ℓ^τ)Uᵀo for any t. In the paper's notation
    o = (η/N)ϕ(**x**)ᵀPy = y·Ψ (Lemma 1), and 𝓛 is ℒ of eq. (8) in the θ coordinates.

    >>> A = np.array([[[2.0, 0.0], [0.0, 1.0]]]); b = np.array([[2.0, 1.0]])
    >>> dyn = ParameterDynamics(A, np.array([1.0]), np.array([10]), "fedavg", 0.25, 2)
    >>> dyn.fixed_point(b).round(12).tolist()          # one client: its least-squares solution
    [1.0, 1.0]
    """

    b: np.ndarray  # the clients' b_i (n, d), set by from_least_squares: the default of b below

    def __init__(
        self,
        A: np.ndarray,
        weights: np.ndarray,
        counts: np.ndarray,
        kind: str,
        eta: float,
        s: int = 1,
        spectra: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        if kind not in ("fedavg", "fedprox"):
            raise ValueError(f"kind must be 'fedavg' or 'fedprox', got {kind!r}")
        self.A = np.asarray(A, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.kind, self.eta, self.s = kind, float(eta), int(s)
        # ``spectra``: the clients' eigendecompositions (a, V), when several algorithms share one federation
        a, V = spectra if spectra is not None else np.linalg.eigh(0.5 * (self.A + np.swapaxes(self.A, 1, 2)))
        self.a, self.Vc = np.maximum(a, 0.0), V
        u = self.eta * self.a
        if kind == "fedavg":
            self.m = np.asarray(power_one_minus(u, self.s), dtype=np.float64)
            self.q = self.eta * np.asarray(geometric_sum(u, self.s), dtype=np.float64)
        else:
            r = 1.0 / (1.0 + u)
            self.m = r**self.s
            self.q = self.eta * r * np.asarray(geometric_sum(1.0 - r, self.s), dtype=np.float64)
        Lop = _weighted_sum_of_spectral(V, self.weights[:, None] * self.m)
        ell, U = np.linalg.eigh(0.5 * (Lop + Lop.T))
        self.L, self.ell, self.U = Lop, ell, U

    @classmethod
    def from_least_squares(cls, fed, kind: str, eta: float, s: int = 1) -> "ParameterDynamics":
        """From a LeastSquaresFederation (weights p_i = n_i/N as in eq. 4); remembers its b_i."""
        A, b = _moments(fed)
        dyn = cls(A, np.asarray(fed.p), fed.counts, kind, eta, s)
        dyn.b = b
        return dyn

    @classmethod
    def from_features(cls, Phis: list, kind: str, eta: float, s: int = 1) -> "ParameterDynamics":
        """From the client feature matrices Φ_i = ϕ(**x**_i) (n_i, d), weights n_i/N.

        >>> dyn = ParameterDynamics.from_features([np.eye(2), np.ones((1, 2))], "fedprox", 1.0)
        >>> dyn.weights.round(4).tolist(), dyn.A.shape
        ([0.6667, 0.3333], (2, 2, 2))
        """
        counts = np.array([P.shape[0] for P in Phis])
        A = np.stack([P.T @ P / P.shape[0] for P in Phis])
        return cls(A, counts / counts.sum(), counts, kind, eta, s)

    # ----------------------------------------------------------------------------------------
    def offset(self, b: np.ndarray) -> np.ndarray:
        """o = Σ_i w_i V_i diag(q_i) V_iᵀ b_i for client moments b (M, d)."""
        b = np.asarray(b, dtype=np.float64)
        z = np.matmul(np.swapaxes(self.Vc, 1, 2), b[..., None])[..., 0] * self.q  # (M, d)
        return self.weights @ np.matmul(self.Vc, z[..., None])[..., 0]

    def offset_from_responses(self, Phis: list, ys: list) -> np.ndarray:
        """o for responses y_i (b_i = Φ_iᵀy_i/n_i)."""
        b = np.stack([P.T @ np.asarray(y, dtype=np.float64) / P.shape[0] for P, y in zip(Phis, ys)])
        return self.offset(b)

    def _powers(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ℓ^t, Σ_{τ<t} ℓ^τ) per eigenvalue, (len t, d) each (exact for ℓ = 1); cached per grid of rounds, since
        risk curves evaluate many offsets on one grid."""
        key = np.asarray(t, dtype=np.int64).tobytes()
        cache = self.__dict__.setdefault("_power_cache", {})
        if key not in cache:
            gap = np.clip(1.0 - self.ell, 0.0, None)[None, :]
            cache.clear() if len(cache) > 8 else None
            cache[key] = (
                np.asarray(power_one_minus(gap, t[:, None]), dtype=np.float64),
                np.asarray(geometric_sum(gap, t[:, None]), dtype=np.float64),
            )
        return cache[key]

    def _sums(self, t: np.ndarray) -> np.ndarray:
        """Σ_{τ<t} ℓ^τ per eigenvalue, (len t, d) (exact for ℓ = 1: t)."""
        return self._powers(t)[1]

    def trajectory(self, theta0: Any, rounds: Any, b: Any = None, o: Any = None) -> np.ndarray:
        """θ_t for every t in ``rounds`` (len, d), from θ_0 and b (or the offset o).

        >>> dyn = ParameterDynamics(np.array([[[1.0]]]), np.array([1.0]), np.array([1]), "fedavg", 0.5, 1)
        >>> dyn.trajectory(np.zeros(1), [0, 1, 2], b=np.array([[2.0]])).ravel().tolist()   # θ ← θ/2 + 1
        [0.0, 1.0, 1.5]
        """
        t = np.atleast_1d(np.asarray(rounds))
        if o is None:
            o = self.offset(self.b if b is None else b)
        z0, zo = self.U.T @ np.asarray(theta0, dtype=np.float64), self.U.T @ o
        decay, sums = self._powers(t)
        return (decay * z0[None, :] + sums * zo[None, :]) @ self.U.T

    def fixed_point(self, b: Any = None, o: Any = None) -> np.ndarray:
        """θ_∞ = (I − 𝓛)^+ o (o has no component on 𝓛's eigenvalue-1 space: it lies in Σ range(A_i))."""
        if o is None:
            o = self.offset(self.b if b is None else b)
        gap = 1.0 - self.ell
        inv = np.where(gap > 16 * EPS, 1.0 / np.where(gap > 16 * EPS, gap, 1.0), 0.0)
        return self.U @ (inv * (self.U.T @ o))

    def noise_covariance(self, sigma2: Any) -> np.ndarray:
        """Cov of o's noise part for client noise variances σ_i² (M,): Σ_i σ_i²(w_i²/n_i) V_i diag(q_i²a_i) V_iᵀ."""
        s2 = np.broadcast_to(np.asarray(sigma2, dtype=np.float64), self.weights.shape)
        coef = s2 * self.weights**2 / self.counts
        return _weighted_sum_of_spectral(self.Vc, coef[:, None] * self.q**2 * self.a)

    def expected_sq_error(
        self, theta0: Any, theta_ref: Any, sigma2: Any, rounds: Any, b_mean: Any = None
    ) -> np.ndarray:
        """E_ξ‖θ_t − θ_ref‖² for every t: bias² of the noiseless run (moments ``b_mean``) + tr(G_tCG_t).

        G_t = Σ_{τ<t}𝓛^τ, C = :meth:`noise_covariance`; exact (no sampling).

        >>> dyn = ParameterDynamics(np.array([[[1.0]]]), np.array([1.0]), np.array([4]), "fedavg", 1.0, 1)
        >>> dyn.expected_sq_error([0.0], [1.0], 1.0, [1], b_mean=np.array([[1.0]])).tolist()   # one step: σ²/n
        [0.25]
        """
        t = np.atleast_1d(np.asarray(rounds))
        mean = self.trajectory(theta0, t, b=b_mean)
        bias = np.sum((mean - np.asarray(theta_ref, dtype=np.float64)[None, :]) ** 2, axis=1)
        return bias + (self._sums(t) ** 2) @ self._noise_diag(sigma2)

    def _noise_diag(self, sigma2: Any) -> np.ndarray:
        """diag(UᵀCU): the noise covariance in 𝓛's eigenbasis (cached per noise level)."""
        key = tuple(np.broadcast_to(np.asarray(sigma2, dtype=np.float64), self.weights.shape).tolist())
        cache = self.__dict__.setdefault("_noise_cache", {})
        if key not in cache:
            cache[key] = np.sum(self.U * (self.noise_covariance(sigma2) @ self.U), axis=0)
        return cache[key]

    def limit_variance(self, sigma2: Any) -> float:
        """tr Cov(θ_∞) = Σ_k (U^TCU)_kk/(1 − ℓ_k)² over 1 − ℓ_k > 0."""
        gap = 1.0 - self.ell
        Cdiag = self._noise_diag(sigma2)
        ok = gap > 16 * EPS
        return float(np.sum(Cdiag[ok] / gap[ok] ** 2))


# --------------------------------------------------------------------------------------------
# runs on the LocalUpdate driver
# --------------------------------------------------------------------------------------------


@dataclass
class ParameterHistory:
    """A parameter-space run: θ_t (T+1, d), F(θ_t) and ‖∇F(θ_t)‖ with F = Σ w_iℓ_i = (1/2N)‖Φθ − y‖²."""

    theta: np.ndarray
    loss: np.ndarray
    grad_norm: np.ndarray
    label: str


def paper_gradient_norm(history: ParameterHistory) -> np.ndarray:
    """‖∇ℓ(θ_t)‖₂ for Section 6.1's ℓ(θ) = (1/N)Σ‖y_i − X_iθ‖² = 2F(θ): twice ‖∇F‖."""
    return 2.0 * np.asarray(history.grad_norm)


def _prox_minibatch_rounds(
    fed, eta: float, steps: int, B: int, theta0: np.ndarray, rounds: int, rng: np.random.Generator
) -> np.ndarray:
    """FedProx with mini-batches (Section 6.1): per round each client takes ``steps`` exact proximal steps,
    each on a batch S of B samples drawn uniformly without replacement, centred at its current iterate:
    θ ← argmin (1/2B)‖Φ_Sθ' − y_S‖² + ‖θ' − θ‖²/(2η) = θ − Φ_Sᵀ(B/η I + Φ_SΦ_Sᵀ)^{−1}(Φ_Sθ − y_S)
    (Woodbury: a B × B solve per client instead of d × d)."""
    from fedtheory.problems.finite_sum import sample_batches

    M, d = fed.n, fed.d
    out = np.empty((rounds + 1, d))
    out[0] = theta = np.asarray(theta0, dtype=np.float64)
    eye = np.eye(B)[None] * (B / eta)
    rows = np.arange(M)[:, None]
    for t in range(1, rounds + 1):
        Th = np.broadcast_to(theta, (M, d)).copy()
        for _ in range(steps):
            idx = sample_batches(rng, fed.counts, B)
            Xb, yb = fed.a[rows, idx], fed.y[rows, idx]  # (M, B, d), (M, B)
            r = np.einsum("mbd,md->mb", Xb, Th) - yb
            z = np.linalg.solve(eye + np.einsum("mbd,mcd->mbc", Xb, Xb), r[..., None])[..., 0]
            Th = Th - np.einsum("mbd,mb->md", Xb, z)
        out[t] = theta = np.asarray(fed.p) @ Th
    return out


BATCH_SCALINGS = ("batch", "client")


def _partition_rounds(
    fed,
    kind: str,
    eta: float,
    epochs: int,
    B: int,
    theta0: np.ndarray,
    rounds: int,
    rng: np.random.Generator,
    batch_scaling: str = "batch",
) -> np.ndarray:
    """Section 6.1's mini-batches literally: each client partitions its data once into n_i/B batches (a random
    partition, drawn once); per round, FedAvg passes over the batches in order ``epochs`` (= s) times, one gradient step
    of size η per batch, and FedProx takes one exact proximal step per batch, centred at the current local iterate.

    ``batch_scaling`` is the batch loss each step uses, which the paper leaves open: ``"batch"`` its mean over the B
    samples, (1/2B)‖X_Sθ − y_S‖² (a step per batch as large as a full-gradient step); ``"client"`` the batch's share
    of the client's loss, (1/2n_i)‖X_Sθ − y_S‖² (one pass over the n_i/B batches ≈ one full-gradient step)."""
    M, d = fed.n, fed.d
    if np.any(fed.counts % B):
        raise ValueError(f"the partition scheme needs every n_i divisible by B={B}, got n = {fed.counts.tolist()}")
    nb = int(fed.counts.min()) // B
    if np.any(fed.counts != fed.counts[0]):
        raise ValueError("the partition scheme needs equal client sizes (Section 6.1's setting)")
    order = np.stack([rng.permutation(int(fed.counts[0])) for _ in range(M)]).reshape(M, nb, B)
    rows = np.arange(M)[:, None]
    Xb = [fed.a[rows, order[:, k]] for k in range(nb)]  # (M, B, d) per batch, fixed
    yb = [fed.y[rows, order[:, k]] for k in range(nb)]
    if batch_scaling not in BATCH_SCALINGS:
        raise ValueError(f"batch_scaling must be one of {BATCH_SCALINGS}, got {batch_scaling!r}")
    scale = B if batch_scaling == "batch" else int(fed.counts[0])  # the batch loss's denominator
    out = np.empty((rounds + 1, d))
    out[0] = theta = np.asarray(theta0, dtype=np.float64)
    if kind == "fedprox":
        eye = np.eye(B)[None] * (scale / eta)
        inv = [np.linalg.inv(eye + np.matmul(X, np.swapaxes(X, 1, 2))) for X in Xb]
    for t in range(1, rounds + 1):
        Th = np.broadcast_to(theta, (M, d)).copy()
        for _ in range(epochs if kind == "fedavg" else 1):
            for X, y, k in zip(Xb, yb, range(nb)):
                r = np.matmul(X, Th[..., None])[..., 0] - y
                if kind == "fedavg":
                    Th = Th - (eta / scale) * np.matmul(np.swapaxes(X, 1, 2), r[..., None])[..., 0]
                else:
                    z = np.matmul(inv[k], r[..., None])
                    Th = Th - np.matmul(np.swapaxes(X, 1, 2), z)[..., 0]
        out[t] = theta = np.asarray(fed.p) @ Th
    return out


def run_parameter_space(
    fed,
    kind: str,
    eta: float,
    rounds: int,
    *,
    s: int = 1,
    theta0: Any = None,
    batch_size: int | None = None,
    seed: Any = None,
    batch_scheme: str = "sampled",
    quadratic: Any = None,
    batch_scaling: str = "batch",
) -> ParameterHistory:
    """Run the paper's FedAvg/FedProx on a LeastSquaresFederation (weights p_i = n_i/N).

    * FedAvg, full batch: LocalUpdate (:func:`local_update_fedavg`) on :func:`least_squares_quadratic`,
      spectral path (exact for any s);
    * FedAvg, mini-batches of B: LocalUpdate on the finite-sum federation with ``batch_size=B`` and
      K = ``s`` local steps (Section 6.1 takes s·n_i/B of them: pass that);
    * FedProx, full batch: LocalUpdate (:func:`local_update_fedprox`: the K → ∞ limit made exact);
    * FedProx, mini-batches: ``s`` exact proximal steps on batches (Section 6.1: n_i/B), which no
      choice of LocalUpdate's data expresses (a proximal step is not a gradient step).

    ``quadratic``: :func:`least_squares_quadratic` of ``fed``, when several runs share one federation.

    ``batch_scheme="partition"`` runs Section 6.1's scheme literally instead: a fixed partition of each client's data
    into n_i/B batches, passed in order s times per round by FedAvg (``s`` = epochs here) and once by FedProx
    (:func:`_partition_rounds`); LocalUpdate draws each step's batch afresh and cannot express a cycled partition.
    ``batch_scaling`` (partition scheme only): ``"batch"`` (default) averages each step's loss over its batch,
    ``"client"`` divides it by n_i instead, so one pass over a client's batches is about one full-gradient step.

    >>> from fedtheory.problems.finite_sum import LeastSquaresFederation
    >>> fed = LeastSquaresFederation.random(n=2, m=30, d=3, seed=0)
    >>> h = run_parameter_space(fed, "fedprox", 0.1, 50)
    >>> bool(np.allclose(h.theta[1], exact_prox_round(*_moments(fed), np.asarray(fed.p), np.zeros(3), 0.1), atol=1e-14))
    True
    >>> h = run_parameter_space(fed, "fedavg", 0.1, 3, batch_size=10, batch_scheme="partition", batch_scaling="client",
    ...                         seed=0)
    >>> h.theta.shape
    (4, 3)
    """
    if kind not in ("fedavg", "fedprox"):
        raise ValueError(f"kind must be 'fedavg' or 'fedprox', got {kind!r}")
    theta0 = np.zeros(fed.d) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if batch_scheme not in ("sampled", "partition"):
        raise ValueError(f"batch_scheme must be 'sampled' or 'partition', got {batch_scheme!r}")
    if batch_scaling != "batch" and batch_scheme != "partition":
        raise ValueError(
            f"batch_scaling={batch_scaling!r} needs batch_scheme='partition' (the sampled scheme averages "
            "over the batch)"
        )
    if batch_size is not None and batch_scheme == "partition":
        theta = _partition_rounds(
            fed, kind, float(eta), int(s), int(batch_size), theta0, int(rounds), rng, batch_scaling
        )
        loss, grad = _loss_and_grad_from_moments(fed, theta)
        label = (f"FedAvg s={s}" if kind == "fedavg" else "FedProx") + f" B={batch_size} (partition)"
        return ParameterHistory(theta, loss, grad, label)
    if kind == "fedprox" and batch_size is not None:
        theta = _prox_minibatch_rounds(fed, float(eta), int(s), int(batch_size), theta0, int(rounds), rng)
        loss, grad = _loss_and_grad_from_moments(fed, theta)
        return ParameterHistory(theta, np.asarray(loss), np.asarray(grad), f"FedProx B={batch_size}")
    if kind == "fedavg":
        algo = local_update_fedavg(eta, s)
        label = f"FedAvg s={s}" + ("" if batch_size is None else f" B={batch_size}")
    else:
        A, _ = _moments(fed)
        algo = local_update_fedprox(eta, L=float(np.linalg.eigvalsh(A)[:, -1].max()))
        label = "FedProx"
    if batch_size is None:
        q = least_squares_quadratic(fed) if quadratic is None else quadratic
        h = run_local_update(q, algo, theta0, int(rounds), path="spectral").to_numpy()
    else:
        h = run_local_update(fed, algo, theta0, int(rounds), batch_size=int(batch_size), seed=rng).to_numpy()
    loss, grad = _loss_and_grad_from_moments(fed, h.x)
    return ParameterHistory(h.x, loss, grad, label)
