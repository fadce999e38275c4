r"""DANE, S-DANE (Algorithm 1), Acc-S-DANE (Algorithm 2) and S-DANE for deep learning (Algorithm 3).

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084; NeurIPS 2024). All four are federated proximal-point methods on
:math:`f = \frac1n\sum_i f_i` (a weighted federation enters through its uniform view
:math:`\tilde f_i = n p_i f_i`, see :mod:`fedtheory.problems.clients`). In round r the server samples
:math:`S_r` (s clients uniformly without replacement; all n under full participation), broadcasts a
prox-centre c, the sampled clients return :math:`\nabla f_i(c)`, and each approximately minimizes

.. math:: F_{i,r}(x) = f_i(x) - \langle \nabla f_i(c) - \nabla f_{S_r}(c), x\rangle + \frac\lambda2\|x - c\|^2

with any local solver (:mod:`fedtheory.algorithms.local_solvers`) until the round's accuracy test holds:

- **DANE** (4): c = x^r, x^{r+1} = mean of the x_{i,r+1}; the test tightens as 1/(r+1)² (Remark 2).
- **S-DANE** (Alg. 1): c = v^r; x^{r+1} = mean x_{i,r+1};
  :math:`v^{r+1} = (\lambda v^r + \mu x^{r+1} - \bar g^{r+1})/(\lambda+\mu)`, ḡ the mean of ∇f_i(x_{i,r+1});
  test (6): Σ‖∇F_{i,r}‖² ≤ λ²/4 Σ‖x_{i,r+1} − v^r‖².
- **Acc-S-DANE** (Alg. 2): A_0 = 0, B_0 = 1, a_{r+1} solves λa² = (A_r + a)B_r, A_{r+1} = A_r + a,
  B_{r+1} = B_r + μa; c = y^r = (A_r x^r + a v^r)/A_{r+1};
  :math:`v^{r+1} = (B_r v^r + \mu a x^{r+1} - a\bar g^{r+1})/B_{r+1}`.
- **Algorithm 3**: K local SGD steps on f_i (+ the correction with option 2) + λ/2‖x − v^r‖², then
  :math:`v^{r+1} = (1-\theta)v^r + \theta x^{r+1} - \eta\bar g^{r+1}` (θ = μ/(λ+μ), η = 1/(λ+μ) give Alg. 1).

DANE, S-DANE and Acc-S-DANE are one description each in :mod:`fedtheory.methods.library` (``dane``, ``sdane``,
``acc-sdane``); :func:`run_dane`, :func:`run_sdane` and :func:`run_acc_sdane` run those descriptions through the one
simulator (:func:`fedtheory.methods.simulate.simulate` on the clients' oracles, the local solver and its test as
``ProxSolver("local", ...)``) and read its round-by-round trace into a :class:`ProxHistory`. :func:`sdane_step`
and :func:`acc_sdane_step` remain as one-round helpers from a given state and client set (the partial-participation
checks draw S_r themselves); :func:`run_sdane_deep` (Algorithm 3) keeps its own loop.

Adaptive λ (Section 5, Figure 5): :class:`AdaptiveLambda` sets λ_r to the observed local dissimilarity
between v^r and v^{r−1}. Histories count communication rounds and local gradient-oracle calls, per
client and as the cumulative per-round maximum over clients (the paper's x-axis).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory.algorithms.local_solvers import GD, Exact
>>> q = make_quadratic(5, 8, mu=0.5, L=40.0, delta_A=2.0, seed=0)
>>> h = run_sdane(q, np.zeros(8), 30, lam=4.0, mu=0.5, solver=GD())
>>> bool(h.gap[-1] < 1e-8 * h.gap[0]), bool(h.test_passed.all())
(True, True)
>>> d, s = run_dane(q, np.zeros(8), 5, lam=4.0, solver=Exact()), run_sdane(q, np.zeros(8), 5, lam=4.0, solver=Exact())
>>> bool(np.allclose(d.x, s.x, atol=1e-12))          # exact local solves: S-DANE is DANE
True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from fedtheory.algorithms.local_solvers import GD, SGD, DaneTest, StabilizedTest, Subproblem
from fedtheory.methods.library import acc_coefficient  # Algorithm 2, line 1: defined with the method
from fedtheory.problems.clients import client_oracles
from fedtheory.validation import check_rounds

__all__ = [
    "ProxHistory",
    "AdaptiveLambda",
    "RoundResult",
    "prox_round",
    "sample_clients",
    "acc_coefficient",
    "run_dane",
    "run_sdane",
    "run_acc_sdane",
    "run_sdane_deep",
    "sdane_step",
    "acc_sdane_step",
]


# --------------------------------------------------------------------------------------------
# one round of local work
# --------------------------------------------------------------------------------------------


@dataclass
class RoundResult:
    """One round's local work: client points X, ∇f_i(X), ∇f_i(centre), evaluations and the test's sides."""

    clients: np.ndarray
    X: np.ndarray
    G: np.ndarray
    G_center: np.ndarray
    evals: np.ndarray
    gradF_sq: np.ndarray
    dist_sq: np.ndarray
    passed: np.ndarray
    at_resolution: np.ndarray | None = None

    @property
    def x_mean(self) -> np.ndarray:
        return self.X.mean(axis=0)

    @property
    def g_mean(self) -> np.ndarray:
        return self.G.mean(axis=0)


def _check_lam(lam: Any) -> float:
    lam = float(lam)
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lambda must be finite and > 0, got lam={lam!r}")
    return lam


def _check_mu(mu: Any) -> float:
    mu = float(mu)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be finite and >= 0, got mu={mu!r}")
    return mu


class _RunOptions(NamedTuple):
    """What every DANE-family runner passes through to :func:`_run` unchanged."""

    solver: Any
    test: Any
    clients_per_round: int | None
    seed: Any
    record: bool
    stop_gap: float | None


def prox_round(
    oracles: Any,
    clients: Any,
    center: Any,
    lam: float,
    solver: Any,
    test: Any = None,
    *,
    r: int = 0,
    rng: Any = None,
    control_variate: bool = True,
    G_center: Any = None,
) -> RoundResult:
    r"""Clients ``clients`` approximately minimize F_i(x) = f_i(x) − ⟨ℓ_i, x⟩ + λ/2‖x − c‖² from c.

    ℓ_i = ∇f_i(c) − ∇f_S(c) with ``control_variate`` (DANE, S-DANE, Alg. 3 option 2), else 0 (FedProx-type).

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.algorithms.local_solvers import Exact
    >>> orc = client_oracles(make_quadratic(3, 4, mu=1.0, L=5.0, seed=0))
    >>> res = prox_round(orc, [0, 2], np.zeros(4), 2.0, Exact())
    >>> res.X.shape, bool(np.allclose(res.gradF_sq, 0, atol=1e-20))
    ((2, 4), True)
    """
    clients = np.asarray(clients, dtype=np.int64)
    C = np.broadcast_to(np.asarray(center, dtype=np.float64), (clients.size, oracles.d)).copy()
    GC = oracles.grads(C, clients) if G_center is None else np.asarray(G_center, dtype=np.float64)
    lin = GC - GC.mean(axis=0) if control_variate else np.zeros_like(GC)
    sub = Subproblem(oracles, clients, C, lin, lam, G_center=GC, r=r, rng=rng)
    return _round_result(clients, solver.solve(sub, test), GC)


def _round_result(clients: np.ndarray, res: Any, G_center: np.ndarray, rows: Any = slice(None)) -> RoundResult:
    """A round's record from a local solver's result (the given ``rows`` of it); evals + 1: the gradient at the
    centre, the message of step 3 of Algorithm 1."""
    return RoundResult(
        clients=clients[rows],
        X=res.X[rows],
        G=res.G[rows],
        G_center=G_center[rows],
        evals=res.evals[rows] + 1,
        gradF_sq=res.gradF_sq[rows],
        dist_sq=res.dist_sq[rows],
        passed=res.passed[rows],
        at_resolution=res.at_resolution[rows],
    )


def sample_clients(rng: np.random.Generator, n: int, s: int | None) -> np.ndarray:
    """S_r: s of the n clients uniformly without replacement (sorted); all of them when s is None or n.

    >>> sample_clients(np.random.default_rng(0), 5, 2).size, sample_clients(None, 3, None).tolist()
    (2, [0, 1, 2])
    """
    if s is None or s == n:
        return np.arange(n)
    if not (1 <= s <= n):
        raise ValueError(f"clients per round s must satisfy 1 <= s <= n = {n}, got s={s}")
    return np.sort(rng.choice(n, size=s, replace=False))


# --------------------------------------------------------------------------------------------
# history
# --------------------------------------------------------------------------------------------


@dataclass
class ProxHistory:
    """Per-round record of a DANE-type run (index r = 0..R for iterates, r = 0..R−1 for rounds).

    ``x`` (R+1, d): x^r; ``v`` (R+1, d): v^r (S-DANE, Acc-S-DANE, Alg. 3; ``None`` for DANE);
    ``center`` (R, d): each round's prox-centre (x^r, v^r or y^r); ``gap``: f(x^r) − f*; ``gap_v``:
    f(v^r) − f*; ``grad_norm``: ‖∇f(x^r)‖; ``lam`` (R,): λ of each round; ``A``, ``B`` (R+1,) for
    Acc-S-DANE; ``clients`` (R, s); ``local_evals`` (R, s): gradient evaluations of each sampled
    client (∇f_i at the centre included); ``oracle_max`` (R+1,): cumulative Σ_r max_i local_evals (the
    paper's "total number of gradient oracle calls"); ``oracle_sum`` (R+1,); ``comm_rounds`` (R+1,);
    ``test_lhs``/``test_rhs`` (R,): Σ_{i∈S}‖∇F_{i,r}(x_{i,r+1})‖² and Σ‖x_{i,r+1} − c‖²;
    ``test_passed`` (R,): every client's test held; ``test_resolution`` (R,): some client's test failed only
    because ∇F_i fell below float64's resolution (the run has converged to machine precision). With
    ``record=True`` also ``client_x``,
    ``client_g``, ``center_g`` (R, s, d).
    """

    method: str
    x: np.ndarray
    v: np.ndarray | None
    center: np.ndarray
    gap: np.ndarray
    gap_v: np.ndarray
    grad_norm: np.ndarray
    lam: np.ndarray
    clients: np.ndarray
    local_evals: np.ndarray
    test_lhs: np.ndarray
    test_rhs: np.ndarray
    test_passed: np.ndarray
    test_resolution: np.ndarray | None = None
    A: np.ndarray | None = None
    B: np.ndarray | None = None
    client_x: np.ndarray | None = None
    client_g: np.ndarray | None = None
    center_g: np.ndarray | None = None
    params: dict = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return int(self.x.shape[0]) - 1

    @property
    def test_failures(self) -> int:
        """Rounds whose accuracy test failed for a reason other than float64's resolution."""
        res = self.test_resolution if self.test_resolution is not None else np.zeros_like(self.test_passed)
        return int(np.sum(~self.test_passed & ~res))

    @property
    def comm_rounds(self) -> np.ndarray:
        return np.arange(self.rounds + 1)

    @property
    def oracle_max(self) -> np.ndarray:
        per = self.local_evals.max(axis=1) if self.local_evals.size else np.zeros(0)
        return np.concatenate([[0], np.cumsum(per)]).astype(np.int64)

    @property
    def oracle_sum(self) -> np.ndarray:
        per = self.local_evals.sum(axis=1) if self.local_evals.size else np.zeros(0)
        return np.concatenate([[0], np.cumsum(per)]).astype(np.int64)

    def weighted_average(self, mu: float) -> np.ndarray:
        r"""Theorem 1's :math:`\bar x^R = \sum_{r=1}^R p^r x^r/\sum_{r=1}^R p^r`, p = 1 + μ/λ, for every R ≥ 1: (R, d).

        Row R−1 is x̄^R. Uses this run's (constant) λ; computed with normalized weights (no overflow).
        """
        lam = float(self.lam[0])
        R = self.rounds
        logw = np.arange(1, R + 1) * math.log1p(mu / lam)
        out = np.empty((R, self.x.shape[1]))
        num = np.zeros(self.x.shape[1])
        den = 0.0
        ref = 0.0
        for r in range(1, R + 1):  # running weighted mean, rescaled by the newest weight
            scale = math.exp(ref - logw[r - 1])
            num, den, ref = num * scale + self.x[r], den * scale + 1.0, logw[r - 1]
            out[r - 1] = num / den
        return out


def _history(
    method: str, xs, vs, centers, lams, rounds_data, oracles, record: bool, A=None, B=None, params=None
) -> ProxHistory:
    X = np.stack(xs)
    V = None if vs is None else np.stack(vs)
    gap = oracles.gaps(X)
    gap_v = oracles.gaps(V) if V is not None else np.full(X.shape[0], np.nan)
    gn = np.linalg.norm(np.stack([oracles.grad(x) for x in X]), axis=1)
    s = max((len(rd.clients) for rd in rounds_data), default=0)

    def pad(rows, fill, dtype=float):
        out = np.full((len(rows), s), fill, dtype=dtype)
        for k, row in enumerate(rows):
            out[k, : len(row)] = row
        return out

    h = ProxHistory(
        method=method,
        x=X,
        v=V,
        center=np.stack(centers) if centers else np.zeros((0, X.shape[1])),
        gap=gap,
        gap_v=gap_v,
        grad_norm=gn,
        lam=np.asarray(lams, dtype=np.float64),
        clients=pad([rd.clients for rd in rounds_data], -1, np.int64),
        local_evals=pad([rd.evals for rd in rounds_data], 0, np.int64),
        test_lhs=np.asarray([rd.gradF_sq.sum() for rd in rounds_data]),
        test_rhs=np.asarray([rd.dist_sq.sum() for rd in rounds_data]),
        test_passed=np.asarray([bool(rd.passed.all()) for rd in rounds_data], dtype=bool),
        test_resolution=np.asarray(
            [bool(rd.at_resolution is not None and rd.at_resolution.any()) for rd in rounds_data], dtype=bool
        ),
        A=None if A is None else np.asarray(A),
        B=None if B is None else np.asarray(B),
        params=dict(params or {}),
    )
    if record and rounds_data:
        h.client_x = np.stack([rd.X for rd in rounds_data])
        h.client_g = np.stack([rd.G for rd in rounds_data])
        h.center_g = np.stack([rd.G_center for rd in rounds_data])
    return h


def _prepare(problem: Any, x0: Any, rounds: Any, seed: Any):
    orc = client_oracles(problem)
    x0 = np.asarray(x0, dtype=np.float64)
    if x0.shape != (orc.d,):
        raise ValueError(f"x0 must have shape ({orc.d},), got {x0.shape}")
    rounds = check_rounds(rounds)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return orc, x0, rounds, rng


def _stop(orc, x, stop_gap) -> bool:
    return stop_gap is not None and float(orc.gaps(x[None])[0]) <= stop_gap


# --------------------------------------------------------------------------------------------
# adaptive λ
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdaptiveLambda:
    r"""λ_r = factor · √((1/n)Σ_i‖∇h_i(v^r) − ∇h_i(v^{r−1})‖²)/‖v^r − v^{r−1}‖, h_i = f − f_i; λ_0 = ``lam0``.

    Section 5 ("Adaptive choice of λ"): the server measures the *local* second-order dissimilarity along
    the trajectory from gradients it receives anyway (∇f_i(v^r) in step 3 of Algorithm 1). Full
    participation. The paper's exact expression was lost in conversion; ``factor`` = 1 logs the raw ratio
    (as the authors' code does), 2 would mirror Theorem 1's λ = 2δ. A ratio below ``floor`` (or v^r = v^{r−1})
    keeps the previous λ.

    >>> AdaptiveLambda(1.0).next(np.zeros((2, 1)), np.array([[1.0], [-1.0]]), np.zeros(1), np.ones(1), 1.0)
    1.0
    """

    lam0: float
    factor: float = 1.0
    floor: float = 1e-12

    def next(self, G_prev: np.ndarray, G_new: np.ndarray, v_prev: np.ndarray, v_new: np.ndarray, lam: float) -> float:
        step = float(np.linalg.norm(v_new - v_prev))
        if step == 0.0:
            return lam
        D = (G_new - G_new.mean(axis=0)) - (G_prev - G_prev.mean(axis=0))  # ∇f_i − ∇f differences (= −∇h_i)
        ratio = self.factor * math.sqrt(float(np.mean(np.einsum("ij,ij->i", D, D)))) / step
        return ratio if ratio > self.floor else lam


# --------------------------------------------------------------------------------------------
# the drivers
# --------------------------------------------------------------------------------------------


def sdane_step(
    oracles: Any,
    v: Any,
    clients: Any,
    lam: float,
    mu: float,
    solver: Any,
    test: Any = None,
    *,
    r: int = 0,
    rng: Any = None,
    G_center: Any = None,
) -> tuple[np.ndarray, np.ndarray, RoundResult]:
    """One S-DANE round from v^r with the clients S_r: (x^{r+1}, v^{r+1}, the round's local work).

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.algorithms.local_solvers import Exact
    >>> orc = client_oracles(make_quadratic(3, 4, mu=1.0, L=5.0, seed=0))
    >>> x1, v1, _ = sdane_step(orc, np.ones(4), np.arange(3), 2.0, 0.0, Exact())
    >>> bool(np.allclose(x1, v1))              # exact solves: v^{r+1} = x^{r+1}
    True
    """
    rd = prox_round(oracles, clients, v, lam, solver, test, r=r, rng=rng, G_center=G_center)
    x_new = rd.x_mean
    v_new = (lam * np.asarray(v, dtype=np.float64) + mu * x_new - rd.g_mean) / (lam + mu)
    return x_new, v_new, rd


def acc_sdane_step(
    oracles: Any,
    x: Any,
    v: Any,
    A: float,
    B: float,
    clients: Any,
    lam: float,
    mu: float,
    solver: Any,
    test: Any = None,
    *,
    r: int = 0,
    rng: Any = None,
):
    """One Acc-S-DANE round: (x^{r+1}, v^{r+1}, A_{r+1}, B_{r+1}, y^r, the round's local work)."""
    a = acc_coefficient(A, B, lam)
    A1, B1 = A + a, B + mu * a
    y = (A / A1) * np.asarray(x, dtype=np.float64) + (a / A1) * np.asarray(v, dtype=np.float64)
    rd = prox_round(oracles, clients, y, lam, solver, test, r=r, rng=rng)
    x_new = rd.x_mean
    v_new = (B * np.asarray(v, dtype=np.float64) + mu * a * x_new - a * rd.g_mean) / B1
    return x_new, v_new, A1, B1, y, rd


def _run(
    method: Any,
    name: str,
    problem: Any,
    x0: Any,
    rounds: Any,
    options: _RunOptions,
    *,
    params: dict,
    lam_of_round: Any = None,
) -> ProxHistory:
    """Run a DANE-family :class:`~fedtheory.methods.ir.Method` (test-stopped local solver) through the one
    simulator, :func:`fedtheory.methods.simulate.simulate`, on the problem's client oracles, and read the
    round-by-round record (centres, local solves, their tests) into a :class:`ProxHistory`. ``params``: the
    method's own parameters; the local solver, its test and s are recorded after them for every method."""
    from fedtheory.methods.simulate import simulate

    solver, test, clients_per_round, seed, record, stop_gap = options
    orc, x, rounds, rng = _prepare(problem, x0, rounds, seed)
    s = clients_per_round
    if s is not None and not (1 <= s <= orc.n):
        raise ValueError(f"clients per round s must satisfy 1 <= s <= n = {orc.n}, got s={s}")
    until = None if stop_gap is None else (lambda xr: float(orc.gaps(xr[None])[0]) <= stop_gap)
    # s = n: every client, nothing drawn (as sample_clients); s < n: one Generator.choice per round, unsorted
    h = simulate(
        method,
        orc,
        x,
        rounds,
        clients_per_round=None if s in (None, orc.n) else int(s),
        seed=rng,
        trace=True,
        until=until,
    )
    assert h.trace is not None  # asked for above
    data, centers, lams = [], [], []
    for tr in h.trace:
        solve = tr["prox"]["xi"]
        sub, res = solve["subproblem"], solve["result"]
        k = np.argsort(tr["clients"], kind="stable")  # rows by client index, as sample_clients sorts S_r
        data.append(_round_result(tr["clients"], res, sub.G_center, rows=k))
        centers.append(sub.center[0])
        lams.append(tr["scalars"]["lam"] if lam_of_round == "scalar" else lam_of_round)
    xs = list(np.asarray(h.x))
    vs = None if "v" not in method.server else [x] + [tr["server"]["v"] for tr in h.trace]
    A = B = None
    if "A" in method.scalars:
        A = [method.scalars["A"]] + [tr["scalars"]["A"] for tr in h.trace]
        B = [method.scalars["B"]] + [tr["scalars"]["B"] for tr in h.trace]
    params = {
        **params,
        "solver": getattr(solver, "name", type(solver).__name__),
        "test": repr(test),
        "clients_per_round": clients_per_round,
    }
    return _history(name, xs, vs, centers, lams, data, orc, record, A=A, B=B, params=params)


def run_dane(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    lam: float,
    solver: Any = None,
    test: Any = DaneTest(),
    clients_per_round: int | None = None,
    control_variate: bool = True,
    seed: Any = None,
    record: bool = False,
    stop_gap: float | None = None,
) -> ProxHistory:
    r"""DANE (4): x_{i,r+1} ≈ argmin f_i(x) − ⟨∇f_i(x^r) − ∇f_S(x^r), x⟩ + λ/2‖x − x^r‖², x^{r+1} = mean.

    λ = 0 is allowed (with a fixed-K solver it is Scaffold with full-gradient control variates).
    ``solver`` defaults to :class:`~fedtheory.algorithms.local_solvers.GD`; ``test`` to the tightening
    :class:`~fedtheory.algorithms.local_solvers.DaneTest` (``None`` with a fixed-K solver).
    ``control_variate=False`` gives FedProx with exact/test-stopped local solves. ``stop_gap``: stop once
    f(x^r) − f* ≤ stop_gap. Runs :func:`fedtheory.methods.library.dane` in the simulator.
    """
    from fedtheory.methods.library import dane

    lam = float(lam)
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError(f"DANE needs a finite lambda >= 0 (0 is Scaffold with fixed local steps), got lam={lam!r}")
    solver = solver or GD()
    method = dane(lam, solver=solver, test=test, control_variate=control_variate)
    run = _RunOptions(solver, test, clients_per_round, seed, record, stop_gap)
    return _run(method, "dane", problem, x0, rounds, run, lam_of_round=lam, params={"lam": lam})


def run_sdane(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    lam: float | AdaptiveLambda,
    mu: float = 0.0,
    solver: Any = None,
    test: Any = StabilizedTest(),
    clients_per_round: int | None = None,
    seed: Any = None,
    record: bool = False,
    stop_gap: float | None = None,
) -> ProxHistory:
    r"""S-DANE (Algorithm 1) from x^0 = v^0 = ``x0``.

    ``lam``: λ > 0, or an :class:`AdaptiveLambda` (full participation); ``mu``: the μ of line 9 (each
    f_i μ-convex; μ = 0 is always admissible); ``solver``: any local solver (default GD with step
    1/(L_i+λ)); ``test``: the accuracy condition (default (6): per client ‖∇F_i‖² ≤ λ²/4‖x_i − v^r‖²);
    ``clients_per_round`` s (None: all n). Runs :func:`fedtheory.methods.library.sdane` in the simulator.
    """
    from fedtheory.methods.library import sdane

    adaptive = lam if isinstance(lam, AdaptiveLambda) else None
    lam_r = _check_lam(adaptive.lam0 if adaptive else lam)
    mu = _check_mu(mu)
    n = client_oracles(problem).n
    if adaptive is not None and clients_per_round not in (None, n):
        raise ValueError("adaptive lambda is defined for full participation (clients_per_round = n)")
    solver = solver or GD()
    method = sdane(adaptive or lam_r, mu, solver=solver, test=test)
    run = _RunOptions(solver, test, clients_per_round, seed, record, stop_gap)
    return _run(
        method,
        "sdane",
        problem,
        x0,
        rounds,
        run,
        lam_of_round="scalar" if adaptive else lam_r,
        params={"lam": repr(lam) if adaptive else lam_r, "mu": mu},
    )


def run_acc_sdane(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    lam: float,
    mu: float = 0.0,
    solver: Any = None,
    test: Any = StabilizedTest(),
    clients_per_round: int | None = None,
    seed: Any = None,
    record: bool = False,
    stop_gap: float | None = None,
) -> ProxHistory:
    r"""Acc-S-DANE (Algorithm 2) from x^0 = v^0 = ``x0`` with A_0 = 0, B_0 = 1; the centre of round r is y^r.
    Runs :func:`fedtheory.methods.library.acc_sdane` in the simulator.

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q = make_quadratic(4, 6, mu=0.01, L=30.0, delta_A=1.0, seed=3)
    >>> h = run_acc_sdane(q, np.zeros(6), 40, lam=2.0, mu=0.01)
    >>> bool(np.all(h.gap[1:] * h.A[1:] <= 0.5 * np.sum(q.x_star() ** 2) + 1e-12))     # Theorem 6's A_R(f − f*) ≤ D²/2
    True
    """
    from fedtheory.methods.library import acc_sdane

    lam = _check_lam(lam)
    mu = _check_mu(mu)
    solver = solver or GD()
    method = acc_sdane(lam, mu, solver=solver, test=test)
    run = _RunOptions(solver, test, clients_per_round, seed, record, stop_gap)
    return _run(method, "acc-sdane", problem, x0, rounds, run, lam_of_round=lam, params={"lam": lam, "mu": mu})


def run_sdane_deep(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    lam: float,
    K: int,
    lr: float,
    theta: float | None = None,
    eta: float | None = None,
    mu: float = 0.0,
    batch_size: int | None = None,
    control_variate: bool = False,
    clients_per_round: int | None = None,
    seed: Any = None,
    record: bool = False,
) -> ProxHistory:
    r"""Algorithm 3 (S-DANE for deep learning): K local (mini-batch) SGD steps with step ``lr`` on
    f_i(x) [− ⟨∇f_i(v^r) − ∇f_S(v^r), x⟩ with ``control_variate`` (option 2)] + λ/2‖x − v^r‖², then
    v^{r+1} = (1 − θ)v^r + θx^{r+1} − η ḡ^{r+1}.

    ``theta``/``eta`` default to θ = μ/(λ+μ), η = 1/(λ+μ) (then option 2 is Algorithm 1 with a fixed-K
    SGD solver); the paper's deep-learning run sets θ = 0.99 and η = the local learning rate.

    >>> import numpy as np
    >>> from fedtheory.problems.finite_sum import LogisticFederation
    >>> fed = LogisticFederation.random(4, 40, 3, seed=0)
    >>> h = run_sdane_deep(fed, np.zeros(3), 20, lam=0.1, K=5, lr=0.1, theta=0.99, eta=0.1, batch_size=8, seed=0)
    >>> bool(h.gap[-1] < h.gap[0])
    True
    """
    lam = _check_lam(lam)
    theta = mu / (lam + mu) if theta is None else float(theta)
    eta = 1.0 / (lam + mu) if eta is None else float(eta)
    if not (0 <= theta <= 1) or eta < 0:
        raise ValueError(f"Algorithm 3 needs 0 <= theta <= 1 and eta >= 0, got theta={theta}, eta={eta}")
    orc, x, rounds, rng = _prepare(problem, x0, rounds, seed)
    solver = SGD(K=int(K), step=float(lr), batch_size=batch_size)
    v = x.copy()
    xs, vs, centers, lams, data = [x], [v], [], [], []
    for r in range(rounds):
        S = sample_clients(rng, orc.n, clients_per_round)
        rd = prox_round(orc, S, v, lam, solver, None, r=r, rng=rng, control_variate=control_variate)
        centers.append(v)
        x = rd.x_mean
        v = (1 - theta) * v + theta * x - eta * rd.g_mean
        xs.append(x)
        vs.append(v)
        lams.append(lam)
        data.append(rd)
    return _history(
        "sdane-deep",
        xs,
        vs,
        centers,
        lams,
        data,
        orc,
        record,
        params={
            "lam": lam,
            "theta": theta,
            "eta": eta,
            "K": K,
            "lr": lr,
            "batch_size": batch_size,
            "control_variate": control_variate,
            "clients_per_round": clients_per_round,
        },
    )


def replace_params(h: ProxHistory, **kw: Any) -> ProxHistory:
    """A copy of a history with extra ``params`` entries (for labelling runs)."""
    return dataclasses.replace(h, params={**h.params, **kw})
