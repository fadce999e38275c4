r"""FedAvg and FedProx in function space (kernel regression): the paper's operators, recursions and drivers.

Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points*, Sections 3–4.
Each round the server broadcasts f_{t−1}; client i returns f_{i,t} and the server averages
f_t = Σ_i w_i f_{i,t}, w_i = n_i/N (eq. 4), where

* **FedAvg**: f_{i,t} = 𝒢_i^s(f_{t−1}), s local gradient steps 𝒢_i(f) = f − η∇ℓ_i(f) on
  ℓ_i(f) = (1/2n_i) Σ_j (f(x_ij) − y_ij)²;
* **FedProx**: f_{i,t} = argmin_f ℓ_i(f) + ‖f − f_{t−1}‖²_ℋ/(2η) (eq. 5).

Proposition 1 writes a round as f_t = ℒf_{t−1} + y·Ψ with the operators of eq. (8); Lemma 1 turns
them into matrices, Ψ = (η/N)Pk_**x**, Ψ(**x**) = ηK_**x**P, with P block diagonal,
P_ii = Σ_{τ<s}(I − ηK_{**x**_i})^τ (FedAvg) or (I + ηK_{**x**_i})^{−1} (FedProx) (eq. 10), so that
the predictions follow the LTI system f_t(**x**) = (I − ηK_**x**P)f_{t−1}(**x**) + ηK_**x**Py (eq. 11).

Two implementations, kept equal by ``verify/nonparam.py``:

* :class:`PredictionDynamics` (the fast path): P from each client's eigendecomposition (computed
  once), then P^{1/2}K_**x**P^{1/2} = UΛUᵀ once, V = P^{−1/2}U; every round t in closed form,
  L^t = V(I − ηΛ)^tV^{−1} (eq. 39), so t = 10⁶ costs what t = 1 does;
* :func:`run_kernel_federated` with ``path="stepwise"``: the local steps literally (all clients at
  once, as coefficient vectors on the data points), with optional client mini-batches.

:func:`definitional_operators` builds ℒ, Ψ and P from their definitions (8) and (10) on any matrix
algebra (numpy or sympy), so the same function serves the symbolic proofs and the float checks.

A function in span{k(·, z): z ∈ Z} is stored as its coefficients c (f = c·k_Z); the drivers keep
f_t = a_t·k_**x** (f_0 in the span of the data representers; the part of f_0 orthogonal to it is a
fixed point of every local update and is not needed).

>>> import numpy as np
>>> from fedtheory.problems.kernels import KernelFederation, SobolevKernel, MercerSeries
>>> fed = KernelFederation.sample(SobolevKernel(), [4, 7, 3], truths=MercerSeries(SobolevKernel(), [1.0]),
...                               noise_sd=0.2, seed=0)
>>> algo = KernelAlgorithm.fedavg(eta=0.5, s=3)
>>> fast = run_kernel_federated(fed, algo, 20)
>>> slow = run_kernel_federated(fed, algo, 20, path="stepwise")
>>> bool(np.allclose(fast.predictions, slow.predictions, atol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from fedtheory.algorithms.theta import geometric_sum, power_one_minus

__all__ = [
    "KERNEL_ALGORITHMS",
    "KernelAlgorithm",
    "check_gamma",
    "client_P_blocks",
    "P_matrix",
    "PredictionDynamics",
    "definitional_operators",
    "KernelHistory",
    "early_stopping_rounds",
    "run_kernel_federated",
    "limit_coefficients",
    "operator_in_orthonormal_basis",
]

KERNEL_ALGORITHMS = ("fedavg", "fedprox")
PATHS = ("spectral", "stepwise")


# --------------------------------------------------------------------------------------------
# the algorithm as data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelAlgorithm:
    """FedAvg (``kind="fedavg"``, s local gradient steps of size η) or FedProx (``"fedprox"``, proximal
    parameter η: the step size of eq. 5) of Section 3.

    For FedProx, ``s`` counts sequential exact proximal steps per round (the paper's FedProx is s = 1;
    with mini-batches Section 6.1 takes n_i/B of them, each on one batch, centred at the current local
    iterate). The bounds of Section 5 read FedProx with s = 1.

    >>> KernelAlgorithm.fedavg(0.1, 5)
    KernelAlgorithm(kind='fedavg', eta=0.1, s=5)
    >>> KernelAlgorithm.fedprox(0.1).kappa(0.5)
    1.5
    >>> KernelAlgorithm("fedavg", eta=-1.0)
    Traceback (most recent call last):
    ...
    ValueError: KernelAlgorithm eta must be a finite number > 0, got -1.0
    """

    kind: str
    eta: float
    s: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KERNEL_ALGORITHMS:
            raise ValueError(f"KernelAlgorithm kind must be one of {KERNEL_ALGORITHMS}, got {self.kind!r}")
        try:
            eta = float(self.eta)
        except (TypeError, ValueError):
            raise ValueError(f"KernelAlgorithm eta must be a finite number > 0, got {self.eta!r}") from None
        if not (np.isfinite(eta) and eta > 0):
            raise ValueError(f"KernelAlgorithm eta must be a finite number > 0, got {self.eta!r}")
        if isinstance(self.s, bool) or int(self.s) != self.s or self.s < 1:
            raise ValueError(f"KernelAlgorithm s must be a positive integer, got {self.s!r}")
        object.__setattr__(self, "eta", eta)
        object.__setattr__(self, "s", int(self.s))

    @classmethod
    def fedavg(cls, eta: float, s: int = 1) -> "KernelAlgorithm":
        """FedAvg with s local gradient steps of size η."""
        return cls("fedavg", eta, s)

    @classmethod
    def fedprox(cls, eta: float, s: int = 1) -> "KernelAlgorithm":
        """FedProx with proximal parameter η (s sequential proximal steps per round; the paper: s = 1)."""
        return cls("fedprox", eta, s)

    @property
    def bound_s(self) -> int:
        """The s of Section 5's bounds: s for FedAvg, 1 for FedProx ("set s = 1")."""
        return self.s if self.kind == "fedavg" else 1

    @property
    def label(self) -> str:
        return f"FedAvg s={self.s}" if self.kind == "fedavg" else ("FedProx" if self.s == 1 else f"FedProx ×{self.s}")

    def p_eigenvalues(self, lam: Any) -> np.ndarray:
        """Eigenvalues of P_ii at eigenvalues λ of K_{**x**_i} (eq. 10): Σ_{τ<s}(1 − ηλ)^τ or 1/(1 + ηλ).

        >>> KernelAlgorithm.fedavg(0.5, 3).p_eigenvalues([0.0, 1.0]).tolist()   # 3 and 1 + ½ + ¼
        [3.0, 1.75]
        """
        u = self.eta * np.asarray(lam, dtype=np.float64)
        if self.kind == "fedavg":
            return np.asarray(geometric_sum(u, self.s), dtype=np.float64)
        return 1.0 / (1.0 + u)

    def local_eigenvalues(self, lam: Any) -> np.ndarray:
        """Eigenvalues of one client's round map on the span of its representers: (1 − ηλ)^s or 1/(1 + ηλ)^s.

        >>> KernelAlgorithm.fedprox(1.0).local_eigenvalues([1.0]).tolist()
        [0.5]
        """
        u = self.eta * np.asarray(lam, dtype=np.float64)
        if self.kind == "fedavg":
            return np.asarray(power_one_minus(u, self.s), dtype=np.float64)
        return (1.0 + u) ** (-self.s)

    def kappa(self, gamma: float) -> float:
        """κ of Lemma 3 (eq. 12): γs/(1 − (1 − γ)^s) (FedAvg, needs γ < 1) or 1 + γ (FedProx, any γ).

        >>> round(KernelAlgorithm.fedavg(0.1, 2).kappa(0.5), 12)      # 2·0.5/(1 − 0.25)
        1.333333333333
        >>> KernelAlgorithm.fedavg(0.1, 2).kappa(1.0)
        Traceback (most recent call last):
        ...
        ValueError: hypothesis gamma < 1 (Section 4, FedAvg) violated: gamma=1
        """
        g = float(gamma)
        if not (np.isfinite(g) and g >= 0):
            raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
        if self.kind == "fedprox":
            return 1.0 + g
        check_gamma(self, g)
        if g == 0:
            return 1.0
        return g * self.s / float(-np.expm1(self.s * np.log1p(-g)))

    def to_json(self) -> dict:
        return {"kind": self.kind, "eta": self.eta, "s": self.s}


