r"""Lower bounds that close a certificate's gap where the generic probe and the SDP's extraction fall short.

A certificate's ``lower`` is the value a concrete instance of the class reaches. The generic probes search
the whole class with a small budget; they miss two kinds of worst case that this module finds directly:

- **Extreme spectra** (:func:`extreme_spectrum_floor`): LocalUpdate's floor over two groups of identical
  clients in d = 2 whose spectra lie in {μ, L}, one group's eigenbasis rotated by an angle φ. When the message
  eigenvalue b(λ) = λ·q(1 − γ(λ + α)) nearly vanishes at one end of [μ, L] (Θ_K with γ ≫ 1/(KL): b(L) = L(1 −
  γL)^{K−1}), Σ p_i b(A_i) is nearly singular at small φ and the fixed point runs far from x*: the worst φ
  is ~10⁻⁶, a needle no random start finds. The search is a log-spaced scan of φ for every pair of spectra
  and every split of the clients into two groups, refined by a bounded scalar search; the centres are then
  exact (a top singular vector). The reported value is recomputed in 50-digit arithmetic from the fixed-point
  formula x̄ = (Σ p_i B_i)⁻¹ Σ p_i B_i c_i, B_i = U_i b(Λ_i) U_iᵀ (the message is Q_iA_i(x − c_i): Theorem 1
  of arXiv:2103.05032), on an instance that is in the class *exactly* (rotation by the rational Cayley angle
  t = tan(φ/2): cos φ = (1 − t²)/(1 + t²), sin φ = 2t/(1 + t²)). A driver cannot replay it: its slow
  direction contracts by 1 − O(b_min/b_max) per round (10⁻¹³ at the audit's setting), so the library's own
  float64 fixed point (:func:`fedtheory.algorithms.surrogate.minimizer_distance`) is reported beside it.
- **A probe started from an instance** (:func:`polish_error`): the error or function value after T rounds is
  maximized over the start x_0 and the centres *exactly* on the instance's Hessians (the maximum of a convex
  function over a sphere and balls: :func:`fedtheory.methods.probe.max_on_sphere` block ascent), then over
  the Hessians by a local search from the instance (rotations and eigenvalues, L-BFGS-B, deterministic
  budget). Started from the SDP's extracted worst case it keeps the extraction's value or improves it; started
  from the generic probe's it closes what the probe's local search left.
- **Identical clients** (:func:`identical_clients_lower`): every client f_i = λ‖x‖²/2 (zero heterogeneity, so an
  instance of every class) for λ on a fine grid of [μ, L]: the rate is the worst one-round contraction of a
  single curvature, the function value F(x_T) − F* from x_0 at distance D — where a method's worst case is one
  curvature (server GD on LocalUpdate: max_λ |1 − ηb(λ)|), a generic search with a few grid values misses it by
  the grid's spacing. The grid runs as one diagonal federation (the direct sum of the one-dimensional ones).

>>> v, inst, diag = extreme_spectrum_floor(1.0, 10.0, 50, 0.05, theta="K")
>>> v > 161_815, inst["source"], diag["float64_relative_difference"] < 1e-6
(True, 'extreme-spectrum-family', True)
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

__all__ = [
    "extreme_spectrum_floor",
    "polish_error",
    "polish_each",
    "message_range",
    "unsolved_reason",
    "local_update_lower_bounds",
    "identical_clients_lower",
    "DIGITS",
    "MESSAGE_RATIO_RESOLVED",
]

#: curvatures the identical-clients scan tries (geometric grids): the rate on [μ, L], the function value on
#: [max(μ, 1e-6·L), L] (μ = 0 allowed there)
SCAN_RATE_POINTS = 4001
SCAN_VALUE_POINTS = 401
#: coordinates of one batched run of the scan (the diagonal federation stores n dense d×d Hessians; measured
#: 0.05 s for the 4001-point rate scan at 128, 0.10 s at 256 and 512, 0.07 s at 64)
SCAN_CHUNK = 128
#: working precision (decimal digits) of the reported extreme-spectrum value
DIGITS = 50
#: at most this many group weights P are scanned (the most balanced: with many clients of unequal weights the
#: 2^(n−1) splits give many distinct P, and each costs a scan)
SPLITS_KEPT = 32
#: scan of the rotation angle φ: log-spaced over [10^-16, π/2] (the worst φ scales like √(b_min/b_max))
_ANGLES = 321
#: rows of the extreme-spectrum scan whose refined maximum is within this relative distance of the best get the
#: bounded scalar search (the others cannot hold the maximum: the refinement is exact to ~1e-15 relative there)
FAMILY_BAND = 1e-6


def message_range(mu: float, L: float, gamma: float, th, alpha: float = 0.0) -> tuple[float, float]:
    """(min b, max b) of the message eigenvalue b(λ) = λ·q(1 − γ(λ + α)) over a fine grid of [μ, L] plus both
    ends: their ratio says how hard the spectral SDP's data are to solve in double precision.

    >>> from fedtheory.algorithms.theta import Theta
    >>> lo, hi = message_range(1.0, 10.0, 0.05, Theta.last(50))
    >>> f"{lo:.3e}", f"{hi:.4f}"                  # b(L) = 10·0.5^49, b(μ) = 0.95^49
    ('1.776e-14', '0.0810')
    """
    from fedtheory.certify.certificate import message_eigenvalue

    grid = np.concatenate([np.linspace(mu, L, 2049), np.geomspace(max(mu, 1e-12 * L), L, 2049)])
    b = np.asarray(message_eigenvalue(grid, gamma, th, alpha), dtype=np.float64)
    return float(b.min()), float(b.max())


def _b_mp(lam, gamma, th, alpha):
    """b(λ) in mpmath, from Θ's weights: Θ_{1:K} and Θ_K in closed form, otherwise over the support."""
    import mpmath as mp

    s = mp.mpf(gamma) * (mp.mpf(lam) + mp.mpf(alpha))
    w = np.asarray(th.weights, dtype=np.float64)
    if th.kind == "uniform":
        q = mp.mpf(th.K) if s == 0 else (1 - (1 - s) ** th.K) / s
    elif th.kind == "last":
        q = (1 - s) ** (th.K - 1)
    else:
        q = mp.fsum(mp.mpf(float(w[k])) * (1 - s) ** k for k in np.flatnonzero(w))
    return mp.mpf(lam) * q


