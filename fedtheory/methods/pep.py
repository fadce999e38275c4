r"""The federated PEP compiled from a method's description: certified worst cases for n ≥ 2 clients.

:func:`certify` reads a :class:`~fedtheory.methods.ir.Method` (state, init, one round of primitives) and writes
its performance-estimation problem in PEPit, with no per-method code:

- one PEPit leaf per client, in units L = 1 (leaf = f_i/L in F_{μ/L, 1}; ``"quadratic"``: PEPit's quadratic class without its zero row,
  :func:`~fedtheory.certify.pep_clients._quadratic_leaf_class`; ``"smooth-strongly-convex"``:
  :class:`~PEPit.functions.SmoothStronglyConvexFunction`); client i's gradient is L·sc_i·∇leaf_i with
  sc_i = 1, or n p_i under the DANE family's uniform view (client i runs on n p_i f_i, aggregated with 1/n);
- :class:`~fedtheory.methods.ir.Gradient` → a gradient of the leaf; :class:`~fedtheory.methods.ir.LocalSteps`
  literally; an exact :class:`~fedtheory.methods.ir.Prox` of step s → y = v − s·sc_i·L·∇leaf_i(y) with the
  gradient at y a new point (what PEPit's ``proximal_step`` writes); an inexact one → its gradient steps
  literally (default step 1/(s·L·max_i sc_i + 1), the class's smoothness of the scaled prox objective);
  :class:`~fedtheory.methods.ir.Aggregate` → Σ w_i v_i (full participation: "mean" and "sum" coincide);
  :class:`~fedtheory.methods.ir.Scalars` on the host; :class:`~fedtheory.methods.ir.ServerMap` → ValueError;
- heterogeneity: ‖c_i − o‖ ≤ C (c_i the minimizer of f_i, o free) or Σ p_i‖∇f_i(x*)‖² ≤ ζ² (``zeta``);
- ``function_class="sod"``: the class of :func:`~fedtheory.certify.federated_pep.certify_sdane` instead — two
  clients of weight ½, f_1 μ-convex (μ ≥ 0, no smoothness), (f_1 − f_2)/2 δ-smooth (``delta``), f_2 μ-convex on
  every point it is evaluated at (and at every round's output and server variables); measures ``"error"`` and
  ``"function-value"`` (``L`` is not used). With μ = 0 its function value is certify_sdane's metric for
  Acc-S-DANE (any R) and S-DANE (R = 1); no lower bound is replayed here (certify_sdane, which builds its PEP
  with :func:`build_pep`'s weighted-average output, potential and inexact prox, replays it on the driver).

The round is interpreted twice. First on a tiny linear-combination representation: every vector is a dict
atom → coefficient over the state atoms, x_0 and one atom per gradient evaluation (an evaluation at a point
already evaluated reuses its atom, so the PEP never holds two gradients at one point — which would force
‖g − g'‖² ≤ 0, a constraint without interior). Then the atoms become PEPit points and each evaluation is added
to its client's leaf with ``add_point``.

Measures:

- ``"rate"``: sup ‖R(s) − R(s')‖_S / ‖s − s'‖_S over two arbitrary states, one round (no x*), ‖·‖_S the state
  norm of :meth:`~fedtheory.methods.ir.Method.state_norm_sq` (server variables unweighted, client variables with
  the aggregation weights); a method with host scalars is measured at its first round's scalars;
- ``"error"``: sup ‖out_T − x*‖ after T = ``rounds`` rounds from the method's init, ‖x_0 − x*‖ ≤ D;
- ``"function-value"``: sup F(out_T) − F(x*), F = Σ p_i f_i, same start;
- ``"floor"``: sup ‖out − x*‖ over fixed points of the whole state. The fixed point is imposed by
  **elimination**, never as ‖R(s) − s‖² = 0 (no interior: interior-point solvers stall): the first pass gives
  the equations R(s) − s = 0 as linear relations between atoms; Gauss–Jordan with the largest pivot solves them
  for as many atoms as their rank, and those atoms enter the PEP as combinations of the others. A linear
  dependency between the equations is a conserved quantity φ(s) of the round (SCAFFOLD's c − Σ p_i c_i); it is
  added as φ(s) = φ(init) when the init fixes it (no x_0 in it), since no run reaches a fixed point off it.

The output of a client variable is its mean with the aggregation weights (FedSplit reports x̄ = Σ p_j z_j).

Lower bounds: :func:`fedtheory.methods.probe.lower_bound` (quadratic instances found by a multi-start optimizer,
replayed through :func:`fedtheory.methods.run`) when that module is present, and, for the quadratic class, the PEP's own
worst case rebuilt as a :class:`~fedtheory.problems.quadratic.QuadraticFederation`
(:func:`~fedtheory.certify.interpolation.quadratic_interpolant`: in the class whatever the solver's accuracy) and
replayed through :func:`fedtheory.methods.run` — the rate one round from the PEP's two states, the error and function
value T rounds from its x_0 after shrinking the instance into the class, the floor at the exact fixed point of the
replayed (affine) round (its map from the probe's batched runs, the fixed point checked by one real run:
``details["extraction"]["fixed_point_residual"]``). For the error and function value (quadratic class), a probe then
starts from each instance found (:func:`fedtheory.certify.lower_bounds.polish_error`: the start and centres chosen by
exact block steps on its Hessians; ``details["polished_lower_k"]``). For the smooth strongly convex class the PEP's
worst case becomes explicit F_{μ,L} clients (:func:`_interpolated_lower`: each client's table interpolated by a
:class:`~fedtheory.certify.interpolation.SmoothStronglyConvexInterpolant`, class-checked) replayed through
:func:`fedtheory.methods.run` (``details["smooth_lower"]``; the floor for LocalUpdate methods, whose replay settles
server GD). The rate and the function value also take identical clients on a fine grid of curvatures
(:func:`fedtheory.certify.lower_bounds.identical_clients_lower`), and a LocalUpdate method's floor the extreme-spectrum
family (:func:`fedtheory.certify.lower_bounds.extreme_spectrum_floor`). The largest is ``lower``.

Upper bounds: the PEP above (``engine="pepit"``), or an outside program given as ``upper_bound`` (LocalUpdate's
spectral program, from :func:`fedtheory.certify.federated_pep.certify_local_update`: any K), with the same lower
bounds — and for an error, which such a program has no worst-case table for, the PEPit PEP's extracted worst case
while that PEP is small (:data:`PEPIT_START_WORK`). :func:`fedtheory.certify.federated_pep.certify_local_update`
is this function on LocalUpdate's description, relabelled.

Honesty: the SDP goes to Clarabel (retries) and to SCS when Clarabel is not "optimal"
(:func:`fedtheory.certify.pep._solve_detail`); a value they do not agree on is ``status="unreliable"`` with
``value=None``, as is one whose replayed lower bound exceeds it beyond :data:`RTOL`.

>>> c = certify("fedsplit", mu=1.0, L=10.0, clients=2, measure="rate", probe_starts=0)
>>> c.status, round(c.value, 4), round(c.lower, 4)
('certified', 0.5195, 0.5195)
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from fedtheory.certify.certificate import Certificate
from fedtheory.certify.pep_clients import RTOL, SDP_ATOL_SQUARED, SDP_MARGIN, PartTimer, gap_closed
from fedtheory.methods.ir import Aggregate, Combine, Gradient, LocalSteps, Method, Prox, Scalars, ServerMap, coef_value

__all__ = ["certify", "build_pep", "MEASURES", "CLASSES", "CLAIM_ID"]

MEASURES = ("rate", "error", "function-value", "floor")
CLASSES = ("quadratic", "smooth-strongly-convex", "sod")
CLAIM_ID = "verify/methods-pep"
#: probe starts once the replayed PEP worst case attains the SDP's value within RTOL (the probe is then only an
#: independent cross-check of the upper bound; at probe_starts = 4 it cost 1-2x the SDP solve, at 1 start ~1/4)
CLOSED_GAP_PROBE_STARTS = 1
#: coefficients below this (relative to the largest of their row) are rounding noise of the first pass: the
#: coefficients are products of a few O(1)..O(L/μ) hyperparameters, exact to ~1e-15 relative
_ZERO = 1e-13
#: a linear relation between fixed-point equations counts as a dependency when its singular value is below
#: this times the largest (the rows are exact up to ~1e-15; an independent row has singular value O(step sizes))
_RANK_RTOL = 1e-10


# --------------------------------------------------------------------------------------------
# the linear-combination representation
# --------------------------------------------------------------------------------------------


def _lin(*pairs) -> dict:
    out: dict = {}
    for coef, vec in pairs:
        if coef == 0:
            continue
        for a, c in vec.items():
            out[a] = out.get(a, 0.0) + coef * c
    return {a: c for a, c in out.items() if c != 0.0}


def _key(vec: dict) -> tuple:
    scale = max((abs(c) for c in vec.values()), default=1.0)
    return tuple(sorted((a, round(c / scale, 12)) for a, c in vec.items() if abs(c) > _ZERO * scale)) + (
        round(scale, 12),
    )


class _Oracle:
    """Records every evaluation: client i at a point (a linear combination) gets one gradient atom and one value
    atom; ``prox`` makes the implicit point y = v − t·g with a fresh gradient atom g."""

    def __init__(self, accuracy: float = 0.0) -> None:
        self.calls: list = []  # (client, point, grad atom, value atom)
        self._seen: dict = {}
        #: relative accuracy c of an exact Prox read as an inexact local solve (condition (6)); 0: exact
        self.accuracy = float(accuracy)
        #: per Prox execution: (1/s, [(error atom, output, cold centre) per client]) when accuracy > 0
        self.accuracy_groups: list = []
        #: per Prox execution: the n outputs (what the replays of the DANE family's local solver return)
        self.prox_outputs: list = []

    def _new(self, i: int, point: dict) -> tuple:
        k = len(self.calls)
        g, f = ("g", i, k), ("f", i, k)
        self.calls.append((i, point, g, f))
        self._seen[(i, _key(point))] = g
        return g

    def grad(self, i: int, point: dict) -> dict:
        g = self._seen.get((i, _key(point)))
        return {g if g is not None else self._new(i, point): 1.0}

    def value_atom(self, i: int, point: dict) -> tuple:
        self.grad(i, point)
        g = self._seen[(i, _key(point))]
        return ("f",) + g[1:]

    def prox(self, i: int, center: dict, t: float) -> dict:
        k = len(self.calls)
        g = ("g", i, k)
        y = _lin((1.0, center), (-t, {g: 1.0}))
        self.calls.append((i, y, g, ("f", i, k)))
        self._seen[(i, _key(y))] = g
        return y


def _interpret(
    method: Method, state: dict, scalars: dict, oracle: _Oracle, n: int, w: np.ndarray, sc: np.ndarray, L: float
) -> tuple[dict, dict]:
    """One round on linear combinations: ``state`` maps server variables to a combination and client variables
    to a list of n combinations; returns (new state, scalars after the round)."""
    scalars = dict(scalars)
    env = {v: state[v] for v in method.server}
    cl = {v: list(state[v]) for v in method.client}
    Lmax = L * float(np.max(sc))

    def val(v: str, i: int) -> dict:
        return cl[v][i] if method.scope(v) == "client" else env[v]

    for op in method.round:
        if isinstance(op, Combine):
            cs = [(v, coef_value(c, scalars)) for v, c in op.terms]
            if method.scope(op.out) == "client":
                cl[op.out] = [_lin(*[(c, val(v, i)) for v, c in cs]) for i in range(n)]
            else:
                env[op.out] = _lin(*[(c, env[v]) for v, c in cs])
        elif isinstance(op, Gradient):
            cl[op.out] = [_lin((L * sc[i], oracle.grad(i, val(op.at, i)))) for i in range(n)]
        elif isinstance(op, LocalSteps):
            gamma, alpha = coef_value(op.gamma, scalars), coef_value(op.alpha, scalars)
            th = op.weights().weights
            # the last gradient is needed only when the message weighs it or the last point is written
            nz = np.flatnonzero(np.asarray(th) != 0)
            kmax = op.steps - 1 if op.out is not None else (int(nz[-1]) if nz.size else -1)
            outs, msgs = [], []
            for i in range(n):
                y = val(op.start, i)
                msg: dict = {}
                anchor = val(op.anchor, i) if op.anchor is not None else None
                shift = val(op.shift, i) if op.shift is not None else None
                for k in range(kmax + 1):
                    g = _lin((L * sc[i], oracle.grad(i, y)))
                    if alpha:
                        g = _lin((1.0, g), (alpha, y), (-alpha, anchor))
                    if shift is not None:
                        g = _lin((1.0, g), (1.0, shift))
                    if th[k] != 0:
                        msg = _lin((1.0, msg), (float(th[k]), g))
                    y = _lin((1.0, y), (-gamma, g))
                outs.append(y)
                msgs.append(msg)
            if op.out is not None:
                cl[op.out] = outs
            if op.message is not None:
                cl[op.message] = msgs
        elif isinstance(op, Prox):
            s = coef_value(op.step, scalars)
            res, group = [], []
            for i in range(n):
                cold = val(op.center, i)
                # prox_{s f_i}(centre + s ℓ_i): the linear term moves the centre (a local solver never gets here)
                centre = cold if op.linear is None else _lin((1.0, cold), (s, val(op.linear, i)))
                if op.solver.kind == "exact" and oracle.accuracy > 0:
                    # any point whose subproblem gradient is e_i (a free atom): y = centre + s e_i − t g_i, with
                    # Σ_i‖e_i‖² ≤ c/s²·Σ_i‖y_i − cold_i‖² added by _add_accuracy (condition (6))
                    e = ("e", i, len(oracle.calls))
                    res.append(oracle.prox(i, _lin((1.0, centre), (s, {e: 1.0})), s * sc[i] * L))
                    group.append((e, res[-1], cold))
                    continue
                if op.solver.kind == "exact":
                    res.append(oracle.prox(i, centre, s * sc[i] * L))
                    continue
                # gradient descent on s·h_i(y) + ½‖y − v‖² (h_i the client's function), as the simulator runs it
                eta = float(op.solver.step_size) if op.solver.step_size is not None else 1.0 / (s * Lmax + 1.0)
                y = cold if op.start is None else val(op.start, i)
                for _ in range(op.solver.step_count):
                    g = _lin((s * L * sc[i], oracle.grad(i, y)), (1.0, y), (-1.0, centre))
                    y = _lin((1.0, y), (-eta, g))
                res.append(y)
            if group:
                oracle.accuracy_groups.append((1.0 / s, group))
            oracle.prox_outputs.append(res)
            cl[op.out] = res
        elif isinstance(op, Aggregate):
            env[op.out] = _lin(*[(float(w[i]), cl[op.var][i]) for i in range(n)])
        elif isinstance(op, Scalars):
            scalars.update(op.fn(scalars))
        elif isinstance(op, ServerMap):  # certify() refuses these before interpreting
            raise ValueError(f"method {method.name!r}: a ServerMap is nonlinear; no PEP")
    new = {v: env[v] for v in method.server}
    new.update({v: cl[v] for v in method.client})
    return new, scalars


def _output(method: Method, state: dict, w: np.ndarray) -> dict:
    v = method.output
    if v in method.server:
        return state[v]
    return _lin(*[(float(w[i]), state[v][i]) for i in range(len(w))])


def _state_atoms(method: Method, n: int, tag: str) -> dict:
    st = {v: {("s", tag, v, None): 1.0} for v in method.server}
    st.update({v: [{("s", tag, v, i): 1.0} for i in range(n)] for v in method.client})
    return st


def _init_state(method: Method, n: int) -> dict:
    def one(v):
        return {("x0",): 1.0} if method.init[v] == "x0" else {}

    st = {v: one(v) for v in method.server}
    st.update({v: [one(v) for _ in range(n)] for v in method.client})
    return st


def _entries(method: Method, n: int) -> list:
    """The state's entries (var, client or None) in a fixed order, with their weights in the state norm."""
    return [(v, None) for v in method.server] + [(v, i) for v in method.client for i in range(n)]