def check_gamma(algo: KernelAlgorithm, gamma: float) -> None:
    """Raise ValueError unless the paper's standing hypothesis γ < 1 holds (FedAvg; FedProx needs none, footnote 2).

    >>> check_gamma(KernelAlgorithm.fedprox(1.0), 7.0)      # FedProx: any γ
    >>> check_gamma(KernelAlgorithm.fedavg(1.0), 1.5)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1 (Section 4, FedAvg) violated: gamma=1.5
    """
    if algo.kind == "fedavg" and not float(gamma) < 1:
        raise ValueError(f"hypothesis gamma < 1 (Section 4, FedAvg) violated: gamma={float(gamma):g}")


# --------------------------------------------------------------------------------------------
# P and the prediction dynamics (Lemma 1, Proposition 2, eq. 38–39)
# --------------------------------------------------------------------------------------------


def _blocks_function(fed, values: np.ndarray) -> np.ndarray:
    """V_i diag(values_i) V_iᵀ of each padded client block, padding zeroed: (M, n_max, n_max)."""
    _, V = fed.client_spectra()
    B = np.matmul(V * values[:, None, :], np.swapaxes(V, 1, 2))
    m = fed.mask
    return B * m[:, :, None] * m[:, None, :]


def _scatter_blocks(fed, blocks: np.ndarray) -> np.ndarray:
    """The block-diagonal N × N matrix with the client blocks (M, n_max, n_max) on its diagonal."""
    out = np.zeros((fed.N, fed.N))
    for i, sl in enumerate(fed.slices):  # M block copies: O(N²) memory traffic, no arithmetic
        n = fed.counts[i]
        out[sl, sl] = blocks[i, :n, :n]
    return out