def _rotation(phi: np.ndarray) -> np.ndarray:
    c, s = np.cos(phi), np.sin(phi)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _pair_maps(s1, s2, bs1, bs2, phi, P):
    """T1 (x̄ − x* = T1 (c_1 − c_2)) and, per φ, the ζ map Z (ζ(c)² = ‖Z (c_1 − c_2)‖² at c_1 = (1−P)w,
    c_2 = −P w), for group 1 = diag(s1) and group 2 = R(φ) diag(s2) R(φ)ᵀ with weights (P, 1 − P); vectorized:
    the spectra (..., 2), φ and P broadcast together (many pairs of spectra and angles in one call)."""
    R = _rotation(np.asarray(phi, dtype=np.float64))
    eye = np.eye(2)

    def diag(v):
        return np.asarray(v, dtype=np.float64)[..., :, None] * eye

    P = np.asarray(P, dtype=np.float64)[..., None, None]
    R, A1, B1, A2d, B2d, P = np.broadcast_arrays(R, diag(s1), diag(bs1), diag(s2), diag(bs2), P)
    A2 = R @ A2d @ np.swapaxes(R, -1, -2)
    B2 = R @ B2d @ np.swapaxes(R, -1, -2)
    Q = 1.0 - P
    SA, SB = P * A1 + Q * A2, P * B1 + Q * B2
    T1 = P * (np.linalg.solve(SB, B1) - np.linalg.solve(SA, A1))
    # x* − c_1 = −Q SA⁻¹A_2 w, x* − c_2 = P SA⁻¹A_1 w  (w = c_1 − c_2)
    Z = np.concatenate(
        [np.sqrt(P) * Q * (A1 @ np.linalg.solve(SA, A2)), np.sqrt(Q) * P * (A2 @ np.linalg.solve(SA, A1))], axis=-2
    )
    return T1, Z


