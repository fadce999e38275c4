r"""Certified worst cases of LocalUpdate (FedAvg, FedProx, ...) on heterogeneous clients: federated PEP.

Charles & Konečný (arXiv:2103.05032) bound how far LocalUpdate's fixed point x̄ = x*(α, γ, Θ) sits from the
minimizer x* (Lemma 5, Theorem 4, Corollary 1); those bounds fail for d ≥ 2 (see the package's localupdate
claims). This module computes the true worst case instead, as a *certificate*: an upper bound from a convex
program over the whole class and a lower bound from a concrete instance replayed through the real driver
:func:`~fedtheory.algorithms.local_update.run_local_update`.

The class: n clients f_i, weights p, with

- ``function_class="quadratic"``: f_i(x) = ½(x − c_i)ᵀA_i(x − c_i), μI ⪯ A_i ⪯ LI (any dimension);
- ``function_class="smooth-strongly-convex"``: f_i L-smooth and μ-strongly convex with minimizer c_i;

and heterogeneity either ‖c_i − o‖ ≤ C for some point o (the paper's Assumption 2, translated), or
Σ_i p_i‖∇f_i(x*)‖² ≤ ζ² (``zeta``). The algorithm: K local steps of size γ with proximal weight α, message
Σ_k θ_k g_k (weights Θ), server step η (gradient descent, heavy ball or Nesterov for ``measure="error"``).

Measures (``measure``):

- ``"floor"``: Δ = sup ‖x̄ − x*‖, the accuracy floor (η and momentum do not move the fixed point);
- ``"rate"``: ρ = sup ‖R(x) − R(x')‖/‖x − x'‖ for one server-GD round R;
- ``"error"``: sup ‖x_T − x*‖ after T = ``rounds`` rounds from ‖x_0 − x*‖ ≤ D;
- ``"function-value"``: sup Σ_i p_i(f_i(x_T) − f_i(x*)) = F(x_T) − F* after T rounds from ‖x_0 − x*‖ ≤ D
  (PEPit engine). Here μ = 0 is allowed where the PEP stays bounded: at K = 1 (the round is gradient descent on
  F, whatever the heterogeneity) or under the ζ model (gradients at x* bounded, so every iterate of finitely many
  smooth steps is). With the C model, μ = 0 and K ≥ 2 it is unbounded (two flat clients with minimizers near o
  can have opposite gradients of any size at a far-away x*, and local steps drift with them): ValueError.

Two engines compute the upper bound:

``engine="spectral"`` (quadratics; any K, including K = 10⁶): a client enters the problem only through
vectors u_1..u_r (the points where it is queried, minus c_i) and their images under two functions of its
Hessian, s(A_i) = A_i and t(A_i) = b(A_i) with b(λ) = λ·q(1 − γ(λ + α)) the message eigenvalue (Theorem 1:
the message is Q_iA_i(x − c_i)). A Gram matrix of such vectors is realizable by a symmetric A_i with spectrum in
[μ, L] **iff** it equals ∫ Φ(λ) dM(λ) Φ(λ)ᵀ for an r×r positive semidefinite matrix measure M on [μ, L]
(Φ stacks the identity and the rows s(λ), t(λ)): *only if* from A_i's spectral decomposition, *if* because a
finite atomic M = Σ_j δ_{λ_j} m_j m_jᵀ is realized by A = Σ_j λ_j f_j f_jᵀ + μ(I − Σ_j f_j f_jᵀ) on
orthonormal f_j, moved onto the given vectors by an isometry of a large enough space (the other clients'
vectors are untouched, each client has its own isometry). The Gram entries are the moments
∫{1, s, t, s², st, t²} dM on the curve Γ = {(λ, b(λ))}. We split [μ, L] into pieces, give each piece its own
moments and relax "supported on the piece of Γ" to the valid inequalities s ∈ [l, h], t between the chord and
the tangents at both ends (b is checked concave or convex on each piece) and all their pairwise products
(Sherali–Adams) plus the order-one moment matrix. For the floor, t is b's deviation from its chord, scaled to
one, and the fixed-point relation is eliminated at its largest coefficient (:func:`_spectral_floor`), so the
program stays well scaled from γ → 0 (b almost linear) to Kγμ ≫ 1 (b almost constant). Every realizable configuration satisfies the relaxation, so
its optimum is an **upper bound**; it tightens as pieces shrink (``pieces``). Tangent slopes are central
differences, so each tangent is lifted by a margin 10⁻⁸·max b that dominates their error. The program is written
straight into Clarabel's conic data (:class:`_SpectralPEP`; cvxpy's canonicalization of it cost 10-50× the solve).

``engine="pepit"`` (both classes; small K): for the quadratic class (μ > 0) the certificate *is*
:func:`fedtheory.methods.pep.certify` on LocalUpdate's description — its PEP, its extracted worst case, probe,
polish and extreme-spectrum family — relabelled with this module's claim id and hypotheses (one PEP builder, one
lower-bound path); for the smooth class, LocalUpdate's PEP compiled from its description
(:func:`fedtheory.methods.library.local_update`) by the one PEP builder, :func:`fedtheory.methods.pep.build_pep`:
one leaf per client (:class:`~PEPit.functions.SmoothStronglyConvexFunction`, or the quadratic class of Bousselmi,
Hendrickx & Glineur, whose interpolation is exact), the fixed point imposed by eliminating a gradient
(Gauss–Jordan at the largest coefficient; never as ‖q‖² = 0, which has no interior and stalls interior-point
solvers). Its SDP is exact; the worst case's named points (``pb.fed_points``) feed the replays below. PEPit's cvxpy
wrapper writes every LMI entry twice (M[i, j] and M[j, i]), which makes Clarabel's equality system rank
deficient; :class:`_SymmetricLMIWrapper` sends each entry once.

:func:`certify_sdane` writes S-DANE and Acc-S-DANE (two clients under δ-SOD, exact or inexact local solves) with
the PEP compiled from the methods' descriptions (:func:`fedtheory.methods.pep.build_pep`, class ``"sod"``: the local
points defined by the prox, inexactness as free subproblem gradients), solved, class-checked and replayed as
:func:`fedtheory.certify.pep.two_client_sdane` does (shared: :func:`fedtheory.certify.pep.solve_sdane`).

Every certificate, whatever the engine and class, is :func:`fedtheory.methods.pep.certify` on LocalUpdate's
description (:func:`fedtheory.methods.library.local_update`) — the upper bound from the engine above, the lower
bounds from the one path — relabelled with this module's claim id and hypotheses. The lower bounds (see
:mod:`fedtheory.methods.pep` for each): the probe over concrete quadratic federations
(:func:`fedtheory.methods.probe.lower_bound`, ``details["probe_lower"]``; a quadratic instance is also one of the
smooth class); the PEP's worst case rebuilt as a :class:`~fedtheory.problems.quadratic.QuadraticFederation`
(quadratic class, PEPit engine, and the spectral engine's error while K·T·n ≤ 16: ``details["extracted_lower"]``)
or as explicit F_{μ,L} clients (:class:`~fedtheory.certify.interpolation.InterpolatedFederation`, smooth class:
``details["smooth_lower"]``, the best quadratic one in ``details["quadratic_lower"]``), replayed through the
driver; identical clients on a fine grid of curvatures for the rate and the function value
(``details["identical_clients_lower"]``); and from :mod:`fedtheory.certify.lower_bounds` the floor's
extreme-spectrum family (``details["extreme_spectrum_lower"]``: two groups of clients, spectra {μ, L}, one
rotated, 50-digit arithmetic — it finds the needle-thin worst case at Θ_K with γ ≫ 1/(KL), where the SDP is not
solved; it also scales the spectral floor program) and, for the quadratic error and function value, a probe
started from the instances found (``details["polished_lower_k"]``). The largest is ``lower``, its instance
(JSON, replayable) ``instance``. A certificate without an upper bound says why in ``notes``.

Honesty: every SDP goes to Clarabel (retries), then to SCS when Clarabel is not "optimal"; a value both do not
agree on is ``status="unreliable"`` with ``value=None`` — never a bound. A certificate whose replayed lower
bound exceeds the upper bound by more than the solver tolerance is also unreliable.

>>> cert = certify_local_update(1.0, 10.0, 4, 0.05, pieces=16, probe_starts=2, seed=0)
>>> cert.status, cert.lower <= cert.value * (1 + 1e-6), cert.gap < 0.05
('certified', True, True)
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

# the shared pieces live one level down (no import circle with fedtheory.certify.commuting); the private names
# stay importable from here for the content files that use them
from fedtheory.certify.certificate import CLASSES, ENGINES, MEASURES, Certificate, message_eigenvalue
from fedtheory.certify.certificate import check_hypotheses as _check
from fedtheory.certify.certificate import quadratic_federation as _build  # noqa: F401 (paper_checks imports it)
from fedtheory.certify.certificate import replay_floor as _replay_floor  # noqa: F401 (paper_checks imports it)
from fedtheory.certify.certificate import theta_weights as _theta
from fedtheory.certify.pep_clients import RTOL, _WRAPPER

__all__ = [
    "Certificate",
    "certify_local_update",
    "default_engine",
    "certify_sdane",
    "message_eigenvalue",
    "floor_d1",
    "MEASURES",
    "CLASSES",
    "ENGINES",
    "CLAIM_IDS",
]

#: the claim each measure's certificate replaces or informs
CLAIM_IDS = {
    "floor": "localupdate/lemma-5/certified",
    "rate": "verify/federated-pep/rate-closed-form",
    "error": "localupdate/corollary-1/certified",
    "function-value": "verify/federated-pep/k1-drori-teboulle",
}
#: margin on the numerically differentiated tangents, relative to max b on [μ, L]
TANGENT_MARGIN = 1e-8


# --------------------------------------------------------------------------------------------
# the d = 1 worst case
# --------------------------------------------------------------------------------------------


def floor_d1(
    mu: float, L: float, K: int, gamma: float, *, theta: Any = "1:K", alpha: float = 0.0, p: Any = None, C: float = 1.0
) -> tuple[float, dict]:
    r"""The worst floor over d = 1 (equivalently commuting) federations of two clients, and its instance: the best
    value of :func:`fedtheory.certify.commuting.certify_floor_d1`'s branch and bound (whose upper bound is within
    10⁻⁷ of it).

    In d = 1, with π_i ∝ p_iλ_i and r_i = q_i, x̄ − x* = Cov_π(r, c)/E_π r, maximal at c = ±C:
    2Cπ_1π_2|r_1 − r_2|/(π_1r_1 + π_2r_2) (the mean-absolute-deviation form behind Theorem 5 and Lemma 12). Two
    commuting clients reduce to this: in the shared eigenbasis coordinate j contributes δ_j(c_1j − c_2j), so the
    floor is at most max_j|δ_j|·‖c_1 − c_2‖ ≤ 2C·max_j|δ_j| (with three or more clients this reduction fails: see
    ``localupdate/lemma-5/commuting-2c``).

    >>> v, inst = floor_d1(1.0, 100.0, 10, 0.005)
    >>> round(v, 4), [round(l, 2) for l in sorted(inst["lambdas"])]
    (0.456, [20.4, 100.0])
    """
    from fedtheory.certify.commuting import certify_floor_d1

    cert = certify_floor_d1(mu, L, K, gamma, theta=theta, alpha=alpha, p=p, C=C)
    return cert.instance["closed_form_value"], {"lambdas": cert.instance["lambdas"], "p": cert.hypotheses["p"], "C": C}


# --------------------------------------------------------------------------------------------
# solver: Clarabel with retries, SCS cross-check (on our own cvxpy problems and the spectral engine's conic data)
# --------------------------------------------------------------------------------------------


def _solve_cvxpy(prob, cross_check: bool = True, clarabel: tuple | None = None) -> tuple[float | None, str, str]:
    """(value or None, solver description, status) — ``None`` unless Clarabel is optimal, or SCS agrees with
    an inaccurate Clarabel to RTOL (then the larger value plus their gap; ``cross_check=False`` skips SCS).
    ``clarabel``: the outcome :func:`_clarabel_attempts` already had on this very problem (Clarabel is
    deterministic on the same data, so running its attempts again would only repeat it). ``prob``: a cvxpy
    problem, or a :class:`_SpectralPEP` (its conic data go to Clarabel and SCS directly)."""
    conic = isinstance(prob, _SpectralPEP)
    if clarabel is None:
        clarabel = _clarabel_conic(prob) if conic else _clarabel_attempts(prob)
    value, status = clarabel
    if status == "optimal":
        return value, "CLARABEL", "optimal"
    if not cross_check:
        return None, f"CLARABEL {status} ({value})", "unreliable"
    other, other_status = _scs_conic(prob) if conic else _scs_cvxpy(prob)
    if (
        value is not None
        and other is not None
        and other_status in ("optimal", "optimal_inaccurate")
        and abs(other - value) <= RTOL * max(abs(value), 1e-12)
    ):
        return max(value, other) + abs(value - other), "CLARABEL+SCS", "agree"
    return None, f"CLARABEL {status} ({value}), SCS {other_status} ({other})", "unreliable"


def _scs_cvxpy(prob) -> tuple[float | None, str]:
    """SCS at CROSS_CHECK_EPS on a cvxpy problem: (value, cvxpy's status)."""
    import warnings

    from fedtheory.certify.pep import CROSS_CHECK_EPS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            other = prob.solve(solver="SCS", eps_abs=CROSS_CHECK_EPS, eps_rel=CROSS_CHECK_EPS, max_iters=100_000)
            return (None if other is None else float(other)), prob.status
        except Exception:
            return None, "failed"


def _clarabel_attempts(prob) -> tuple[float | None, str]:
    """Clarabel with the settings of CLARABEL_ATTEMPTS in turn: (value, "optimal") at the first optimal one,
    else (the last "optimal_inaccurate" value or None, that status or "failed")."""
    import warnings

    from fedtheory.certify.pep import CLARABEL_ATTEMPTS

    value, status = None, "failed"
    for settings in CLARABEL_ATTEMPTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                v = prob.solve(solver="CLARABEL", **settings)
            except Exception:
                continue
        if prob.status == "optimal":
            return float(v), "optimal"
        if prob.status == "optimal_inaccurate" and v is not None:
            value, status = float(v), prob.status
    return value, status


# --------------------------------------------------------------------------------------------
# spectral engine: a client as a matrix measure on the curve (λ, b(λ)), relaxed piecewise
# --------------------------------------------------------------------------------------------

_MONOS = ("1", "s", "t", "ss", "st", "tt")


def _pieces(fn, lo: float, hi: float, count: int) -> list[tuple[float, float, int | tuple[str, float]]]:
    """Breakpoints of [lo, hi] (normalized λ) where b keeps one curvature sign (+1 convex, −1 concave, 0 affine),
    refined where the chord–tangent gap is largest until ``count`` pieces."""
    grid = np.linspace(lo, hi, 4001)  # uniform: second differences keep b'' 's sign
    v = fn(grid)
    d2 = np.diff(v, 2)
    scale = max(np.abs(v).max(), 1e-300)
    sign = np.where(np.abs(d2) <= 1e-9 * scale, 0, np.sign(d2))
    cuts, last = [lo], 0
    for k in range(len(sign)):
        if sign[k] != 0:
            if last != 0 and sign[k] != last:
                cuts.append(float(grid[k + 1]))
            last = sign[k]
    cuts.append(hi)
    cuts = sorted(set(cuts))
    pieces = list(zip(cuts[:-1], cuts[1:]))

    def gaps(new):
        """the refinement's priority of each piece in ``new`` (one vectorized call of fn: b is a polynomial of
        degree K, whose evaluation dominated this loop when done point by point)"""
        a, b = np.array(new).T
        f = fn(np.concatenate([0.5 * (a + b), a, b])).reshape(3, -1)
        return list(np.abs(f[0] - 0.5 * (f[1] + f[2])) + (b - a) * 1e-3 * scale / (hi - lo))

    prio = gaps(pieces)
    while len(pieces) < count:
        k = int(np.argmax(prio))  # the first of equal priorities, as max() picked
        a, b = pieces[k]
        m = math.sqrt(a * b) if b / a > 4 else 0.5 * (a + b)
        pieces[k : k + 1] = [(a, m), (m, b)]
        prio[k : k + 1] = gaps(pieces[k : k + 2])
    out = []
    samples = fn(np.concatenate([np.linspace(a, b, 65) for a, b in pieces])).reshape(len(pieces), 65)
    for (a, b), vals in zip(pieces, samples):
        xs = np.linspace(a, b, 65)
        dd = np.diff(vals, 2)
        tol = 1e-12 * scale
        sg: int | tuple[str, float] | None = 1 if np.all(dd >= -tol) else (-1 if np.all(dd <= tol) else None)
        if sg is None:
            # curvature lost in rounding (b almost flat there): bound t by the chord ± twice the sampled deviation
            chord = vals[0] + (vals[-1] - vals[0]) * (xs - a) / (b - a)
            sg = ("band", 2 * float(np.max(np.abs(vals - chord))) + 1e-9 * scale)
        out.append((a, b, sg))
    return out


class _SpectralPEP:
    """Gram-matrix program over named vectors, with clients given as (inputs, outputs) on the curve pieces, written
    straight into the conic data Clarabel takes (min qᵀx s.t. Ax + s = b, s ∈ K): a linear form of the Gram matrix
    is a vector over G's upper triangle, each piece's moments a block of variables. Building the same program
    through cvxpy cost 1-3 s of canonicalization per program (10-50× Clarabel's solve); this costs milliseconds.

    Variables x = [G's upper triangle (Clarabel's column-wise order), then each client's moments]. The cones: G ⪰ 0,
    the Gram block of each client equal to its summed moments (upper triangle only: a symmetric equality written
    twice makes the equality system rank deficient), per piece the localizing cones and the order-one moment
    matrix, and the inequalities added by :meth:`le`."""

    def __init__(self, names: list[str], eliminate: tuple[np.ndarray, list[str]] | None = None):
        """``eliminate=(eq, candidates)``: the linear relation Σ_k eq_k·v_k = 0 between the named vectors is
        used to drop the candidate with the largest |eq_k| from the basis (a relation kept as ‖Σeq_kv_k‖² = 0
        would leave the Gram cone without interior)."""
        self.names = list(names)
        self.N = len(names)
        self.T = np.eye(self.N)  # full coefficients -> reduced basis
        if eliminate is not None:
            eq, cands = eliminate
            piv = max((self.names.index(c) for c in cands), key=lambda k: abs(eq[k]))
            sub = np.eye(self.N) - np.outer(np.eye(self.N)[piv], eq / eq[piv])  # v -> v − v_piv·eq/eq_piv
            self.T = np.delete(sub, piv, axis=1)
        self.ng = self.T.shape[1]
        self.nvar = self.ng * (self.ng + 1) // 2
        self.blocks: list[tuple[str, list[int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.objective: np.ndarray | None = None
        self.almost: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # Clarabel's last almost-solved (x, z, s)
        # G ⪰ 0 on its own upper triangle, in svec order already (off-diagonals scaled by √2)
        pos, scale = _svec_layout(self.ng)
        self._gpos = pos
        idx = np.arange(self.nvar)
        self._cone("psd", [self.ng], idx, idx, scale, np.zeros(self.nvar))

    def _cone(self, kind: str, dims: list[int], rows, cols, vals, const) -> None:
        """Rows ``rows`` (local) of expr = Σ vals·x[cols] + const lie in ``kind`` cones of sizes ``dims``
        (stored as Clarabel's A = −coefficients, b = const)."""
        self.blocks.append((kind, dims, np.asarray(rows), np.asarray(cols), -np.asarray(vals, dtype=float), const))

    def vec(self, **coeffs) -> np.ndarray:
        v = np.zeros(self.N)
        for k, c in coeffs.items():
            v[self.names.index(k)] += c
        return v

    def quad(self, u: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
        """⟨u, v⟩ (u, v over the named vectors) as a linear form over G's upper triangle."""
        v = u if v is None else v
        M = np.outer(u @ self.T, v @ self.T)
        M = M + M.T - np.diag(np.diag(M))
        return M[self._gpos[0], self._gpos[1]]

    def le(self, form: np.ndarray, rhs: float) -> None:
        """form·G ≤ rhs (``form`` from :meth:`quad`)."""
        nz = np.flatnonzero(form)
        self._cone("nonneg", [1], np.zeros(len(nz), dtype=int), nz, -form[nz], np.array([float(rhs)]))

    def maximize(self, form: np.ndarray) -> None:
        self.objective = form

    def data(self):
        """(P, q, A, b, cones) for Clarabel; the objective is minimized, so q = −(the maximized form)."""
        import clarabel
        import scipy.sparse as sps

        assert self.objective is not None
        q = np.zeros(self.nvar)
        q[: len(self.objective)] = -self.objective
        rows, cols, vals, b, cones = [], [], [], [], []
        start = 0
        make = {
            "zero": clarabel.ZeroConeT,
            "nonneg": clarabel.NonnegativeConeT,
            "soc": clarabel.SecondOrderConeT,
            "psd": clarabel.PSDTriangleConeT,
        }
        for kind, dims, r, c, v, const in self.blocks:
            rows.append(r + start)
            cols.append(c)
            vals.append(v)
            b.append(const)
            start += len(const)
            if kind in ("zero", "nonneg") and cones and type(cones[-1]) is make[kind]:
                cones[-1] = make[kind](cones[-1].dim + sum(dims))  # merge neighbouring blocks of one kind
            else:
                cones += [make[kind](d) for d in dims]
        A = sps.csc_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(start, self.nvar)
        )
        A.sum_duplicates()
        return sps.csc_matrix((self.nvar, self.nvar)), q, A, np.concatenate(b), cones

    def client(self, inputs: list[np.ndarray], outputs: list[tuple[int, str, np.ndarray]], pieces, fn, margin):
        """Tie the Gram block of ``inputs`` and ``outputs`` ((input index, "s" | "t", vector)) to a relaxed PSD
        matrix measure on the pieces of Γ = {(λ, fn(λ))}. Piece k's r×r moment matrix of monomial µ is the upper
        triangle x[off + (µ·m + k)·nt + ·] (m pieces, nt = r(r+1)/2)."""
        r = len(inputs)
        nt = r * (r + 1) // 2
        tri = [(i, j) for i in range(r) for j in range(i, r)]
        index = {}
        for k, (i, j) in enumerate(tri):
            index[(i, j)] = index[(j, i)] = k
        m = len(pieces)
        off = self.nvar
        self.nvar += len(_MONOS) * m * nt

        def var(mono: str, k, t):
            return off + (_MONOS.index(mono) * m + np.asarray(k)) * nt + np.asarray(t)

        # the Gram block equals the summed moments: ⟨v_a, v_b⟩ − Σ_k Y[key][k, (ia, ib)] = 0 for a ≤ b
        vecs = list(inputs) + [v for _, _, v in outputs]
        rows, cols, vals = [], [], []
        pairs = [(a, b) for a in range(len(vecs)) for b in range(a, len(vecs))]
        for row, (a, b) in enumerate(pairs):
            ia, fa = (a, "") if a < r else (outputs[a - r][0], outputs[a - r][1])
            ib, fb = (b, "") if b < r else (outputs[b - r][0], outputs[b - r][1])
            key = "".join(sorted(fa + fb)) or "1"
            form = self.quad(vecs[a], vecs[b])
            nz = np.flatnonzero(form)
            ks = np.arange(m)
            rows += [np.full(len(nz), row), np.full(m, row)]
            cols += [nz, var(key, ks, index[(ia, ib)])]
            vals += [form[nz], -np.ones(m)]
        self._cone(
            "zero", [len(pairs)], np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), np.zeros(len(pairs))
        )

        # per piece: the affine functions (c0, cs, ct) that are >= 0 on the piece of the curve
        affs = []
        # fn at each piece's ends and at ±eps around them, in one vectorized call (b is a degree-K polynomial)
        los, his = np.array([pc[0] for pc in pieces]), np.array([pc[1] for pc in pieces])
        epss = 1e-7 * (his - los) + 1e-12
        at = fn(np.concatenate([los, his, los + epss, los - epss, his + epss, his - epss])).reshape(6, -1)
        for k, (lo, hi, sg) in enumerate(pieces):
            fl, fh = float(at[0, k]), float(at[1, k])
            slope = (fh - fl) / (hi - lo)
            chord = (fl - slope * lo, slope)  # t = c0 + c1 s
            eps = float(epss[k])
            d_lo = float((at[2, k] - at[3, k]) / (2 * eps))
            d_hi = float((at[4, k] - at[5, k]) / (2 * eps))
            tans = [(fl - d_lo * lo, d_lo), (fh - d_hi * hi, d_hi)]
            aff = [(-lo, 1.0, 0.0), (hi, -1.0, 0.0)]
            if isinstance(sg, tuple):  # near-flat piece: chord − δ <= t <= chord + δ
                delta = sg[1]
                aff += [(-chord[0] + delta, -chord[1], 1.0), (chord[0] + delta, chord[1], -1.0)]
                affs.append(aff)
                continue
            if sg <= 0:  # concave: chord <= t <= tangents (+ margin)
                aff.append((-chord[0] + margin * 1e-3, -chord[1], 1.0))
                aff += [(c0 + margin, c1, -1.0) for c0, c1 in tans]
            if sg >= 0:  # convex: tangents (- margin) <= t <= chord
                aff.append((chord[0] + margin * 1e-3, chord[1], -1.0))
                aff += [(-c0 + margin, -c1, 1.0) for c0, c1 in tans]
            affs.append(aff[:5] if len(aff) > 5 else aff)
        width = min(len(a) for a in affs)
        A = np.array([a[:width] for a in affs])  # (m, width, 3)

        # each localizing matrix (an r×r matrix per piece, entries Σ_µ c_µ[k]·Y[µ][k, t]) goes to its cone through
        # a constant map S of its upper triangle: r = 1 a sign, r = 2 the rotated second-order cone
        # (M00 + M11, 2M01, M00 − M11), r ≥ 3 Clarabel's scaled triangle
        if r == 1:
            S, kind = np.ones((1, 1)), "nonneg"
        elif r == 2:
            S, kind = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0], [1.0, 0.0, -1.0]]), "soc"
        else:
            S, kind = np.zeros((nt, nt)), "psd"
            for row, (i, j, sc) in enumerate(zip(*_svec_layout(r)[0], _svec_layout(r)[1])):
                S[row, index[(int(i), int(j))]] = sc
        srow, scol = np.nonzero(S)
        ks = np.arange(m)

        def cone(terms):
            rows, cols, vals = [], [], []
            for mono, c in terms:
                c = np.asarray(c, dtype=float).reshape(-1)
                # rows (piece k, cone row ρ): Σ_t S[ρ, t]·c[k]·Y[mono][k, t]
                rows.append((ks[:, None] * S.shape[0] + srow[None, :]).ravel())
                cols.append(var(mono, ks[:, None], scol[None, :]).ravel())
                vals.append((c[:, None] * S[srow, scol][None, :]).ravel())
            rows_, cols_, vals_ = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
            keep = vals_ != 0
            self._cone(
                kind,
                [r if kind == "psd" else S.shape[0]] * m,
                rows_[keep],
                cols_[keep],
                vals_[keep],
                np.zeros(m * S.shape[0]),
            )

        for f in range(width):
            cone([("1", A[:, f, 0]), ("s", A[:, f, 1]), ("t", A[:, f, 2])])
        for f in range(width):
            for g in range(f + 1, width):
                a0, a1, a2 = (A[:, f, k] for k in range(3))
                b0, b1, b2 = (A[:, g, k] for k in range(3))
                cone(
                    [
                        ("1", a0 * b0),
                        ("s", a0 * b1 + a1 * b0),
                        ("t", a0 * b2 + a2 * b0),
                        ("ss", a1 * b1),
                        ("st", a1 * b2 + a2 * b1),
                        ("tt", a2 * b2),
                    ]
                )
        # order-one moment matrix of each piece: [[1, s, t], [s, ss, st], [t, st, tt]] ⊗ (r×r) ⪰ 0
        layout = [["1", "s", "t"], ["s", "ss", "st"], ["t", "st", "tt"]]
        big = 3 * r
        (bi_, bj_), bscale = _svec_layout(big)
        monos = [layout[I // r][J // r] for I, J in zip(bi_, bj_)]
        ts = [index[(int(I) % r, int(J) % r)] for I, J in zip(bi_, bj_)]
        per = len(bscale)
        self._cone(
            "psd",
            [big] * m,
            (ks[:, None] * per + np.arange(per)[None, :]).ravel(),
            np.stack([var(mono, ks, t) for mono, t in zip(monos, ts)], axis=1).ravel(),
            np.tile(bscale, m),
            np.zeros(m * per),
        )


def _svec_layout(n: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Clarabel's PSD triangle order (upper triangle column by column) of an n×n matrix: ((rows, cols), scale), the
    off-diagonal entries scaled by √2 so that the vector's inner product is the matrix's."""
    rows = np.array([i for j in range(n) for i in range(j + 1)], dtype=int)
    cols = np.array([j for j in range(n) for i in range(j + 1)], dtype=int)
    return (rows, cols), np.where(rows == cols, 1.0, math.sqrt(2.0))


def _clarabel_conic(P: _SpectralPEP) -> tuple[float | None, str]:
    """:func:`_clarabel_attempts` on a :class:`_SpectralPEP`'s conic data: Clarabel with the settings of
    CLARABEL_ATTEMPTS in turn, (value, "optimal") at the first solved one, else (the last almost-solved value or
    None, "optimal_inaccurate" or "failed"). The value is the maximized form's (−Clarabel's primal objective)."""
    import clarabel

    from fedtheory.certify.pep import CLARABEL_ATTEMPTS

    data = P.data()
    value, status = None, "failed"
    for settings in CLARABEL_ATTEMPTS:
        opts = clarabel.DefaultSettings()
        opts.verbose = False
        for key, val in settings.items():
            setattr(opts, key, val)
        try:
            sol = clarabel.DefaultSolver(*data, opts).solve()
        except Exception:  # Clarabel's numerical errors
            continue
        got = str(sol.status)
        if got == "Solved":
            return -float(sol.obj_val), "optimal"
        if got == "AlmostSolved" and np.isfinite(sol.obj_val):
            P.almost = (np.array(sol.x), np.array(sol.z), np.array(sol.s))  # the cross-check's start
            value, status = -float(sol.obj_val), "optimal_inaccurate"
    return value, status


def _scs_conic(P: _SpectralPEP) -> tuple[float | None, str]:
    """SCS (first order, a different algorithm) on the same conic data, at CROSS_CHECK_EPS: (value, status) as
    cvxpy names them. SCS orders its cones zero, nonnegative, second-order, PSD and stores a PSD triangle lower
    column by column, so the rows are permuted (same √2 scaling)."""
    import scipy.sparse as sps
    import scs

    from fedtheory.certify.pep import CROSS_CHECK_EPS

    _, q, A, b, _ = P.data()
    starts, start = [], 0
    for kind, dims, *_rest, const in P.blocks:
        starts.append(start)
        start += len(const)
    perm: list[np.ndarray] = []
    cone: dict = {"z": 0, "l": 0, "q": [], "s": []}
    for kind in ("zero", "nonneg", "soc", "psd"):
        for (k, dims, *_rest, const), s0 in zip(P.blocks, starts):
            if k != kind:
                continue
            if kind == "psd":
                at = s0
                for n in dims:
                    (ri, ci), _ = _svec_layout(n)
                    here = {(int(i), int(j)): at + t for t, (i, j) in enumerate(zip(ri, ci))}
                    perm.append(np.array([here[(j, i)] for j in range(n) for i in range(j, n)], dtype=int))
                    at += len(ri)
                cone["s"] += list(dims)
            else:
                perm.append(np.arange(s0, s0 + len(const)))
                if kind == "zero":
                    cone["z"] += len(const)
                elif kind == "nonneg":
                    cone["l"] += len(const)
                else:
                    cone["q"] += list(dims)
    p = np.concatenate(perm)
    A = sps.csc_matrix(A.tocsr()[p])
    # SCS starts from Clarabel's almost-solved point when there is one: its verdict is its termination test on its
    # own last iterate (primal and dual residuals and the gap within CROSS_CHECK_EPS), which does not depend on where
    # it started; the start only spares iterations
    warm: dict = {}
    if P.almost is not None:
        warm = {"warm_start": True, "x": P.almost[0], "y": P.almost[1][p], "s": P.almost[2][p]}
    try:
        sol = scs.SCS(
            {"A": A, "b": b[p], "c": q},
            cone,
            eps_abs=CROSS_CHECK_EPS,
            eps_rel=CROSS_CHECK_EPS,
            max_iters=100_000,
            verbose=False,
        ).solve(**warm)
    except Exception:
        return None, "failed"
    status = str(sol["info"]["status"])
    if status == "solved":
        return -float(sol["info"]["pobj"]), "optimal"
    if status.startswith("solved") and np.isfinite(sol["info"]["pobj"]):
        return -float(sol["info"]["pobj"]), "optimal_inaccurate"
    return None, status


def _split_linear(mu, L, gamma, th, alpha):
    """b(λ·L)/b_max = c1·λ + σ·u(λ) on normalized λ ∈ [μ/L, 1], with c1 the chord slope and u the deviation from
    it scaled to max |u| = 1 (u ≡ 0, σ = 0 when b is linear): returns (u, c1, σ, b_max). Written this way the
    relaxation's curve Γ = {(λ, u(λ))} stays well scaled even when γ is tiny and b is almost linear."""
    lo = mu / L
    raw = lambda lam: message_eigenvalue(np.asarray(lam) * L, gamma, th, alpha)  # noqa: E731
    grid = np.linspace(lo, 1.0, 4001)
    bmax = float(np.max(raw(grid)))
    fl, fh = float(raw(np.array([lo]))[0]) / bmax, float(raw(np.array([1.0]))[0]) / bmax
    c1 = (fh - fl) / (1.0 - lo) if lo < 1 else fh
    c0 = fl - c1 * lo
    dev = raw(grid) / bmax - c0 - c1 * grid
    sigma = float(np.max(np.abs(dev)))
    if not sigma > 1e-15:
        sigma = 0.0

    def u(lam):
        return (raw(lam) / bmax - c0 - c1 * np.asarray(lam)) / sigma if sigma else 0.0 * np.asarray(lam)

    return u, c0, c1, sigma, bmax


def _floor_program(names, eq, piv, n, p, het, L, pcs, u, v):
    """The floor program (a cvxpy problem) with the fixed-point relation eliminated at ``piv``."""
    P = _SpectralPEP(names, eliminate=(eq, [piv]))
    zero = np.zeros(P.N)
    e = v(e=1.0)
    w = [v(**{f"w{i}": 1.0}) for i in range(n)]
    z = [v(**{f"z{i}": 1.0}) for i in range(n - 1)]
    z.append(-sum(((p[i] / p[-1]) * z[i] for i in range(n - 1)), zero))  # Σ p_i A_i w_i = 0
    for i in range(n):
        P.client(
            [e, w[i]],
            [
                (0, "s", v(**{f"se{i}": 1.0})),
                (0, "t", v(**{f"ue{i}": 1.0})),
                (1, "t", v(**{f"uw{i}": 1.0})),
                (1, "s", z[i]),
            ],
            pcs,
            u,
            TANGENT_MARGIN,
        )
    if het == "C":
        for i in range(n):
            P.le(P.quad(w[i] + v(o=1.0)), 1.0)
    else:
        P.le(sum(p[i] * P.quad(z[i]) for i in range(n)) * (L**2), 1.0)
    P.maximize(P.quad(e))
    return P


def _spectral_floor(mu, L, gamma, th, alpha, p, het, pieces, scale_hint=1.0):
    """Upper bound on Δ² (C = 1 or ζ = 1) by the spectral relaxation; also returns the solver note.

    With b̂ = b/b_max = c0 + c1λ + σu(λ) (:func:`_split_linear`), e = x̄ − x* = s·ê and w_i = x* − c_i, the fixed
    point Σp_i b̂(A_i)(x̄ − c_i) = 0 reads (the c1A_iw_i terms cancel by Σp_iA_iw_i = 0)
    c0(sê + Σp_iw_i) + c1sΣp_iA_iê + σsΣp_iu(A_i)ê + σΣp_iu(A_i)w_i = 0. The scale s = ``scale_hint`` (the probe's
    floor) keeps ê of order one, and the relation eliminates whichever of A_nê, u(A_n)ê, u(A_n)w_n, w_n has the
    largest coefficient: the program stays well scaled when γ → 0 (b almost linear, Δ ~ σ) and when Kγμ ≫ 1
    (b almost constant, c1 ~ 0). Δ = s‖ê‖."""
    n = len(p)
    u, c0, c1, sigma, _ = _split_linear(mu, L, gamma, th, alpha)
    if sigma == 0.0 and abs(c0) <= 1e-15:
        return 0.0, "exact (b linear: x̄ = x*)", 0  # K = 1 or γ = 0: b̂(A) = c1A, x̄ = x*
    sc = float(scale_hint) if scale_hint and scale_hint > 0 else 1.0
    pcs = _pieces(u, mu / L, 1.0, pieces)
    names = (
        ["e", "o"]
        + [f"w{i}" for i in range(n)]
        + [f"se{i}" for i in range(n)]
        + [f"ue{i}" for i in range(n)]
        + [f"uw{i}" for i in range(n)]
        + [f"z{i}" for i in range(n - 1)]
    )
    full = _SpectralPEP(names)
    v = full.vec
    eq = c0 * sc * v(e=1.0)
    for i in range(n):
        eq = eq + p[i] * (
            c0 * v(**{f"w{i}": 1.0})
            + c1 * sc * v(**{f"se{i}": 1.0})
            + sigma * sc * v(**{f"ue{i}": 1.0})
            + sigma * v(**{f"uw{i}": 1.0})
        )
    cands = sorted([f"se{n - 1}", f"ue{n - 1}", f"uw{n - 1}", f"w{n - 1}"], key=lambda c: -abs(eq[names.index(c)]))
    cands = [c for c in cands if abs(eq[names.index(c)]) > 1e-12 * np.abs(eq).max()]
    value, solver = None, "no pivot"
    # largest coefficient first. The first pivot's program gets the whole policy (Clarabel's attempts, then the SCS
    # cross-check when Clarabel only almost solves it); the others are tried, Clarabel alone, only when that fails.
    # (The cross-check used to come after every pivot's Clarabel attempts: where the relaxation is tight and its
    # optimum degenerate, K = 100, all four are only almost solved, and their 9 extra solves cost 3x the
    # cross-check's one SCS solve, for the same value to SCS's accuracy.)
    for k, piv in enumerate(cands):
        prob = _floor_program(names, eq, piv, n, p, het, L, pcs, u, v)
        value, note, _ = _solve_cvxpy(prob, cross_check=k == 0)
        solver = note if value is not None else f"{solver}; pivot {piv}: {note}"
        if value is not None:
            break
    return (None if value is None else value * sc**2), solver, len(pcs)


def _spectral_rate(mu, L, gamma, th, alpha, p, eta, pieces):
    """Upper bound on ρ² for one server-GD round: ‖d − ηΣ_i p_i b(A_i)d‖² over ‖d‖ ≤ 1."""

    n = len(p)
    fn_raw = lambda lam: message_eigenvalue(lam * L, gamma, th, alpha)  # noqa: E731
    bmax = float(np.max(fn_raw(np.linspace(mu / L, 1.0, 257))))
    fn = lambda lam: fn_raw(lam) / bmax  # noqa: E731
    pcs = _pieces(fn, mu / L, 1.0, pieces)
    P = _SpectralPEP(["d"] + [f"a{i}" for i in range(n)])
    d = P.vec(d=1.0)
    outs = [P.vec(**{f"a{i}": 1.0}) for i in range(n)]
    for i in range(n):
        P.client([d], [(0, "t", outs[i])], pcs, fn, TANGENT_MARGIN)
    P.le(P.quad(d), 1.0)
    step = d - eta * bmax * sum((p[i] * outs[i] for i in range(n)), np.zeros(P.N))
    P.maximize(P.quad(step))
    value, solver, _ = _solve_cvxpy(P)
    return value, solver, len(pcs)


def _spectral_error(mu, L, gamma, th, alpha, p, het, eta, momentum, server, rounds, D, pieces):
    """Upper bound on ‖x_T − x*‖² (C = 1 or ζ = 1, ‖x_0 − x*‖ ≤ D) by the spectral relaxation: client i is
    queried at y_0..y_{T−1}, so its inputs are y_t − c_i = (y_t − x*) + w_i and w_i, its outputs b(A_i)(y_t − c_i)
    and A_iw_i."""
    n, T = len(p), int(rounds)
    fn_raw = lambda lam: message_eigenvalue(lam * L, gamma, th, alpha)  # noqa: E731
    bmax = float(np.max(fn_raw(np.linspace(mu / L, 1.0, 257))))
    fn = lambda lam: fn_raw(lam) / bmax  # noqa: E731
    pcs = _pieces(fn, mu / L, 1.0, pieces)
    names = (
        ["x0", "o"]
        + [f"w{i}" for i in range(n)]
        + [f"b{i}_{t}" for i in range(n) for t in range(T)]
        + [f"z{i}" for i in range(n - 1)]
    )
    P = _SpectralPEP(names)
    v = P.vec
    z_vecs = [v(**{f"z{i}": 1.0}) for i in range(n - 1)]
    z_vecs.append(-sum(((p[i] / p[-1]) * z_vecs[i] for i in range(n - 1)), np.zeros(P.N)))
    beta = momentum or 0.0
    # round t's messages are stored divided by g^t, g ≥ 1 a bound on one round's growth (|1 − ηb| + 2|β| over the
    # spectrum), and so are the client's inputs y_t − c_i: realizability is invariant under scaling an input with
    # its outputs (a congruence of the moment matrices), so the program is the same, but its entries stay of
    # order one where ‖x_T − x*‖ grows like g^T (η = 1: g ≈ 19 at K = 5, γL = 1/2; Clarabel stalled on the
    # unscaled program with numerical errors)
    grow = max(1.0, float(np.max(np.abs(1.0 - eta * bmax * fn(np.linspace(mu / L, 1.0, 257))))) + 2 * abs(beta))
    x, x_prev, ys = v(x0=1.0), v(x0=1.0), []
    for t in range(T):
        y = x + beta * (x - x_prev) if server == "nesterov" else x
        ys.append(y / grow**t)
        q = bmax * grow**t * sum((p[i] * v(**{f"b{i}_{t}": 1.0}) for i in range(n)), np.zeros(P.N))
        x_new = y - eta * q + (beta * (x - x_prev) if server == "heavy_ball" else 0.0)
        x_prev, x = x, x_new
    for i in range(n):
        w = v(**{f"w{i}": 1.0})
        inputs = [y + w / grow**t for t, y in enumerate(ys)] + [w]
        outputs = [(t, "t", v(**{f"b{i}_{t}": 1.0})) for t in range(T)] + [(T, "s", z_vecs[i])]
        P.client(inputs, outputs, pcs, fn, TANGENT_MARGIN)
    if het == "C":
        for i in range(n):
            P.le(P.quad(v(**{f"w{i}": 1.0, "o": 1.0})), 1.0)
    else:
        P.le(sum(p[i] * P.quad(z_vecs[i]) for i in range(n)) * (L**2), 1.0)
    P.le(P.quad(v(x0=1.0)), D**2)
    P.maximize(P.quad(x / grow**T))
    value, solver, _ = _solve_cvxpy(P)
    return (None if value is None else value * grow ** (2 * T)), solver, len(pcs)


# --------------------------------------------------------------------------------------------
# PEPit engine
# --------------------------------------------------------------------------------------------


def _pepit_problem(mu, L, K, gamma, th, alpha, p, het, measure, function_class, eta, momentum, server, rounds, D):
    """LocalUpdate's federated PEP, compiled from its description (:func:`fedtheory.methods.library.local_update`)
    by the one PEP builder, :func:`fedtheory.methods.pep.build_pep`: units L = 1 (f_i/L, lengths per unit C or ζ),
    worst case = the squared measure (``"function-value"``: the measure itself, in units of C² or ζ²), the worst
    case's named points in ``pb.fed_points`` for the replays below. The floor and the rate are server-GD's (η and
    momentum do not move the fixed point; the rate is GD's by hypothesis), with η = γ where none is given."""
    from fedtheory.methods.library import local_update
    from fedtheory.methods.pep import build_pep

    srv = server if measure in ("error", "function-value") else "gd"
    m = local_update(theta=th, gamma=gamma, alpha=alpha, eta=eta, beta=momentum if srv != "gd" else None, server=srv)
    return build_pep(
        m, measure=measure, mu=mu, L=L, p=p, het=het, function_class=function_class, rounds=rounds, D_units=D
    ).pb


def certify_sdane(R: int, lam: float, mu: float, delta: float, c: float = 0.0, accelerated: bool = False):
    r"""Worst case of S-DANE (Algorithm 1 of Jiang, Rodomanov & Stich, arXiv:2407.07084), or Acc-S-DANE
    (Algorithm 2) with ``accelerated``, two clients (weights ½) under δ-SOD, over R rounds from
    ‖x^0 − x*‖ ≤ 1, with local solves of relative accuracy c (c = 0: exact prox solves): sup of
    f(x̄^R) − f* + μ/2‖v^R − x*‖² (x̄^R the (1 + μ/λ)^r-weighted average of the x^r; Acc-S-DANE: f(x^R)), as a
    :class:`~fedtheory.certify.pep.PepResult`.

    The PEP is compiled from the method's description (:func:`fedtheory.methods.library.sdane` /
    :func:`~fedtheory.methods.library.acc_sdane`) by :func:`fedtheory.methods.pep.build_pep` over the δ-SOD class
    (``function_class="sod"``: f_1 μ-convex, g = (f_1 − f_2)/2 δ-smooth, f_2 μ-convex on every point it is
    evaluated at), with the weighted-average output, the potential μ/2‖v^R − x*‖² and, for c > 0, each local
    solve an inexact prox: its subproblem gradients e_i are free points under Σ_i‖e_i‖² ≤ cλ²Σ_i‖x_i − c^r‖²
    (condition (6)); c = 0 is exactness by elimination, not ‖∇F_{i,r}‖² ≤ 0 (two_client_sdane at c = 0, a
    constraint without interior on which Clarabel and SCS stop "inaccurate": 0.52522 and 0.52566 at R = 1,
    λ = 2, μ = 0, δ = 1). The solve, the class check and the replay on the real driver (``lower``) are
    :func:`fedtheory.certify.pep.solve_sdane`'s, shared with :func:`fedtheory.certify.pep.two_client_sdane`.

    c < 0 (or λ ≤ 0, μ < 0, δ ≤ 0, R < 1) raises ValueError naming the hypothesis.

    >>> r = certify_sdane(1, 2.0, 0.0, 1.0)
    >>> round(r.value, 4), bool(r.gap < 1e-4), r.solver
    (0.5248, True, 'CLARABEL')
    >>> from fedtheory.certify.pep import two_client_sdane
    >>> a, b = certify_sdane(1, 2.0, 0.0, 1.0, c=0.25), two_client_sdane(1, 2.0, 0.0, 1.0, c=0.25)
    >>> bool(abs(a.value - b.value) <= 1e-6 * b.value)
    True
    """
    from fedtheory.certify.pep import check_sdane, solve_sdane
    from fedtheory.methods.library import acc_sdane, sdane
    from fedtheory.methods.pep import build_pep

    R = check_sdane(R, lam, mu, delta, c)
    lam, mu, delta, c = float(lam), float(mu), float(delta), float(c)
    method = (acc_sdane if accelerated else sdane)(lam, mu)
    built = build_pep(
        method,
        measure="function-value",
        mu=mu,
        L=1.0,
        p=[0.5, 0.5],
        function_class="sod",
        rounds=R,
        D_units=1.0,
        delta=delta,
        prox_accuracy=c,
        average=None if accelerated else (1 + mu / lam) ** np.arange(1, R + 1),
        potential={"v": mu / 2} if mu > 0 else None,
    )
    sod = built.info["sod"]
    return solve_sdane(
        built.pb,
        sod["f1"],
        sod["g"],
        sod["f2"],
        sod["x_star"],
        sod["x0"],
        built.info["local_points"],
        R,
        lam,
        mu,
        delta,
        c,
        accelerated,
        wrapper=_WRAPPER,
        params={"exact": c == 0, "local": "compiled (fedtheory.methods.pep)"},
    )


# --------------------------------------------------------------------------------------------
# a decoder of concrete quadratic federations (paper_checks/localupdate/certified_floor.py's probe)
# --------------------------------------------------------------------------------------------


def _instance(z, n, d, mu, L):
    """Decode z: per client d eigenvalues in [μ, L] (sine map), a rotation (QR), then unit centres."""
    k = 0
    lam, V = [], []
    for _ in range(n):
        li = mu + (L - mu) * (1 + np.sin(z[k : k + d])) / 2
        k += d
        Q, R = np.linalg.qr(z[k : k + d * d].reshape(d, d) + 1e-9 * np.eye(d))
        Q = Q * np.sign(np.diag(R) + 1e-300)
        order = np.argsort(li)
        lam.append(li[order])
        V.append(Q[:, order])
        k += d * d
    c = []
    for _ in range(n):
        u = z[k : k + d]
        c.append(u / max(np.linalg.norm(u), 1e-300))
        k += d
    lam, V = np.array(lam), np.array(V)
    A = np.einsum("nij,nj,nkj->nik", V, lam, V)
    return lam, V, A, np.array(c), k


# --------------------------------------------------------------------------------------------
# the API
# --------------------------------------------------------------------------------------------


def _certify_compiled(
    mu, L, K, gamma, th, alpha, pp, eta, momentum, server, C, zeta, measure, rounds, D, probe_dim, probe_starts,
    seed, hyp, claim, t0, function_class, engine, pieces,
) -> Certificate:  # fmt: skip
    """:func:`certify_local_update` as :func:`fedtheory.methods.pep.certify` on LocalUpdate's description
    (:func:`fedtheory.methods.library.local_update`, as :func:`_pepit_problem` writes it: the floor and rate with
    server GD): its upper bound (PEPit or the spectral program), extracted or interpolated worst case, probe,
    identical-clients scan, polish and extreme-spectrum family; the certificate keeps this module's claim id and
    hypotheses, and its instances LocalUpdate's own terms (Θ, α, γ, the server)."""
    from dataclasses import replace

    from fedtheory.methods.pep import certify

    m, srv = _local_update_method(th, gamma, alpha, eta, momentum, server, measure)
    outside = None
    if engine == "spectral":
        het, scale = ("C", float(C)) if zeta is None else ("zeta", float(zeta))
        outside = _spectral_upper_bound(mu, L, gamma, th, alpha, pp, het, scale, measure, m.hyper, rounds, D, pieces)
    c = certify(
        m,
        mu=mu,
        L=L,
        clients=len(pp),
        p=pp,
        measure=measure,
        function_class=function_class,
        C=C,
        zeta=zeta,
        rounds=rounds,
        D=D,
        probe_starts=probe_starts,
        probe_dim=probe_dim,
        seed=seed,
        engine=engine,
        upper_bound=outside,
    )
    for inst in (c.instance, c.details.get("extracted_instance")):
        _in_local_terms(inst, m, srv)
    return replace(c, hypotheses=hyp, claim_id=claim, seconds=time.perf_counter() - t0)


def _spectral_upper_bound(mu, L, gamma, th, alpha, p, het, scale, measure, hyper, rounds, D, pieces):
    """The spectral program as :func:`fedtheory.methods.pep.certify`'s outside upper bound: a function of a lower
    bound already found (the floor's program takes it as its scale; 0 when none) returning (value or None, solver,
    {"pieces": ...}) in the measure's units (lengths × C or ζ). The rate is server GD's with η = ``hyper["eta"]``;
    the error's server, step and momentum are ``hyper``'s (LocalUpdate's description)."""

    def upper(hint: float) -> tuple[float | None, str, dict]:
        if measure == "floor":
            sq, solver, npieces = _spectral_floor(mu, L, gamma, th, alpha, p, het, pieces, hint / scale)
            unit = scale
        elif measure == "rate":
            sq, solver, npieces = _spectral_rate(mu, L, gamma, th, alpha, p, float(hyper["eta"]), pieces)
            unit = 1.0
        else:
            server = hyper.get("server", "gd")
            momentum = hyper.get("beta") if server != "gd" else None
            sq, solver, npieces = _spectral_error(
                mu, L, gamma, th, alpha, p, het, float(hyper["eta"]), momentum, server, int(rounds), D / scale, pieces
            )
            unit = scale
        return (None if sq is None else math.sqrt(max(sq, 0.0)) * unit), solver, {"pieces": npieces}

    return upper


def _local_update_method(th, gamma, alpha, eta, momentum, server, measure):
    """LocalUpdate's description (:func:`fedtheory.methods.library.local_update`) for a measure, and its server:
    the floor and rate are server GD's (η and momentum do not move the fixed point; the rate is GD's by
    hypothesis), with η = γ where none is given — the method :func:`_pepit_problem` compiles."""
    from fedtheory.methods.library import local_update

    srv = server if measure in ("error", "function-value") else "gd"
    beta = momentum if srv != "gd" else None
    return local_update(theta=th, gamma=gamma, alpha=alpha, eta=eta, beta=beta, server=srv), srv


def _in_local_terms(inst, m, srv) -> None:
    """Add LocalUpdate's own terms (Θ, α, γ, the server) to an instance of the compiled certificate, as
    :func:`~fedtheory.algorithms.local_update.run_local_update` replays it."""
    if not (isinstance(inst, dict) and inst.get("method") == m.name):
        return
    h = m.hyper
    local = {"theta": h["theta"], "alpha": h["alpha"], "gamma": h["gamma"]}
    local["server"] = {"kind": srv, "lr": h["eta"], "momentum": h.get("beta") if srv != "gd" else None}
    inst.update({k: v for k, v in local.items() if k not in inst})


#: the quadratic error goes to the PEPit engine by default while its PEP has at most this many gradient
#: evaluations K·T·n (its Gram matrix grows with them; the spectral program does not grow with K). Measured
#: (FedAvg, μ = 1, L = 10, γ = 0.05, T = 2, raw solve, CPU): n = 4, K = 5 (40) 12 s; n = 3, K = 10 (60) 45 s
#: (Clarabel and SCS); n = 4, K = 10 (80) Clarabel fails, no reliable value
PEPIT_ERROR_WORK = 40
#: the quadratic floor goes to the PEPit engine by default at 2 ≤ K ≤ this many local steps (any n) ...
PEPIT_FLOOR_STEPS = 3
#: ... and, for n ≥ 5 clients, while its PEP has at most this many gradient evaluations K·n (see default_engine)
PEPIT_FLOOR_WORK = 30


def default_engine(function_class: str, measure: str, clients: int, K: int, rounds: int | None) -> str:
    """The engine :func:`certify_local_update` uses when none is given: the one that certifies the case faster.

    - the smooth strongly convex class and the function value: ``"pepit"`` (the only engine);
    - the quadratic rate: ``"spectral"`` (any K; its size does not grow with K, 0.08-0.16 s at n ≤ 4);
    - the quadratic floor: ``"spectral"`` at K = 1 (the floor is 0 in closed form) and for large K; ``"pepit"`` at
      2 ≤ K ≤ :data:`PEPIT_FLOOR_STEPS`, and for n ≥ 5 clients while K·n ≤ :data:`PEPIT_FLOOR_WORK`. The spectral
      program's size grows with n (5n named vectors, each client's moments on every piece), PEPit's SDP with K·n.
      Measured (whole certificate, CPU seconds, μ = 1, (L, γL) ∈ {(10, 0.5), (100, 0.5), (10, 0.9)}, 48 pieces,
      benchmarks/results/certify-floor-engines-2026-11-28.json): at K = 2, 3 PEPit takes 0.11-0.84 s against the
      spectral 0.23-2.4 s for n ≤ 4, 0.7-4.6 s against 15-26 s for n = 6, 8, 9.7-12 s against 34-39 s for n = 10
      and 48 s against 117 s for n = 16, K = 2; at K·n ≤ 30 with n = 5, 6 1.9-5.0 s against 5.4-19 s; at K = 4, 5
      with n ≤ 4 the two are within 3× either way and at K = 8 the spectral one is 2-5× faster (n = 4, K = 8,
      γL = 0.9: Clarabel and SCS give PEPit no reliable value). Both certify the same floors (upper bounds within
      their 1e-5 margins; PEPit's margin is wider at n ≥ 8, up to 9e-5 relative at n = 16); PEPit's extracted worst
      case closes the gap at n = 3, 5, where the extreme-spectrum family does not apply;
    - the quadratic error: ``"pepit"`` while its PEP has at most :data:`PEPIT_ERROR_WORK` gradient evaluations
      K·T·n, ``"spectral"`` beyond. Measured (CPU seconds, FedAvg, μ = 1, L = 10, γ = 0.05, η = γ, T = 2): the
      spectral certificate (16 pieces, the command line's) takes 6.7 s at n = 2, K = 1, 42 s at n = 2, K = 5 and
      more than 60 s at n = 4 for every K (its program alone: 13 s at n = 2, 22 s at n = 4, K = 5; the rest is the
      probe's local search, which nothing closes first); the PEPit certificate takes 0.5 s, 2.6 s and ~12 s, its
      extracted worst case closing the gap, and agrees with the spectral one where both finish (n = 2, K ≤ 5:
      upper within 3e-7, lower within 2e-8 relative). Beyond 40 evaluations PEPit is slower than the spectral
      program or fails (n = 4, K = 10: Clarabel fails).

    Where the default is ``"pepit"`` for the quadratic floor or error and its SDP gets no reliable value,
    :func:`certify_local_update` certifies the case with the spectral engine instead (and says so in the notes).

    >>> default_engine("quadratic", "error", 2, 5, 2), default_engine("quadratic", "error", 4, 5, 2)
    ('pepit', 'pepit')
    >>> default_engine("quadratic", "error", 4, 1000, 2), default_engine("quadratic", "rate", 4, 5, None)
    ('spectral', 'spectral')
    >>> [default_engine("quadratic", "floor", 4, K, None) for K in (1, 2, 3, 5)]
    ['spectral', 'pepit', 'pepit', 'spectral']
    >>> [default_engine("quadratic", "floor", n, K, None) for n, K in ((6, 5), (8, 4), (16, 2), (16, 4))]
    ['pepit', 'spectral', 'pepit', 'spectral']
    """
    if function_class != "quadratic" or measure == "function-value":
        return "pepit"
    n, K = int(clients), int(K)
    if measure == "error" and K * int(rounds or 1) * n <= PEPIT_ERROR_WORK:
        return "pepit"
    if measure == "floor" and K >= 2 and (K <= PEPIT_FLOOR_STEPS or (n >= 5 and K * n <= PEPIT_FLOOR_WORK)):
        return "pepit"
    return "spectral"


def certify_local_update(
    mu: float,
    L: float,
    K: int,
    gamma: float,
    *,
    clients: int = 2,
    theta: Any = "1:K",
    alpha: float = 0.0,
    eta: float | None = None,
    momentum: float | None = None,
    server: str = "gd",
    C: float = 1.0,
    zeta: float | None = None,
    measure: str = "floor",
    rounds: int | None = None,
    D: float | None = None,
    function_class: str = "quadratic",
    p: Any = None,
    engine: str | None = None,
    pieces: int = 48,
    probe_dim: int | None = None,
    probe_starts: int = 6,
    seed: int = 0,
) -> Certificate:
    r"""Certified worst case of LocalUpdate over n = ``clients`` heterogeneous clients (see the module docstring).

    ``measure="floor"``: sup ‖x̄ − x*‖ (scales with C or ζ); ``"rate"``: sup one-round contraction of server GD
    with step ``eta``; ``"error"``: sup ‖x_T − x*‖ after ``rounds`` from ‖x_0 − x*‖ ≤ D (server ``"gd"``,
    ``"heavy_ball"`` or ``"nesterov"`` with ``momentum``). ``engine`` defaults to :func:`default_engine`'s
    choice, the engine that certifies the case faster: ``"pepit"`` for the quadratic floor at small K·n and the
    quadratic error up to K·T·n = :data:`PEPIT_ERROR_WORK` gradient evaluations, the function value and the smooth
    class; ``"spectral"`` otherwise. When that default PEPit SDP gets no reliable value for the quadratic floor or
    error, the spectral engine certifies the case instead. ``pieces``: spectral relaxation refinement (spectral engine only).
    Lower bounds: ``probe_starts`` seeded starts in dimension ``probe_dim`` (default n), replayed in the driver.

    A hypothesis outside the class (γ ≥ 1/(L + α), μ > L, ...) raises ValueError naming it.

    >>> c = certify_local_update(1.0, 4.0, 1, 0.1, pieces=8, probe_starts=1)      # K = 1: gradient descent
    >>> c.value < 1e-6, c.status
    (True, 'certified')
    """
    t0 = time.perf_counter()
    _check(mu, L, K, gamma, alpha, clients, p, C, zeta, measure, function_class, engine, rounds, D, eta, theta)
    mu, L, gamma, alpha = float(mu), float(L), float(gamma), float(alpha)
    n, K = int(clients), int(K)
    th = _theta(theta, K)
    if th.K != K and not isinstance(theta, str):
        K = th.K
    pp = np.full(n, 1.0 / n) if p is None else np.asarray(p, dtype=np.float64)
    if pp.shape != (n,) or np.any(pp <= 0) or abs(pp.sum() - 1) > 1e-9:
        raise ValueError(f"p must be {n} positive weights summing to 1, got {np.asarray(p).tolist()}")
    scale = float(C if zeta is None else zeta)
    if server not in ("gd", "heavy_ball", "nesterov"):
        raise ValueError(f"server must be 'gd', 'heavy_ball' or 'nesterov', got {server!r}")
    if measure == "rate" and server != "gd":
        raise ValueError("measure 'rate' is the one-round contraction of server GD; use measure='error' for momentum")
    chosen = engine is None
    engine = default_engine(function_class, measure, n, K, rounds) if engine is None else engine
    hyp = {
        "mu": mu,
        "L": L,
        "K": K,
        "gamma": gamma,
        "theta": th.to_json(),
        "alpha": alpha,
        "eta": eta,
        "momentum": momentum,
        "server": server,
        "clients": n,
        "p": pp.tolist(),
        "C": None if zeta else scale,
        "zeta": zeta,
        "measure": measure,
        "rounds": rounds,
        "D": D,
        "function_class": function_class,
    }

    # the one driver and the one lower-bound path: fedtheory.methods.pep.certify on LocalUpdate's description,
    # relabelled with this certificate's claim and hypotheses
    def run(engine: str) -> Certificate:
        return _certify_compiled(
            mu, L, K, gamma, th, alpha, pp, eta, momentum, server, C, zeta, measure, rounds, D, probe_dim,
            probe_starts, seed, {**hyp, "engine": engine}, CLAIM_IDS[measure], t0, function_class, engine, pieces,
        )  # fmt: skip

    c = run(engine)
    spectral_covers = function_class == "quadratic" and measure in ("floor", "error")
    if chosen and engine == "pepit" and c.status == "unreliable" and spectral_covers:
        # the cost model picked PEPit, whose SDP got no reliable value here: the spectral engine, which covers
        # the quadratic floor and error at any size (not the function value), certifies the case instead
        from dataclasses import replace

        spectral = run("spectral")
        return replace(
            spectral,
            notes=f"the default engine, PEPit, gave no reliable value ({c.solver}); certified with the spectral "
            f"engine instead. {spectral.notes}",
            details={**spectral.details, "pepit_attempt": {"solver": c.solver, "seconds": c.seconds}},
        )
    return c
