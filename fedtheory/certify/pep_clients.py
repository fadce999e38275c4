"""The federated PEP's clients, shared by every PEP builder (:mod:`fedtheory.methods.pep`, the one builder, and
:mod:`fedtheory.certify.federated_pep`'s wrappers over it): the n-client PEPit problem with its heterogeneity
constraint, PEPit's quadratic class without its zero row, the cvxpy wrapper that sends each LMI entry once, the
solved clients rebuilt as quadratics, and the agreement and reporting margins of a certificate. A module below
both, so that neither imports the other's private names.

>>> pb, fs, xs, cs, o = pep_federation([0.5, 0.5], 1.0, 10.0, "C", "quadratic")
>>> len(fs), o is not None
(2, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "RTOL",
    "SDP_MARGIN",
    "SDP_ATOL_SQUARED",
    "PartTimer",
    "gap_closed",
    "pep_federation",
    "interpolated_quadratics",
    "NOISY_TABLE",
]

#: relative agreement of two SDP solutions, and of lower vs upper bound, for a value to count
RTOL = 1e-4
#: relative margin added to every SDP value before it is reported as an upper bound. Clarabel stops at a relative
#: duality gap of 1e-8 in its own scaling; measured against replayed instances its values sit up to a few 1e-6
#: below the true optimum (n = 3, κ₀ = 100, K = 10: 5e-7 on the root; the spectral floor at κ₀ = 1000, K = 100,
#: Lemma 5's acceptance point: Clarabel's three settings reach residuals ≤ 3e-9, yet their values spread 1.1e-5 on
#: Δ²; on Δ the first, almost solved at a gap of 6e-8, sits 3.5e-6 below the replayed instance, the two solved ones
#: 1.9e-6 above and 1.4e-7 below), so the margin is 1e-5 (upper ≥ lower on the grid). Residuals alone do not bound
#: the value's error there: a stalled ("AlmostSolved") point is never taken without the SCS cross-check
SDP_MARGIN = 1e-5


#: absolute accuracy of a squared SDP value (units of C² or ζ²): a measure whose true value is 0 comes back as
#: 1e-9..6e-8 (FedAvg K = 1's floor: 1.7e-9 at n = 2, 6e-9 at n = 4; SCAFFOLD's and FedSplit's floors, which are
#: 0: roots 7e-5..2.4e-4, i.e. squares up to 5.7e-8), so 1e-7, Clarabel's accuracy on these programs
SDP_ATOL_SQUARED = 1e-7


def gap_closed(lower: float | None, upper: float | None, noise: float = 0.0) -> bool:
    """Whether a replayed lower bound attains an SDP's value within RTOL, or the value is within ``noise`` of 0
    (the SDP cannot tell it from 0: for a square-root measure √:data:`SDP_ATOL_SQUARED` times the scale): the
    probe's local search can then no longer raise the lower bound, only cross-check the upper one, which sampling
    does.

    >>> gap_closed(0.99995, 1.0), gap_closed(0.9, 1.0), gap_closed(None, 1.0)
    (True, False, False)
    >>> gap_closed(1e-15, 4e-5), gap_closed(1e-15, 4e-5, noise=1e-4), gap_closed(None, 0.0, noise=1e-4)
    (False, True, True)
    """
    if upper is None:
        return False
    if upper <= noise:  # closed whatever was found (or nothing yet): no lower bound can tell the value from 0
        return True
    return lower is not None and lower >= upper * (1 - RTOL)


class PartTimer:
    """Where a certificate's time goes (issue 23: everything but the solve at most the solve's own time): wall
    seconds per part, each :meth:`lap` charging the time since the previous one to its part.

    >>> t = PartTimer()
    >>> t.lap("solve"); sorted(t.seconds)
    ['solve']
    """

    def __init__(self) -> None:
        import time

        self._clock = time.perf_counter
        self._tick = self._clock()
        self.seconds: dict[str, float] = {}

    def lap(self, part: str) -> None:
        now = self._clock()
        self.seconds[part] = self.seconds.get(part, 0.0) + now - self._tick
        self._tick = now


_WRAPPER = "fedtheory_cvxpy"


def _register_wrapper() -> None:
    from PEPit import PSDMatrix
    from PEPit.wrappers import WRAPPERS
    from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

    if _WRAPPER in WRAPPERS:
        return

    class _SymmetricLMIWrapper(CvxpyWrapper):
        """PEPit's cvxpy wrapper with each LMI entry sent once (upper triangle, symmetrized)."""

        def send_lmi_constraint_to_solver(self, psd_matrix):
            import cvxpy as cp

            self._list_of_constraints_sent_to_solver.append(psd_matrix)
            M = cp.Variable(psd_matrix.shape, symmetric=True)
            cons = [M >> 0]
            n = psd_matrix.shape[0]
            for i in range(n):
                for j in range(i, n):
                    ex = self._expression_to_solver(psd_matrix[i, j])
                    if i != j:
                        ex = 0.5 * (ex + self._expression_to_solver(psd_matrix[j, i]))
                    cons.append(M[i, j] == ex)
            self._list_of_solver_constraints += cons

        def _recover_dual_values(self):
            vals = [c.dual_value for c in self.prob.constraints]
            out, k = [vals[0]], 1
            for c in self._list_of_constraints_sent_to_solver:
                out.append(vals[k])
                k += 1
                if isinstance(c, PSDMatrix):
                    k += c.shape[0] * (c.shape[0] + 1) // 2
            return out, vals[0]

    WRAPPERS[_WRAPPER] = _SymmetricLMIWrapper