# --------------------------------------------------------------------------------------------
# the floor: fixed-point equations solved for a subset of atoms
# --------------------------------------------------------------------------------------------


def _fixed_point_substitution(method: Method, n: int, w, sc, L, scalars) -> tuple[dict, dict, _Oracle, list]:
    """(substitution atom → combination, fixed state, oracle, invariants) for the floor."""
    oracle = _Oracle()
    s0 = _state_atoms(method, n, "s")
    s1, _ = _interpret(method, s0, scalars, oracle, n, w, sc, L)
    entries = _entries(method, n)

    def get(st, v, i):
        return st[v] if i is None else st[v][i]

    rows = [_lin((1.0, get(s1, v, i)), (-1.0, get(s0, v, i))) for v, i in entries]
    # conserved quantities: left null vectors of the equations' coefficient matrix
    atoms = sorted({a for r in rows for a in r}, key=repr)
    idx = {a: k for k, a in enumerate(atoms)}
    M = np.zeros((len(rows), len(atoms)))
    for r, row in enumerate(rows):
        for a, c in row.items():
            M[r, idx[a]] = c
    invariants = []
    if len(rows):
        U, S, _ = np.linalg.svd(M)
        smax = S.max() if S.size else 0.0
        rank = int(np.sum(S > _RANK_RTOL * max(smax, 1e-300)))
        init = _init_state(method, n)
        for k in range(rank, len(rows)):
            lam = U[:, k]
            x0coef = sum(lam[r] * get(init, v, i).get(("x0",), 0.0) for r, (v, i) in enumerate(entries))
            if abs(x0coef) > _RANK_RTOL:
                continue  # φ(init) involves the free x_0: no constraint on the fixed point
            phi = _lin(*[(float(lam[r]), get(s0, v, i)) for r, (v, i) in enumerate(entries)])
            invariants.append([float(x) for x in lam])
            rows.append(phi)  # φ(s) = φ(init) = 0
    sub = _gauss_jordan(rows)
    return sub, s0, oracle, invariants


