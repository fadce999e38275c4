r"""Federated oracle complexity and the complexity bounds of FedLRGD and FedAve.

Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*:

* **Definition 1**: an algorithm running T epochs, epoch t computing b_t gradients per active client
  (or at the server) and possibly letting the τm active clients communicate, costs
  :math:`\Gamma(\mathcal A)=\sum_{t=1}^T b_t+\mathbb 1\{\text{clients communicate in epoch } t\}\phi\tau m`.
  Epochs are of Type A (clients compute and communicate), B (the server computes) or C (clients
  only communicate); their expected running times under the paper's timing models are eq. (25).
* **Theorem 2**: FedLRGD (Algorithm 1) with approximate rank r of eq. (47) and S inexact-GD
  iterations of eq. (48) costs :math:`\Gamma=r^2+rs+rS+\phi mr`.
* **Theorem 3**: FedAve's complexity is the geometric program (79),
  :math:`\min_{b,T>0}T(b+\phi\tau m)` s.t. :math:`m^2/(T^2b^2)+b/(mT)\le\varepsilon/C`, solved in
  closed form through (80)–(89); with :math:`\phi\ge40/(C^{1/4}\tau)` and :math:`\varepsilon\in(0,1]`,
  :math:`\tfrac34\phi\tau m(C/\varepsilon)^{3/4}\le\Gamma\le8\phi\tau m(C/\varepsilon)^{3/4}`.
* **Lemma 3** (FedAve's convergence, distilled from FedPAQ's Theorem 1) and **Lemma 4** (the
  Taylor estimate of the Viète root) are here as functions, so claims can evaluate them.

Theorem 2's r is astronomically large (a power :math:`(\cdot)^{d/(\eta-(2\alpha+2)d)}` of terms like
:math:`e^{\eta(d+1)}(2\eta+2d)^{\eta d}`), so it is evaluated in log space: one sympy expression for
log r, lambdified to numpy (vectorized, figures) and to mpmath (exact integers, claims). Asking for a
bound outside a theorem's hypotheses raises ValueError naming the hypothesis and the values.

>>> setting = FedLRGDSetting(d=1, p=2, eta=5.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.1,
...                          initial_gap=1.0, m=100, s=10, phi=50.0)
>>> round(setting.log10_rank(), 3), setting.iterations()
(9.759, 15)
>>> FedLRGDSetting(d=1, p=2, eta=3.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.1,
...                initial_gap=1.0, m=100, s=10, phi=50.0).check()
Traceback (most recent call last):
...
ValueError: Theorem 2 hypothesis eta > (2*alpha + 2)*d violated: eta=3, alpha=1, d=1
>>> fedlrgd_complexity(r=3, s=4, S=5, phi=10, m=2)          # r² + rs + rS + φmr
96
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import mpmath
import numpy as np
import sympy as sp

__all__ = [
    "Epoch",
    "federated_oracle_complexity",
    "expected_epoch_time",
    "epoch_time_order",
    "fedlrgd_epochs",
    "fedave_epochs",
    "fedlrgd_complexity",
    "fedave_complexity",
    "SYMBOLS",
    "theorem2_log_rank_exprs",
    "theorem2_iterations_expr",
    "FedLRGDSetting",
    "lemma3_T0",
    "lemma3_bound",
    "lemma3_terms",
    "FedAveProgram",
    "lemma4_h",
    "lemma4_bounds",
    "Proposition1Regime",
]

#: the symbols of the paper's complexity expressions (all positive)
SYMBOLS = {
    name: sp.Symbol(name, positive=True)
    for name in (
        "b",
        "T",
        "m",
        "tau",
        "phi",
        "r",
        "s",
        "S",
        "d",
        "p",
        "eta",
        "alpha",
        "L1",
        "mu",
        "L2",
        "B",
        "epsilon",
        "gap",
        "C",
        "varepsilon",
    )
}


# --------------------------------------------------------------------------------------------
# Definition 1 and the epoch types of eqs. (21)-(26)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Epoch:
    """One epoch of a federated algorithm: ``gradients`` b_t computed by each active client (``by =
    "clients"``) or by the server (``by = "server"``), and whether the active clients communicate.

    The paper's types (Section II-D3): A = clients compute and communicate, B = the server computes,
    C = clients only communicate; ``"idle"`` = nothing costs time.

    >>> Epoch(5, True, "clients").kind, Epoch(7, False, "server").kind, Epoch(0, True).kind
    ('A', 'B', 'C')
    """

    gradients: Any
    communicates: bool = False
    by: str = "none"

    def __post_init__(self) -> None:
        if self.by not in ("clients", "server", "none"):
            raise ValueError(f"Epoch.by must be 'clients', 'server' or 'none', got {self.by!r}")
        if self.by == "server" and self.communicates:
            raise ValueError(
                "an epoch where the server computes has no client communication in the paper's family "
                "(Types A, B, C of Section II-D3)"
            )

    @property
    def kind(self) -> str:
        if self.by == "clients" and self.communicates:
            return "A"
        if self.by == "server":
            return "B"
        if self.communicates:
            return "C"
        return "idle" if self.by == "none" else "A-no-comm"


def federated_oracle_complexity(epochs: Sequence[Epoch], phi: Any, tau: Any, m: Any) -> Any:
    r"""Definition 1: :math:`\Gamma=\sum_t b_t+\mathbb 1\{\text{communication in epoch }t\}\phi\tau m`.

    Works with numbers and with sympy symbols. ``phi = 0`` gives the classical oracle complexity (the
    number of gradient evaluations).

    >>> federated_oracle_complexity([Epoch(3, True, "clients"), Epoch(4, False, "server")], phi=10, tau=0.5, m=4)
    27.0
    >>> b, T, phi, tau, m = sp.symbols("b T phi tau m", positive=True)
    >>> federated_oracle_complexity([Epoch(b, True, "clients")] * 3, phi, tau, m)
    3*b + 3*m*phi*tau
    """
    total = 0
    for e in epochs:
        total = total + e.gradients + (phi * tau * m if e.communicates else 0)
    return total


def expected_epoch_time(kind: str, b: Any, tau_m: Any, phi: Any) -> Any:
    r"""Eq. (25): expected running time of an epoch of type ``kind`` under the paper's timing models.

    A: :math:`2b+\log(\tau m)+\phi\tau m` (Erlang straggler maximum (19) plus the M/M/1 queue (24));
    B: :math:`2b` (eq. (20)); C: :math:`\phi\tau m` (eq. (24)). Symbols allowed.

    >>> expected_epoch_time("B", 3, 10, 2.0), expected_epoch_time("C", 3, 10, 2.0)
    (6, 20.0)
    """
    log = sp.log if any(isinstance(v, sp.Basic) for v in (b, tau_m, phi)) else math.log
    if kind == "A":
        return 2 * b + log(tau_m) + phi * tau_m
    if kind == "B":
        return 2 * b
    if kind == "C":
        return phi * tau_m
    raise ValueError(f"epoch kind must be 'A', 'B' or 'C', got {kind!r}")


def epoch_time_order(kind: str, b: Any, tau_m: Any, phi: Any) -> Any:
    r"""Eq. (26): the order of the expected epoch time, the summand of Definition 1:
    A: :math:`b+\phi\tau m`, B: :math:`b`, C: :math:`\phi\tau m`.

    >>> epoch_time_order("A", 3, 10, 2.0)
    23.0
    """
    return (
        {"A": lambda: b + phi * tau_m, "B": lambda: b, "C": lambda: phi * tau_m}[kind]()
        if kind in ("A", "B", "C")
        else expected_epoch_time(kind, b, tau_m, phi)
    )


def fedlrgd_epochs(r: Any, s: Any, S: Any) -> list[Epoch]:
    """Algorithm 1's epochs (τ = 1): 1) the server computes r² gradients; 2) every client computes rs
    gradients and sends p weights; 3..r+1) every client sends p more weights; r+2) the server runs S
    inexact-GD iterations of r gradients each. Symbolic r gives the r − 1 communication epochs as one
    entry scaled by r − 1 (so the sum stays symbolic).

    >>> [e.kind for e in fedlrgd_epochs(3, 5, 2)]
    ['B', 'A', 'C', 'C', 'B']
    """
    head = [Epoch(r * r, False, "server"), Epoch(r * s, True, "clients")]
    tail = [Epoch(r * S, False, "server")]
    if isinstance(r, sp.Basic):
        return head + [_ScaledEpoch(r - 1)] + tail
    return head + [Epoch(0, True, "none") for _ in range(int(r) - 1)] + tail


@dataclass(frozen=True)
class _ScaledEpoch(Epoch):
    """``count`` identical Type-C epochs (symbolic count)."""

    count: Any = 1

    def __init__(self, count: Any) -> None:
        object.__setattr__(self, "gradients", 0)
        object.__setattr__(self, "communicates", True)
        object.__setattr__(self, "by", "none")
        object.__setattr__(self, "count", count)


def _complexity(epochs: Sequence[Epoch], phi: Any, tau: Any, m: Any) -> Any:
    total = 0
    for e in epochs:
        one = e.gradients + (phi * tau * m if e.communicates else 0)
        total = total + (e.count * one if isinstance(e, _ScaledEpoch) else one)
    return total


def fedlrgd_complexity(r: Any, s: Any, S: Any, phi: Any, m: Any) -> Any:
    r"""Γ(FedLRGD) from Definition 1 applied to :func:`fedlrgd_epochs` (τ = 1); Theorem 2 states it
    equals :math:`r^2+rs+rS+\phi mr`.

    >>> r, s, S, phi, m = (SYMBOLS[k] for k in ("r", "s", "S", "phi", "m"))
    >>> sp.expand(fedlrgd_complexity(r, s, S, phi, m) - (r**2 + r*s + r*S + phi*m*r))
    0
    """
    return _complexity(fedlrgd_epochs(r, s, S), phi, 1, m)


def fedave_epochs(b: Any, T: Any) -> list[Epoch]:
    """FedAve's T epochs: each a Type-A epoch of b local gradient steps per active client.

    >>> len(fedave_epochs(2, 4)), fedave_epochs(2, 4)[0].kind
    (4, 'A')
    """
    return [Epoch(b, True, "clients") for _ in range(int(T))]


def fedave_complexity(b: Any, T: Any, phi: Any, tau: Any, m: Any) -> Any:
    r""":math:`\Gamma(\text{FedAve})=T(b+\phi\tau m)` (Appendix D, from Definition 1).

    >>> fedave_complexity(4, 10, 2.0, 0.5, 8)
    120.0
    """
    if isinstance(T, sp.Basic):
        return T * (b + phi * tau * m)
    return federated_oracle_complexity(fedave_epochs(b, T), phi, tau, m)


# --------------------------------------------------------------------------------------------
# Theorem 2 in log space
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _theorem2_pieces() -> dict:
    """Theorem 2's pieces as sympy expressions, derived on first use (not at import: about a second)."""
    d, p, eta, alpha = (SYMBOLS[k] for k in ("d", "p", "eta", "alpha"))
    L1, mu, L2, B, eps, gap = (SYMBOLS[k] for k in ("L1", "mu", "L2", "B", "epsilon", "gap"))
    kappa = L1 / mu
    X = gap + sp.Rational(9, 2) * (B + 3) ** 4 * p / mu
    log_r1 = 1 + sp.log(d) / 2 + d * sp.log(2) + d * sp.log(eta + d)
    log_r2 = (
        d * sp.log(L2)
        + d * sp.log(eta)
        + eta * (d + 1)
        + eta / 2 * sp.log(d)
        + eta * d * sp.log(2 * eta + 2 * d)
        - eta * d * sp.log(eta - 1)
        + d / 2 * sp.log(kappa * X / ((kappa - 1) * eps))
    ) / (eta - (2 * alpha + 2) * d)
    S_real = sp.log(X / eps) / sp.log(kappa / (kappa - 1))
    return {"kappa": kappa, "X": X, "log_r1": log_r1, "log_r2": log_r2, "S_real": S_real}


