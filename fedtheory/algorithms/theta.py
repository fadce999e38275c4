"""Θ: the weights a LocalUpdate client puts on its local gradients.

Charles & Konečný (*Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*,
arXiv:2103.05032, Section 2.1): a client that takes K local steps with gradients g_1, ..., g_K sends
Σ_k θ_k g_k. Θ = (θ_1, θ_2, ...) is non-negative with finite, non-zero support, and (eq. 4)

    K(Θ) = max{k : θ_k > 0},        w(Θ) = Σ_k θ_k.

Two choices have names (eq. 5): Θ_{1:K} = (1, ..., 1) (FedAvg, FedProx, Reptile) and
Θ_K = (0, ..., 0, 1) (FOMAML). On a quadratic the message is Q_i A_i (x − c_i) with the *distortion
polynomial* q(m) = Σ_k θ_k m^{k−1} evaluated at M_i = I − γ(A_i + αI) (eq. 6); :meth:`Theta.polynomial`
evaluates it elementwise, exactly and stably for K up to 10⁶ and beyond.

>>> import numpy as np
>>> from fedtheory.algorithms.theta import Theta
>>> th = Theta.uniform(3)
>>> th.K, th.w, th.kind
(3, 3.0, 'uniform')
>>> th.polynomial(np.array([0.5, 1.0])).tolist()    # 1 + m + m², and K at m = 1
[1.75, 3.0]
>>> Theta([0.0, 2.0, 0.0]).weights.tolist()         # trailing zeros are not part of the support
[0.0, 2.0]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["Theta", "geometric_sum", "power_one_minus"]

# General Θ is evaluated by Horner's rule (one fused pass per coefficient); a long, sparse Θ is
# cheaper as a sum of log-space powers over its support.
_HORNER_MAX_K = 4096


# --------------------------------------------------------------------------------------------
# backend plumbing: the closed forms take numpy arrays or torch tensors
# --------------------------------------------------------------------------------------------


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch"


def resolve_backend(backend: Any = None, like: Any = None):
    """The :class:`fedtheory.backends.Backend` for ``backend`` (a Backend, a name, or None).

    With ``backend=None`` the backend follows ``like``: a torch tensor selects torch on the tensor's
    device, anything else numpy. Internal helper shared by the drivers.

    >>> resolve_backend(None, like=np.zeros(2)).name
    'numpy'
    """
    from fedtheory.backends import get_backend

    if backend is not None and not isinstance(backend, str):
        return backend
    if backend is None:
        if like is not None and _is_torch(like):
            return get_backend("torch", device=like.device)
        backend = "numpy"
    return get_backend(backend)


def _as_array(x: Any, be) -> Any:
    if be.name == "numpy":
        return np.asarray(x, dtype=np.float64)
    if _is_torch(x):
        return x
    return be.asarray(x)


def _on_backend(s: Any, exponent: Any, backend: Any) -> tuple:
    """The backend (``s``'s unless one is given), ``s`` as its array and the exponent, a scalar or its array."""
    be = resolve_backend(backend, like=s)
    return be, _as_array(s, be), exponent if np.isscalar(exponent) else _as_array(exponent, be)


def geometric_sum(s: Any, K: Any, backend: Any = None) -> Any:
    """Σ_{k=1}^{K} (1 − s)^{k−1} = (1 − (1 − s)^K)/s, elementwise, broadcasting ``s`` against ``K``.

    Taking s = γ(λ + α) rather than m = 1 − s keeps every digit of a small step: the sum is evaluated
    as −expm1(K·log1p(−s))/s, which is accurate to a few ulps for all s < 1 (the limit K at s = 0 is
    exact), never overflows for 0 ≤ s < 1 and needs no power of m. For s ≥ 1 (m ≤ 0, outside Lemma 1's
    regime γ < 1/(L + α)) the direct formula (1 − m^K)/s is used; it is exact for m = 0 and overflows
    only where the true value does.

    >>> geometric_sum(np.array([0.0, 0.5, 1.0, 1e-300]), 4).tolist()
    [4.0, 1.875, 1.0, 4.0]
    >>> float(geometric_sum(0.5, 10**6))               # the K → ∞ limit 1/s
    2.0
    """
    be, s, K = _on_backend(s, K, backend)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low = s < 1
        zero = s == 0
        s_closed = be.where(low & ~zero, s, s * 0 + 0.5)
        closed = -be.expm1(K * be.log1p(-s_closed)) / s_closed
        closed = be.where(zero, s * 0 + K, closed)
        if be.name == "numpy" and s.ndim:
            # the direct formula's power only where s ≥ 1 (or NaN): a tuner's grid (10⁴-10⁵ entries, a few at
            # s ≥ 1) no longer pays it on every entry; the same operations on the same values, so the same bits
            high = np.broadcast_to(~low, closed.shape)
            if high.any():
                s_high = np.broadcast_to(s, closed.shape)[high]
                K_high = K if np.isscalar(K) else np.broadcast_to(K, closed.shape)[high]
                closed[high] = (1 - (1 - s_high) ** K_high) / s_high
            return closed
        s_direct = be.where(low, s * 0 + 1.0, s)
        m = 1 - s_direct
        direct = (1 - m**K) / s_direct
        return be.where(low, closed, direct)


def power_one_minus(s: Any, e: Any, backend: Any = None) -> Any:
    """(1 − s)^e elementwise for integer e ≥ 0, as exp(e·log1p(−s)); exact 0⁰ = 1.

    For s ≥ 1 (m = 1 − s ≤ 0) the direct power is used (the log of a non-positive number is not
    real); for s < 1 the log-space form neither under- nor overflows in an intermediate step.

    >>> power_one_minus(np.array([0.5, 1.0, 1.0, 2.0]), np.array([2, 0, 3, 3])).tolist()
    [0.25, 1.0, 0.0, -1.0]
    >>> float(power_one_minus(1e-7, 10**6))             # mpmath: 0.90483741351177219...
    0.9048374135117722
    """
    be, s, e = _on_backend(s, e, backend)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low = s < 1
        s_closed = be.where(low, s, s * 0)
        closed = be.exp(e * be.log1p(-s_closed))
        m = 1 - be.where(low, s * 0, s)
        direct = m**e
        return be.where(low, closed, direct)


# --------------------------------------------------------------------------------------------
# Θ
# --------------------------------------------------------------------------------------------


class Theta:
    """A non-negative weight vector Θ = (θ_1, ..., θ_K) with finite, non-zero support.

    ``weights`` is trimmed after its last positive entry, so ``len(weights) == K(Θ)``.
    ``kind`` is ``"uniform"`` for Θ_{1:K} (all weights 1), ``"last"`` for Θ_K (only θ_K = 1, K ≥ 2),
    ``"general"`` otherwise; Θ_1 = (1) is ``"uniform"``. A constant Θ = c·Θ_{1:K} or c·Θ_K is still
    evaluated in closed form (it is just not named).

    >>> Theta.uniform(4), Theta.last(4), Theta([0.5, 0.0, 2.0])
    (Theta.uniform(4), Theta.last(4), Theta([0.5, 0.0, 2.0]))
    >>> Theta.last(4).weights.tolist(), Theta.last(4).w
    ([0.0, 0.0, 0.0, 1.0], 1.0)
    >>> Theta([0.0, 0.0])
    Traceback (most recent call last):
    ...
    ValueError: Theta must have non-zero support (some theta_k > 0), got all zeros
    """

    __slots__ = ("_weights", "_K", "_kind", "_form", "_scale", "_support", "_hash")

    def __init__(self, weights: Sequence[float] | np.ndarray) -> None:
        w = np.array(weights, dtype=np.float64).ravel()
        if w.size == 0:
            raise ValueError("Theta must have non-zero support (some theta_k > 0), got an empty vector")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"Theta weights must be finite, got {w.tolist()[:8]}")
        if np.any(w < 0):
            k = int(np.argmax(w < 0)) + 1
            raise ValueError(f"Theta weights must be non-negative (theta_k >= 0), got theta_{k} = {w[k - 1]}")
        positive = np.flatnonzero(w > 0)
        if positive.size == 0:
            raise ValueError("Theta must have non-zero support (some theta_k > 0), got all zeros")
        K = int(positive[-1]) + 1
        w = w[:K]
        w.setflags(write=False)
        self._weights = w
        self._K = K
        self._support = positive
        if np.all(w == w[0]):
            self._form, self._scale = "uniform", float(w[0])
        elif positive.size == 1:
            self._form, self._scale = "last", float(w[-1])
        else:
            self._form, self._scale = "general", 1.0
        if self._form == "uniform" and self._scale == 1.0:
            self._kind = "uniform"
        elif self._form == "last" and self._scale == 1.0:
            self._kind = "last"
        else:
            self._kind = "general"
        self._hash: int | None = None

    # constructors ---------------------------------------------------------------------------
    @classmethod
    def uniform(cls, K: int) -> "Theta":
        """Θ_{1:K} = (1, ..., 1), K ones (FedAvg, FedProx, Reptile; eq. 5).

        >>> Theta.uniform(3).weights.tolist()
        [1.0, 1.0, 1.0]
        """
        return cls(np.ones(_positive_int(K, "K")))

    @classmethod
    def last(cls, K: int) -> "Theta":
        """Θ_K = (0, ..., 0, 1): only the K-th local gradient is sent (FOMAML; eq. 5).

        >>> Theta.last(3).weights.tolist()
        [0.0, 0.0, 1.0]
        """
        K = _positive_int(K, "K")
        w = np.zeros(K)
        w[-1] = 1.0
        return cls(w)

    @classmethod
    def from_json(cls, obj: dict) -> "Theta":
        """Inverse of :meth:`to_json`.

        >>> Theta.from_json(Theta.uniform(10**6).to_json()) == Theta.uniform(10**6)
        True
        """
        kind = obj.get("kind", "general")
        if kind == "uniform":
            return cls.uniform(obj["K"])
        if kind == "last":
            return cls.last(obj["K"])
        return cls(obj["weights"])

    def to_json(self) -> dict:
        """A compact JSON form (Θ_{1:K} and Θ_K by K alone, so K = 10⁶ stays small).

        >>> Theta.last(5).to_json()
        {'kind': 'last', 'K': 5}
        >>> Theta([0.5, 1.0]).to_json()
        {'kind': 'general', 'K': 2, 'weights': [0.5, 1.0]}
        """
        if self._kind in ("uniform", "last"):
            return {"kind": self._kind, "K": self._K}
        return {"kind": "general", "K": self._K, "weights": self._weights.tolist()}

    # properties -----------------------------------------------------------------------------
    @property
    def K(self) -> int:
        """K(Θ) = max{k : θ_k > 0} (eq. 4): the number of local steps a client takes.

        >>> Theta([1.0, 0.0, 3.0, 0.0]).K
        3
        """
        return self._K

    @property
    def w(self) -> float:
        """w(Θ) = Σ_k θ_k (eq. 4): q(1), the distortion polynomial at γ = 0.

        >>> Theta([0.5, 0.0, 2.0]).w
        2.5
        """
        return (
            float(self._weights.sum())
            if self._form == "general"
            else self._scale * (self._K if self._form == "uniform" else 1.0)
        )

    @property
    def weights(self) -> np.ndarray:
        """(θ_1, ..., θ_K) as a read-only float64 array of length K(Θ).

        >>> Theta([1, 0, 3, 0]).weights.tolist()
        [1.0, 0.0, 3.0]
        """
        return self._weights

    @property
    def kind(self) -> str:
        """``"uniform"`` (Θ_{1:K}), ``"last"`` (Θ_K, K ≥ 2) or ``"general"``.

        >>> Theta([1, 1]).kind, Theta([0, 1]).kind, Theta([2, 2]).kind
        ('uniform', 'last', 'general')
        """
        return self._kind

    # evaluation -----------------------------------------------------------------------------
    def polynomial(self, m: Any, backend: Any = None) -> Any:
        """q(m) = Σ_k θ_k m^{k−1}, elementwise over the array ``m`` (numpy or torch).

        Closed forms for Θ_{1:K} ((1 − m^K)/(1 − m), limit K at m = 1) and Θ_K (m^{K−1}, 0⁰ = 1),
        Horner's rule otherwise. When m = 1 − γ(λ + α) is computed from a small step, prefer
        :meth:`polynomial_s`, which receives s = γ(λ + α) itself and so loses no digits of it.

        >>> Theta.last(3).polynomial(np.array([0.0, 0.5, -2.0])).tolist()
        [0.0, 0.25, 4.0]
        >>> Theta([1.0, 2.0, 3.0]).polynomial(np.array([2.0])).tolist()   # 1 + 2·2 + 3·4
        [17.0]
        """
        be = resolve_backend(backend, like=m)
        m = _as_array(m, be)
        if self._form == "general":
            return self._general(m, be)
        return self.polynomial_s(1 - m, be)

    def polynomial_s(self, s: Any, backend: Any = None) -> Any:
        """q(1 − s), elementwise, for s = γ(λ + α): the distortion eigenvalue of eq. (6).

        Stable for K up to 10⁶ and more and for s anywhere in [0, 1] (γ up to 1/(L + α)): the closed
        forms run in log space (:func:`geometric_sum`, :func:`power_one_minus`).

        >>> float(Theta.uniform(10**6).polynomial_s(1e-3))     # ≈ 1/s (the K → ∞ limit)
        1000.0
        >>> float(Theta.uniform(10**6).polynomial_s(1e-12))    # mpmath: 999999.50000066666612...
        999999.5000006667
        >>> float(Theta.last(10**6).polynomial_s(1e-3)) == 0.0  # (1 − 1e-3)^(10⁶ − 1) underflows to 0 exactly
        True
        """
        be = resolve_backend(backend, like=s)
        s = _as_array(s, be)
        if self._form == "uniform":
            q = geometric_sum(s, self._K, be)
        elif self._form == "last":
            q = power_one_minus(s, self._K - 1, be)
        else:
            return self._general(1 - s, be, s=s)
        return q if self._scale == 1.0 else q * self._scale

    def _general(self, m: Any, be, s: Any = None) -> Any:
        w = self._weights
        if self._K <= _HORNER_MAX_K or 8 * self._support.size > self._K:
            # Horner: one multiply-add per coefficient; error ≲ 2K·eps·Σθ_k|m|^{k−1}.
            q = m * 0 + float(w[-1])
            for t in w[-2::-1]:
                q = q * m + float(t)
            return q
        # long sparse Θ: Σ over the support of θ_k (1 − s)^{k−1} in log space
        if s is None:
            s = 1 - m
        q = m * 0
        for k in self._support:
            q = q + float(w[k]) * power_one_minus(s, int(k), be)
        return q

    # dunder ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._K

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Theta):
            return NotImplemented
        return self._K == other._K and bool(np.array_equal(self._weights, other._weights))

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._K, self._form, self._scale, self._weights.tobytes()))
        return self._hash

    def __repr__(self) -> str:
        if self._kind == "uniform":
            return f"Theta.uniform({self._K})"
        if self._kind == "last":
            return f"Theta.last({self._K})"
        if self._K > 12:
            return f"Theta(<K={self._K}, w={self.w:g}>)"
        return f"Theta({self._weights.tolist()})"


def _positive_int(K: Any, name: str) -> int:
    if isinstance(K, (bool, np.bool_)) or int(K) != K or K < 1:
        raise ValueError(f"{name} must be a positive integer, got {K!r}")
    return int(K)
