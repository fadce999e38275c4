"""The problem family of fedhm's convergence sections (not content: no claims): federated bilinear-logistic
instances where every constant of Assumptions 1–5 is computable, Algorithm 2's sequences and the terms of Theorems 2–3.
See the package's __init__ for the constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fedtheory.algorithms.fedhm import FactorizedLayer, FactorSpace, FedHM, HybridLayout, run_fedhm
from fedtheory.claims.core import Control
from fedtheory.problems.finite_sum import LogisticFederation

EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# the problem family and Algorithm 2's sequences
# --------------------------------------------------------------------------------------------


@dataclass
class Instance:
    """One federated bilinear-logistic problem and an Algorithm 2 configuration on it."""

    fed: LogisticFederation
    layout: HybridLayout
    algo: FedHM
    levels: np.ndarray
    x0: np.ndarray
    rounds: int
    batch: int | None
    params: dict = field(default_factory=dict)

    @property
    def P(self) -> int:
        return self.fed.n

    @property
    def space(self) -> FactorSpace:
        """The analysis space: every layer padded to its full rank min(m, n) (eq. (12))."""
        return FactorSpace(self.layout, tuple(min(layer.m, layer.n) for layer in self.layout.layers))

    @property
    def full_ranks(self) -> list[int]:
        return [min(layer.m, layer.n) for layer in self.layout.layers]


def make_instance(
    rng: np.random.Generator,
    *,
    P: int = 3,
    shapes=((3, 4),),
    samples: int = 5,
    E: int = 3,
    rounds: int = 4,
    ratios=(1.0, 0.5),
    levels=None,
    scale: float = 0.6,
    w_scale: float = 0.4,
    heterogeneity: float = 1.0,
    batch: int | None = 1,
    eta_fraction: float = 0.5,
    eta: float | None = None,
    init_rank: int | None = None,
) -> Instance:
    """A random instance; η = ``eta_fraction``/L_∇g with L_∇g for κ_UV from a pilot run (rerun smaller if the run
    leaves the ball that η was chosen for), unless ``eta`` is given. ``init_rank``: w₀'s matrices truncated to this rank."""
    layers, offset = [], 1
    for i, (m, n) in enumerate(shapes):
        layers.append(FactorizedLayer(f"W{i + 1}", offset, (int(m), int(n)), "matrix"))
        offset += int(m) * int(n)
    layout = HybridLayout(offset, tuple(layers))
    d = offset
    teacher = rng.normal(size=d)
    feats, labels = [], []
    counts = samples if np.ndim(samples) else [int(samples)] * P
    for p in range(P):
        a = scale * rng.normal(size=(int(counts[p]), d))
        a[:, 0] = scale  # the bias feature
        t = teacher + heterogeneity * rng.normal(size=d)
        y = np.sign(a @ t + 0.3 * rng.normal(size=a.shape[0]))
        y[y == 0] = 1.0
        feats.append(a)
        labels.append(y)
    fed = LogisticFederation(feats, labels, p=np.full(P, 1.0 / P))
    levels = np.arange(P) % len(ratios) if levels is None else np.asarray(levels)
    x0 = w_scale * rng.normal(size=d)
    if init_rank is not None:
        for layer in layout.layers:
            Uf, sv, Vh = np.linalg.svd(layer.to_matrix(x0), full_matrices=False)
            sv[int(init_rank) :] = 0.0
            x0[layer.offset : layer.offset + layer.size] = layer.from_matrix((Uf * sv) @ Vh)
    params = {
        "P": P,
        "shapes": [list(s) for s in shapes],
        "samples": list(map(int, counts)),
        "E": E,
        "rounds": rounds,
        "ratios": list(ratios),
        "levels": levels.tolist(),
        "scale": scale,
        "w_scale": w_scale,
        "batch": batch,
        "heterogeneity": heterogeneity,
        "init_rank": init_rank,
    }
    inst = Instance(
        fed,
        layout,
        FedHM(tuple(ratios), E, 1.0, convention="matrix", dense_full_rank=False),
        levels,
        x0,
        rounds,
        batch,
        params,
    )
    if eta is not None:
        inst.algo = FedHM(tuple(ratios), E, float(eta), convention="matrix", dense_full_rank=False)
        inst.params["eta"] = float(eta)
        return inst
    c = constants(inst)
    kappa = 2.0 * kappa_uv_of(inst.space.spectral(x0, inst.full_ranks)[None, :], inst.space)
    for _ in range(20):
        eta_try = eta_fraction / c.L_g(kappa)
        inst.algo = FedHM(tuple(ratios), E, eta_try, convention="matrix", dense_full_rank=False)
        seq = sequences(inst, seed=0)
        if seq.kappa_uv <= kappa:
            break
        kappa = 1.5 * seq.kappa_uv
    inst.params["eta"] = inst.algo.lr
    return inst