_T2_ARGS = tuple(SYMBOLS[k] for k in ("d", "p", "eta", "alpha", "L1", "mu", "L2", "B", "epsilon", "gap"))


def theorem2_log_rank_exprs() -> tuple[sp.Expr, sp.Expr]:
    r"""(log of the first, log of the second term) inside the max of eq. (47), as sympy expressions:
    :math:`\log(e\sqrt d\,2^d(\eta+d)^d)` and
    :math:`\frac{1}{\eta-(2\alpha+2)d}\log\big(\frac{L_2^d\eta^de^{\eta(d+1)}d^{\eta/2}(2\eta+2d)^{\eta d}}
    {(\eta-1)^{\eta d}}(\frac{\kappa X}{(\kappa-1)\epsilon})^{d/2}\big)`, with
    :math:`X=F(\theta^{(0)})-F_*+9(B+3)^4p/(2\mu)` (symbol ``gap`` for :math:`F(\theta^{(0)})-F_*`).

    >>> e1, e2 = theorem2_log_rank_exprs()
    >>> sorted(str(s) for s in e2.free_symbols)
    ['B', 'L1', 'L2', 'alpha', 'd', 'epsilon', 'eta', 'gap', 'mu', 'p']
    """
    pieces = _theorem2_pieces()
    return pieces["log_r1"], pieces["log_r2"]