def _refine_max(f, lo: np.ndarray, hi: np.ndarray, xatol: float, points: int = 17) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the maximizer and maximum of ``f`` on [lo, hi] to ``xatol`` (f unimodal there, as a bounded scalar
    search assumes): every row at once, ``points`` evaluations per row and round, the bracket shrunk to the best
    point's neighbours (by (points − 1)/2 per round). ``f`` maps (rows, points) to values (non-finite: −inf).

    >>> x, v = _refine_max(lambda x: -((x - np.array([[0.3], [0.7]])) ** 2), np.zeros(2), np.ones(2), 1e-12)
    >>> np.round(x, 12).tolist(), bool(np.all(v <= 0))
    ([0.3, 0.7], True)
    """
    lo, hi = np.asarray(lo, dtype=np.float64).copy(), np.asarray(hi, dtype=np.float64).copy()
    rows = np.arange(lo.size)
    best_x, best_v = 0.5 * (lo + hi), np.full(lo.size, -math.inf)
    t = np.linspace(0.0, 1.0, points)
    while True:
        x = lo[:, None] + (hi - lo)[:, None] * t
        with np.errstate(all="ignore"):
            v = np.asarray(f(x), dtype=np.float64)
        v = np.where(np.isfinite(v), v, -np.inf)
        j = np.argmax(v, axis=1)
        better = v[rows, j] > best_v
        best_x, best_v = np.where(better, x[rows, j], best_x), np.where(better, v[rows, j], best_v)
        if float(np.max(hi - lo)) <= xatol:
            return best_x, best_v
        lo, hi = x[rows, np.maximum(j - 1, 0)], x[rows, np.minimum(j + 1, points - 1)]


def _ratio(T1, Z, het):
    """Floor per unit heterogeneity and the worst w, vectorized over the leading axis."""
    if het == "C":  # ‖c_i‖ ≤ C with c_1 = C v, c_2 = −C v: ‖T1 w‖, ‖w‖ = 2
        U, S, Vt = np.linalg.svd(T1)
        return 2.0 * S[..., 0], 2.0 * Vt[..., 0, :]
    Qz, Rz = np.linalg.qr(Z)  # max ‖T1 w‖/‖Z w‖ = σ_max(T1 Rz⁻¹)
    M = T1 @ np.linalg.inv(Rz)
    U, S, Vt = np.linalg.svd(M)
    w = np.linalg.solve(Rz, Vt[..., 0, :, None])[..., 0]
    return S[..., 0], w


def _splits(p: np.ndarray) -> list:
    """The distinct group weights P = Σ_{i∈S} p_i over the splits of the clients into two non-empty groups
    (identical clients within a group: an instance of the n-client class with the 2-group fixed point)."""
    n = len(p)
    if n > 16:
        raise ValueError(f"extreme_spectrum_floor enumerates the 2^(n-1) splits of the clients: n = {n} > 16")
    out: dict[float, np.ndarray] = {}
    for r in range(1, n):
        for S in itertools.combinations(range(1, n), r):  # client 0 in the other group: each split once
            mask = np.zeros(n, dtype=bool)
            mask[list(S)] = True
            P = float(p[mask].sum())
            out.setdefault(round(P, 15), mask)
    # every split gives a valid lower bound; beyond SPLITS_KEPT distinct weights, keep the most balanced ones
    return sorted(out.items(), key=lambda kv: abs(kv[0] - 0.5))[:SPLITS_KEPT]


def extreme_spectrum_floor(
    mu: float,
    L: float,
    K: int,
    gamma: float,
    *,
    theta: Any = "1:K",
    alpha: float = 0.0,
    p: Any = None,
    C: float = 1.0,
    zeta: float | None = None,
    angles: int = _ANGLES,
    smallest_angle: float = 1e-16,
) -> tuple[float, dict, dict]:
    r"""The largest LocalUpdate floor ‖x̄ − x*‖ over the extreme-spectrum family (module docstring): n clients
    with weights ``p`` (default 2 equal) split into two groups of identical clients, d = 2, spectra in {μ, L},
    group 2's eigenbasis rotated by φ; heterogeneity ‖c_i − o‖ ≤ C, or Σ p_i‖∇f_i(x*)‖² ≤ ζ² (``zeta``).

    Returns (value, instance, diagnostics): ``value`` in 50-digit arithmetic on the instance ``instance``
    (JSON: the federation, the rotation's Cayley parameter t, the spectra and the grouping); the diagnostics
    hold the library's float64 value on the same instance and their relative difference. The angle scan covers
    [``smallest_angle``, π/2] with ``angles`` log-spaced points.

    >>> v, inst, _ = extreme_spectrum_floor(1.0, 10.0, 2, 0.05)       # an ordinary setting: small, finite
    >>> 0 < v < 1, len(inst["problem"]["A"])
    (True, 2)
    >>> extreme_spectrum_floor(1.0, 10.0, 2, 0.2)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(L + alpha) violated: gamma=0.2, L=10.0, alpha=0.0
    """
    import mpmath as mp
    import scipy.optimize

    from fedtheory.algorithms.surrogate import minimizer_distance
    from fedtheory.certify.certificate import message_eigenvalue
    from fedtheory.certify.certificate import theta_weights as _theta
    from fedtheory.problems.quadratic import QuadraticFederation

    mu, L, gamma, alpha = float(mu), float(L), float(gamma), float(alpha)
    if not (0 < mu <= L and math.isfinite(L)):
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    if not 0 < gamma < 1.0 / (L + alpha) or alpha < 0:
        raise ValueError(f"hypothesis gamma < 1/(L + alpha) violated: gamma={gamma!r}, L={L!r}, alpha={alpha!r}")
    th = _theta(theta, int(K))
    pp = np.array([0.5, 0.5]) if p is None else np.asarray(p, dtype=np.float64).ravel()
    if pp.size < 2 or np.any(pp <= 0) or abs(pp.sum() - 1) > 1e-9:
        raise ValueError(f"p must be n >= 2 positive weights summing to 1, got {np.asarray(p).tolist()}")
    het = "C" if zeta is None else "zeta"
    scale = float(C if zeta is None else zeta)
    bmu, bL = (float(v) for v in message_eigenvalue(np.array([mu, L]), gamma, th, alpha))
    spectra = [(mu, mu), (mu, L), (L, L)]
    bof = {mu: bmu, L: bL}
    if not 0 < smallest_angle < math.pi / 2 or int(angles) < 3:
        raise ValueError(
            f"the angle scan needs 0 < smallest_angle < pi/2 and angles >= 3, got {smallest_angle!r}, {angles!r}"
        )
    logs = np.linspace(math.log10(smallest_angle), math.log10(math.pi / 2), int(angles))
    pairs = [
        (P, mask, s1, s2)
        for P, mask in _splits(pp)
        for s1, s2 in itertools.product(spectra, spectra)
        if not (s1[0] == s1[1] and s2[0] == s2[1] and s1 == s2)  # identical multiples of I: floor 0
    ]
    # every (split, pair of spectra) at once: rows of the scan and of the refinement
    S1, S2 = (np.array([pr[k] for pr in pairs], dtype=np.float64)[:, None, :] for k in (2, 3))
    bS1, bS2 = (np.vectorize(bof.__getitem__)(S) for S in (S1, S2))
    Pw = np.array([pr[0] for pr in pairs], dtype=np.float64)[:, None]

    def ratio_at(lg):  # (rows, points) of log10 φ → the floor per unit heterogeneity
        T1, Z = _pair_maps(S1, S2, bS1, bS2, 10.0**lg, Pw)
        return _ratio(T1, Z, het)[0]

    with np.errstate(all="ignore"):
        vals = ratio_at(np.broadcast_to(logs, (len(pairs), logs.size)))
    vals = np.where(np.isfinite(vals), vals, -np.inf)
    k = np.argmax(vals, axis=1)
    rows = np.arange(len(pairs))
    lo, hi = logs[np.maximum(k - 1, 0)], logs[np.minimum(k + 1, logs.size - 1)]
    # the scan's best angle refined in its bracket, every row at once: it tells which rows can hold the maximum
    # (a bounded scalar search on every row cost 10x); those few get the bounded scalar search itself, so the
    # angle and value reported are the ones it finds (the spectral engine's program is scaled by this value)
    refined = np.maximum(_refine_max(ratio_at, lo, hi, 1e-10)[1], vals[rows, k])
    top = float(np.max(refined)) if refined.size else -math.inf
    band = np.flatnonzero(refined >= top - FAMILY_BAND * abs(top)) if math.isfinite(top) else rows
    best: tuple[float, Any] = (-math.inf, None)
    for r in band:
        P, mask, s1, s2 = pairs[r]
        args = (np.array(s1), np.array(s2), np.array([bof[x] for x in s1]), np.array([bof[x] for x in s2]))

        def ratio_one(lg, args=args, P=P):
            T1, Z = _pair_maps(*args, np.atleast_1d(10.0 ** np.asarray(lg)), P)
            return _ratio(T1, Z, het)[0]

        res = scipy.optimize.minimize_scalar(
            lambda x: -float(ratio_one(x)[0]), bounds=(lo[r], hi[r]), method="bounded", options={"xatol": 1e-10}
        )
        grid = float(vals[r, k[r]])
        lg, v = (float(res.x), -float(res.fun)) if -res.fun > grid else (float(logs[k[r]]), grid)
        if v > best[0]:
            best = (v, (P, mask, s1, s2, lg, args))
    v64, (P, mask, s1, s2, lg, args) = best
    phi = 10.0**lg
    t = math.tan(phi / 2)
    spectrum_1, spectrum_2, message_1, message_2 = args  # named: mypy miscounts *args + more
    T1, Z = _pair_maps(spectrum_1, spectrum_2, message_1, message_2, np.array([phi]), P)
    w = _ratio(T1, Z, het)[1][0]

    # the instance, exactly in the class: rational rotation from t, spectra exactly s1, s2, centres scaled exactly
    mp.mp.dps = DIGITS
    tt = mp.mpf(t)
    cs, sn = (1 - tt**2) / (1 + tt**2), 2 * tt / (1 + tt**2)
    R = mp.matrix([[cs, -sn], [sn, cs]])
    A1, A2 = mp.diag([mp.mpf(x) for x in s1]), R * mp.diag([mp.mpf(x) for x in s2]) * R.T
    B1 = mp.diag([_b_mp(x, gamma, th, alpha) for x in s1])
    B2 = R * mp.diag([_b_mp(x, gamma, th, alpha) for x in s2]) * R.T
    Pm = mp.fsum(mp.mpf(float(x)) for x in pp[mask])
    Qm = 1 - Pm
    # the centres as stored (float64), in the class: ‖c_i‖ ≤ C checked exactly, or ζ(c) = ζ up to the stored
    # rounding (the floor is homogeneous in c, so the value is reported per unit ζ(c) times ζ)
    w = np.asarray(w, dtype=np.float64)
    if het == "C":
        v = w / np.linalg.norm(w) * scale * (1 - 4e-16)
        c1f, c2f = v, -v
    else:
        c1f, c2f = float(Qm) * w, -float(Pm) * w
    c1, c2 = (mp.matrix([mp.mpf(float(x)) for x in cf]) for cf in (c1f, c2f))
    if het == "C" and max(mp.norm(c1), mp.norm(c2)) > scale:
        raise ArithmeticError("a stored centre left the ball ‖c_i‖ <= C")  # (1 − 4e-16) prevents it
    xbar = mp.lu_solve(Pm * B1 + Qm * B2, Pm * B1 * c1 + Qm * B2 * c2)
    xs = mp.lu_solve(Pm * A1 + Qm * A2, Pm * A1 * c1 + Qm * A2 * c2)
    value = mp.norm(xbar - xs)
    if het == "zeta":
        z = mp.sqrt(Pm * mp.norm(A1 * (xs - c1)) ** 2 + Qm * mp.norm(A2 * (xs - c2)) ** 2)
        f = mp.mpf(scale) / z
        value = value * f
        c1f, c2f = c1f * float(f), c2f * float(f)
    value = float(value)

    n = pp.size
    U2 = np.array([[float(cs), -float(sn)], [float(sn), float(cs)]])
    # group 1 is weight P (the clients in mask), group 2 the rest: mask picks group 1's data
    c = np.array([c1f if mask[i] else c2f for i in range(n)], dtype=np.float64)
    lam = np.array([list(s1) if mask[i] else list(s2) for i in range(n)], dtype=np.float64)
    V = np.array([np.eye(2) if mask[i] else U2 for i in range(n)])
    order = np.argsort(lam, axis=1, kind="stable")
    lam = np.take_along_axis(lam, order, axis=1)
    V = np.take_along_axis(V, order[:, None, :], axis=2)
    A = 0.5 * (np.einsum("nij,nj,nkj->nik", V, lam, V) + np.einsum("nij,nj,nkj->nki", V, lam, V))
    fed = QuadraticFederation(A=A, c=c, p=pp, eigvals=lam, eigvecs=V)
    try:
        f64 = float(minimizer_distance(fed, alpha, gamma, th))
    except (ValueError, np.linalg.LinAlgError):
        f64 = math.nan
    diag = {
        "search_value": v64 * scale,
        "float64_value": f64,
        "float64_relative_difference": abs(f64 - value) / value if value > 0 else abs(f64),
        "message_range": [min(bmu, bL), max(bmu, bL)],
        "angle": phi,
    }
    instance = {
        "problem": fed.to_json(),
        "theta": th.to_json(),
        "alpha": alpha,
        "gamma": gamma,
        "rotation_t": t,
        "group_spectra": [list(s1), list(s2)],
        "group_1": mask.tolist(),
        "heterogeneity": {"model": het, "value": scale},
        "digits": DIGITS,
        "source": "extreme-spectrum-family",
        "note": "group 1 (clients where group_1 is true) has A = diag(spectra[0]); group 2 has "
        "A = R diag(spectra[1]) R^T with R the rotation of Cayley parameter t "
        "(cos = (1-t^2)/(1+t^2), sin = 2t/(1+t^2)); with the stored centres c, the value is "
        "computed from these exact data in 50-digit arithmetic (A and eigvecs are stored rounded "
        "to float64)",
    }
    return value, instance, diag


# --------------------------------------------------------------------------------------------
# error and function value: a probe started from an instance
# --------------------------------------------------------------------------------------------


def _max_blocks(T: np.ndarray, sizes: list, sweeps: int = 60) -> tuple[float, np.ndarray]:
    """max ‖T w‖ over w = (w_1, ..., w_m) with every ‖w_j‖ = 1 (blocks of the given sizes): a convex function, so
    block-coordinate ascent with each block an exact :func:`~fedtheory.methods.probe.max_on_sphere` step, from
    the top right singular vector split into blocks (never decreasing)."""
    from fedtheory.methods.probe import max_on_sphere

    if not np.any(T):
        return 0.0, np.concatenate([np.eye(k)[0] for k in sizes])
    edges = np.cumsum([0] + list(sizes))
    w = np.linalg.svd(T)[2][0].copy()
    for j in range(len(sizes)):
        blk = w[edges[j] : edges[j + 1]]
        nrm = float(np.linalg.norm(blk))
        w[edges[j] : edges[j + 1]] = blk / nrm if nrm > 1e-12 else np.eye(sizes[j])[0]
    val = float(np.linalg.norm(T @ w))
    for _ in range(sweeps):
        old = val
        for j in range(len(sizes)):
            Tj = T[:, edges[j] : edges[j + 1]]
            rest = T @ w - Tj @ w[edges[j] : edges[j + 1]]
            _, w[edges[j] : edges[j + 1]] = max_on_sphere(Tj, rest)
        val = float(np.linalg.norm(T @ w))
        if val <= old * (1 + 1e-15):
            break
    return val, w


def _best_start_and_centres(m, q, measure, rounds, D, het, scale, batched):
    """On the Hessians of ``q``: the worst (x_0 − x* = D u, centres) that block ascent finds for the error or function
    value after ``rounds`` rounds (out_T − x* = D G u + E vec(c), both linear: :func:`fedtheory.methods.probe._error_linear`).
    C model: ‖c_i‖ ≤ C (o = 0, which common shifts make no loss); ζ model: ζ(c) = ‖Z vec(c)‖ ≤ ζ with E and Z
    both blind to common shifts, so c = V_r S_r⁻¹ y over the ball ‖y‖ ≤ ζ. Returns (value, u, c)."""
    from fedtheory.methods.probe import _error_linear, _minimizer_matrix, _sqrt_psd

    n, d = q.n, q.d
    G, E = _error_linear(m, q, int(rounds), batched)
    if het == "C":
        Tm, sizes, back = np.hstack([float(D) * G, scale * E]), [d] * (n + 1), None
    else:
        X = _minimizer_matrix(q)
        Z = np.vstack([math.sqrt(q.p[i]) * q.A[i] @ (X - np.eye(n * d)[i * d : (i + 1) * d]) for i in range(n)])
        _, sz, Vzt = np.linalg.svd(Z)
        r = int(np.sum(sz > 1e-12 * sz[0]))
        back = Vzt[:r].T / sz[:r][None, :]  # vec(c) = back @ y, ζ(c) = ‖y‖
        Tm, sizes = np.hstack([float(D) * G, scale * E @ back]), [d, r]
    if measure == "function-value":
        Tm = _sqrt_psd(np.einsum("i,ijk->jk", q.p, q.A)) @ Tm
    v, w = _max_blocks(Tm, sizes)
    u = w[:d]
    c = (scale * w[d:]).reshape(n, d) if het == "C" else (scale * (back @ w[d:])).reshape(n, d)
    return (v if measure == "error" else 0.5 * v * v), u, c


def polish_error(
    method: Any,
    federation: Any,
    *,
    measure: str,
    mu: float,
    L: float,
    rounds: int,
    D: float,
    C: float = 1.0,
    zeta: float | None = None,
    iterations: int = 0,
) -> tuple[float, dict, dict]:
    r"""A lower bound for the error (‖out_T − x*‖) or function value (F(out_T) − F*) of a linear ``method`` after
    ``rounds`` rounds from ‖x_0 − x*‖ ≤ D (``method``: a :class:`~fedtheory.methods.ir.Method`, or a registered
    name whose factory needs no hyperparameters), started from ``federation`` (a
    :class:`~fedtheory.problems.quadratic.QuadraticFederation` or its JSON: typically the SDP's extracted worst
    case or a probe's instance; its centres are ignored).

    First, on the federation's own Hessians, x_0 and the centres are chosen by block ascent on a convex function
    over a sphere and balls, each block step exact: a local maximum, usually the worst (measured: within 1e-8 of the
    SDP from the extracted instances of the error), but not guaranteed to beat the federation's own x_0 and centres
    (at heavy ball's function value it fell 6e-5 short) — so the certificates keep the larger of the two. Then, with ``iterations`` > 0, the Hessians
    move (per client a rotation and the eigenvalues, in the class by construction) under L-BFGS-B from the
    federation, with the same exact inner choice. The value is recomputed through :func:`fedtheory.methods.run`
    on the returned instance (:func:`fedtheory.methods.probe.replay` reproduces it).

    Returns (value, instance, diagnostics).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> import numpy as np
    >>> q = QuadraticFederation(A=[np.diag([1.0, 10.0]), np.diag([10.0, 1.0])], c=np.zeros((2, 2)), p=[0.5, 0.5])
    >>> from fedtheory.methods import get
    >>> from fedtheory.methods.probe import replay
    >>> m = get("fedavg", K=2, gamma=0.05)
    >>> v, inst, _ = polish_error(m, q, measure="error", mu=1.0, L=10.0, rounds=2, D=1.0)
    >>> 0 < v < 1, replay(inst, method=m) == v
    (True, True)
    """
    import scipy.optimize

    from fedtheory.methods import get
    from fedtheory.methods.probe import _Space, _fed, _fast_fed, _method_spec, _value
    from fedtheory.problems.quadratic import QuadraticFederation

    if measure not in ("error", "function-value"):
        raise ValueError(f"polish_error measures 'error' or 'function-value', got {measure!r}")
    q0 = federation if isinstance(federation, QuadraticFederation) else QuadraticFederation.from_json(federation)
    if not (0 < mu <= L):
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    ev = np.asarray(q0.eigvals, dtype=np.float64)
    if ev.min() < mu * (1 - 1e-9) or ev.max() > L * (1 + 1e-9):
        raise ValueError(
            f"the federation's spectrum [{ev.min():.6g}, {ev.max():.6g}] is not inside [mu, L] = [{mu:g}, {L:g}]"
        )
    m = get(method)
    het = "C" if zeta is None else "zeta"
    scale = float(C if zeta is None else zeta)
    n, d = q0.n, q0.d
    lam0 = np.clip(ev, mu, L)
    V0 = np.asarray(q0.eigvecs, dtype=np.float64)
    space = _Space(n, d, mu, L, np.asarray(q0.p, dtype=np.float64))
    zl0 = space.spectrum_z(lam0)

    def decode(z, fast=True):
        lam, V = [], []
        for i in range(n):
            zi = z[i * space.per : (i + 1) * space.per]
            li = mu + (L - mu) * (1 + np.sin(zi[:d])) / 2
            Ui = space.rotation(zi[d:]) @ V0[i]
            order = np.argsort(li, kind="stable")
            lam.append(li[order])
            V.append(Ui[:, order])
        lam, V = np.array(lam), np.array(V)
        A = np.einsum("nij,nj,nkj->nik", V, lam, V)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        zero = np.zeros((n, d))
        if fast:
            return _fast_fed(A, zero, q0.p, lam, V)
        return QuadraticFederation(A=A, c=zero, p=q0.p, eigvals=lam, eigvecs=V)

    z0 = np.zeros(space.size)
    for i in range(n):
        z0[i * space.per : i * space.per + d] = zl0[i]
    start_value = _best_start_and_centres(m, decode(z0), measure, rounds, D, het, scale, True)[0]
    evaluations = 1
    z_best, best = z0, start_value
    if iterations > 0:

        def neg(z):
            nonlocal evaluations
            evaluations += 1
            try:
                return -_best_start_and_centres(m, decode(z), measure, rounds, D, het, scale, True)[0]
            except (ValueError, np.linalg.LinAlgError):
                return 0.0

        res = scipy.optimize.minimize(
            neg,
            z0,
            method="L-BFGS-B",
            options={"maxiter": int(iterations), "maxfun": int(iterations) * (space.size + 1)},
        )
        if -res.fun > best:
            z_best, best = np.asarray(res.x), -float(res.fun)
    q = decode(z_best, fast=False)
    _, u, c = _best_start_and_centres(m, q, measure, rounds, D, het, scale, False)
    qs = _fed(q, c)
    xs = qs.x_star()
    instance = {
        "measure": measure,
        "method": _method_spec(m),
        "mu": float(mu),
        "L": float(L),
        "p": np.asarray(q0.p).tolist(),
        "C": None if zeta is not None else scale,
        "zeta": zeta,
        "rounds": int(rounds),
        "D": float(D),
        "dim": d,
        "federation": qs.to_json(),
        "x0": (xs + float(D) * u / max(float(np.linalg.norm(u)), 1e-300)).tolist(),
        "source": "polished-from-instance",
    }
    value = float(_value(m, instance)[0])
    from fedtheory.certify.certificate import heterogeneity_scale as _het_scale

    diag = {
        "start_value": start_value,
        "search_value": best,
        "evaluations": evaluations,
        "heterogeneity": _het_scale(qs, het) if het == "zeta" else float(np.linalg.norm(c, axis=1).max()),
        "start_distance": float(np.linalg.norm(np.asarray(instance["x0"]) - xs)),
    }
    return value, instance, diag


#: below this ratio b_min/b_max the spectral SDP's data span more than an interior-point solver resolves in
#: double precision (its own relative accuracy is ~1e-8): the reason a certificate names when it has no bound
MESSAGE_RATIO_RESOLVED = 1e-8


def unsolved_reason(mu: float, L: float, gamma: float, th, solver: str, lower: float | None, alpha: float = 0.0) -> str:
    """The note of a certificate whose SDP was not solved reliably: what the solver said, whether the message
    eigenvalue's range explains it, that no upper bound is claimed, and the best lower bound known.

    >>> from fedtheory.algorithms.theta import Theta
    >>> text = unsolved_reason(1.0, 10.0, 0.05, Theta.last(50), "CLARABEL failed", 1.0e6)
    >>> text.startswith("no valid upper bound: the SDP was not solved reliably (CLARABEL failed)")
    True
    >>> "message eigenvalue" in text, text.endswith("best lower bound known: 1000000.0")
    (True, True)
    """
    lo, hi = message_range(mu, L, gamma, th, alpha)
    ratio = lo / hi if hi > 0 else 0.0
    if mu == 0:  # b(0) = 0 at μ = 0: the range says nothing about the solver
        ratio = 1.0
    text = f"no valid upper bound: the SDP was not solved reliably ({solver})"
    if ratio < MESSAGE_RATIO_RESOLVED:
        text += (
            f"; the message eigenvalue b(λ) spans [{lo:.3g}, {hi:.3g}] on [μ, L] (ratio {ratio:.2g} < "
            f"{MESSAGE_RATIO_RESOLVED:g}): the nearly vanishing end is below what the solver resolves in double "
            "precision, and it is exactly what makes Σ p_i b(A_i) nearly singular and the worst case large"
        )
    text += "; best lower bound known: " + ("none" if lower is None else repr(lower))
    return text


# --------------------------------------------------------------------------------------------
# the hook a certificate calls while it assembles its lower bound
# --------------------------------------------------------------------------------------------


def local_update_lower_bounds(
    measure: str,
    *,
    mu: float,
    L: float,
    K: int,
    gamma: float,
    theta: Any,
    alpha: float,
    p: Any,
    C: float,
    zeta: float | None,
    eta: float | None = None,
    momentum: float | None = None,
    server: str = "gd",
    rounds: int | None = None,
    D: float | None = None,
    start_from: Any = (),
) -> list:
    """The lower bounds of this module for LocalUpdate, as (label, value or None, instance, diagnostics):
    the floor's extreme-spectrum family (:func:`extreme_spectrum_floor`), and for the error and function value
    :func:`polish_error` started from each federation in ``start_from`` (QuadraticFederation JSON: the SDP's
    extracted worst case, the probe's instance). A bound that cannot be computed here comes back as None with
    the reason in its diagnostics; the caller keeps the largest value.

    >>> [(lab, round(v, 4)) for lab, v, _, _ in local_update_lower_bounds("floor", mu=1.0, L=10.0, K=2, gamma=0.05,
    ...   theta="1:K", alpha=0.0, p=None, C=1.0, zeta=None)]
    [('extreme_spectrum_lower', 0.2623)]
    """
    out: list[tuple[str, float | None, dict | None, dict]] = []
    if measure == "floor":
        try:
            v, inst, diag = extreme_spectrum_floor(mu, L, K, gamma, theta=theta, alpha=alpha, p=p, C=C, zeta=zeta)
        except (ValueError, np.linalg.LinAlgError, ZeroDivisionError) as err:
            v, inst, diag = None, None, {"error": str(err)}
        out.append(("extreme_spectrum_lower", v, inst, diag))
    elif measure in ("error", "function-value") and eta is not None:
        if rounds is None or D is None:
            raise ValueError(f"the {measure} lower bounds need rounds and D, got rounds={rounds!r}, D={D!r}")
        from fedtheory.certify.certificate import theta_weights as _theta
        from fedtheory.methods.library import local_update

        m = local_update(
            theta=_theta(theta, int(K)),
            gamma=gamma,
            alpha=alpha,
            eta=eta,
            beta=None if server == "gd" else momentum,
            server=server,
        )
        polished = polish_each(m, start_from, measure=measure, mu=mu, L=L, rounds=rounds, D=D, C=C, zeta=zeta)
        out.extend((f"polished_lower_{k}", v, inst, diag) for k, (v, inst, diag) in enumerate(polished))
    return out


def polish_each(
    m: Any, starts: Any, *, measure: str, mu: float, L: float, rounds: int, D: float, C: float, zeta: float | None
) -> list:
    """:func:`polish_error` started from each federation in ``starts``, as (value or None, instance, diagnostics):
    a start the polish cannot use gives None with the reason in its diagnostics, so one bad start does not cost
    the others.

    >>> from fedtheory.methods import get
    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> q = QuadraticFederation(A=[np.diag([1.0, 10.0]), np.diag([10.0, 1.0])], c=np.zeros((2, 2)), p=[0.5, 0.5])
    >>> bad = QuadraticFederation(A=[np.diag([1.0, 20.0])] * 2, c=np.zeros((2, 2)), p=[0.5, 0.5])  # L = 20 > 10
    >>> [(v is None, "error" in diag) for v, _, diag in polish_each(get("fedavg", K=2, gamma=0.05), [q, bad],
    ...     measure="error", mu=1.0, L=10.0, rounds=2, D=1.0, C=1.0, zeta=None)]
    [(False, False), (True, True)]
    """
    out: list[tuple[float | None, dict | None, dict]] = []
    for fed in starts:
        try:
            out.append(
                polish_error(m, fed, measure=measure, mu=mu, L=L, rounds=int(rounds), D=float(D), C=C, zeta=zeta)
            )
        except (ValueError, np.linalg.LinAlgError) as err:
            out.append((None, None, {"error": str(err)}))
    return out


# --------------------------------------------------------------------------------------------
# identical clients: one curvature at a time, any linear method
# --------------------------------------------------------------------------------------------


def _identical_values(m, measure: str, lams: np.ndarray, p: np.ndarray, rounds: int | None, D: float | None):
    """The measure on every coordinate of the diagonal federation of identical clients A_i = diag(lams), c_i = 0
    (a direct sum of one-dimensional federations, which a linear method treats coordinate by coordinate):
    ``"rate"``: the operator norm of one round on each coordinate's state block in the state norm (one run per
    block basis vector, all coordinates at once); ``"function-value"``: ½λ_j·out_T,j² from x_0 = D·1."""
    from fedtheory.methods import run
    from fedtheory.methods.probe import _fast_fed
    from fedtheory.problems.quadratic import QuadraticFederation

    n, d = len(p), len(lams)
    A, lam, V = np.broadcast_to(np.diag(lams), (n, d, d)), np.broadcast_to(lams, (n, d)), np.eye(d)[None].repeat(n, 0)
    if d == 1:  # the reported value: a validated federation
        fed = QuadraticFederation(A=A.copy(), c=np.zeros((n, d)), p=p)
    else:  # the scan's direct sum, diagonal by construction (validating its decomposition costs O(n d³))
        fed = _fast_fed(A.copy(), np.zeros((n, d)), p, lam.copy(), V)
    if measure == "function-value":
        assert rounds is not None and D is not None  # identical_clients_lower checks both
        out = np.asarray(run(m, fed, np.full(d, float(D)), int(rounds), path="step").x[-1])
        return 0.5 * lams * out**2
    # basis of one coordinate's state block: each server variable, then each client variable of each client
    basis = [(v, None) for v in m.server] + [(v, i) for v in m.client for i in range(n)]
    zero = {v: np.zeros(d) for v in m.server} | {v: np.zeros((n, d)) for v in m.client}
    one = {v: np.ones(1) for v in m.server} | {v: np.ones((n, 1)) for v in m.client}
    weights = []
    M = np.zeros((d, len(basis), len(basis)))
    for k, (v, i) in enumerate(basis):
        state = {u: a.copy() for u, a in zero.items()}
        unit = {u: np.zeros_like(a) for u, a in one.items()}
        if i is None:
            state[v][:] = 1.0
            unit[v][:] = 1.0
        else:
            state[v][i] = 1.0
            unit[v][i] = 1.0
        weights.append(m.state_norm_sq({u: unit[u] for u in m.server}, {u: unit[u] for u in m.client}, p))
        after = run(m, fed, np.zeros(d), 1, state=state, path="step").state
        M[:, :, k] = np.stack([np.asarray(after[u]) if j is None else np.asarray(after[u])[j] for u, j in basis], 1)
    root = np.sqrt(np.asarray(weights))
    return np.linalg.norm(root[None, :, None] * M / root[None, None, :], ord=2, axis=(1, 2))


def identical_clients_lower(
    method: Any,
    measure: str,
    *,
    mu: float,
    L: float,
    p: Any,
    rounds: int | None = None,
    D: float | None = None,
) -> tuple[float | None, dict | None, dict]:
    """Lower bound from identical clients f_i = λ‖x‖²/2 (zero heterogeneity: in every class) maximized over λ on a
    geometric grid — ``"rate"``: one round's contraction on a single curvature in the method's state norm;
    ``"function-value"``: F(x_T) − F* after ``rounds`` from x_0 = D. The best λ is replayed by
    :func:`fedtheory.methods.run` on its own one-dimensional federation, whose value is returned with the
    instance (JSON) and diagnostics; (None, None, diagnostics) for the other measures.

    >>> from fedtheory.methods import get
    >>> v, inst, _ = identical_clients_lower(get("fedavg", K=2, gamma=0.05), "rate", mu=1.0, L=10.0, p=[0.5, 0.5])
    >>> round(v, 6), inst["lambda"]                     # server GD at η = γ: |1 − ηb(μ)| = (1 − γμ)²
    (0.9025, 1.0)
    """
    from fedtheory.problems.quadratic import QuadraticFederation

    if measure not in ("rate", "function-value"):
        return None, None, {"skipped": f"no identical-clients scan for {measure!r}"}
    if measure == "function-value" and (rounds is None or D is None):
        raise ValueError(f"the function value needs rounds and D, got rounds={rounds!r}, D={D!r}")
    pp = np.asarray(p, dtype=np.float64)
    if measure == "rate":
        grid = np.geomspace(mu, L, SCAN_RATE_POINTS)
    else:
        grid = np.geomspace(max(mu, 1e-6 * L), L, SCAN_VALUE_POINTS)
    vals = np.concatenate(
        [
            _identical_values(method, measure, grid[k : k + SCAN_CHUNK], pp, rounds, D)
            for k in range(0, len(grid), SCAN_CHUNK)
        ]
    )
    lam = float(grid[int(np.argmax(vals))])
    value = float(_identical_values(method, measure, np.array([lam]), pp, rounds, D)[0])  # replayed on its own
    n = len(pp)
    prob = QuadraticFederation(A=np.full((n, 1, 1), lam), c=np.zeros((n, 1)), p=pp)
    inst: dict = {"problem": prob.to_json(), "method": method.name, "lambda": lam, "source": "identical-clients"}
    if measure == "function-value":
        assert rounds is not None and D is not None  # checked above
        inst.update(x0=[float(D)], rounds=int(rounds))
    return value, inst, {"grid_points": len(grid), "grid_best": float(np.max(vals))}