def _gauss_jordan(rows: list) -> dict:
    """Solve the linear relations Σ_a row[a]·a = 0 for some atoms: returns atom → combination of the others
    (largest pivot first; dependent rows dropped)."""
    rows = [dict(r) for r in rows if r]
    sub: dict = {}
    while rows:
        best = None
        for r, row in enumerate(rows):
            scale = max((abs(c) for c in row.values()), default=0.0)
            for a, c in row.items():
                if best is None or abs(c) > best[0]:
                    best = (abs(c), r, a, scale)
        if best is None or best[0] <= 1e-300:
            break
        _, r, a, _ = best
        row = rows.pop(r)
        expr = {b: -c / row[a] for b, c in row.items() if b != a}
        # substitute a everywhere (previous solutions and remaining rows)
        for b in list(sub):
            if a in sub[b]:
                sub[b] = _lin((1.0, {k: v for k, v in sub[b].items() if k != a}), (sub[b][a], expr))
        new_rows = []
        for row2 in rows:
            if a in row2:
                row2 = _lin((1.0, {k: v for k, v in row2.items() if k != a}), (row2[a], expr))
            scale = max((abs(c) for c in row2.values()), default=0.0)
            if scale > _ZERO * max(1.0, best[3]):
                new_rows.append(row2)
        rows = new_rows
        sub[a] = expr
    return sub


def _substitute(vec: dict, sub: dict) -> dict:
    if not sub:
        return vec
    pairs = []
    for a, c in vec.items():
        pairs.append((c, sub[a]) if a in sub else (c, {a: 1.0}))
    return _lin(*pairs)


# --------------------------------------------------------------------------------------------
# building and solving the PEP
# --------------------------------------------------------------------------------------------


class _Built:
    """A PEPit problem plus what the replay needs: atom → Point, leaves, x*, minimizers, centre."""

    def __init__(self, pb, leaves, xs, cs, o, points):
        self.pb, self.leaves, self.xs, self.cs, self.o, self.points = pb, leaves, xs, cs, o, points


def _new_problem(n, p, mu, L, het, function_class):
    from fedtheory.certify.pep_clients import pep_federation

    return pep_federation(p, mu, L, het, function_class)


def _wsum(weights, items):
    out = float(weights[0]) * items[0]
    for wi, it in zip(weights[1:], items[1:]):
        out = out + float(wi) * it
    return out


def _points(atoms: set, sub: dict):
    """A PEPit Point per atom: leaves for free atoms, combinations for substituted ones."""
    from PEPit import Point

    free = sorted({a for a in atoms if a not in sub} | {b for a in atoms if a in sub for b in sub[a]}, key=repr)
    pts = {a: Point() for a in free}

    cache: dict = {}

    def build(vec: dict):
        vec = _substitute(vec, sub)
        k = _key(vec)
        if k not in cache:  # one Point object per point: PEPit recognizes a point by identity
            out = Point(is_leaf=False, decomposition_dict=dict())
            for a, c in vec.items():
                out = out + float(c) * pts[a]
            cache[k] = out
        return cache[k]

    return pts, build


def _add_calls(oracle: _Oracle, leaves, build, sub):
    from PEPit import Expression

    values = {}
    for i, point, g, f in oracle.calls:
        fval = Expression()
        values[f] = fval
        leaves[i].add_point((build(point), build({g: 1.0}), fval))
    return values


def _norm_sq(method, build, st_a, st_b, w, n):
    """The state norm of (st_a − st_b), as a PEPit expression (Method.state_norm_sq's definition)."""
    terms = None
    for v, i in _entries(method, n):
        a = st_a[v] if i is None else st_a[v][i]
        b = st_b[v] if i is None else st_b[v][i]
        d = build(_lin((1.0, a), (-1.0, b)))
        t = (1.0 if i is None else float(w[i])) * d**2
        terms = t if terms is None else terms + t
    return terms


def _build(
    method,
    measure,
    n,
    p,
    w,
    sc,
    mu,
    L,
    het,
    function_class,
    rounds,
    D_units,
    delta=None,
    accuracy=0.0,
    average=None,
    potential=None,
):
    """The PEP (see :func:`build_pep` for ``accuracy``, ``average`` and ``potential``)."""
    if (accuracy or average is not None or potential) and measure in ("rate", "floor"):
        raise ValueError(
            f"prox accuracy, averaged outputs and potentials are for the error and function value "
            f"over rounds, not measure {measure!r}"
        )
    if potential and measure != "function-value":
        raise ValueError("a potential term is added to the function value only")
    if potential and not set(potential) <= set(method.server):
        raise ValueError(f"a potential is on server variables {method.server}, got {sorted(potential)}")
    if average is not None and len(average) != int(rounds):
        raise ValueError(f"average needs one weight per round ({rounds}), got {len(average)}")
    oracle = _Oracle(accuracy)
    sub: dict = {}
    info: dict = {}
    outs: list = []  # each round's output (error, function value)
    server_states: list = []  # each round's server variables
    pot: list = []  # (coefficient, server vector) of the potential
    scal = dict(method.scalars)
    if measure == "rate":
        sa, sb = _state_atoms(method, n, "a"), _state_atoms(method, n, "b")
        ra, _ = _interpret(method, sa, scal, oracle, n, w, sc, L)
        rb, _ = _interpret(method, sb, scal, oracle, n, w, sc, L)
        info.update(sa=sa, sb=sb)
    elif measure == "floor":
        sub, fixed, oracle, invariants = _fixed_point_substitution(method, n, w, sc, L, scal)
        out = _output(method, fixed, w)
        info.update(fixed=fixed, invariants=invariants, eliminated=[repr(a) for a in sub])
    else:
        st = _init_state(method, n)
        outs, server_states = [], []
        for _ in range(int(rounds)):
            st, scal = _interpret(method, st, scal, oracle, n, w, sc, L)
            outs.append(_output(method, st, w))
            server_states += [st[v] for v in method.server]
        if average is None:
            out = outs[-1]
        else:  # the weighted average of the rounds' outputs (S-DANE's x̄^R)
            aw = np.asarray(average, dtype=np.float64)
            out = _lin(*[(float(a / aw.sum()), o) for a, o in zip(aw, outs)])
        pot = [(float(coef), st[v]) for v, coef in (potential or {}).items() if coef]
        if measure == "function-value":
            vatoms = [oracle.value_atom(i, out) for i in range(n)]
        info.update(outputs=outs)
    if function_class == "sod":
        # f_2's convexity is closed over every round's outputs and server variables too (as certify_sdane did)
        return _build_sod(method, measure, oracle, out, n, p, mu, delta, D_units, outs + server_states, pot)
    pb, leaves, xs, cs, o = _new_problem(n, p, mu, L, het, function_class)
    atoms = {a for _, pt, g, f in oracle.calls for a in list(pt) + [g]}
    if measure == "rate":
        for st in (sa, sb, ra, rb):
            for v in method.server:
                atoms |= set(st[v])
            for v in method.client:
                for x in st[v]:
                    atoms |= set(x)
    else:
        atoms |= set(out) | ({("x0",)} if measure != "floor" else set())
        if measure != "floor":
            atoms |= {a for _, vec in pot for a in vec}
    pts, build = _points(atoms, sub)
    values = _add_calls(oracle, leaves, build, sub)
    _add_accuracy(pb, oracle, build)
    if measure == "rate":
        pb.set_initial_condition(_norm_sq(method, build, sa, sb, w, n) <= 1.0)
        pb.set_performance_metric(_norm_sq(method, build, ra, rb, w, n))
    elif measure == "floor":
        pb.set_performance_metric((build(out) - xs) ** 2)
    else:
        x0 = pts[("x0",)]
        pb.set_initial_condition((x0 - xs) ** 2 <= D_units**2)
        if measure == "function-value":
            # F(out) − F(x*) = L Σ p_i (leaf_i(out) − leaf_i(x*)); values in units of L·(C or ζ)²
            pb.set_performance_metric(
                _wsum(p, [L * (values[vatoms[i]] - leaves[i].value(xs)) for i in range(n)]) + _potential(pot, build, xs)
            )
        else:
            pb.set_performance_metric((build(out) - xs) ** 2)
    built = _Built(pb, leaves, xs, cs, o, pts)
    built.build, built.out, built.info = build, (None if measure == "rate" else out), info
    # the worst case's named points, read back after the solve by the replays of
    # fedtheory.certify.federated_pep (smooth-class interpolation, quadratic extraction): the leaves, x*, the
    # minimizers, the centre, and the measure's own points — the output at the fixed state, the two states' outputs
    # (rate), or the start x_0
    named = {"functions": leaves, "x_star": xs, "minimizers": cs, "centre": o}
    if measure == "rate":
        named.update(x1=build(_output(method, sa, w)), x2=build(_output(method, sb, w)))
    elif measure == "floor":
        named["fixed_point"] = build(out)
    else:
        named["x0"] = pts[("x0",)]
    pb.fed_points = named
    return built