def _quadratic_leaf_class():
    import numpy as _np
    from PEPit import Expression, PSDMatrix
    from PEPit.functions import SmoothStronglyConvexQuadraticFunction

    class _QuadraticLeaf(SmoothStronglyConvexQuadraticFunction):
        """PEPit's quadratic class without the identically zero row of its stationary point in the LMI (a zero
        row leaves the LMI without interior)."""

        def add_class_constraints(self):
            xs, _, fs = self.list_of_stationary_points[0]
            pts = [t for t in self.list_of_points if t[0] is not xs]
            for xi, gi, fi in pts:
                self.list_of_class_constraints.append(fi - fs == 0.5 * (xi - xs) * gi)
            for a in range(len(pts)):
                for b in range(a + 1, len(pts)):
                    self.list_of_class_constraints.append((pts[a][0] - xs) * pts[b][1] == (pts[b][0] - xs) * pts[a][1])
            N = len(pts)
            T = _np.empty((N, N), dtype=Expression)
            for i, (xi, gi, _) in enumerate(pts):
                for j, (xj, gj, _) in enumerate(pts):
                    T[i, j] = (self.L + self.mu) * gi * (xj - xs) - gi * gj - self.mu * self.L * (xi - xs) * (xj - xs)
            if N:
                self.list_of_class_psd.append(PSDMatrix(matrix_of_expressions=T))

    return _QuadraticLeaf


#: :func:`~fedtheory.certify.interpolation.quadratic_interpolant`'s cuts for a table read back from an SDP solved
#: to Clarabel's accuracy (~1e-9 on the Gram matrix, so ~3e-5 on the points): a singular direction of the points
#: below 1e-4 of the largest, and an extreme direction ((1 − a_j²)^½ ≤ 1e-4), are the solver's noise. With the
#: exact-data cuts (1e-10, 1e-6) such a direction was kept and its noise divided by ~1e-5: FedAvg's function value
#: at K = 1, T = 2 (n = 2) interpolated to a 6.6e-2 residual and replayed 1.6e-4 below the SDP's value, its error
#: at n = 4 1.3e-3 below; with these cuts 4.5e-9 and 7.2e-9 (the residual then ~1e-4: what the cut discards)
NOISY_TABLE = {"rank_rtol": 1e-4, "extreme_tol": 1e-4}


def interpolated_quadratics(functions, minimizers, mu: float, L: float, cuts: dict | None = None):
    """The solved PEP's clients as quadratics: each table (points minus the client's minimizer, gradients) gets a
    symmetric A_i with spectrum in [μ, L] through it (:func:`~fedtheory.certify.interpolation.quadratic_interpolant`,
    with ``cuts`` — e.g. :data:`NOISY_TABLE` — as its keyword arguments). Returns (minimizers c (n, d), eigenvalues
    (n, d) in units of the PEP's L times L, eigenvectors, A, the largest interpolation residual relative to the
    table's gradients)."""
    from fedtheory.certify.interpolation import quadratic_interpolant
    from fedtheory.certify.pep import _data

    cs = np.stack([np.asarray(c.eval(), dtype=np.float64) for c in minimizers])
    lams: Any = []
    vecs: Any = []
    resid = 0.0
    for f, c in zip(functions, cs):
        X, G, _ = _data(f)
        lam, V = quadratic_interpolant(X - c, G, mu / L, 1.0, **(cuts or {}))
        lams.append(lam * L)
        vecs.append(V)
        resid = max(resid, float(np.abs((X - c) @ (V * lam) @ V.T - G).max() / max(np.abs(G).max(), 1e-300)))
    lams, vecs = np.array(lams), np.array(vecs)
    return cs, lams, vecs, np.einsum("nij,nj,nkj->nik", vecs, lams, vecs), resid


def pep_federation(p, mu: float, L: float, het: str, function_class: str):
    """A PEPit problem holding n = len(p) clients of the class, in units L = 1 (f_i/L), with heterogeneity:
    (pb, leaves, x* of Σ p_i f_i, each client's minimizer c_i, the centre o or None).

    ``het="C"``: ‖c_i − o‖ ≤ 1 for a free centre o (lengths in units of C); ``"zeta"``: Σ p_i‖∇f_i(x*)‖² ≤ 1
    (units of ζ). Shared by every federated PEP (LocalUpdate's here, any method's in
    :mod:`fedtheory.methods.pep`).
    """
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    _register_wrapper()
    leaf = _quadratic_leaf_class() if function_class == "quadratic" else SmoothStronglyConvexFunction
    pb = PEP()
    fs = [pb.declare_function(leaf, mu=mu / L, L=1.0) for _ in range(len(p))]
    F = float(p[0]) * fs[0]
    for pi, f in zip(p[1:], fs[1:]):
        F = F + float(pi) * f
    xs = F.stationary_point()
    cs = [f.stationary_point() for f in fs]
    o = None
    if het == "C":
        o = pb.set_initial_point()
        for c in cs:
            pb.add_constraint((c - o) ** 2 <= 1.0)
    else:
        grads = [f.gradient(xs) for f in fs]
        # units L = 1 divide every gradient by L: Σ p_i‖∇f_i(x*)‖² ≤ 1 reads ≤ 1/L² here
        pb.add_constraint(
            sum((float(pi) * g**2 for pi, g in zip(p[1:], grads[1:])), float(p[0]) * grads[0] ** 2) <= 1.0 / L**2
        )
    return pb, fs, xs, cs, o


def _shrink(size: float, start: float, D_units: float) -> float:
    """The factor that brings a rebuilt worst case (heterogeneity ``size``, ‖x_0 − x*‖ = ``start``, in PEP units)
    back into the class: heterogeneity ≤ 1 and ‖x_0 − x*‖ ≤ ``D_units`` both hold after scaling lengths by it."""
    return min(1.0 / size, D_units / start) if start > 0 else 1.0 / size