@dataclass
class Constants:
    """The problem constants of Assumptions 3 and 5 (see the module docstring)."""

    L_grad_f: float
    kappa_f: float
    M_f: float
    L_f: float
    f_low: float = 0.0

    def scale(self, kappa_uv: float) -> float:
        return max(1.0, 2.0 * kappa_uv**2)

    def kappa_g(self, kappa_uv: float) -> float:
        return self.scale(kappa_uv) * self.kappa_f

    def M_g(self, kappa_uv: float) -> float:
        return self.scale(kappa_uv) * self.M_f

    def L_g(self, kappa_uv: float) -> float:
        return self.scale(kappa_uv) * self.L_grad_f + self.L_f


def constants(inst: Instance) -> Constants:
    fed = inst.fed
    L, kap, lf = 0.0, 0.0, 0.0
    for p in range(fed.n):
        a = fed.a[p, : fed.counts[p]]
        L = max(L, float(np.linalg.eigvalsh(a.T @ a / a.shape[0])[-1]) / 4)
        norms = np.linalg.norm(a, axis=1)
        kap = max(kap, float(np.mean(norms**2)))
        lf = max(lf, float(np.mean(norms)))
    return Constants(L_grad_f=L, kappa_f=kap, M_f=kap if inst.batch is not None else 0.0, L_f=lf)


def sample_grads(fed: LogisticFederation, p: int, w: np.ndarray) -> np.ndarray:
    """(m_p, d): ∇F_p(w; j) = −y_j σ(−y_j a_jᵀw) a_j for every sample j of client p."""
    a, y = fed.a[p, : fed.counts[p]], fed.y[p, : fed.counts[p]]
    u = y * (a @ w)
    coef = -y * np.exp(-np.logaddexp(0.0, u))  # −y σ(−u), stable
    return coef[:, None] * a


def client_grad(fed: LogisticFederation, p: int, w: np.ndarray) -> np.ndarray:
    return sample_grads(fed, p, w).mean(axis=0)


def kappa_uv_of(hs: np.ndarray, space: FactorSpace) -> float:
    return float(space.factor_norms(hs).max()) if hs.size else 0.0