def client_P_blocks(fed, algo: KernelAlgorithm) -> np.ndarray:
    """P_ii of eq. (10) for every client, from the eigendecomposition of K_{**x**_i}: (M, n_max, n_max), padding 0.

    >>> from fedtheory.problems.kernels import KernelFederation, LinearKernel
    >>> fed = KernelFederation(LinearKernel(), [[[1.0]], [[2.0]]], [[0.0], [0.0]])
    >>> client_P_blocks(fed, KernelAlgorithm.fedprox(1.0))[:, 0, 0].tolist()    # 1/(1 + η·x²)
    [0.5, 0.2]
    """
    lam, _ = fed.client_spectra()
    return _blocks_function(fed, algo.p_eigenvalues(lam))


def P_matrix(fed, algo: KernelAlgorithm) -> np.ndarray:
    """The block-diagonal P (N, N) of Lemma 1.

    >>> from fedtheory.problems.kernels import KernelFederation, LinearKernel
    >>> fed = KernelFederation(LinearKernel(), [[[1.0]], [[1.0], [1.0]]], [[0.0], [0.0, 0.0]])
    >>> P_matrix(fed, KernelAlgorithm.fedavg(0.5, 2)).round(12).tolist()   # I + (I − ηK_i) per block
    [[1.5, 0.0, 0.0], [0.0, 1.75, -0.25], [0.0, -0.25, 1.75]]
    """
    return _scatter_blocks(fed, client_P_blocks(fed, algo))