def theorem2_iterations_expr() -> sp.Expr:
    r"""Eq. (48) before the ceiling: :math:`\log(X/\epsilon)/\log(\kappa/(\kappa-1))`.

    >>> theorem2_iterations_expr().subs({SYMBOLS["L1"]: 2, SYMBOLS["mu"]: 1, SYMBOLS["gap"]: 0,
    ...     SYMBOLS["B"]: 1, SYMBOLS["p"]: 1, SYMBOLS["epsilon"]: 1152})
    0
    """
    return _theorem2_pieces()["S_real"]


_LOG_EPS = sp.Symbol("log_epsilon", real=True)


def _in_log_eps(expr: sp.Expr) -> sp.Expr:
    """The expression with ε = exp(log ε), logs expanded, so ε far below float64's range is fine."""
    return sp.expand_log(expr.subs(SYMBOLS["epsilon"], sp.exp(_LOG_EPS)), force=True)


_T2_LOG_ARGS = tuple(_LOG_EPS if s is SYMBOLS["epsilon"] else s for s in _T2_ARGS)


@functools.lru_cache(maxsize=None)
def _theorem2_compiled(what: str, module: str):
    """Theorem 2's ``"log_rank"`` (both terms of (47)) or ``"iterations"`` ((48) before the ceiling), in log ε,
    compiled for ``module`` (``"numpy"`` or ``"mpmath"``) on first use."""
    pieces = _theorem2_pieces()
    expr = (pieces["log_r1"], _in_log_eps(pieces["log_r2"])) if what == "log_rank" else _in_log_eps(pieces["S_real"])
    return sp.lambdify(_T2_LOG_ARGS, expr, module)


_LN10 = math.log(10.0)


def _fmt(v: Any) -> str:
    return f"{float(v):g}"