@dataclass
class Sequences:
    """Appendix B's sequences of one run, in the full-rank analysis space."""

    inst: Instance
    T: int
    E: int
    h_eval: np.ndarray  # (T, P, dim): y_{p,t} at t ∈ ℰ, h_{p,t} otherwise (where G_{p,t} is taken)
    G: np.ndarray  # (T, P, dim)
    h_state: dict  # t = 1..T → (P, dim): h_{p,t} (before the server step when t ∈ ℰ)
    server: np.ndarray  # (rounds+1, d): w_{kE}
    kappa_uv: float

    @property
    def space(self) -> FactorSpace:
        return self.inst.space

    def in_E(self, t: int) -> bool:
        return t % self.E == 0

    def y(self, t: int) -> np.ndarray:
        return self.h_eval[t]

    def hbar(self, t: int) -> np.ndarray:
        """h̄_t: h̄_0 = the full SVD factors of w_0; at t ∈ ℰ, t > 0, the average before the server step."""
        if t == 0:
            return self.space.spectral(self.inst.x0, self.inst.full_ranks)
        return self.h_state[t].mean(axis=0)

    def ybar(self, t: int) -> np.ndarray:
        return self.h_eval[t].mean(axis=0)

    def hhat(self, t: int) -> np.ndarray:
        return self.ybar(t) if self.in_E(t) else self.hbar(t)

    def t0(self, t: int) -> int:
        return ((t - 1) // self.E) * self.E


def _embed(h: np.ndarray, src: FactorSpace, dst: FactorSpace) -> np.ndarray:
    out = np.zeros((*h.shape[:-1], dst.dim))
    k = src.dense_index.size
    out[..., :k] = h[..., :k]
    lead = h.shape[:-1]
    for (U, V), (su, sv), r, rd in zip(src.factors(h), dst.slices(), src.r_max, dst.r_max):
        Up = np.zeros((*lead, U.shape[-2], rd))
        Vp = np.zeros((*lead, V.shape[-2], rd))
        Up[..., :r] = U
        Vp[..., :r] = V
        out[..., su] = Up.reshape(*lead, -1)
        out[..., sv] = Vp.reshape(*lead, -1)
    return out


def sequences(inst: Instance, seed: int) -> Sequences:
    """Run Algorithm 2 once (seeded) and collect its sequences."""
    hist = run_fedhm(
        inst.fed,
        inst.layout,
        inst.algo,
        inst.x0,
        inst.rounds,
        levels=inst.levels,
        batch_size=inst.batch,
        seed=seed,
        trace=True,
        evaluate=False,
    )
    tr = hist.trace
    src, dst = tr["space"], inst.space
    h_eval = _embed(tr["h"], src, dst)
    G = _embed(tr["G"], src, dst)
    h_end = _embed(tr["h_end"], src, dst)
    E, T = inst.algo.local_steps, tr["h"].shape[0]
    states = {t: h_eval[t] for t in range(1, T) if t % E}
    for k in range(inst.rounds):
        states[(k + 1) * E] = h_end[k]
    kappa = max(kappa_uv_of(h_eval.reshape(-1, dst.dim), dst), kappa_uv_of(h_end.reshape(-1, dst.dim), dst))
    return Sequences(inst, T, E, h_eval, G, states, hist.x, kappa)


def g_value(inst: Instance, h: np.ndarray) -> float:
    return float(inst.fed.loss(inst.space.w(h)))


def grad_g(inst: Instance, h: np.ndarray) -> np.ndarray:
    """∇g(h) = (1/P) Σ_p ∇g_p(h)."""
    w = inst.space.w(h)
    return inst.space.grad(h, np.mean([client_grad(inst.fed, p, w) for p in range(inst.P)], axis=0))


def grad_g_client(inst: Instance, p: int, h: np.ndarray) -> np.ndarray:
    return inst.space.grad(h, client_grad(inst.fed, p, inst.space.w(h)))


def factor_sample_grads(inst: Instance, p: int, h: np.ndarray) -> np.ndarray:
    """(m_p, dim): ∇G_p(h; j) for every sample j (eq. (10)), batch size 1."""
    return inst.space.grad(np.broadcast_to(h, (inst.fed.counts[p], h.size)), sample_grads(inst.fed, p, inst.space.w(h)))


def moments(inst: Instance, p: int, h: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(E ∇G_p, E‖∇G_p‖², Var) over client p's samples at h (batch size 1; exact)."""
    gs = factor_sample_grads(inst, p, h)
    mean = gs.mean(axis=0)
    second = float(np.mean(np.sum(gs**2, axis=1)))
    return mean, second, second - float(mean @ mean)


def _random_instance(rng, fast: bool = True, **overrides) -> Instance:
    shapes = ((3, 4),) if rng.uniform() < 0.5 else ((3, 4), (2, 3))
    kw = dict(
        P=int(rng.integers(2, 4)),
        shapes=shapes,
        samples=int(rng.integers(3, 6)),
        E=int(rng.integers(2, 4)),
        rounds=int(rng.integers(2, 4)) if fast else int(rng.integers(3, 7)),
        scale=float(rng.uniform(0.3, 1.2)),
        w_scale=float(rng.uniform(0.2, 1.0)),
        ratios=((1.0, 0.5) if rng.uniform() < 0.7 else (0.5,)),
        heterogeneity=float(rng.uniform(0, 2)),
        eta_fraction=float(rng.uniform(0.2, 1.0)),
    )
    kw.update(overrides)
    return make_instance(rng, **kw)


# --------------------------------------------------------------------------------------------
# the terms of Theorems 2 and 3 on runs
# --------------------------------------------------------------------------------------------


def truncated_roots(s: np.ndarray, ranks) -> np.ndarray:
    """√Σ truncated at each client's rank (the √Σ_r(p) of eq. (18)): row p is √s on the first ``ranks[p]``
    singular values ``s`` and 0 after.

    >>> truncated_roots(np.array([4.0, 1.0]), [1, 2]).tolist()
    [[2.0, 0.0], [2.0, 1.0]]
    """
    return np.array([np.where(np.arange(s.size) < r, np.sqrt(s), 0.0) for r in ranks])


def factor_2_dropped(description: str) -> Control:
    """The control of the factor identity ‖ȳ − y_p‖² = 2Σ_ℓ‖avg√Σ − √Σ_p‖² (U and V each carry the gap): the
    identity without its factor 2 (``factor_2`` = 1), false a priori as ``description`` says."""
    return Control("factor-2-dropped", description, {"factor_2": 1.0})


def sqrt_sigma_gap(inst: Instance, w: np.ndarray) -> tuple[float, float, list]:
    """At a server model w (an aggregation step): per layer ‖(avg_p √Σ_r(p))² − Σ‖²_F (Assumption 5's first
    quantity) and max_p ‖avg_i √Σ_r(i) − √Σ_r(p)‖²_F (the second); returns the max over layers of each."""
    k1, k2, per = 0.0, 0.0, []
    for j, layer in enumerate(inst.layout.layers):
        s = np.linalg.svd(layer.to_matrix(w), compute_uv=False)
        roots = truncated_roots(
            s, [layer.rank(inst.algo.ratios[inst.levels[p]], inst.algo.convention) for p in range(inst.P)]
        )
        avg = roots.mean(axis=0)
        a1 = float(np.sum((avg * avg - s) ** 2))
        a2 = float(max(np.sum((avg - roots[p]) ** 2) for p in range(inst.P)))
        per.append((a1, a2))
        k1, k2 = max(k1, a1), max(k2, a2)
    return k1, k2, per


@dataclass
class RunTerms:
    """Per run: the left side of Theorems 2–3 and the random quantities on their right sides."""

    lhs: float  # (1/T) Σ_t ‖∇g(ĥ_t)‖²
    jump: float  # Σ_{t∈ℰ} [g(ȳ_t) − g(h̄_t)]
    drift: float  # Σ_{t∈ℰ} Σ_p ‖ȳ_t − y_{p,t}‖²
    sigma1: list  # per t ∈ ℰ: max over layers of Assumption 5's first quantity
    sigma2: list  # per t ∈ ℰ: max over layers, p of the second
    kappa_uv: float
    f0: float


def run_terms(inst: Instance, seed: int) -> RunTerms:
    seq = sequences(inst, seed)
    lhs = float(np.mean([np.sum(grad_g(inst, seq.hhat(t)) ** 2) for t in range(seq.T)]))
    jump = drift = 0.0
    s1, s2 = [], []
    for k in range(inst.rounds):
        t = k * seq.E
        ybar, hbar = seq.ybar(t), seq.hbar(t)
        jump += g_value(inst, ybar) - g_value(inst, hbar)
        drift += float(np.sum((seq.y(t) - ybar) ** 2))
        a1, a2, _ = sqrt_sigma_gap(inst, seq.server[k])
        s1.append(a1)
        s2.append(a2)
    return RunTerms(lhs, jump, drift, s1, s2, seq.kappa_uv, float(inst.fed.loss(inst.x0)))


def theorem_2_rhs(inst: Instance, c: Constants, kappa_uv: float, f0: float, jump: float, drift: float) -> float:
    """Eq. (22) with T = rounds·E, the expectations replaced by the given (mean) values."""
    eta, E, P, T = inst.algo.lr, inst.algo.local_steps, inst.P, inst.rounds * inst.algo.local_steps
    L, kg, Mg = c.L_g(kappa_uv), c.kappa_g(kappa_uv), c.M_g(kappa_uv)
    return (
        2 / (T * eta) * (f0 - c.f_low)
        + 6 * eta**2 * L**2 * kg * E**2
        + eta * L * Mg / P
        + 2 / (T * eta) * jump
        + 3 * L**2 * E / (T * P) * drift
    )


def theorem_3_rhs(inst: Instance, c: Constants, kappa_uv: float, f0: float, k_sigma1: float, k_sigma2: float) -> float:
    """Theorem 3's right side; L − ρ = the number of factorized layers."""
    eta, E, P, T = inst.algo.lr, inst.algo.local_steps, inst.P, inst.rounds * inst.algo.local_steps
    L, kg, Mg, Lf = c.L_g(kappa_uv), c.kappa_g(kappa_uv), c.M_g(kappa_uv), c.L_f
    nl = len(inst.layout.layers)
    return (
        2 / (T * eta) * (f0 - c.f_low)
        + 2 * Lf * nl * k_sigma1 / (E * eta)
        + 6 * eta * kg * E * (eta * L**2 * E + 2 * Lf * kappa_uv**2)
        + eta * L * Mg / P
        + 6 * nl * k_sigma2 * (L**2 + 2 * Lf * kappa_uv**2 / (E * eta))
    )


def _ball_point(rng, inst: Instance, kappa: float) -> np.ndarray:
    """A random h in the ball {‖U_ℓ‖_F, ‖V_ℓ‖_F ≤ κ} (dense part free), radii spread over [0, κ]."""
    space = inst.space
    h = rng.normal(size=space.dim) * rng.uniform(0.1, 3)
    return _project_ball(h, space, kappa, rng.uniform(0, 1, size=2 * len(space.r_max)) ** 0.5)


def _project_ball(h: np.ndarray, space: FactorSpace, kappa: float, fractions) -> np.ndarray:
    h = h.copy()
    for j, (su, sv) in enumerate(space.slices()):
        for i, sl in enumerate((su, sv)):
            nrm = np.linalg.norm(h[sl])
            if nrm > 0:
                h[sl] *= kappa * fractions[2 * j + i] / nrm
    return h


def _theory_instance(rng, ctx, **kw) -> Instance:
    base = dict(
        P=int(rng.integers(2, 4)),
        samples=int(rng.integers(3, 5)),
        E=int(rng.integers(2, 4)),
        rounds=3,
        ratios=(1.0, 0.5) if rng.uniform() < 0.6 else (0.5, 0.34),
        scale=float(rng.uniform(0.4, 1.0)),
        w_scale=float(rng.uniform(0.3, 1.0)),
        heterogeneity=float(rng.uniform(0.5, 2)),
        eta_fraction=float(rng.uniform(0.3, 1)),
    )
    base.update(kw)
    return _random_instance(rng, **base)


def theory_instances_with_runs(rng, ctx, instances: int, runs: int, **instance_kw):
    """``instances`` random instances of the theory's setting (:func:`_theory_instance` with ``instance_kw``), each
    with its constants, ``runs`` seeded runs of Algorithm 2 (seeds 0, 1, ...) and the largest κ_UV those runs reach
    (the bounds are evaluated at it).

    >>> from fedtheory.claims.core import CheckContext
    >>> [(len(seqs), kappa > 0) for inst, c, seqs, kappa in theory_instances_with_runs(np.random.default_rng(0),
    ...                                                                                  CheckContext(seed=0), 1, 2)]
    [(2, True)]
    """
    for _ in range(instances):
        inst = _theory_instance(rng, ctx, **instance_kw)
        c = constants(inst)
        seqs = [sequences(inst, seed=s) for s in range(runs)]
        yield inst, c, seqs, max(s.kappa_uv for s in seqs)
