r"""The timing models behind Definition 1 (federated oracle complexity), exact and simulated.

Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*, Section II-D:

* **Gradient computation** (II-D1): a client computing b gradients takes b + Y, Y ~ Erlang(b, 1)
  (b delayed Poisson arrivals); an epoch of τm active clients lasts b + max{Y_1..Y_τm}. The paper
  approximates the maximum by extreme-value theory: the Erlang CDF is a von Mises function with
  auxiliary function a(x) of eq. (16), the normalized maximum tends to a Gumbel law (17), the
  quantile :math:`F_Y^{-1}(1-1/k)\approx\log k+b` (18) (bounded by Proposition 2), and eq. (19)
  gives :math:`b+\mathbb E\max\approx\log(\tau m)+2b`. A server epoch lasts b + Y, mean 2b (20).
* **Communication** (II-D2): client updates enter a FIFO M/M/1 queue (arrival rate 1, service rate
  ν > 1) in steady state; by Burke's theorem departures form a Poisson(1) process, so the time S
  until τm departures is Erlang(τm, 1) with mean τm (22)–(23).

Everything the paper approximates is computed here exactly (quadrature of
:math:`\int_0^\infty 1-F(y)^k\,dy`, regularized incomplete gamma functions) and simulated (batched
numpy draws), so claims can compare them.

>>> round(expected_max_erlang(1, 3), 12)           # E max of 3 Exp(1) = H_3 = 11/6
1.833333333333
>>> lo, hi = erlang_quantile_bounds(b=2, q=100)    # Proposition 2 (needs (q − 1)b ≥ 55)
>>> bool(lo <= erlang_quantile(2, 1 - 1 / 100) <= hi)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.integrate
import scipy.special

__all__ = [
    "EULER_GAMMA",
    "erlang_sf",
    "erlang_quantile",
    "erlang_upper_quantile",
    "erlang_auxiliary",
    "erlang_auxiliary_closed_form",
    "expected_max_erlang",
    "gumbel_mean_approximation",
    "paper_client_epoch_time",
    "normalized_max_gumbel_distance",
    "simulate_max_erlang",
    "simulate_mm1_departures",
    "erlang_quantile_bounds",
    "quantile_estimate_18",
]

EULER_GAMMA = float(np.euler_gamma)


def _check_shape(b: Any) -> int:
    if isinstance(b, bool) or int(b) != b or b < 1:
        raise ValueError(f"the Erlang shape b must be a positive integer (gradients per epoch), got b={b!r}")
    return int(b)


def _check_count(k: Any, name: str = "k") -> int:
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={k!r}")
    return int(k)


def erlang_sf(b: int, y: Any) -> Any:
    """P(Y > y) for Y ~ Erlang(b, 1): the regularized upper incomplete gamma Q(b, y) (vectorized).

    >>> round(float(erlang_sf(1, 2.0)), 12) == round(math.exp(-2.0), 12)
    True
    """
    return scipy.special.gammaincc(_check_shape(b), np.asarray(y, dtype=np.float64))


def erlang_quantile(b: int, level: float) -> float:
    """F_Y^{-1}(level) for Y ~ Erlang(b, 1) (float64; for levels within 1e-16 of 1 use
    :func:`erlang_upper_quantile`).

    >>> round(erlang_quantile(1, 0.5), 12) == round(math.log(2), 12)
    True
    """
    return float(scipy.special.gammaincinv(_check_shape(b), level))


def erlang_upper_quantile(b: int, tail: float) -> float:
    """F_Y^{-1}(1 − tail), accurate for tiny tails (inverts the upper incomplete gamma directly).

    >>> round(erlang_upper_quantile(1, 1e-30), 6) == round(30 * math.log(10), 6)
    True
    """
    if not 0 < tail < 1:
        raise ValueError(f"tail probability must lie in (0, 1), got {tail!r}")
    return float(scipy.special.gammainccinv(_check_shape(b), tail))


def erlang_auxiliary(b: int, x: Any) -> Any:
    r"""The auxiliary function :math:`a(x)=(1-F_Y(x))/f_Y(x)` of the von Mises representation (exact,
    vectorized, log-space so large x and b do not overflow)."""
    b = _check_shape(b)
    x = np.asarray(x, dtype=np.float64)
    log_sf = np.log(scipy.special.gammaincc(b, x))
    log_pdf = (b - 1) * np.log(x) - x - scipy.special.gammaln(b)
    return np.exp(log_sf - log_pdf)


def erlang_auxiliary_closed_form(b: int, x: Any) -> Any:
    r"""Eq. (16): :math:`a(x)=\sum_{k=0}^{b-1}\frac{(b-1)!}{(b-k-1)!}x^{-k}` (numbers or sympy).

    >>> import sympy as sp
    >>> x = sp.Symbol("x", positive=True)
    >>> erlang_auxiliary_closed_form(3, x)
    1 + 2/x + 2/x**2
    >>> bool(np.isclose(float(erlang_auxiliary_closed_form(4, 7.5)), float(erlang_auxiliary(4, 7.5))))
    True
    """
    b = _check_shape(b)
    return sum(math.factorial(b - 1) // math.factorial(b - k - 1) * x ** (-k) for k in range(b))


def _max_integrand(b: int, k: int, y: float) -> float:
    q = float(scipy.special.gammaincc(b, y))
    return float(-np.expm1(k * np.log1p(-q))) if q < 1 else 1.0


def expected_max_erlang(b: int, k: int) -> float:
    r""":math:`\mathbb E\max\{Y_1,\dots,Y_k\}` for i.i.d. Y ~ Erlang(b, 1), exactly (adaptive quadrature
    of :math:`\int_0^\infty 1-F(y)^k\,dy`, with :math:`1-F^k=-\mathrm{expm1}(k\log1p(-Q))`).

    >>> round(expected_max_erlang(5, 1), 10)            # k = 1: the mean b
    5.0
    """
    b, k = _check_shape(b), _check_count(k)
    if k == 1:
        return float(b)
    # break points at quantiles around the bulk of the maximum
    tails = [min(0.5, c / k) for c in (100.0, 10.0, 1.0, 0.1, 1e-2, 1e-4, 1e-8)]
    pts = sorted({erlang_upper_quantile(b, t) for t in tails})
    hi = erlang_upper_quantile(b, 1e-40 / k) if k < 1e290 else pts[-1] * 4
    edges = [0.0] + [p for p in pts if 0 < p < hi] + [hi]
    total = 0.0
    for lo_e, hi_e in zip(edges[:-1], edges[1:]):
        val, _ = scipy.integrate.quad(
            lambda y: _max_integrand(b, k, y), lo_e, hi_e, limit=200, epsabs=0.0, epsrel=1e-12
        )
        total += val
    return total


def gumbel_mean_approximation(b: int, k: int) -> float:
    r"""The first approximation of eq. (19): :math:`\gamma\,a(F^{-1}(1-1/k))+F^{-1}(1-1/k)` for
    :math:`\mathbb E\max` (the mean of the Gumbel limit (17) in the original scale; needs k ≥ 2).

    >>> abs(gumbel_mean_approximation(1, 10**6) - expected_max_erlang(1, 10**6)) < 1e-5
    True
    """
    b, k = _check_shape(b), _check_count(k)
    if k < 2:
        raise ValueError(f"the extreme-value approximation needs k >= 2 clients, got k={k}")
    q = erlang_upper_quantile(b, 1.0 / k)
    return float(EULER_GAMMA * erlang_auxiliary(b, q) + q)


def paper_client_epoch_time(b: int, k: int) -> float:
    """The last line of eq. (19): b + E max ≈ log(k) + 2b (k = τm active clients)."""
    return math.log(_check_count(k)) + 2 * _check_shape(b)


def normalized_max_gumbel_distance(b: int, k: int, grid: Any = None) -> float:
    r"""Sup over a grid of :math:`|P((\max_k Y-q_k)/a(q_k)\le u)-\exp(-e^{-u})|`, eq. (17), with
    :math:`q_k=F^{-1}(1-1/k)`; the exact CDF of the maximum is :math:`F(q_k+a(q_k)u)^k`.

    >>> normalized_max_gumbel_distance(1, 10**6) < 1e-5      # exponential: the limit is reached fast
    True
    """
    b, k = _check_shape(b), _check_count(k)
    u = np.linspace(-3.0, 12.0, 3001) if grid is None else np.asarray(grid, dtype=np.float64)
    q = erlang_upper_quantile(b, 1.0 / k)
    a = float(erlang_auxiliary(b, q))
    y = np.maximum(q + a * u, 0.0)
    with np.errstate(divide="ignore"):  # log1p(−1) = −inf below the support: CDF 0, as it should be
        cdf_max = np.exp(k * np.log1p(-scipy.special.gammaincc(b, y)))
    return float(np.max(np.abs(cdf_max - np.exp(-np.exp(-u)))))


def simulate_max_erlang(b: int, k: int, n_rep: int, rng: np.random.Generator, chunk: int = 1 << 22) -> np.ndarray:
    """``n_rep`` draws of max{Y_1..Y_k}, Y ~ Erlang(b, 1) (batched gamma draws, chunked).

    >>> x = simulate_max_erlang(2, 10, 2000, np.random.default_rng(0))
    >>> x.shape, bool(abs(x.mean() - expected_max_erlang(2, 10)) < 0.15)
    ((2000,), True)
    """
    b, k, n_rep = _check_shape(b), _check_count(k), _check_count(n_rep, "n_rep")
    out = np.empty(n_rep)
    per = max(1, chunk // k)
    for start in range(0, n_rep, per):
        stop = min(n_rep, start + per)
        out[start:stop] = rng.gamma(b, 1.0, size=(stop - start, k)).max(axis=1)
    return out


def simulate_mm1_departures(n_departures: int, nu: float, n_rep: int, rng: np.random.Generator) -> np.ndarray:
    r"""Time S of the ``n_departures``-th departure after t = 0 from a FIFO M/M/1 queue in steady state
    (arrival rate 1, service rate ν > 1), ``n_rep`` independent replications, eq. (22).

    Steady state: the number in system at t = 0 is geometric, P(N = j) = (1 − ρ)ρ^j, ρ = 1/ν; by
    memorylessness the customer in service has an Exp(ν) residual. Departure k leaves at
    D_k = max(A_k, D_{k−1}) + service_k, A_k = 0 for the N waiting customers and the Poisson(1)
    arrival times after them. Vectorized over replications.

    >>> S = simulate_mm1_departures(5, 2.0, 4000, np.random.default_rng(1))
    >>> bool(abs(S.mean() - 5.0) < 0.25)                  # Burke: Erlang(5, 1), mean 5
    True
    """
    n, n_rep = _check_count(n_departures, "n_departures"), _check_count(n_rep, "n_rep")
    nu = float(nu)
    if not nu > 1:
        raise ValueError(f"the M/M/1 queue is stable only for service rate nu > 1 (arrival rate 1), got nu={nu:g}")
    rho = 1.0 / nu
    n0 = rng.geometric(1 - rho, size=n_rep) - 1  # number in system at t = 0 (support 0, 1, ...)
    arrivals = np.cumsum(rng.exponential(1.0, size=(n_rep, n)), axis=1)
    service = rng.exponential(1.0 / nu, size=(n_rep, n))
    depart = np.zeros(n_rep)
    for j in range(n):
        # customer j (0-based) is available at 0 if it was waiting, else at arrival number j − n0
        idx = np.clip(j - n0, 0, n - 1)
        avail = np.where(j < n0, 0.0, arrivals[np.arange(n_rep), idx])
        depart = np.maximum(avail, depart) + service[:, j]
    return depart


def erlang_quantile_bounds(b: int, q: int) -> tuple[float, float]:
    r"""Proposition 2: for integers q, b with (q − 1)b ≥ 55,
    :math:`\tfrac12\log(q-1)+\tfrac12\log b\le F_Y^{-1}(1-1/q)\le2\log(q-1)+2b\log(2b)`.

    Raises ValueError outside the hypothesis.

    >>> erlang_quantile_bounds(1, 10)
    Traceback (most recent call last):
    ...
    ValueError: Proposition 2 hypothesis (q - 1)b >= 55 violated: q=10, b=1
    """
    b, q = _check_shape(b), _check_count(q, "q")
    if (q - 1) * b < 55:
        raise ValueError(f"Proposition 2 hypothesis (q - 1)b >= 55 violated: q={q}, b={b}")
    lq = math.log(q - 1)
    return 0.5 * lq + 0.5 * math.log(b), 2 * lq + 2 * b * math.log(2 * b)


def quantile_estimate_18(b: int, k: int) -> float:
    """Eq. (18): F_Y^{-1}(1 − 1/k) ≈ log(k) + b.

    >>> quantile_estimate_18(3, 1)
    3.0
    """
    return math.log(_check_count(k)) + _check_shape(b)