@dataclass(frozen=True)
class FedLRGDSetting:
    r"""The parameters of Theorem 2 and its evaluation: r of (47), S of (48), Γ = r² + rs + rS + φmr.

    ``initial_gap`` = :math:`F(\theta^{(0)})-F_*`; ``tau`` must be 1 (the theorem's hypothesis).
    :meth:`check` raises ValueError naming the violated hypothesis: Section II-B (κ = L1/μ ≥ 1, and
    κ > 1, without which (47)–(48) divide by zero; α ≥ 1; L2, B > 0), Theorem 2
    (:math:`0<\epsilon\le9(B+3)^4p/(8\mu)`, :math:`\eta>(2\alpha+2)d`, τ = 1) and well-formedness
    (d, p, m, s positive integers, φ > 0, initial gap ≥ 0). Every evaluation checks first.

    >>> s = FedLRGDSetting(d=1, p=1, eta=6.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.5,
    ...                    initial_gap=0.0, m=10, s=5, phi=100.0)
    >>> s.rank() == math.ceil(math.exp(s.log_rank())), s.iterations()
    (True, 12)
    >>> round(s.log10_complexity(), 3)
    10.507
    """

    d: int
    p: int
    eta: float
    alpha: float
    L1: float
    mu: float
    L2: float
    B: float
    epsilon: float
    initial_gap: float
    m: int = 1
    s: int = 1
    phi: float = 1.0
    tau: float = 1.0
    log_epsilon: float | None = None

    @property
    def log_eps(self) -> float:
        """log ε (``log_epsilon`` when given: ε may then underflow float64, as in Proposition 1's regime)."""
        if self.log_epsilon is not None:
            return float(self.log_epsilon)
        return math.log(self.epsilon) if self.epsilon > 0 else -math.inf

    def _values(self) -> tuple:
        return tuple(
            float(v)
            for v in (
                self.d,
                self.p,
                self.eta,
                self.alpha,
                self.L1,
                self.mu,
                self.L2,
                self.B,
                self.log_eps,
                self.initial_gap,
            )
        )

    def check(self) -> "FedLRGDSetting":
        """Raise ValueError naming the first violated hypothesis (with the values); return self."""
        for name in ("d", "p", "m", "s"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise ValueError(f"Theorem 2 needs {name} to be a positive integer, got {name}={v!r}")
        for name in ("eta", "alpha", "L1", "mu", "L2", "B", "initial_gap", "phi", "tau"):
            v = float(getattr(self, name))
            if not math.isfinite(v):
                raise ValueError(f"Theorem 2 needs a finite {name}, got {name}={v!r}")
        if not (self.L2 > 0):
            raise ValueError(f"Section II-B hypothesis L2 > 0 (Hölder constant) violated: L2={_fmt(self.L2)}")
        if not (self.mu > 0):
            raise ValueError(f"Section II-B hypothesis mu > 0 (strong convexity) violated: mu={_fmt(self.mu)}")
        if not (self.L1 >= self.mu):
            raise ValueError(
                f"Section II-B hypothesis kappa = L1/mu >= 1 violated: L1={_fmt(self.L1)}, mu={_fmt(self.mu)}"
            )
        if not (self.L1 > self.mu):
            raise ValueError(
                f"eqs. (47)-(48) need kappa = L1/mu > 1 (they divide by kappa - 1): L1={_fmt(self.L1)}, "
                f"mu={_fmt(self.mu)}"
            )
        if not (self.alpha >= 1):
            raise ValueError(
                f"Section II-B hypothesis alpha >= 1 (conditioning exponent) violated: alpha={_fmt(self.alpha)}"
            )
        if not (self.B > 0):
            raise ValueError(f"Section II-B hypothesis B > 0 (boundedness) violated: B={_fmt(self.B)}")
        if not (self.initial_gap >= 0):
            raise ValueError(f"F(theta0) - F_* must be >= 0, got initial_gap={_fmt(self.initial_gap)}")
        if not (self.phi > 0):
            raise ValueError(f"Definition 1 needs phi > 0, got phi={_fmt(self.phi)}")
        if self.tau != 1:
            raise ValueError(f"Theorem 2 hypothesis tau = 1 violated: tau={_fmt(self.tau)}")
        if not (self.eta > (2 * self.alpha + 2) * self.d):
            raise ValueError(
                f"Theorem 2 hypothesis eta > (2*alpha + 2)*d violated: eta={_fmt(self.eta)}, "
                f"alpha={_fmt(self.alpha)}, d={self.d}"
            )
        cap = 9 * (self.B + 3) ** 4 * self.p / (8 * self.mu)
        if not (math.isfinite(self.log_eps) and self.log_eps <= math.log(cap)):
            eps = f"exp({self.log_eps:g})" if self.log_epsilon is not None else _fmt(self.epsilon)
            raise ValueError(
                f"Theorem 2 hypothesis 0 < epsilon <= 9(B+3)^4 p/(8 mu) violated: epsilon={eps}, "
                f"9(B+3)^4 p/(8 mu)={_fmt(cap)}"
            )
        return self

    # --- eq. (47) ---------------------------------------------------------------------------
    def log_rank_terms(self) -> tuple[float, float]:
        """(log of e√d 2^d (η+d)^d, log of the second term of (47)), natural logs, float64."""
        self.check()
        a, b = _theorem2_compiled("log_rank", "numpy")(*map(float, self._values()))
        return float(a), float(b)

    def log_rank(self) -> float:
        """log r before the ceiling (natural log): max of the two terms of (47)."""
        return max(self.log_rank_terms())

    def log10_rank(self) -> float:
        """log10 r (before the ceiling)."""
        return self.log_rank() / _LN10

    def rank(self, max_log10: float = 300.0) -> int:
        """r of (47) as an exact integer (50-digit evaluation of the same expression, then the ceiling).

        Raises ValueError when r exceeds 10^max_log10 (then use :meth:`log10_rank`).
        """
        self.check()
        if self.log10_rank() > max_log10:
            raise ValueError(f"r = 10^{self.log10_rank():.4g} exceeds 10^{max_log10:g}; use log10_rank()")
        with mpmath.workdps(50):
            a, b = _theorem2_compiled("log_rank", "mpmath")(*[mpmath.mpf(v) for v in self._values()])
            return int(mpmath.ceil(mpmath.exp(max(a, b))))

    # --- eq. (48) ---------------------------------------------------------------------------
    def iterations(self) -> int:
        """S of (48) (exact ceiling through a 50-digit evaluation)."""
        self.check()
        with mpmath.workdps(50):
            iterations = _theorem2_compiled("iterations", "mpmath")
            return int(mpmath.ceil(iterations(*[mpmath.mpf(v) for v in self._values()])))

    def log_delta(self) -> float:
        r"""log δ, :math:`\delta=(1-1/\kappa)^{S/2}` of eq. (64)."""
        kappa = self.L1 / self.mu
        return self.iterations() / 2 * math.log1p(-1 / kappa)

    # --- Γ ------------------------------------------------------------------------------------
    def log_complexity(self) -> float:
        r"""log Γ, Γ = r² + rs + rS + φmr, by log-sum-exp (natural log; r before the ceiling when huge)."""
        lr = self.log_rank()
        if lr < 600:
            lr = math.log(self.rank())
        S = self.iterations()
        terms = np.array([2 * lr, lr + math.log(self.s), lr + math.log(S), math.log(self.phi) + math.log(self.m) + lr])
        return float(np.logaddexp.reduce(terms))

    def log10_complexity(self) -> float:
        """log10 Γ(FedLRGD)."""
        return self.log_complexity() / _LN10

    def complexity(self) -> int:
        """Γ as an exact integer (only when r fits, see :meth:`rank`); φ must then be an integer too."""
        r, S = self.rank(), self.iterations()
        return r * r + r * self.s + r * S + int(round(self.phi * self.m)) * r


def log_rank_vectorized(**params: Any) -> tuple[np.ndarray, np.ndarray]:
    """The two log terms of (47) on arrays (broadcast), for figures; no hypothesis check here —
    callers check a representative with :class:`FedLRGDSetting`.

    >>> a, b = log_rank_vectorized(d=1, p=2, eta=np.array([5.0, 6.0]), alpha=1.0, L1=2.0, mu=1.0, L2=1.0,
    ...                            B=1.0, epsilon=0.1, gap=1.0)
    >>> b.shape
    (2,)
    """
    values = [
        np.log(np.asarray(params["epsilon"], dtype=np.float64))
        if s is SYMBOLS["epsilon"]
        else np.asarray(params[str(s)], dtype=np.float64)
        for s in _T2_ARGS
    ]
    a, b = _theorem2_compiled("log_rank", "numpy")(*values)
    return np.broadcast_to(np.asarray(a, dtype=float), np.broadcast(*values).shape), np.asarray(b, dtype=float)


__all__.append("log_rank_vectorized")


# --------------------------------------------------------------------------------------------
# Lemma 3 and Theorem 3
# --------------------------------------------------------------------------------------------


def lemma3_T0(kappa: float, tau: float, m: int, mu: float, b: float) -> float:
    r""":math:`T_0=4\max\{\kappa,\,4+32\kappa^2(1-\tau)/(\tau(m-1)),\,4m/(\mu^2b)\}` of Lemma 3
    (the middle term is 16 when τ = 1; m ≥ 2 when τ < 1).

    >>> lemma3_T0(2.0, 1.0, 2, 1.0, 2)
    16.0
    """
    if tau < 1 and m < 2:
        raise ValueError(f"Lemma 3's T0 divides by m - 1 when tau < 1: m={m}, tau={tau}")
    middle = 4.0 if tau == 1 else 4 + 32 * kappa**2 * (1 - tau) / (tau * (m - 1))
    return 4 * max(kappa, middle, 4 * m / (mu**2 * b))


def lemma3_terms(*, L1: Any, mu: Any, sigma2: Any, tau: Any, m: Any, b: Any, T: Any, T0: Any, dist0: Any) -> list:
    """The four terms on the right of Lemma 3 (``dist0`` = E‖θ^(T0) − θ*‖²); exact with sympy Rationals.

    >>> [float(t) for t in lemma3_terms(L1=2, mu=1, sigma2=0, tau=1, m=2, b=2, T=20, T0=16, dist0=1)]
    [0.6478..., 0.0, 0.0, 0.0]
    """
    kappa = L1 / mu if not isinstance(L1, int) else sp.Rational(L1) / mu
    e = sp.E if any(isinstance(v, sp.Basic) for v in (L1, mu, sigma2, tau, dist0)) else math.e
    one_minus_tau_term = 0 if tau == 1 else 8 * (1 - tau) * m / (tau * (m - 1))
    small = 0 if tau == 1 else 8 * (1 - tau) / (tau * (m - 1))
    return [
        L1 * (T0 * b + 1) ** 2 / (2 * (T * b + 1) ** 2) * dist0,
        8 * kappa * sigma2 / (mu * m) * (1 + one_minus_tau_term) * b / (T * b + 1),
        8 * e * L1 * kappa**2 * sigma2 / m * (b - 1) ** 2 / (T * b + 1),
        128 * e * kappa**3 * sigma2 / mu * (1 + small) * (b - 1) / (T * b + 1) ** 2,
    ]


def lemma3_bound(**kw: Any) -> Any:
    r"""The right side of Lemma 3: the bound on :math:`\frac{L_1}2\mathbb E\|\theta^{(T)}-\theta^*\|^2`
    (and so on :math:`\mathbb E F(\theta^{(T)})-F_*`), for T ≥ T0. Keywords as :func:`lemma3_terms`.

    >>> round(float(lemma3_bound(L1=2, mu=1, sigma2=0.01, tau=1, m=2, b=2, T=20, T0=16, dist0=1)), 6)
    0.689506
    """
    return sum(lemma3_terms(**kw))


def lemma4_h(t: Any) -> Any:
    r""":math:`h(t)=\sin(\tfrac13\arcsin(1-t^2)+\tfrac{2\pi}3)` of Lemma 4 (sympy, mpmath or float input).

    >>> round(lemma4_h(0.0), 12)
    0.5
    """
    if isinstance(t, sp.Basic):
        return sp.sin(sp.asin(1 - t**2) / 3 + 2 * sp.pi / 3)
    if isinstance(t, mpmath.mpf):
        return mpmath.sin(mpmath.asin(1 - t**2) / 3 + 2 * mpmath.pi / 3)
    return math.sin(math.asin(1 - t**2) / 3 + 2 * math.pi / 3)


def lemma4_bounds(t: Any) -> tuple[Any, Any]:
    r"""Lemma 4's bounds :math:`\tfrac12+t/\sqrt6\mp5t^2/9`.

    >>> lo, hi = lemma4_bounds(1.0)
    >>> lo <= lemma4_h(1.0) <= hi
    True
    """
    sqrt6 = sp.sqrt(6) if isinstance(t, sp.Basic) else (mpmath.sqrt(6) if isinstance(t, mpmath.mpf) else math.sqrt(6))
    half = sp.Rational(1, 2) if isinstance(t, sp.Basic) else 0.5
    five_ninths = sp.Rational(5, 9) if isinstance(t, sp.Basic) else 5 / 9
    base = half + t / sqrt6
    return base - five_ninths * t**2, base + five_ninths * t**2


@dataclass(frozen=True)
class FedAveProgram:
    r"""Theorem 3's program (79): :math:`\Gamma=\min_{b,T>0}T(b+C_3)` subject to
    :math:`m^2/(T^2b^2)+b/(mT)\le\varepsilon/C`, with :math:`C_3=\phi\tau m` and ε = ϵ/p.

    The proof's closed forms: for fixed b the optimal T solves the constraint with equality (80); with
    :math:`C_1=C/(2m\varepsilon)`, :math:`C_2=m\sqrt{C/\varepsilon}` (82)–(83),
    :math:`g(b)=(C_1b+C_2/b)(b+C_3)` sandwiches the objective (85), and its minimizer b* is the unique
    positive root of the cubic (86), given by Viète's formula (evaluated stably through
    :math:`v=\arcsin(t/\sqrt2)`, :math:`t^2=54C_2/(C_1C_3^2)`).

    >>> prog = FedAveProgram(m=100, phi=100.0, tau=1.0, C=1.0, varepsilon=0.01)
    >>> b = prog.b_star()
    >>> abs(2 * prog.C1 * b**3 + prog.C1 * prog.C3 * b**2 - prog.C2 * prog.C3) < 1e-6 * prog.C2 * prog.C3
    True
    >>> lo, hi = prog.theorem3_sandwich()
    >>> lo <= prog.exact_min()[0] <= hi
    True
    """

    m: float
    phi: float
    tau: float
    C: float
    varepsilon: float

    def check(self, *, theorem: bool = True) -> "FedAveProgram":
        """Raise ValueError naming a violated hypothesis; ``theorem=False`` checks only that (79) is
        well posed (all parameters positive, τ ≤ 1)."""
        for name in ("m", "phi", "tau", "C", "varepsilon"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"Theorem 3's program (79) needs {name} > 0, got {name}={v!r}")
        if self.tau > 1:
            raise ValueError(f"Theorem 3 hypothesis tau in (0, 1] violated: tau={_fmt(self.tau)}")
        if theorem:
            if self.varepsilon > 1:
                raise ValueError(
                    f"Theorem 3's proof needs varepsilon = epsilon/p in (0, 1]: varepsilon={_fmt(self.varepsilon)}"
                )
            need = 40 / (self.C**0.25 * self.tau)
            if self.phi < need:
                raise ValueError(
                    f"Theorem 3's proof hypothesis (88) phi >= 40/(C^(1/4) tau) violated: phi={_fmt(self.phi)}, "
                    f"40/(C^(1/4) tau)={_fmt(need)}"
                )
        return self

    @property
    def C1(self) -> float:
        return self.C / (2 * self.m * self.varepsilon)

    @property
    def C2(self) -> float:
        return self.m * math.sqrt(self.C / self.varepsilon)

    @property
    def C3(self) -> float:
        return self.phi * self.tau * self.m

    def T_of_b(self, b: Any) -> Any:
        """Eq. (80): the least T meeting the constraint with equality, for b > 0 (vectorized)."""
        b = np.asarray(b, dtype=np.float64)
        u = b * self.C / (2 * self.m * self.varepsilon)
        return u + np.sqrt(u * u + self.C * self.m**2 / (self.varepsilon * b * b))

    def objective(self, b: Any) -> Any:
        """T(b)(b + C3): the program's value at b with the optimal T (vectorized)."""
        return self.T_of_b(b) * (np.asarray(b, dtype=np.float64) + self.C3)

    def g(self, b: Any) -> Any:
        """g(b) = (C1 b + C2/b)(b + C3) of the proof."""
        b = np.asarray(b, dtype=np.float64)
        return (self.C1 * b + self.C2 / b) * (b + self.C3)

    def t_squared(self) -> float:
        """t² = 54 C2/(C1 C3²), Lemma 4's variable (≤ 1 exactly when Lemma 4 applies)."""
        return 54 * self.C2 / (self.C1 * self.C3**2)

    def b_star(self) -> float:
        """The positive root of 2C1b³ + C1C3b² − C2C3 = 0 (86).

        Viète's root (C3/3)(h(t) − ½) when t ≤ 1, written stably as −(2C3/3)sin(v/3)cos(5π/6 − v/3)
        with v = arcsin(t/√2); otherwise (one real root) by numpy's companion-matrix roots.
        """
        self.check(theorem=False)
        t2 = self.t_squared()
        if t2 <= 1:
            v = math.asin(math.sqrt(t2 / 2))
            return -(2 * self.C3 / 3) * math.sin(v / 3) * math.cos(5 * math.pi / 6 - v / 3)
        roots = np.roots([2 * self.C1, self.C1 * self.C3, 0.0, -self.C2 * self.C3])
        real = roots[np.abs(roots.imag) <= 1e-9 * np.abs(roots)].real
        return float(real[real > 0].max())

    def b_star_viete_mp(self, dps: int = 60) -> mpmath.mpf:
        """Viète's root exactly as the proof writes it, in ``dps``-digit arithmetic (needs t ≤ 1)."""
        with mpmath.workdps(dps):
            C1, C2, C3 = (
                mpmath.mpf(self.C) / (2 * mpmath.mpf(self.m) * mpmath.mpf(self.varepsilon)),
                mpmath.mpf(self.m) * mpmath.sqrt(mpmath.mpf(self.C) / mpmath.mpf(self.varepsilon)),
                mpmath.mpf(self.phi) * mpmath.mpf(self.tau) * mpmath.mpf(self.m),
            )
            w = 1 - 54 * C2 / (C1 * C3**2)
            if w < -1:
                raise ValueError("Viète's trigonometric root needs t <= 1 (54 C2 <= 2 C1 C3^2)")
            return C3 / 3 * (mpmath.sin(mpmath.asin(w) / 3 + 2 * mpmath.pi / 3) - mpmath.mpf(1) / 2)

    def min_g(self) -> float:
        """min_{b>0} g(b) = g(b*)."""
        return float(self.g(self.b_star()))

    def exact_min(self) -> tuple[float, float, float]:
        """(Γ, b, T): the program's exact optimum by a 1-D minimization of T(b)(b + C3) over log b.

        The objective is unimodal in log b; bracketed around b* (from the sandwich (85) the optimum
        lies where g is within a factor 2 of its minimum).
        """
        import scipy.optimize

        self.check(theorem=False)
        b0 = self.b_star()
        res = scipy.optimize.minimize_scalar(
            lambda u: math.log(float(self.objective(math.exp(u)))),
            bracket=(math.log(b0) - 3, math.log(b0), math.log(b0) + 3),
            tol=1e-12,
        )
        b = math.exp(res.x)
        return float(self.objective(b)), b, float(self.T_of_b(b))

    def b_star_bounds(self) -> tuple[float, float]:
        """Eq. (89): m/2 (ε/C)^{1/4} ≤ b* ≤ 2m (ε/C)^{1/4} (needs (88))."""
        q = (self.varepsilon / self.C) ** 0.25
        return self.m / 2 * q, 2 * self.m * q

    def theorem3_sandwich(self) -> tuple[float, float]:
        """Theorem 3's conclusion: (3/4 φτm (C/ε)^{3/4}, 8 φτm (C/ε)^{3/4}); checks (88) and ε ≤ 1."""
        self.check()
        core = self.C3 * (self.C / self.varepsilon) ** 0.75
        return 0.75 * core, 8 * core


# --------------------------------------------------------------------------------------------
# Proposition 1: the comparison regime
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposition1Regime:
    r"""A concrete instance of Proposition 1's regime, parameterized by the number of clients m.

    The proposition fixes λ ∈ (0,1), β ∈ (0,½], ξ ∈ (0,¾), constants c2 > c1 ≥ 2/ξ, and takes
    d ≤ c3 log(n)^λ, (c1 + 2α + 2)d ≤ η ≤ (c2 + 2α + 2)d, ϵ = n^{−β}, s = O(φm), F(θ0) − F* = O(p),
    n = ms + r. The paper leaves the constants and the growth of d, p, s, φ free; this class picks
    d = max(1, ⌊c3 log(n)^λ⌋), η = (c1 + 2α + 2 + ``eta_slack``)d, p, s, φ fixed (``p``, ``s``,
    ``phi``), F(θ0) − F* = ``gap_per_p``·p, and solves n = ms + r(n) by fixed-point iteration in log
    space (r grows sub-linearly in n). FedAve's Γ₊ uses Theorem 3's sandwich constants with C = ``C``
    (ε = ϵ/p): lower ¾·φτm(Cp/ϵ)^{3/4}, upper 8·φτm(Cp/ϵ)^{3/4}. Everything is in log space, so m may
    be far beyond float64 (``log10_m`` up to ~1e300).

    >>> reg = Proposition1Regime()
    >>> inst = reg.instance(6.0)                      # m = 10^6
    >>> inst["d"] >= 1 and inst["eta"] > (2 * reg.alpha + 2) * inst["d"]
    True
    """

    lam: float = 0.5
    beta: float = 0.5
    xi: float = 0.5
    c1: float = 4.0
    c2: float = 5.0
    c3: float = 1.0
    alpha: float = 1.0
    L1: float = 2.0
    mu: float = 1.0
    L2: float = 1.0
    B: float = 1.0
    p: int = 10
    s: int = 10
    phi: float = 100.0
    tau: float = 1.0
    gap_per_p: float = 1.0
    C: float = 1.0
    eta_slack: float = 0.0

    def check(self) -> "Proposition1Regime":
        """Raise ValueError naming a violated hypothesis of Proposition 1."""
        if not 0 < self.lam < 1:
            raise ValueError(f"Proposition 1 needs lambda in (0, 1): lambda={self.lam}")
        if not 0 < self.beta <= 0.5:
            raise ValueError(f"Proposition 1 needs beta in (0, 1/2]: beta={self.beta}")
        if not 0 < self.xi < 0.75:
            raise ValueError(f"Proposition 1 needs xi in (0, 3/4): xi={self.xi}")
        if not (self.c2 > self.c1 >= 2 / self.xi):
            raise ValueError(f"Proposition 1 needs c2 > c1 >= 2/xi: c1={self.c1}, c2={self.c2}, 2/xi={2 / self.xi:g}")
        if not 0 <= self.eta_slack <= self.c2 - self.c1:
            raise ValueError(
                f"eta must lie in [(c1+2a+2)d, (c2+2a+2)d]: eta_slack={self.eta_slack} not in [0, c2 - c1]"
            )
        return self

    def setting(self, log_n: float) -> FedLRGDSetting:
        """Theorem 2's parameters at n = e^{log_n} samples (m and s are not needed for r and S)."""
        if not math.isfinite(log_n):
            raise ValueError(f"log n must be finite, got {log_n!r}")
        d = max(1, int(math.floor(self.c3 * log_n**self.lam))) if log_n > 0 else 1
        eta = (self.c1 + self.eta_slack + 2 * self.alpha + 2) * d
        return FedLRGDSetting(
            d=d,
            p=self.p,
            eta=eta,
            alpha=self.alpha,
            L1=self.L1,
            mu=self.mu,
            L2=self.L2,
            B=self.B,
            epsilon=0.0,
            log_epsilon=-self.beta * log_n,
            initial_gap=self.gap_per_p * self.p,
            m=1,
            s=self.s,
            phi=self.phi,
        )

    def instance(self, log10_m: float) -> dict:
        """All parameters at m = 10^log10_m clients, with log10 Γ(FedLRGD) and FedAve's log10 Γ₊."""
        self.check()
        log_m = float(log10_m) * _LN10
        log_n = self.sample_size(log_m)
        if log_n is None:
            return {"log10_m": float(log10_m), "consistent": False}
        st = self.setting(log_n)
        with np.errstate(over="ignore", invalid="ignore"):
            lr = st.log_rank()
        S = st.iterations()
        log_phi = math.log(self.phi)
        log_gamma_lrgd = float(
            np.logaddexp.reduce([2 * lr, lr + math.log(self.s), lr + math.log(S), log_phi + log_m + lr])
        )
        log_p_over_eps = math.log(self.p) + self.beta * log_n
        core = log_phi + math.log(self.tau) + log_m + 0.75 * (math.log(self.C) + log_p_over_eps)
        return {
            "log10_m": float(log10_m),
            "consistent": True,
            "log10_n": log_n / _LN10,
            "d": st.d,
            "eta": st.eta,
            "log10_epsilon": -self.beta * log_n / _LN10,
            "log10_r": lr / _LN10,
            "S": S,
            "log10_gamma_fedlrgd": log_gamma_lrgd / _LN10,
            "log10_gamma_fedave_lower": (core + math.log(0.75)) / _LN10,
            "log10_gamma_fedave_upper": (core + math.log(8.0)) / _LN10,
        }

    def sample_size(self, log_m: float) -> float | None:
        """log n solving n = ms + r(n), or None when there is none below e^{1e250} (Theorem 2's r then exceeds
        every n the regime allows: r(n) > n).

        The map x ↦ log(ms + r(e^x)) is increasing, so iterating it from log(ms) climbs to the least fixed
        point; where that is slow (near tangency) a bisection on f(x) ≤ x between the last iterate and the
        first point above it where f falls below the diagonal finishes the job.
        """
        log_ms = log_m + math.log(self.s)

        def f(x: float) -> float:
            with np.errstate(over="ignore", invalid="ignore"):
                lr = self.setting(x).log_rank()
            return float(np.logaddexp(log_ms, lr)) if math.isfinite(lr) else math.inf

        x = log_ms
        for _ in range(200):
            new = f(x)
            if abs(new - x) <= 1e-13 * max(1.0, abs(new)):
                return new
            if not new < 1e250:
                return None
            x = new
        upper = x
        while f(upper) > upper:
            upper *= 2.0
            if upper > 1e250:
                return None
        lo = x
        for _ in range(200):
            mid = 0.5 * (lo + upper)
            if f(mid) > mid:
                lo = mid
            else:
                upper = mid
            if upper - lo <= 1e-13 * upper:
                break
        out = f(upper)
        return out if math.isfinite(out) and out < 1e250 else None

    def log10_ratio(self, log10_m: float, which: str = "upper") -> float:
        """log10 Γ(FedLRGD)/Γ₊(FedAve) at m = 10^log10_m (``which``: FedAve's constant, upper 8 or lower 3/4);
        +inf where the regime has no consistent n (r(n) > n)."""
        inst = self.instance(log10_m)
        if not inst["consistent"]:
            return math.inf
        return inst["log10_gamma_fedlrgd"] - inst[f"log10_gamma_fedave_{which}"]

    def crossover(self, which: str = "upper", log10_m_max: float = 300.0, points: int = 400) -> float | None:
        """The least log10 m beyond which the ratio stays below 1 on a grid geometric in log10 m (refined by
        bisection); None when FedLRGD does not win below 10^log10_m_max."""
        grid = np.unique(np.concatenate([[0.0], np.geomspace(1e-2, log10_m_max, points)]))
        vals = np.array([self.log10_ratio(g, which) for g in grid])
        above = np.nonzero(vals >= 0)[0]
        if above.size == 0:
            return 0.0
        last = int(above[-1])
        if last == grid.size - 1:
            return None
        lo, hi = grid[last], grid[last + 1]
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.log10_ratio(mid, which) >= 0:
                lo = mid
            else:
                hi = mid
        return float(hi)