def _weights_and_scales(method: Method, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(aggregation weights, client gradient scales sc_i): sc_i = n p_i under the DANE family's uniform view
    (client i runs on n p_i f_i), else 1."""
    n = len(p)
    return method.aggregation_weights(p), (p * n if method.weighting == "uniform-view" else np.ones(n))


def build_pep(
    method: Method,
    *,
    measure: str,
    mu: float,
    L: float,
    p: Any,
    het: str = "C",
    function_class: str = "quadratic",
    rounds: int | None = None,
    D_units: float | None = None,
    delta: float | None = None,
    prox_accuracy: float = 0.0,
    average: Any = None,
    potential: dict | None = None,
):
    r"""The federated PEP of ``method`` (PEPit, not solved), the one builder behind :func:`certify` and
    :func:`fedtheory.certify.federated_pep.certify_local_update`'s PEPit engine: units L = 1 (leaf = f_i/L), lengths
    per unit of the heterogeneity (``het``: ``"C"`` or ``"zeta"``), ‖x_0 − x*‖ ≤ ``D_units`` for the error and
    function value (whose metric is F(out) − F(x*) in units L·(C or ζ)²). No hypothesis checks (μ = 0 is allowed:
    the caller decides where the PEP stays bounded). ``function_class="sod"`` (``delta``): the δ-SOD pair of
    :func:`certify` with true gradients, ‖x_0 − x*‖ ≤ 1.

    For the error and function value over rounds:

    - ``prox_accuracy`` c > 0: every exact :class:`~fedtheory.methods.ir.Prox` of step s becomes an inexact local
      solve of relative accuracy c — its output is any y_i whose subproblem gradient e_i (of
      f_i − ⟨ℓ_i, ·⟩ + ‖· − v_i‖²/(2s)) satisfies, summed over the clients of that round,
      Σ_i‖e_i‖² ≤ (c/s²)Σ_i‖y_i − v_i‖² (the DANE family's condition (6), v_i the prox centre); e_i is a free point,
      so c = 0 is the exact prox by elimination;
    - ``average``: one weight per round; the output is the weighted average of the rounds' outputs (S-DANE's
      x̄^R, weights (1 + μ/λ)^r);
    - ``potential``: {server variable: coefficient a}, adding a·‖v_T − x*‖² to the function value (S-DANE's
      μ/2‖v^R − x*‖²).

    Returns the built problem: ``.pb`` (its ``fed_points``: the worst case's named points — ``functions``,
    ``x_star``, ``minimizers``, ``centre``, and ``fixed_point`` (floor), ``x1``/``x2`` (rate) or ``x0``), ``.leaves``,
    ``.info``.

    >>> from fedtheory.certify.pep import _solve_detail
    >>> from fedtheory.methods import get
    >>> b = build_pep(get("fedavg", K=2, gamma=0.05), measure="floor", mu=1.0, L=10.0, p=[0.5, 0.5])
    >>> sorted(b.pb.fed_points)
    ['centre', 'fixed_point', 'functions', 'minimizers', 'x_star']
    >>> round(math.sqrt(_solve_detail(b.pb, wrapper="fedtheory_cvxpy")[0]), 4)
    0.2623
    """
    pp = np.asarray(p, dtype=np.float64)
    w, sc = _weights_and_scales(method, pp)
    return _build(
        method,
        measure,
        len(pp),
        pp,
        w,
        sc,
        float(mu),
        float(L),
        het,
        function_class,
        rounds,
        D_units,
        delta=delta,
        accuracy=prox_accuracy,
        average=average,
        potential=potential,
    )


def _add_accuracy(pb, oracle, build) -> None:
    """Condition (6) for every inexact Prox execution: Σ_i‖e_i‖² ≤ (c/s²)·Σ_i‖y_i − cold_i‖² (e_i the gradient of
    client i's prox subproblem at its output y_i, cold_i the prox centre; c = ``oracle.accuracy``)."""
    for inv_s, group in oracle.accuracy_groups:
        err = dist = None
        for e, y, cold in group:
            ee, dd = build({e: 1.0}) ** 2, (build(y) - build(cold)) ** 2
            err, dist = (ee, dd) if err is None else (err + ee, dist + dd)
        pb.add_constraint(err <= oracle.accuracy * inv_s**2 * dist)


def _potential(pot, build, xs):
    """Σ coef·‖v − x*‖² over the potential's (coef, server vector) pairs (0 when there are none)."""
    out = 0.0
    for coef, vec in pot:
        out = coef * (build(vec) - xs) ** 2 + out
    return out


def _build_sod(method, measure, oracle, out, n, p, mu, delta, D_units, closing=(), pot=()):
    """The function-value PEP over two μ-convex clients under δ-SOD, the class of
    :func:`fedtheory.certify.federated_pep.certify_sdane` (:func:`fedtheory.certify.pep.sod_pair`: f_1 a μ-convex
    leaf, g = (f_1 − f_2)/2 a δ-smooth leaf, f_2 = f_1 − 2g μ-convex on every point it is evaluated at). Client 1's
    gradient atoms go to f_1; client 2's are f_2's gradients, entered through g's: ∇g(x) = ½(∇f_1(x) − ∇f_2(x))."""
    from PEPit import Expression

    from fedtheory.certify.pep_clients import _register_wrapper
    from fedtheory.certify.pep import close_sod_pair, sod_start

    from PEPit import PEP

    _register_wrapper()
    pb = PEP()
    f1, g, f2, f, xs, fs, x0_pt = sod_start(pb, mu, delta)  # ‖x_0 − x*‖ ≤ 1: values × D² after
    atoms = {a for _, pt, ga, _ in oracle.calls for a in list(pt) + [ga]} | set(out) | {("x0",)}
    atoms |= {a for vec in closing for a in vec} | {a for _, vec in pot for a in vec}
    atoms.discard(("x0",))
    pts, build = _points(atoms, {})
    pts[("x0",)] = x0_pt
    for i, point, ga, _ in oracle.calls:
        X, G = build(point), build({ga: 1.0})
        if i == 0:
            f1.add_point((X, G, Expression()))
        else:
            g.add_point((X, 0.5 * (f1.gradient(X) - G), Expression()))
    _add_accuracy(pb, oracle, build)
    xo = build(out)
    close_sod_pair(pb, f1, f2, [xs] + [build(v) for v in closing] + [xo], mu)
    pb.set_performance_metric(
        f(xo) - fs + _potential(pot, build, xs) if measure == "function-value" else (xo - xs) ** 2
    )
    built = _Built(pb, [f1, g], xs, [], None, pts)
    built.build, built.out = build, out
    # what the replay on the DANE family's driver needs: the pair, x*, x_0, each round's local points
    built.info = {
        "sod": {"f1": f1, "g": g, "f2": f2, "x_star": xs, "x0": x0_pt},
        "local_points": [[build(y) for y in ys] for ys in oracle.prox_outputs],
    }
    return built


# --------------------------------------------------------------------------------------------
# the PEP's worst case as a quadratic federation, replayed through fedtheory.methods.run
# --------------------------------------------------------------------------------------------


def _eval_state(method, st, build, n) -> tuple[dict, dict]:
    server = {v: np.asarray(build(st[v]).eval(), dtype=np.float64) for v in method.server}
    client = {v: np.stack([np.asarray(build(x).eval(), dtype=np.float64) for x in st[v]]) for v in method.client}
    return server, client


def _sdp_value(measure: str, sq: float, scale: float) -> float:
    """The measure's value from the PEP's squared objective ``sq`` (normalized units) at the problem's ``scale``:
    the function value sq·scale², the rate √sq (scale-free), the floor and error √sq·scale. Applied to the solver's
    absolute accuracy on sq, it is the value the SDP cannot tell from 0.

    >>> _sdp_value("error", 0.25, 2.0), _sdp_value("rate", 0.25, 2.0), _sdp_value("function-value", 0.25, 2.0)
    (1.0, 0.5, 1.0)
    """
    if measure == "function-value":
        return max(sq, 0.0) * scale**2
    root = math.sqrt(max(sq, 0.0))
    return root if measure == "rate" else root * scale


def _extracted_best(method, measure, built, n, p, w, mu, L, het, C_scale, rounds, D, target, noise):
    """:func:`_extracted_lower`, and when its replay falls short of the SDP's value ``target`` (beyond RTOL, or
    ``noise`` of 0: :func:`~fedtheory.certify.pep_clients.gap_closed`) again with the interpolation's cuts for
    solver noise (:data:`~fedtheory.certify.pep_clients.NOISY_TABLE`): the larger of the two, the other's value in
    the diagnostics. The first pass's cuts are kept first so that no lower bound found before is lost."""
    from fedtheory.certify.pep_clients import NOISY_TABLE

    first = _extracted_lower(method, measure, built, n, p, w, mu, L, het, C_scale, rounds, D)
    if gap_closed(first[0], target, noise):
        return first
    try:
        second = _extracted_lower(method, measure, built, n, p, w, mu, L, het, C_scale, rounds, D, NOISY_TABLE)
    except (ValueError, np.linalg.LinAlgError) as err:
        first[2]["noisy_table_cuts"] = {"error": str(err)}
        return first
    if second[0] is not None and (first[0] is None or second[0] > first[0]):
        second[2]["exact_data_cuts"] = {
            "value": first[0],
            "interpolation_residual": first[2].get("interpolation_residual"),
        }
        return second
    first[2]["noisy_table_cuts"] = {
        "value": second[0],
        "interpolation_residual": second[2].get("interpolation_residual"),
    }
    return first


def _extracted_lower(method, measure, built, n, p, w, mu, L, het, C_scale, rounds, D, cuts=None):
    """(lower, instance, diagnostics) from the solved quadratic PEP, replayed through fedtheory.methods.run;
    ``cuts``: the interpolation's (:func:`~fedtheory.certify.pep_clients.interpolated_quadratics`)."""
    from fedtheory.certify.certificate import quadratic_federation as build_fed
    from fedtheory.certify.pep_clients import _shrink, interpolated_quadratics
    from fedtheory.methods import run

    cs, lams, vecs, A, resid = interpolated_quadratics(built.leaves, built.cs, mu, L, cuts)
    d = int(cs.shape[1])
    prob = build_fed(lams, vecs, A, cs, p)
    size = _het_scale_centre(prob, het)
    diag = {"interpolation_residual": resid, "dimension": d, "heterogeneity_per_unit": size}
    if cuts:
        diag["interpolation_cuts"] = dict(cuts)
    if measure == "rate":
        sa, ca = _eval_state(method, built.info["sa"], built.build, n)
        sb, cb = _eval_state(method, built.info["sb"], built.build, n)
        ha = run(method, prob, np.zeros(d), 1, state={**sa, **ca}, path="step")
        hb = run(method, prob, np.zeros(d), 1, state={**sb, **cb}, path="step")
        num = method.state_norm_sq(
            {v: ha.state[v] - hb.state[v] for v in method.server},
            {v: ha.state[v] - hb.state[v] for v in method.client},
            p,
        )
        den = method.state_norm_sq(
            {v: sa[v] - sb[v] for v in method.server}, {v: ca[v] - cb[v] for v in method.client}, p
        )
        inst = {
            "problem": prob.to_json(),
            "method": method.name,
            "hyper": _jsonable(method.hyper),
            "state_a": _jsonable({**sa, **ca}),
            "state_b": _jsonable({**sb, **cb}),
            "source": "pepit-extracted",
        }
        return math.sqrt(num / den), inst, diag
    if measure == "floor":
        from fedtheory.methods.probe import _Layout, _round_maps, _run_jobs

        # the replayed round R(s) = M s + b (s: server variables, then client variables row by row) from the probe's
        # batched runs on a direct sum of copies of the instance: the same arithmetic as single runs up to rounding
        lay = _Layout(method, n, d)
        M, B = _round_maps(method, lay, prob, True, centres=prob.c)
        b = B[:, 0]
        N = M.shape[0]
        rows, rhs = [np.eye(N) - M], [b]
        for lam in built.info["invariants"]:  # the conserved quantities the PEP imposed, ⊗ I_d
            lam_full = np.kron(np.asarray(lam), np.eye(d))
            rows.append(lam_full)
            rhs.append(np.zeros(d))
        Z, *_ = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)
        # Z is checked as a fixed point of the real round, not of the batched map: one run on the instance itself
        _, after = _run_jobs(method, prob, [(lay.unpack(Z), np.zeros(d), prob.c)], 1, False)[0]
        residual = float(np.linalg.norm(lay.pack(after) - Z))
        st = lay.unpack(Z)
        out = st[method.output] if method.output in method.server else w @ st[method.output]
        s = C_scale / size
        value = float(np.linalg.norm(out - prob.x_star())) * s
        diag["fixed_point_residual"] = residual
        inst = {
            "problem": build_fed(lams, vecs, A, cs * s, p).to_json(),
            "method": method.name,
            "hyper": _jsonable(method.hyper),
            "fixed_state": _jsonable({k: np.asarray(v) * s for k, v in st.items()}),
            "source": "pepit-extracted",
        }
        if residual > 1e-8 * (1 + float(np.linalg.norm(Z))):
            return None, None, diag
        return value, inst, diag
    x0 = np.asarray(built.points[("x0",)].eval(), dtype=np.float64)
    xs = prob.x_star()
    start = float(np.linalg.norm(x0 - xs))
    s = C_scale * _shrink(size, start, D / C_scale)

    def replay(shift):
        sp = build_fed(lams, vecs, A, (cs - shift) * s, p)
        xT = np.asarray(run(method, sp, (x0 - shift) * s, int(rounds), path="step").x[-1])
        if measure == "function-value":
            return float(sp.loss(xT) - sp.loss(sp.x_star())), sp, (x0 - shift) * s
        return float(np.linalg.norm(xT - sp.x_star())), sp, (x0 - shift) * s

    value, sp, x0s = replay(np.zeros(d))
    if het == "C":
        # the same instance moved so that the minimizers' enclosing ball is centred at 0 (‖c_i‖ ≤ C), kept when
        # the method's run moves with it (its zero-started variables are differences, not points)
        from fedtheory.certify.interpolation import enclosing_radius

        moved = replay(enclosing_radius(cs)[1])
        if abs(moved[0] - value) <= 1e-9 * max(abs(value), 1e-300):
            value, sp, x0s = moved
    inst = {
        "problem": sp.to_json(),
        "method": method.name,
        "hyper": _jsonable(method.hyper),
        "x0": x0s.tolist(),
        "rounds": int(rounds),
        "source": "pepit-extracted",
    }
    diag["start_distance_per_unit"] = start
    return value, inst, diag


def _polished_lower(m, measure, mu, L, C, zeta, rounds, D, lower, instance, extracted, details, notes):
    """The hook of :func:`fedtheory.certify.lower_bounds.polish_error`: started from the extracted instance and
    the probe's, the larger of their polished values and ``lower``, with its instance."""
    from fedtheory.certify.lower_bounds import polish_each

    found = [i for i in (extracted[1] if extracted else None, instance) if i]
    starts = [i.get("problem") or i.get("federation") for k, i in enumerate(found) if i not in found[:k]]
    starts = [f for f in starts if f]
    polished = polish_each(m, starts, measure=measure, mu=mu, L=L, rounds=rounds, D=D, C=C, zeta=zeta)
    for k, (v, inst, diag) in enumerate(polished):
        details[f"polished_lower_{k}"], details[f"polished_lower_{k}_diagnostics"] = v, diag
        if v is not None and (lower is None or v > lower):
            lower, instance = v, inst
            notes.append(f"lower bound from a probe started from an instance found (polished_lower_{k})")
    return lower, instance


def _local_update_hyper(m) -> dict | None:
    """Θ (as weights), γ, α, K of a LocalUpdate method (FedAvg, FedProx, ...: local gradient steps with a message
    Σθ_k g_k), or None for any other method (a client program, the DANE family, FedSplit, SCAFFOLD)."""
    from fedtheory.algorithms.theta import Theta

    h = m.hyper
    if not isinstance(h.get("theta"), dict) or "program" in h or not {"gamma", "alpha", "K"} <= set(h):
        return None
    return {
        "theta": Theta.from_json(h["theta"]),
        "gamma": float(h["gamma"]),
        "alpha": float(h["alpha"]),
        "K": int(h["K"]),
    }


def _extreme_floor_lower(m, mu, L, p, C, zeta, lower, instance, details, notes):
    """The hook of :func:`fedtheory.certify.lower_bounds.extreme_spectrum_floor` for a LocalUpdate method's floor:
    the larger of its value and ``lower``, with its instance."""
    from fedtheory.certify.lower_bounds import local_update_lower_bounds

    h = _local_update_hyper(m)
    for label, v, inst, diag in local_update_lower_bounds(
        "floor", mu=mu, L=L, K=h["K"], gamma=h["gamma"], theta=h["theta"], alpha=h["alpha"], p=p, C=C, zeta=zeta
    ):
        details[label], details[label + "_diagnostics"] = v, diag
        if v is not None and (lower is None or v > lower):
            lower, instance = v, inst
            notes.append(f"lower bound from {inst['source']} ({label})")
    return lower, instance


def _interpolated_lower(method, measure, built, n, p, mu, L, het, C_scale, rounds, D, lu):
    """(lower, instance, diagnostics) from the solved smooth-class PEP: each client's table (points, gradients,
    values read back from the SDP's Gram matrix) becomes an explicit L-smooth μ-strongly convex function through it
    (:class:`~fedtheory.certify.interpolation.SmoothStronglyConvexInterpolant`: in the class exactly whatever the
    solver's accuracy), the federation runs in :func:`fedtheory.methods.run` — the rate one round from the PEP's
    two states, the error and function value T rounds from its x_0 after shrinking the instance so that its true
    heterogeneity ≤ C (or ζ) and ‖x_0 − x*‖ ≤ D, the floor (a LocalUpdate method: ``lu``) from the PEP's fixed point
    until the driver settles (:func:`~fedtheory.certify.interpolation.replay_floor`, server step 1/max b: the floor
    does not depend on it) — and its measure (true x*, accurate minimization) is the lower bound. (None, None,
    diagnostics) when the instance fails the class check or does not settle."""
    from fedtheory.certify.interpolation import (
        CLASS_RTOL,
        InterpolatedFederation,
        SmoothStronglyConvexInterpolant,
        heterogeneity,
        replay_floor,
    )
    from fedtheory.certify.pep import _data
    from fedtheory.certify.pep_clients import _shrink
    from fedtheory.methods import run

    P = built.pb.fed_points
    tables = [_data(f) for f in P["functions"]]

    def federation(s):
        """the clients as f ↦ s²f(·/s) (x ↦ L·f_pep(x) at s = 1): same class, every length times s"""
        return InterpolatedFederation(
            [SmoothStronglyConvexInterpolant(X * s, G * L * s, F * L * s * s, mu, L) for X, G, F in tables], p
        )

    fed = federation(1.0)
    fed.x_star(P["x_star"].eval())
    fed.client_minimizers(np.stack([c.eval() for c in P["minimizers"]]))
    inst: dict = {"method": method.name, "hyper": _jsonable(method.hyper), "het": het, "source": "pepit-interpolated"}
    if measure == "floor":
        if lu is None:
            return None, None, {"skipped": "the floor's replay settles a LocalUpdate round (server GD) only"}
        from fedtheory.certify.certificate import message_eigenvalue

        b_max = float(np.max(message_eigenvalue(np.linspace(mu, L, 257), lu["gamma"], lu["theta"], lu["alpha"])))
        eta = 1.0 / b_max  # the quadratic class's stable step: a message moves ≤ b_max·‖δx‖
        x0 = P["fixed_point"].eval()
        out = replay_floor(fed, lu["theta"], lu["alpha"], lu["gamma"], x0, eta, het=het, max_rounds=3000)
        diag = {"fixed_point_residual": out["residual"], "rounds": out["rounds"], "floor_per_unit": out["floor"]}
        value, s = out["floor"] * C_scale, C_scale / out["heterogeneity"]
        inst.update(
            server={"kind": "gd", "lr": eta, "momentum": None},
            x0=(x0 * s).tolist(),
            rounds=out["rounds"],
            x_star=(out["x_star"] * s).tolist(),
            centre=None if out["centre"] is None else (out["centre"] * s).tolist(),
            driver_fixed_point_residual=out["residual"] * s,
            floor=value,
        )
        settled = out["residual"] <= 1e-9 * (1 + float(np.linalg.norm(x0)))
    elif measure == "rate":
        sa, ca = _eval_state(method, built.info["sa"], built.build, n)
        sb, cb = _eval_state(method, built.info["sb"], built.build, n)
        ha = run(method, fed, np.zeros(fed.d), 1, state={**sa, **ca}, path="step")
        hb = run(method, fed, np.zeros(fed.d), 1, state={**sb, **cb}, path="step")
        num = method.state_norm_sq(
            {v: ha.state[v] - hb.state[v] for v in method.server},
            {v: ha.state[v] - hb.state[v] for v in method.client},
            p,
        )
        den = method.state_norm_sq(
            {v: sa[v] - sb[v] for v in method.server}, {v: ca[v] - cb[v] for v in method.client}, p
        )
        value = math.sqrt(num / den)
        size, _ = heterogeneity(fed, het)
        diag, s, settled = {"heterogeneity_per_unit": size}, C_scale / size, True
        inst.update(
            state_a=_jsonable({k: np.asarray(v) * s for k, v in {**sa, **ca}.items()}),
            state_b=_jsonable({k: np.asarray(v) * s for k, v in {**sb, **cb}.items()}),
        )
    else:
        x0 = P["x0"].eval()
        h = run(method, fed, x0, int(rounds), path="step")
        xT = np.asarray(h.x[-1])
        xs, xs_err = fed.x_star(), fed.x_star_error()
        size, centre = heterogeneity(fed, het)
        start = float(np.linalg.norm(x0 - xs)) + xs_err
        s_unit = _shrink(size, start, D / C_scale)
        if measure == "function-value":
            value = max(fed.loss(xT) - fed.loss(xs), 0.0)  # lengths × s ⇒ values × s²
        else:
            value = max(float(np.linalg.norm(xT - xs)) - xs_err, 0.0)
        diag = {"heterogeneity_per_unit": size, "start_distance_per_unit": start, "shrink": s_unit}
        s, settled = s_unit * C_scale, True
        value *= s * s if measure == "function-value" else s
        inst.update(
            x0=(x0 * s).tolist(),
            rounds=int(rounds),
            x_star=(xs * s).tolist(),
            centre=None if centre is None else (centre * s).tolist(),
        )
    viol = fed.class_violation(seed=0)
    diag.update(class_violation=viol, interpolation_error=max(c.interpolation_error() for c in fed.clients))
    if viol > CLASS_RTOL or not settled:
        return None, None, diag
    inst["problem"] = federation(s).to_json()
    return value, inst, diag


def _het_scale_centre(prob, het):
    """Heterogeneity of an instance whose minimizers are not centred: the enclosing radius (C model) or ζ."""
    from fedtheory.certify.certificate import heterogeneity_scale as _het_scale
    from fedtheory.certify.interpolation import enclosing_radius

    if het == "C":
        return float(enclosing_radius(prob.c)[0])
    return _het_scale(prob, het)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


# --------------------------------------------------------------------------------------------
# the API
# --------------------------------------------------------------------------------------------


def _resolve(method: Any, hyper: dict | None, mu: float, L: float) -> Method:
    from fedtheory.methods import get  # it refuses hyper with a built Method, and anything else that is not a name

    hyper = dict(hyper or {})
    if isinstance(method, str) and method == "fedsplit" and "s" not in hyper:
        if not mu > 0:
            raise ValueError(
                f"FedSplit's default step 1/sqrt(mu L) needs mu > 0, got mu={mu!r}: give hyper={{'s': ...}}"
            )
        # FedSplit's best step on F_{μ,L}: the reflected prox is max(|1−sμ|/(1+sμ), |1−sL|/(1+sL))-Lipschitz,
        # smallest at s = 1/√(μL)
        hyper["s"] = 1.0 / math.sqrt(mu * L)
    return get(method, **hyper)


def _check(mu, L, clients, p, measure, function_class, C, zeta, rounds, D):
    for name, v in (("mu", mu), ("L", L)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if function_class == "sod":
        if not mu >= 0:
            raise ValueError(f"hypothesis mu >= 0 violated: mu={mu!r}")
    elif measure == "function-value" and mu == 0 and L > 0:
        pass  # which methods keep the function value's PEP bounded at μ = 0: _check_engine
    elif not 0 < mu <= L:
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    if function_class not in CLASSES:
        raise ValueError(f"function_class must be one of {CLASSES}, got {function_class!r}")
    if isinstance(clients, bool) or not isinstance(clients, (int, np.integer)) or clients < 2:
        raise ValueError(f"hypothesis clients >= 2 violated: clients={clients!r} (an integer)")
    n = int(clients)
    pp = np.full(n, 1.0 / n) if p is None else np.asarray(p, dtype=np.float64)
    if pp.shape != (n,) or not np.all(np.isfinite(pp)) or np.any(pp <= 0) or abs(pp.sum() - 1) > 1e-9:
        raise ValueError(f"hypothesis p_i > 0, sum p_i = 1 over the {n} clients violated: p={np.asarray(p).tolist()}")
    if zeta is not None and not (isinstance(zeta, (int, float)) and zeta > 0 and math.isfinite(zeta)):
        raise ValueError(f"hypothesis zeta > 0 violated: zeta={zeta!r}")
    if zeta is None and not (isinstance(C, (int, float)) and C > 0 and math.isfinite(C)):
        raise ValueError(f"hypothesis C > 0 violated: C={C!r}")
    if measure in ("error", "function-value"):
        if rounds is None or isinstance(rounds, bool) or int(rounds) != rounds or rounds < 1:
            raise ValueError(f"measure {measure!r} needs rounds >= 1 (an integer), got rounds={rounds!r}")
        if D is None or not (D > 0 and math.isfinite(D)):
            raise ValueError(f"measure {measure!r} needs the start radius D > 0 (||x0 - x*|| <= D), got D={D!r}")
    if function_class == "sod":
        if n != 2 or not np.allclose(pp, 0.5, rtol=0, atol=1e-12):
            raise ValueError(f"the δ-SOD class is written for two clients of weight 1/2: clients={n}, p={pp.tolist()}")
        if measure not in ("error", "function-value"):
            raise ValueError(f"the δ-SOD class has measures 'error' and 'function-value', got {measure!r}")
    return n, pp


def _check_engine(m, lu, engine, upper_bound, measure, function_class, mu, zeta) -> None:
    """ValueError naming what ``engine`` (and μ = 0) need of the method, the measure and the class."""
    if engine == "pepit" and upper_bound is not None:
        raise ValueError("engine 'pepit' is the compiled PEP: an outside upper_bound needs its own engine name")
    if engine != "pepit" and upper_bound is None:
        raise ValueError(
            f"engine {engine!r} needs its upper_bound program (certify_local_update passes LocalUpdate's spectral "
            "one); the compiled PEP is engine='pepit'"
        )
    if engine != "pepit" and (function_class == "sod" or measure == "function-value"):
        raise ValueError(f"an outside upper bound ({engine!r}) is for the floor, rate and error of F_{{mu,L}} clients")
    if mu == 0 and function_class != "sod" and (lu is None or (lu["K"] != 1 and zeta is None)):
        raise ValueError(
            f"hypothesis mu > 0 violated: mu=0 leaves the function-value PEP bounded only for a LocalUpdate method "
            f"at K = 1 or under the zeta model (method {m.name!r}, K={None if lu is None else lu['K']!r}, "
            f"zeta={zeta!r})"
        )


def _probe_lower(*, m, measure, mu, L, pp, C, zeta, rounds, D, probe_dim, seed, function_class, starts, details,
                 notes, search=True) -> tuple:  # fmt: skip
    """:func:`fedtheory.methods.probe.lower_bound` with ``starts`` starts as (value or None, instance or None);
    its value in ``details["probe_lower"]``, why there is none in ``notes``; ``search=False``: sampled candidates
    only (a cross-check once the gap is closed)."""
    try:
        from fedtheory.methods.probe import lower_bound
    except ImportError:
        notes.append("fedtheory.methods.probe is not available: no probe lower bound")
        return None, None
    details["probe_starts"] = starts
    try:
        pv, pinst = lower_bound(
            m, measure=measure, mu=mu, L=L, p=pp, C=C, zeta=zeta, rounds=rounds, D=D, dim=probe_dim, starts=starts,
            seed=seed, function_class=function_class, search=search,
        )  # fmt: skip
    except (ValueError, NotImplementedError) as err:  # a measure or method the probe does not cover
        pv, pinst = None, None
        notes.append(f"probe lower bound not available: {err}")
    details["probe_lower"] = pv
    return pv, pinst


#: the spectral engine's error takes the PEPit PEP's extracted worst case as a lower bound when that PEP is this
#: small (K·T·n gradient evaluations; K = 2, T = 4, n = 2 solves in seconds)
PEPIT_START_WORK = 16


def _small_pepit_extraction(m, lu, n, pp, w, sc, mu, L, het, scale, rounds, D, D_units) -> tuple:
    """For an upper bound with no worst-case table to read back (the spectral program: its variables are moment
    matrices): the quadratic PEPit PEP solved and its worst case replayed (:func:`_extracted_lower`) when it has at
    most :data:`PEPIT_START_WORK` gradient evaluations. (lower or None, instance or None, diagnostics)."""
    from fedtheory.certify.pep import _solve_detail
    from fedtheory.certify.pep_clients import _WRAPPER

    work = int(lu["K"]) * int(rounds) * n
    if work > PEPIT_START_WORK:
        return None, None, {"skipped": f"K·T·n = {work} > {PEPIT_START_WORK}"}
    try:
        built = _build(m, "error", n, pp, w, sc, mu, L, het, "quadratic", rounds, D_units)
        sq, _, solver = _solve_detail(built.pb, wrapper=_WRAPPER)
        target, noise = _sdp_value("error", sq, scale), _sdp_value("error", SDP_ATOL_SQUARED, scale)
        value, inst, diag = _extracted_best(m, "error", built, n, pp, w, mu, L, het, scale, rounds, D, target, noise)
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as err:
        return None, None, {"error": str(err)}
    diag.update(pepit_solver=solver, source="the PEPit engine's SDP, solved for its worst case")
    return value, inst, diag


def certify(
    method: Any,
    *,
    mu: float,
    L: float,
    clients: int = 2,
    p: Any = None,
    measure: str = "rate",
    function_class: str = "quadratic",
    C: float = 1.0,
    zeta: float | None = None,
    rounds: int | None = None,
    D: float | None = None,
    probe_starts: int = 4,
    probe_dim: int | None = None,
    seed: int = 0,
    hyper: dict | None = None,
    delta: float | None = None,
    engine: str = "pepit",
    upper_bound: Callable[[float], tuple[float | None, str, dict]] | None = None,
) -> Certificate:
    r"""Certified worst case of ``method`` over n = ``clients`` heterogeneous clients with weights ``p``
    (default uniform): see the module docstring for the class, the measures and the lower bounds.

    ``method``: a :class:`~fedtheory.methods.ir.Method`, or a registered name with ``hyper`` (the factory's
    keyword arguments); ``"fedsplit"`` without ``s`` takes s = 1/√(μL). ``value`` is the SDP's value times
    (1 + SDP_MARGIN) (lengths scale with C or ζ; the function value with their square), ``lower`` the largest
    replayed lower bound, ``status`` ``"certified"`` or ``"unreliable"`` (then ``value`` is None).
    ``probe_starts=0`` skips :func:`fedtheory.methods.probe.lower_bound`.

    ``engine``: ``"pepit"`` (the PEP compiled from the description) or the name of an outside upper bound,
    ``upper_bound``: a function of a lower bound already found (0.0 when none; the spectral floor program takes it
    as its scale) returning (value or None, solver, details), in the measure's units — how
    :func:`fedtheory.certify.federated_pep.certify_local_update` passes LocalUpdate's spectral program
    (``engine="spectral"``, quadratic clients, floor, rate and error); the lower bounds are the same.
    μ = 0 is allowed for the function value of a LocalUpdate method at K = 1 or under ζ, where its PEP stays
    bounded (μ = 0, the C model and K ≥ 2 leave it unbounded: ValueError).

    A hypothesis violated raises ValueError naming it:

    >>> certify("fedavg", mu=2.0, L=1.0, hyper={"K": 2, "gamma": 0.1})
    Traceback (most recent call last):
    ...
    ValueError: hypothesis 0 < mu <= L violated: mu=2.0, L=1.0
    >>> c = certify("fedavg", mu=1.0, L=10.0, measure="floor", hyper={"K": 2, "gamma": 0.05}, probe_starts=0)
    >>> c.status, round(c.value, 4), bool(c.gap < 1e-4)
    ('certified', 0.2623, True)
    """
    t0 = time.perf_counter()
    n, pp = _check(mu, L, clients, p, measure, function_class, C, zeta, rounds, D)
    sod = function_class == "sod"
    if sod and not (delta is not None and delta > 0 and math.isfinite(delta)):
        raise ValueError(f"hypothesis delta > 0 violated: the δ-SOD class needs delta > 0, got delta={delta!r}")
    if sod and (zeta is not None):
        raise ValueError("the δ-SOD class measures heterogeneity by delta; zeta does not apply")
    mu, L = float(mu), float(L)
    m = _resolve(method, hyper, mu, L)
    if not m.linear:
        raise ValueError(
            f"method {m.name!r} has a nonlinear server rule (ServerMap), a scalar update that reads the "
            "state or a test-stopped local solver: its round is not a linear combination of points and "
            "gradients, so no PEP is written for it"
        )
    lu = _local_update_hyper(m)
    _check_engine(m, lu, engine, upper_bound, measure, function_class, mu, zeta)
    w, sc = _weights_and_scales(m, pp)
    het = "C" if zeta is None else "zeta"
    scale = float(C if zeta is None else zeta)
    D_units = None if D is None else float(D) / scale
    hyp = {
        "method": m.name,
        "hyper": _jsonable(m.hyper),
        "mu": mu,
        "L": L,
        "clients": n,
        "p": pp.tolist(),
        "C": None if zeta is not None else scale,
        "zeta": zeta,
        "measure": measure,
        "function_class": function_class,
        "rounds": rounds,
        "D": D,
        "weighting": m.weighting,
        "delta": delta,
        "engine": engine,
    }
    notes: list[str] = []
    details: dict[str, Any] = {}
    if measure == "rate" and any(isinstance(op, Scalars) for op in m.round):
        notes.append("the rate is measured at the first round's host scalars (they change from round to round)")
    if any(isinstance(op, Prox) and op.solver.kind == "gd" and op.solver.step_size is None for op in m.round):
        notes.append(
            "inexact prox step 1/(s·L·max_i sc_i + 1) with the class's L (the simulator uses the "
            "instance's largest eigenvalue)"
        )
    upper, solver = None, ""
    extracted = smooth = None
    lower, instance = None, None
    timer = PartTimer()
    details["seconds"] = timer.seconds
    lap = timer.lap
    # a value the SDP cannot tell from 0 (its squared value within the solver's absolute accuracy) is closed by
    # any lower bound ≥ 0: the probe, the polish and the family would chase solver noise
    noise = _sdp_value(measure, SDP_ATOL_SQUARED, scale)

    def take(v, inst) -> bool:
        """keep (v, inst) when it raises the lower bound"""
        nonlocal lower, instance
        if v is not None and (lower is None or v > lower):
            lower, instance = v, inst
            return True
        return False

    probe_args = dict(m=m, measure=measure, mu=mu, L=L, pp=pp, C=C, zeta=zeta, rounds=rounds, D=D)
    probe_args.update(probe_dim=probe_dim, seed=seed, function_class=function_class, details=details, notes=notes)
    probed, hint = False, 0.0
    outside = upper_bound is not None
    # K = 1: the message is linear in λ, x̄ = x*, and the outside program is exact without a scale (the spectral
    # one returns its closed form 0): it runs first, and the family after it only when its value is not 0
    scaled_floor = outside and measure == "floor" and lu is not None and lu["K"] > 1
    if scaled_floor:
        # the floor's extreme-spectrum family (cheap) scales the spectral program and often attains its value;
        # without it the probe's value scales the program
        lower, instance = _extreme_floor_lower(m, mu, L, pp, C, zeta, lower, instance, details, notes)
        lap("extreme_spectrum")
        if not (lower and lower > 0) and probe_starts:
            take(*_probe_lower(starts=int(probe_starts), **probe_args))
            probed = True
            lap("probe")
        hint = lower if lower and lower > 0 else 0.0
    try:
        from fedtheory.certify.pep import _solve_detail
        from fedtheory.certify.pep_clients import _WRAPPER

        if upper_bound is not None:
            upper, solver, info = upper_bound(hint)
            details.update(info)
            lap("solve")
        else:
            if sod:  # no smoothness and no heterogeneity radius: true gradients (L = 1), ‖x_0 − x*‖ ≤ 1 then × D
                assert D is not None  # the δ-SOD class has the error measures only, which need D
                scale, D_units = float(D), 1.0
                built = _build(m, measure, n, pp, w, sc, mu, 1.0, het, function_class, rounds, 1.0, delta=delta)
            else:
                built = _build(m, measure, n, pp, w, sc, mu, L, het, function_class, rounds, D_units)
            details["leaf_points"] = [len(f.list_of_points) for f in built.leaves]
            if measure == "floor":
                details["eliminated"] = built.info["eliminated"]
                details["invariants"] = built.info["invariants"]
            lap("build")
            sq, _, solver = _solve_detail(built.pb, wrapper=_WRAPPER)
            lap("solve")
            upper = _sdp_value(measure, sq, scale)
            # read the worst case back now: PEPit keeps the points in state the next PEP resets
            if function_class == "quadratic":
                try:
                    extracted = _extracted_best(
                        m, measure, built, n, pp, w, mu, L, het, scale, rounds, D, upper, noise
                    )  # fmt: skip
                except (ValueError, np.linalg.LinAlgError) as err:
                    extracted = (None, None, {"error": str(err)})
                lap("extraction")
            elif not sod:
                try:
                    smooth = _interpolated_lower(m, measure, built, n, pp, mu, L, het, scale, rounds, D, lu)
                except ValueError as err:  # too many points to evaluate exactly, a minimizer not reached
                    smooth = (None, None, {"error": str(err)})
                lap("interpolation")
    except RuntimeError as err:
        solver = f"unreliable: {err}"
        upper = None
        lap("solve")  # the solver's failure (or the build's) is the solve's time
    if outside and measure == "error" and lu is not None:
        # an outside program (the spectral one) has no worst-case table to read back: the PEPit PEP's, when small
        assert rounds is not None  # the error needs rounds (_check)
        extracted = _small_pepit_extraction(m, lu, n, pp, w, sc, mu, L, het, scale, rounds, D, D_units)
        lap("extraction")

    if extracted is not None:
        details["extraction"] = extracted[2]
        if extracted[0] is not None:
            details["extracted_lower"], details["extracted_instance"] = extracted[0], extracted[1]
            take(extracted[0], extracted[1])
    if smooth is not None:
        details["smooth_instance"] = smooth[2]
        if smooth[0] is None:
            notes.append(f"interpolated smooth instance rejected: {smooth[2]}")
        else:
            details["smooth_lower"] = smooth[0]
            notes.append(f"interpolated smooth instance's {measure} {smooth[0]!r}")
            if take(smooth[0], smooth[1]):
                notes.append(
                    "lower bound from explicit F_{mu,L} clients interpolating the PEP's worst case "
                    "(fedtheory.certify.interpolation), replayed in fedtheory.methods.run"
                )
    quadratic = []  # the quadratic instances' lower bounds (they bound the smooth class from below too)
    if measure in ("rate", "function-value") and not sod:
        from fedtheory.certify.lower_bounds import identical_clients_lower

        v, inst, diag = identical_clients_lower(m, measure, mu=mu, L=L, p=pp, rounds=rounds, D=D)
        details["identical_clients_lower"], details["identical_clients_diagnostics"] = v, diag
        quadratic.append(v)
        take(v, inst)
        lap("identical_clients")
    if sod:
        notes.append(
            "delta-SOD class: no replayed lower bound here (the probe and the quadratic extraction are "
            "written for F_{mu,L} clients); the value is the SDP's upper bound"
        )
    elif probed:
        quadratic.append(details.get("probe_lower"))
    elif probe_starts and mu == 0:
        notes.append("mu = 0: no probe lower bound (the probe's instances have mu > 0)")
    elif probe_starts:
        starts = int(probe_starts)
        closed = gap_closed(lower, upper, noise)
        if closed:
            # the replayed worst case already attains the SDP's value: the probe can no longer raise the lower
            # bound, only cross-check the upper one independently, which its sampled candidates do without the
            # local search (lower_bound(search=False))
            starts = min(starts, CLOSED_GAP_PROBE_STARTS)
            notes.append(
                f"the replayed worst case closes the gap: the probe sampled {starts} start(s)' candidates "
                f"of {int(probe_starts)}, without local search, as an independent cross-check"
            )
        take(*_probe_lower(starts=starts, search=not closed, **probe_args))
        quadratic.append(details.get("probe_lower"))
        lap("probe")
    if function_class in ("quadratic", "smooth-strongly-convex") and measure in ("error", "function-value"):
        if function_class != "quadratic":
            pass  # the polish searches quadratic instances from quadratic starts; the smooth PEP's are not
        elif gap_closed(lower, upper, noise):
            # the polish can only raise the lower bound: once it attains the SDP's value within RTOL it would
            # cost time (about the solve's own, 26 s of a 150 s certificate at n = 4, K = 5) for nothing
            details["polish"] = "skipped: the gap is closed"
        else:
            # a probe started from the instances found so far (fedtheory.certify.lower_bounds.polish_error): the
            # start and centres chosen by exact block steps on their Hessians
            lower, instance = _polished_lower(
                m, measure, mu, L, C, zeta, rounds, D, lower, instance, extracted, details, notes
            )
            lap("polish")
    if scaled_floor:
        pass  # the family ran before the outside program
    elif measure == "floor" and not sod and lu is not None and upper is not None and upper <= noise:
        # a floor the SDP (or the outside program's closed form) cannot tell from 0; otherwise the family runs even
        # when the gap is closed (it costs ~5 % of the solve and raises the lower bound by up to 4e-6 relative:
        # certify_local_update's values)
        details["extreme_spectrum"] = "skipped: the upper bound is 0 to the SDP's accuracy"
    elif measure == "floor" and not sod and lu is not None:
        lower, instance = _extreme_floor_lower(m, mu, L, pp, C, zeta, lower, instance, details, notes)
        lap("extreme_spectrum")
    if function_class == "smooth-strongly-convex":
        # the family's instances are quadratic federations too
        found = [v for v in quadratic + [details.get("extreme_spectrum_lower")] if v is not None]
        details["quadratic_lower"] = max(found) if found else None
    if (
        function_class == "smooth-strongly-convex"
        and lower is not None
        and (instance or {}).get("source") != "pepit-interpolated"
    ):
        notes.append("lower bound from a quadratic instance (quadratics belong to the smooth strongly convex class)")
    if upper is not None:
        details["sdp_value"] = upper
        upper *= 1 + SDP_MARGIN
    elif _local_update_hyper(m) is not None:
        from fedtheory.certify.certificate import theta_weights as _theta
        from fedtheory.certify.lower_bounds import unsolved_reason

        h = _local_update_hyper(m)
        assert h is not None  # checked by the elif above
        notes.append(unsolved_reason(mu, L, h["gamma"], _theta(h["theta"], h["K"]), solver, lower, h["alpha"]))
    status = "certified" if upper is not None else "unreliable"
    gap = None
    if upper is not None and lower is not None:
        gap = (upper - lower) / upper if upper > 0 else 0.0
        tol = RTOL * upper + 1e-9 * (scale if measure != "function-value" else scale**2)
        if lower > upper + tol:
            status = "unreliable"
            notes.append(f"replayed lower bound {lower!r} exceeds the upper bound {upper!r}: the SDP's value is wrong")
            upper, gap = None, None
    return Certificate(
        value=upper,
        lower=lower,
        gap=gap,
        instance=instance,
        hypotheses=hyp,
        claim_id=CLAIM_ID,
        solver=solver,
        status=status,
        seconds=time.perf_counter() - t0,
        notes="; ".join(notes),
        details=details,
    )