class PredictionDynamics:
    """The LTI system (11) of one federation under one algorithm, diagonalised once (eq. 38–39).

    P^{1/2}K_**x**P^{1/2} = UΛUᵀ with Λ_1 ≥ … ≥ Λ_N ≥ 0 (stored descending, the paper's order);
    V = P^{−1/2}U, V^{−1} = UᵀP^{1/2}, so K_**x**P = VΛV^{−1} and L^t = V(I − ηΛ)^tV^{−1} with
    L = I − ηK_**x**P. Needs P ≻ 0: FedAvg with γ < 1 (ValueError otherwise), FedProx always, with s = 1.

    >>> from fedtheory.problems.kernels import KernelFederation, GaussianKernel, ZeroFunction
    >>> fed = KernelFederation.sample(GaussianKernel(0.3), [3, 5], truths=ZeroFunction(GaussianKernel()),
    ...                               noise_sd=1.0, seed=2)
    >>> dyn = PredictionDynamics(fed, KernelAlgorithm.fedavg(0.5, 4))
    >>> KP = fed.K_x @ dyn.P
    >>> bool(np.allclose(dyn.V @ np.diag(dyn.Lambda) @ dyn.V_inv, KP, atol=1e-12))
    True
    """

    def __init__(self, fed, algo: KernelAlgorithm) -> None:
        if algo.kind == "fedprox" and algo.s != 1:
            raise ValueError(
                f"PredictionDynamics needs the paper's FedProx (s = 1 exact proximal step), got s={algo.s}"
            )
        self.fed, self.algo = fed, algo
        self.gamma = fed.gamma(algo.eta)
        lam, _ = fed.client_spectra()
        pe = algo.p_eigenvalues(lam)
        # padding adds eigenvalues λ = 0 with P-eigenvalue s or 1 > 0, so the test is the real blocks'
        if np.any(pe <= 0):
            raise ValueError(
                f"P is not positive definite (min eigenvalue {pe.min():.3g}): "
                f"hypothesis gamma < 1 (Section 4, FedAvg) violated: gamma={self.gamma:g}"
            )
        self.P = _scatter_blocks(fed, _blocks_function(fed, pe))
        self.P_half = _scatter_blocks(fed, _blocks_function(fed, np.sqrt(pe)))
        self.P_inv_half = _scatter_blocks(fed, _blocks_function(fed, 1.0 / np.sqrt(pe)))
        S = self.P_half @ fed.K_x @ self.P_half
        w, U = np.linalg.eigh(0.5 * (S + S.T))
        order = np.argsort(w)[::-1]
        # eigenvalues within the eigensolver's rounding of 0 are 0: a rank-deficient K_x (finite-rank kernel, N > d)
        # must not turn its null directions into spurious tiny Λ whose reciprocals (in limits) are huge
        Lam = w[order]
        self.Lambda = np.where(Lam > 16 * fed.N * np.finfo(np.float64).eps * max(float(Lam[0]), 0.0), Lam, 0.0)
        self.U = U[:, order]
        self.V = self.P_inv_half @ self.U
        self.V_inv = self.U.T @ self.P_half

    # ----------------------------------------------------------------------------------------
    @property
    def eta(self) -> float:
        return self.algo.eta

    def L_matrix(self) -> np.ndarray:
        """L = I − ηK_**x**P (N, N)."""
        return np.eye(self.fed.N) - self.eta * self.fed.K_x @ self.P

    def L_power(self, t: int) -> np.ndarray:
        """L^t = V(I − ηΛ)^tV^{−1}."""
        return (self.V * power_one_minus(self.eta * self.Lambda, t)[None, :]) @ self.V_inv

    def predictions(self, f0_values: Any, y: Any, rounds: Any) -> np.ndarray:
        """f_t(**x**) = y + L^t(f_0(**x**) − y) for every t in ``rounds``: (len(rounds), N) (eq. 11 unrolled)."""
        t = np.atleast_1d(np.asarray(rounds))
        r = self.V_inv @ (np.asarray(f0_values, dtype=np.float64) - y)
        decay = power_one_minus(self.eta * self.Lambda[None, :], t[:, None])
        return np.asarray(y)[None, :] + (decay * r[None, :]) @ self.V.T

    def coefficient_increments(self, f0_values: Any, y: Any, rounds: Any) -> np.ndarray:
        """a_t − a_0 with f_t = f_0 + (a_t − a_0)·k_**x**: −(η/N) P Σ_{τ<t} L^τ (f_0(**x**) − y), (len(rounds), N).

        Directions with Λ = 0 add the zero function (K_**x**P v = 0 ⇒ (Pv)·k_**x** = 0), so their
        growing geometric sums are dropped.
        """
        t = np.atleast_1d(np.asarray(rounds))
        r = self.V_inv @ (np.asarray(f0_values, dtype=np.float64) - y)
        u = self.eta * self.Lambda
        sums = np.where(u[None, :] > 0, geometric_sum(u[None, :], t[:, None]), 0.0)
        return -(self.eta / self.fed.N) * ((sums * r[None, :]) @ self.V.T) @ self.P

    def expected_prediction_error(
        self, f0_values: Any, f_values: Any, truth_values: Any, noise_var: Any, rounds: Any
    ) -> np.ndarray:
        """E_ξ‖f_t − f‖_N² exactly, for y = f^*(**x**) + ξ with independent zero-mean ξ_a of variance ``noise_var``.

        From eq. (42): f_t(**x**) − f(**x**) = L^t(f_0(**x**) − f(**x**)) + (I − L^t)(ξ + Δ_f),
        Δ_f = f^*(**x**) − f(**x**), so E‖·‖² = ‖L^te_0 + (I − L^t)Δ_f‖² + tr((I − L^t)D(I − L^t)ᵀ),
        D = diag(noise_var); the trace is gᵀ(VᵀV ∘ V^{−1}DV^{−T})g with g = 1 − (1 − ηΛ)^t.

        >>> from fedtheory.problems.kernels import KernelFederation, LinearKernel
        >>> fed = KernelFederation(LinearKernel(), [[[1.0]]], [[0.0]])
        >>> dyn = PredictionDynamics(fed, KernelAlgorithm.fedavg(0.5, 1))
        >>> dyn.expected_prediction_error([0.0], [0.0], [0.0], [4.0], [1, 2]).tolist()   # 4·(1 − ½^t)²
        [1.0, 2.25]
        """
        t = np.atleast_1d(np.asarray(rounds))
        f_values = np.asarray(f_values, dtype=np.float64)
        e0 = np.asarray(f0_values, dtype=np.float64) - f_values
        Delta = np.asarray(truth_values, dtype=np.float64) - f_values
        decay = np.asarray(power_one_minus(self.eta * self.Lambda[None, :], t[:, None]))
        z_e, z_d = self.V_inv @ e0, self.V_inv @ Delta
        mean = (decay * z_e[None, :] + (1 - decay) * z_d[None, :]) @ self.V.T
        D = np.broadcast_to(np.asarray(noise_var, dtype=np.float64), (self.fed.N,))
        H = (self.V.T @ self.V) * ((self.V_inv * D[None, :]) @ self.V_inv.T)
        g = 1 - decay
        var = np.sum((g @ H) * g, axis=1)
        return (np.sum(mean * mean, axis=1) + var) / self.fed.N

    def sigma_matrix(self, t: int) -> np.ndarray:
        """Σ of eq. (63): Σ_ab = ⟨Σ_{τ<t}ℒ^τ(e_a·Ψ), Σ_{τ<t}ℒ^τ(e_b·Ψ)⟩_ℋ = (η²/N) PV diag(g_t²Λ) VᵀP,
        g_t = Σ_{τ<t}(1 − ηΛ)^τ (ℒ acts on coefficients as I − ηPK_**x** = V^{−T}(I − ηΛ)Vᵀ)."""
        gs = np.asarray(geometric_sum(self.eta * self.Lambda, int(t)), dtype=np.float64)
        PV = self.P @ self.V
        return (self.eta**2 / self.fed.N) * (PV * (gs**2 * self.Lambda)[None, :]) @ PV.T

    def limit_gram(self) -> np.ndarray:
        """S of Theorem 4's proof: S_ab = ⟨(ℐ − ℒ)^{−1}(e_a·Ψ), (ℐ − ℒ)^{−1}(e_b·Ψ)⟩_ℋ = (1/N) PV diag(1/Λ) VᵀP
        (Λ = 0 directions are zero functions and dropped)."""
        inv = np.where(self.Lambda > 0, 1.0 / np.where(self.Lambda > 0, self.Lambda, 1.0), 0.0)
        PV = self.P @ self.V
        return (PV * inv[None, :]) @ PV.T / self.fed.N

    def limit_increment(self, f0_values: Any, y: Any) -> np.ndarray:
        """lim_t (a_t − a_0): the coefficients of f_∞ − f_0 (Λ = 0 directions dropped, as above)."""
        r = self.V_inv @ (np.asarray(f0_values, dtype=np.float64) - y)
        u = self.eta * self.Lambda
        inv = np.where(u > 0, 1.0 / np.where(u > 0, u, 1.0), 0.0)
        return -(self.eta / self.fed.N) * (self.V @ (inv * r)) @ self.P


# --------------------------------------------------------------------------------------------
# the operators from their definitions, on any matrix algebra (numpy or sympy)
# --------------------------------------------------------------------------------------------


class _Algebra:
    """The few matrix operations the definitions need, on three kinds of matrices.

    * numpy float arrays (the float checks and drivers);
    * sympy Matrices (symbolic entries);
    * numpy object arrays of exact field elements (e.g. of ``sympy.field(..., QQ)``: rational functions
      kept reduced by the field arithmetic, so an identity holds iff the difference is exactly 0),
      with exact Gauss–Jordan inversion.
    """

    def __init__(self, G: Any) -> None:
        import sympy as sp

        self.sp = sp
        self.symbolic = isinstance(G, sp.MatrixBase)
        self.exact = isinstance(G, np.ndarray) and G.dtype == object

    def eye(self, n: int):
        if self.symbolic:
            return self.sp.eye(n)
        if self.exact:
            out = np.zeros((n, n), dtype=object)
            for i in range(n):
                out[i, i] = 1
            return out
        return np.eye(n)

    def zeros(self, n: int, m: int):
        if self.symbolic:
            return self.sp.zeros(n, m)
        return np.zeros((n, m), dtype=object) if self.exact else np.zeros((n, m))

    def mul(self, A, B):
        return A * B if self.symbolic else A @ B

    def inv(self, A):
        if self.symbolic:
            return A.inv()
        if not self.exact:
            return np.linalg.inv(A)
        n = A.shape[0]
        M = np.concatenate([A.copy(), self.eye(n)], axis=1)
        for col in range(n):
            piv = next((r for r in range(col, n) if M[r, col] != 0), None)
            if piv is None:
                raise ValueError("singular matrix in exact inversion")
            M[[col, piv]] = M[[piv, col]]
            M[col] = M[col] / M[col, col]
            for r in range(n):
                if r != col and M[r, col] != 0:
                    M[r] = M[r] - M[col] * M[r, col]
        return M[:, n:]


def definitional_operators(G: Any, counts: Sequence[int], kind: str, eta: Any, s: int = 1) -> dict:
    r"""ℒ, Ψ, P, K_**x** and the client operators straight from eqs. (6), (8) and (10), as matrices.

    ``G``: the Gram matrix k(Z, Z) of a dictionary Z whose first N = Σ n_i points are the data, in
    client order: a float array, a sympy Matrix (``eta`` a symbol) or an object array of exact field
    elements (``eta`` one too; identities are then decided by exact rational-function arithmetic). An operator 𝒯 on
    span{k_Z} is its coefficient matrix C: 𝒯(c·k_Z) = (Cc)·k_Z. Returns

    * ``"L_clients"``: ℒ_i = I − (η/n_i)E_iG_{i,:} (FedAvg) or ℒ̃_i = I + (η/n_i)E_iG_{i,:} (FedProx),
      E_i embedding client i's data into Z;
    * ``"L"``: ℒ = Σ w_i ℒ_i^s or Σ w_i ℒ̃_i^{−1} (eq. 8);
    * ``"Psi"``: (|Z|, N) whose columns are w_iΨ_i with Ψ_i = (η/n_i)Σ_{τ<s}ℒ_i^τ k_{**x**_i} or
      (η/n_i)ℒ̃_i^{−1}k_{**x**_i} (eq. 8);
    * ``"P"``: block diagonal with Σ_{τ<s}(I − ηK_{**x**_i})^τ or (I + ηK_{**x**_i})^{−1} (eq. 10);
    * ``"K_x"``: G_{xx}/N, ``"G_xZ"``: the data rows of G, ``"E_x"``: the data embedding.

    >>> import numpy as np
    >>> ops = definitional_operators(np.array([[2.0, 1.0], [1.0, 2.0]]), [1, 1], "fedavg", 0.1, s=2)
    >>> ops["L"].shape, ops["Psi"].shape, ops["P"].round(6).tolist()
    ((2, 2), (2, 2), [[1.8, 0.0], [0.0, 1.8]])
    >>> import sympy as sp
    >>> g, e = sp.symbols("g eta", positive=True)
    >>> definitional_operators(sp.Matrix([[g]]), [1], "fedprox", e)["P"]
    Matrix([[1/(eta*g + 1)]])
    """
    if kind not in KERNEL_ALGORITHMS:
        raise ValueError(f"kind must be one of {KERNEL_ALGORITHMS}, got {kind!r}")
    al = _Algebra(G)
    counts = [int(c) for c in counts]
    N = sum(counts)
    Zn = G.shape[0]
    if Zn < N:
        raise ValueError(f"the dictionary has {Zn} points, fewer than the N = {N} data points")
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    mul = al.mul
    I = al.eye(Zn)
    L_total = al.zeros(Zn, Zn)
    Psi = al.zeros(Zn, N)
    P = al.zeros(N, N)
    L_clients = []
    for i, n in enumerate(counts):
        a, b = int(offsets[i]), int(offsets[i + 1])
        E = al.zeros(Zn, n)
        for j in range(n):
            E[a + j, j] = 1
        G_i = G[a:b, :]
        K_i = G[a:b, a:b] / n
        if kind == "fedavg":
            Li = I - mul(E * (eta / n), G_i)
            power, acc = al.eye(Zn), al.zeros(Zn, Zn)
            Pii, Kpow, step = al.zeros(n, n), al.eye(n), al.eye(n) - K_i * eta
            for _ in range(s):
                acc = acc + power
                Pii = Pii + Kpow
                power = mul(power, Li)
                Kpow = mul(Kpow, step)
            Li_total = power  # ℒ_i^s
            Psi_i = mul(acc, E) * (eta / n)
        else:
            Li = I + mul(E * (eta / n), G_i)
            Linv = al.inv(Li)
            Li_total = Linv
            Psi_i = mul(Linv, E) * (eta / n)
            Pii = al.inv(al.eye(n) + K_i * eta)
        L_clients.append(Li)
        L_total = L_total + (Li_total * n) / N  # w_i = n_i/N, exact in every algebra
        Psi[:, a:b] = (Psi_i * n) / N
        P[a:b, a:b] = Pii
    E_x = al.zeros(Zn, N)
    for j in range(N):
        E_x[j, j] = 1
    return {
        "L_clients": L_clients,
        "L": L_total,
        "Psi": Psi,
        "P": P,
        "K_x": G[:N, :N] / N,
        "G_xZ": G[:N, :],
        "E_x": E_x,
    }


def operator_in_orthonormal_basis(C: np.ndarray, G: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    """The matrix of an operator 𝒯 (coefficient matrix ``C`` on span{k_Z}, Gram ``G``) in an orthonormal basis.

    G = QDQᵀ; the basis e_r = (D_r^{−1/2}Q_r)·k_Z over the numerically positive D_r (> rtol·max D)
    spans span{k_Z}; the matrix is D^{1/2}QᵀCQD^{−1/2} restricted to it (so its eigenvalues are 𝒯's
    on that subspace, free of the redundancy of coefficients when G is singular). Assumes 𝒯 maps
    span{k_Z} into itself.

    >>> G = np.array([[1.0, 1.0], [1.0, 1.0]])           # k_{z1} = k_{z2}: a one-dimensional span
    >>> operator_in_orthonormal_basis(2 * np.eye(2), G).round(12).tolist()
    [[2.0]]
    """
    D, Q = np.linalg.eigh(0.5 * (G + G.T))
    keep = D > rtol * max(float(D.max()), 0.0)
    Dk, Qk = D[keep], Q[:, keep]
    return (np.sqrt(Dk)[:, None] * (Qk.T @ C @ Qk)) / np.sqrt(Dk)[None, :]


# --------------------------------------------------------------------------------------------
# drivers
# --------------------------------------------------------------------------------------------


@dataclass
class KernelHistory:
    """A function-space run: f_t = coef_t·k_**x** at the recorded ``rounds``.

    ``coef`` (R, N): coefficients on the data points; ``predictions`` (R, N): f_t(**x**).
    """

    rounds: np.ndarray
    coef: np.ndarray
    predictions: np.ndarray
    algo: KernelAlgorithm
    path: str

    def prediction_error_sq(self, f_values: Any) -> np.ndarray:
        """‖f_t − f‖_N² for each recorded t, from f(**x**) (eq. 14)."""
        d = self.predictions - np.asarray(f_values, dtype=np.float64)[None, :]
        return np.mean(d * d, axis=1)

    def rkhs_error_sq(self, fed, f: Any) -> np.ndarray:
        """‖f_t − f‖_ℋ² = aᵀGa − 2aᵀf(**x**) + ‖f‖_ℋ² for each recorded t (f an RKHSFunction)."""
        fx = f.values(fed.x)
        Ga = self.coef @ fed.gram
        return np.maximum(np.einsum("tn,tn->t", Ga, self.coef) - 2 * self.coef @ fx + f.norm_sq(), 0.0)

    def values(self, fed, X: Any) -> np.ndarray:
        """f_t(X) for each recorded t: (R, len X)."""
        return self.coef @ fed.kernel(fed.x, X)


def _round_indices(rounds: Any) -> tuple[np.ndarray, int]:
    r = np.asarray(rounds)
    if r.ndim == 0:
        T = int(r)
        if T != r or T < 0:
            raise ValueError(f"rounds must be a non-negative integer or an increasing array of them, got {rounds!r}")
        return np.arange(T + 1), T
    r = r.astype(np.int64)
    if r.ndim != 1 or np.any(r < 0) or np.any(np.diff(r) <= 0) or np.any(r != np.asarray(rounds)):
        raise ValueError(
            "rounds must be a non-negative integer or a strictly increasing array of non-negative integers"
        )
    return r, int(r[-1])


def _client_values(fed, C: np.ndarray, Gp: np.ndarray) -> np.ndarray:
    """Each client's local copy evaluated at its own points: (M, n_max)."""
    return np.einsum("mjn,mn->mj", Gp, C)


def _stepwise(
    fed,
    algo: KernelAlgorithm,
    a0: np.ndarray,
    rounds: np.ndarray,
    T: int,
    batch_size: int | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """The local updates literally, all clients at once; returns the coefficients at ``rounds``."""
    from fedtheory.problems.finite_sum import sample_batches

    M, N, eta = fed.M, fed.N, algo.eta
    idx = fed.padded_index  # (M, n_max) pooled indices
    mask = fed.mask
    Gp = fed.gram[idx]  # (M, n_max, N)
    y_pad = fed.y[idx] * mask
    rows = np.repeat(np.arange(M), idx.shape[1])
    Pblocks = client_P_blocks(fed, algo) if (algo.kind == "fedprox" and batch_size is None) else None
    counts = fed.counts.astype(np.float64)
    out = np.empty((rounds.size, N))
    a = np.array(a0, dtype=np.float64)
    k = 0
    if rounds[0] == 0:
        out[0], k = a, 1
    for t in range(1, T + 1):
        C = np.broadcast_to(a, (M, N)).copy()  # every client starts from f_{t−1}
        for _ in range(algo.s):
            if batch_size is None:
                r = (_client_values(fed, C, Gp) - y_pad) * mask
                if algo.kind == "fedavg":
                    delta = (eta / counts)[:, None] * r  # gradient step on ℓ_i
                else:  # exact prox: r ← (I + ηK_i)^{−1} r
                    assert Pblocks is not None  # made above for fedprox without batches
                    delta = (eta / counts)[:, None] * np.einsum("mij,mj->mi", Pblocks, r)
                np.add.at(C, (rows, idx.ravel()), -delta.ravel())
            else:
                B = int(batch_size)
                local = sample_batches(rng, fed.counts, B)  # (M, B) local indices
                pooled = fed.offsets[:-1, None] + local  # (M, B)
                Gb = fed.gram[pooled]  # (M, B, N)
                r = np.einsum("mbn,mn->mb", Gb, C) - fed.y[pooled]
                if algo.kind == "fedprox":  # batch prox centred at the local iterate
                    Kb = fed.gram[pooled[:, :, None], pooled[:, None, :]] / B
                    r = np.linalg.solve(np.eye(B)[None] + eta * Kb, r[..., None])[..., 0]
                np.add.at(C, (np.repeat(np.arange(M), B), pooled.ravel()), -(eta / B) * r.ravel())
        a = fed.weights @ C  # f_t = Σ w_i f_{i,t}
        if k < rounds.size and rounds[k] == t:
            out[k], k = a, k + 1
    return out


def early_stopping_rounds(fed, algo: KernelAlgorithm, sigma: float | None = None, t_max: int = 10**9) -> float:
    """The paper's early-stopping time T of eq. (21) for this federation and algorithm (σ defaults to the largest
    client noise level), from the eigenvalues of K_**x**; s = 1 for FedProx.

    >>> from fedtheory.problems.kernels import KernelFederation, SobolevKernel, ZeroFunction
    >>> fed = KernelFederation.sample(SobolevKernel(), [10, 20], truths=ZeroFunction(SobolevKernel()), noise_sd=0.5, seed=0)
    >>> T = early_stopping_rounds(fed, KernelAlgorithm.fedavg(0.5, 2))
    >>> T >= 1, early_stopping_rounds(fed, KernelAlgorithm.fedavg(0.5, 2), sigma=0.0)
    (True, inf)
    """
    from fedtheory.analysis.kernel_bounds import early_stopping_time

    if sigma is None:
        if fed.noise_sd is None:
            raise ValueError("early stopping needs the noise level sigma (the federation has none)")
        sigma = float(np.max(fed.noise_sd))
    lam = np.sort(np.clip(np.linalg.eigvalsh(fed.K_x), 0, None))[::-1]
    return early_stopping_time(lam, algo.eta, algo.bound_s, float(sigma), t_max=t_max)


def run_kernel_federated(
    fed,
    algo: KernelAlgorithm,
    rounds: Any,
    *,
    f0: Any = None,
    path: str = "spectral",
    batch_size: int | None = None,
    seed: Any = None,
    sigma: float | None = None,
) -> KernelHistory:
    """Run FedAvg/FedProx in function space on a :class:`~fedtheory.problems.kernels.KernelFederation`.

    ``rounds``: T (records t = 0..T), a strictly increasing array of rounds to record (the spectral
    path evaluates only those, in closed form: t = 10⁶ is exact and instant), or ``"early-stopping"``:
    t = 0..T with T of eq. (21) (:func:`early_stopping_rounds`, with ``sigma`` or the federation's noise level). ``f0``: coefficients
    a_0 (N,) of f_0 = a_0·k_**x** (default 0). ``path="spectral"``: :class:`PredictionDynamics`
    (full batch, FedProx with s = 1); ``"stepwise"``: the local updates literally. ``batch_size`` B:
    every local step (FedAvg) or proximal step (FedProx) uses a mini-batch of B points drawn
    uniformly without replacement from the client's data (the sampling of LocalUpdate's S_k);
    forces the stepwise path; ``seed`` drives the draws.

    >>> from fedtheory.problems.kernels import KernelFederation, GaussianKernel, ZeroFunction
    >>> fed = KernelFederation.sample(GaussianKernel(0.02), [5, 9], truths=ZeroFunction(GaussianKernel()),
    ...                               noise_sd=1.0, seed=0)
    >>> h = run_kernel_federated(fed, KernelAlgorithm.fedprox(2.0), [0, 10, 10**6])
    >>> h.predictions.shape, bool(np.allclose(h.predictions[-1], fed.y, atol=1e-6))   # interpolates y
    ((3, 14), True)
    >>> run_kernel_federated(fed, KernelAlgorithm.fedavg(1.0, 2), 3, batch_size=4, seed=0).coef.shape
    (4, 14)
    """
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if not isinstance(algo, KernelAlgorithm):
        raise ValueError(f"algo must be a KernelAlgorithm, got {type(algo).__name__}")
    if isinstance(rounds, str):
        if rounds != "early-stopping":
            raise ValueError(f"rounds must be an integer, an array of rounds or 'early-stopping', got {rounds!r}")
        T_stop = early_stopping_rounds(fed, algo, sigma)
        if not np.isfinite(T_stop):
            raise ValueError("early stopping with sigma = 0 never stops (T = inf): give a number of rounds")
        rounds = int(T_stop)
    ts, T = _round_indices(rounds)
    a0 = np.zeros(fed.N) if f0 is None else np.asarray(f0, dtype=np.float64).ravel()
    if a0.shape != (fed.N,):
        raise ValueError(f"f0 must be N = {fed.N} coefficients on the data points, got shape {a0.shape}")
    if batch_size is not None:
        B = int(batch_size)
        if B < 1 or B > int(fed.counts.min()):
            raise ValueError(
                f"batch size B must satisfy 1 <= B <= min_i n_i = {int(fed.counts.min())}, got {batch_size}"
            )
        path = "stepwise"
    v0 = fed.gram @ a0
    if path == "spectral":
        dyn = PredictionDynamics(fed, algo)
        preds = dyn.predictions(v0, fed.y, ts)
        coef = a0[None, :] + dyn.coefficient_increments(v0, fed.y, ts)
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        coef = _stepwise(fed, algo, a0, ts, T, batch_size, rng)
        preds = coef @ fed.gram
    return KernelHistory(rounds=ts, coef=coef, predictions=preds, algo=algo, path=path)


def limit_coefficients(fed, algo: KernelAlgorithm, y: Any = None, f0: Any = None) -> np.ndarray:
    """Coefficients a_∞ of f_∞ = lim f_t = (I − ℒ)^{−1}(y·Ψ) + (the part of f_0 the rounds never move).

    With ``y`` replaced by (f_1^*(**x**_1), …, f_M^*(**x**_M)) this is f̄ of Theorem 4. Directions of
    K_**x**P with Λ = 0 add the zero function and are dropped.

    >>> from fedtheory.problems.kernels import KernelFederation, LinearKernel
    >>> fed = KernelFederation(LinearKernel(), [[[1.0], [2.0]]], [[1.0, 2.0]])
    >>> a = limit_coefficients(fed, KernelAlgorithm.fedavg(0.1, 3))
    >>> (fed.gram @ a).round(10).tolist()          # y = x is fitted exactly by θ = 1
    [1.0, 2.0]
    """
    y = fed.y if y is None else np.asarray(y, dtype=np.float64)
    a0 = np.zeros(fed.N) if f0 is None else np.asarray(f0, dtype=np.float64)
    dyn = PredictionDynamics(fed, algo)
    return a0 + dyn.limit_increment(fed.gram @ a0, y)
