r"""Instance-exact mode: tune LocalUpdate on the federation the user has, not on a worst case.

For quadratic clients (and least squares, which is one:
:meth:`~fedtheory.problems.finite_sum.LeastSquaresFederation.to_quadratic`) the error of LocalUpdate with full
participation has a closed form (:mod:`fedtheory.explore.exact`). :func:`tune_instance` evaluates this exact
error for every setting of an explicit grid — method (Θ_{1:K} / Θ_K / K = 1), K, γ, α, server kind, η (as
multiples of the Table 2 step at the setting's own extreme eigenvalues of H̃), β — and returns the best setting,
its exact error curve, distinct runner-ups, and what the worst-case advice (:func:`fedtheory.explore.tuning.tune`,
at this federation's μ, L, C, D, n and class) gives on the same federation. :func:`simulate_instance` runs the
driver (:func:`~fedtheory.algorithms.local_update.run_local_update`) on that very federation: measured and
predicted agree to float64 rounding at every round. Logistic clients have no closed form: the grid is
run on the driver and the figures are *measured*, not derived.

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(4, 3, mu=1.0, L=20.0, C=1.0, seed=0)
>>> adv = tune_instance(q, rounds=30)
>>> sim = simulate_instance(adv)
>>> adv.exact, bool(sim.max_abs_gap < 1e-10), adv.best["eta"] > 0
(True, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory.explore.exact import ExactModel, exact_curve, instance_errors, measured_curve
from fedtheory.explore.results import Result, fmt
from fedtheory.explore.tuning import hyper_grid, registered_methods, tune

__all__ = [
    "commuting_fast",
    "load_federation",
    "tune_instance",
    "simulate_instance",
    "InstanceAdvice",
    "InstanceSimulation",
    "default_grid",
    "INSTANCE_METHODS",
]

#: method -> Θ family searched in instance mode (MAML is not a LocalUpdate Θ with α > 0: not searched)
INSTANCE_METHODS = {"gd": "uniform", "fedavg": "uniform", "fedprox": "uniform", "fomaml": "last"}
#: multiples of the Table 2 server step (at the setting's own μ̃, L̃) searched for η
ETA_MULTIPLES = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25)
SERVERS = ("gd", "heavy_ball", "nesterov")


# ---------------------------------------------------------------------------------------------
# loading what the user has
# ---------------------------------------------------------------------------------------------


def _quadratic_fast(A: np.ndarray, c: np.ndarray, p: Any):
    """A validated QuadraticFederation whose n eigendecompositions run batched on one BLAS thread
    (threaded LAPACK on many small matrices is ~10× slower on shared cores)."""
    from threadpoolctl import threadpool_limits

    from fedtheory.problems.quadratic import QuadraticFederation

    A, c = np.asarray(A), np.asarray(c)
    for name, arr in (("A", A), ("c", c)):
        if np.iscomplexobj(arr):
            raise ValueError(f"{name} must be real, got complex entries (dtype {arr.dtype})")
        if not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
    A, c = A.astype(np.float64), c.astype(np.float64)
    if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"A must have shape (n, d, d) with n, d >= 1, got {A.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(c))):
        raise ValueError("A and c must be finite (no inf or nan)")
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    n = A.shape[0]
    p = np.full(n, 1.0 / n) if p is None else np.asarray(p, dtype=np.float64).ravel()
    if p.shape != (n,) or np.any(~(p > 0)):
        raise ValueError(f"p must hold n = {n} positive client weights, got shape {p.shape}")
    with threadpool_limits(limits=1):
        q = QuadraticFederation(A=A, c=c, p=p / p.sum())  # one batched eigh, nothing recomputed
    bad = np.flatnonzero(q.eigvals[:, 0] <= 0)
    if bad.size:
        raise ValueError(
            f"A[{int(bad[0])}] is not positive definite (smallest eigenvalue {float(q.eigvals[bad[0], 0])!r}); "
            f"instance mode needs strongly convex clients"
        )
    return q


def _ridge(q: Any, l2: float):
    """Each client with the ridge term (l2/2)‖x‖² added: A_i + l2·I, minimizer (A_i + l2·I)^{-1}A_ic_i."""
    if l2 == 0:
        return q
    eye = np.eye(q.d)
    A = q.A + l2 * eye
    c = np.linalg.solve(A, np.einsum("nij,nj->ni", q.A, q.c)[..., None])[..., 0]
    return _quadratic_fast(A, c, q.p)


def _client_arrays(data: Any) -> tuple[list, list] | None:
    """X_i, y_i from an npz mapping: keys X_0.., y_0.. (or X0.., y0..)."""
    keys = list(data.keys())
    xs = sorted(
        (k for k in keys if k[:1] in "Xx" and k[1:].lstrip("_").isdigit()), key=lambda k: int(k[1:].lstrip("_"))
    )
    if not xs:
        return None
    X, y = [], []
    for k in xs:
        i = k[1:].lstrip("_")
        for cand in (f"y_{i}", f"y{i}", f"Y_{i}", f"Y{i}"):
            if cand in data:
                break
        else:
            raise ValueError(f"client data {k} has no matching targets y_{i}")
        X.append(np.asarray(data[k], dtype=np.float64))
        y.append(np.asarray(data[cand], dtype=np.float64).ravel())
    return X, y


def load_federation(source: Any, *, model: str = "least-squares", l2: float = 0.0):
    """The federation to tune on, from what the user brings.

    ``source``: a :class:`~fedtheory.problems.quadratic.QuadraticFederation`, a finite-sum federation
    (least squares converts exactly to a quadratic; logistic stays a finite sum), or a path:
    ``.npz`` with ``A`` (n,d,d), ``c`` (n,d) and optionally ``p`` (n,) — a quadratic — or with client
    data ``X_0, y_0, X_1, y_1, ...`` (optional ``p``); ``.csv`` with a header, a ``client`` column, a
    ``y`` column and feature columns. Client data are read as ``model`` (``"least-squares"`` or
    ``"logistic"``, labels ±1) with ridge ``l2``. Bad input raises ValueError naming what is wrong.

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "fed.npz")
    >>> np.savez(path, A=np.stack([np.eye(2), 2 * np.eye(2)]), c=np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> load_federation(path)
    QuadraticFederation(n=2, d=2, mu=1.0, L=2.0, C=1.0)
    """
    from fedtheory.problems.finite_sum import FiniteSumFederation, LeastSquaresFederation, LogisticFederation
    from fedtheory.problems.quadratic import QuadraticFederation

    if model not in ("least-squares", "logistic"):
        raise ValueError(f"model must be 'least-squares' or 'logistic', got {model!r}")
    try:
        l2 = float(l2)
    except (TypeError, ValueError):
        raise ValueError(f"l2 (ridge) must be a number >= 0, got {l2!r}") from None
    if not (math.isfinite(l2) and l2 >= 0):
        raise ValueError(f"l2 (ridge) must be a finite number >= 0, got {l2!r}")
    if isinstance(source, QuadraticFederation):
        return _ridge(source, l2)
    if isinstance(source, LeastSquaresFederation):
        q = source.to_quadratic()
        return _ridge(_quadratic_fast(q.A, q.c, q.p), l2)
    if isinstance(source, FiniteSumFederation):
        return source
    import os

    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(
            f"federation must be a QuadraticFederation, a finite-sum federation or a .npz/.csv path, "
            f"got {type(source).__name__}"
        )
    path = Path(source)
    if not path.exists():
        raise ValueError(f"federation file {path} does not exist")
    p = None
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            data = dict(data)
        p = data.get("p")
        if "A" in data:
            if "c" not in data:
                raise ValueError(f"{path}: a quadratic federation needs both A (n,d,d) and c (n,d)")
            return _ridge(_quadratic_fast(data["A"], data["c"], p), l2)
        arrays = _client_arrays(data)
        if arrays is None:
            raise ValueError(f"{path}: expected keys A and c (quadratic) or X_0, y_0, X_1, y_1, ... (client data)")
        X, y = arrays
    elif path.suffix == ".csv":
        import csv

        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        if len(rows) < 2:
            raise ValueError(f"{path}: a header and at least one row are needed")
        head = [h.strip() for h in rows[0]]
        if "client" not in head or "y" not in head:
            raise ValueError(f"{path}: the header needs a 'client' column and a 'y' column, got {head}")
        ci, yi = head.index("client"), head.index("y")
        feats = [j for j in range(len(head)) if j not in (ci, yi)]
        for k, r in enumerate(rows[1:], start=2):
            if r and len(r) != len(head):
                raise ValueError(f"{path}: line {k} has {len(r)} cells, the header has {len(head)}")
        try:
            table = np.array([[float(r[j]) for j in range(len(head))] for r in rows[1:] if r], dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"{path}: every cell must be a number ({exc})") from None
        ids = np.unique(table[:, ci])
        X = [table[table[:, ci] == k][:, feats] for k in ids]
        y = [table[table[:, ci] == k][:, yi] for k in ids]
    else:
        raise ValueError(f"federation file {path} must be .npz or .csv")
    fed: Any = (LogisticFederation if model == "logistic" else LeastSquaresFederation)(X, y, p, l2=l2)
    if model == "logistic":
        return fed
    q = fed.to_quadratic()
    return _quadratic_fast(q.A, q.c, q.p)


# ---------------------------------------------------------------------------------------------
# the grid searched on one quadratic federation (its exact model: fedtheory.explore.exact)
# ---------------------------------------------------------------------------------------------


def _server_options(kind: str, h_min: float, h_max: float, multiples=ETA_MULTIPLES) -> tuple[np.ndarray, float]:
    """(η values, β) searched for one server kind: multiples of the Table 2 tuning at the setting's μ̃, L̃."""
    from fedtheory.analysis.rates import tuned_server

    s = tuned_server(kind, h_min, h_max)
    return s.lr * np.asarray(multiples, dtype=np.float64), float(s.momentum)


def default_grid(method: str, mu: float, L: float, n: int, d: int, *, K_max: int = 64) -> list[dict]:
    """The (method, Θ, K, γ, α) settings :func:`tune_instance` searches by default for one method.

    The grid shrinks with the cost of one setting (an n·d²·d product): 10 K × 10 γ up to n·d³ = 10⁷,
    5 × 5 up to 10⁸, 3 × 3 above (FedProx: × its α values), so n = 100, d = 200 stays within seconds;
    pass ``settings`` to :func:`tune_instance` for a finer grid. K = 1 (any γ: Q_i = I) is one setting.

    >>> [s["K"] for s in default_grid("gd", 1.0, 10.0, 3, 2)]
    [1]
    >>> len(default_grid("fedavg", 1.0, 10.0, 3, 2)) > 20
    True
    """
    theta = INSTANCE_METHODS[method]
    if method == "gd":
        return [{"method": "gd", "theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0}]
    work = n * float(d) ** 3
    size = 10 if work <= 1e7 else (5 if work <= 1e8 else 3)
    Ks = np.unique(np.round(np.geomspace(2, K_max, size)).astype(int))
    fracs = np.geomspace(0.02, 0.9, size)
    alphas = [0.0] if method != "fedprox" else list(np.geomspace(0.1 * mu, L, max(size // 3, 2)))
    out = []
    for K in Ks:
        for a in alphas:
            for f in fracs:
                if theta == "last":
                    f = f / K  # Θ_K: Lemma 4's regime γ < 1/(KL + α) is where it is useful
                out.append(
                    {"method": method, "theta": theta, "K": int(K), "gamma": float(f / (L + a)), "alpha": float(a)}
                )
    return out


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------


def _setting_text(s: dict) -> str:
    keys = ("method", "K", "gamma", "alpha", "server", "eta", "beta")
    # a registered method's own hyperparameters (s, lam, mu, option, ...) after the LocalUpdate ones
    extra = [k for k in s if k not in keys and k not in ("theta", "registered", "path")]
    return ", ".join(f"{k}={fmt(s[k])}" for k in keys + tuple(extra) if k in s)


@dataclass
class InstanceAdvice(Result):
    """The best setting on one federation, its error curve, runner-ups and the worst-case advice beside it."""

    federation: dict
    rounds: int
    exact: bool
    best: dict
    value: float
    curve: np.ndarray
    runner_ups: list
    evaluated: int
    search_space: dict
    worst_case: dict | None
    problem: Any = field(default=None, repr=False)
    x0: Any = field(default=None, repr=False)

    title = "fedtheory explore instance"

    def columns(self) -> list[str]:
        return ["rank", "setting", f"‖x_T − x*‖, T={self.rounds}", "derived or measured"]

    def rows(self) -> list[list[Any]]:
        def how(s: dict) -> str:
            if s.get("registered"):  # fedtheory.methods.run: exact only on its spectral path
                return "exact (spectral path)" if s.get("path") == "spectral" else "measured (fedtheory.methods.run)"
            return "exact (closed form)" if self.exact else "measured (driver)"

        rows = [[1, _setting_text(self.best), self.value, how(self.best)]]
        rows += [
            [i + 2, _setting_text(r["setting"]), r["value"], how(r["setting"])] for i, r in enumerate(self.runner_ups)
        ]
        if self.worst_case:
            w = self.worst_case
            rows.append(
                [
                    "worst-case advice",
                    _setting_text(w["setting"]) if w.get("setting") else "—",
                    w.get("on_this_federation"),
                    "exact on this federation" if self.exact else "measured",
                ]
            )
        return rows

    def notes(self) -> list[str]:
        f = self.federation
        lines = [
            f"federation: {f['kind']}, n={f['n']}, d={f['d']}, mu={fmt(f['mu'])}, L={fmt(f['L'])}, "
            f"C={fmt(f['C'])} (about x*), D=‖x0 − x*‖={fmt(f['D'])}, class: {f['class']}",
            f"searched {self.evaluated} settings (grid: {self.search_space['description']})",
        ]
        ts = sorted({0, self.rounds // 4, self.rounds // 2, (3 * self.rounds) // 4, self.rounds})
        lines.append(
            ("predicted" if self.exact else "measured")
            + " ‖x_t − x*‖ of the best setting: "
            + ", ".join(f"t={t}: {fmt(float(self.curve[t]))}" for t in ts)
            + " (all rounds in --json)"
        )
        if self.exact:
            lines.append(
                "errors are exact: spectral closed form of LocalUpdate on this federation (Theorem 1 + the "
                "server's iteration polynomials); --simulate runs the driver and compares every round"
            )
        else:
            lines.append("logistic clients have no closed form: every figure is MEASURED on the driver, not derived")
        if self.worst_case:
            w = self.worst_case
            lines.append(
                f"worst-case advice for this federation's constants ({w['method']}, class {w['class']}): "
                f"{w['message'] or 'guaranteed ‖x_T − x*‖ ≤ ' + fmt(w['guaranteed'])}; on this federation it "
                f"reaches {fmt(w.get('on_this_federation'))} against {fmt(self.value)} for the tuned setting"
            )
        return lines

    def to_json(self) -> dict:
        return {
            "kind": "instance",
            "federation": self.federation,
            "rounds": self.rounds,
            "exact": self.exact,
            "best": self.best,
            "value": self.value,
            "curve": self.curve,
            "runner_ups": self.runner_ups,
            "evaluated": self.evaluated,
            "search_space": self.search_space,
            "worst_case": self.worst_case,
        }

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        ax.semilogy(
            np.arange(len(self.curve)),
            np.maximum(self.curve, 1e-300),
            label="tuned on this federation (" + ("exact" if self.exact else "measured") + ")",
        )
        if self.worst_case and self.worst_case.get("curve") is not None:
            c = np.asarray(self.worst_case["curve"])
            ax.semilogy(np.arange(len(c)), np.maximum(c, 1e-300), "--", label="worst-case advice on it")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("‖x_t − x*‖")
        ax.legend(loc="best")


def commuting_fast(q, tol: float = 1e-9) -> bool:
    """Whether the clients' Hessians commute, in two batched products instead of n² commutators.

    A commuting family is diagonal in the eigenbasis W of a generic combination S = Σ r_iA_i; a family that
    is diagonal there commutes. Near-repeated eigenvalues of S can make a commuting family look
    non-commuting — the conservative answer (the general class's guarantees hold for every federation).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> commuting_fast(make_quadratic(4, 3, mu=1.0, L=9.0, commuting=True, seed=0)), commuting_fast(
    ...     make_quadratic(4, 3, mu=1.0, L=9.0, seed=0))
    (True, False)
    """
    A = np.asarray(q.A)
    r = np.random.default_rng(12345).uniform(0.5, 1.5, size=A.shape[0])
    _, W = np.linalg.eigh(np.einsum("n,nij->ij", r, A))
    B = np.matmul(W.T, np.matmul(A, W))
    off = B - B * np.eye(A.shape[1])
    return bool(np.abs(off).max() <= tol * max(float(np.abs(A).max()), 1e-300) * A.shape[1])


def _federation_summary(problem, x0: np.ndarray, exact: bool) -> dict:
    if exact:
        x_star = problem.x_star()
        C = float(np.linalg.norm(problem.c - x_star, axis=1).max())
        klass = "d1" if problem.d == 1 else ("commuting" if commuting_fast(problem) else "general")
        return {
            "kind": "quadratic",
            "n": problem.n,
            "d": problem.d,
            "mu": problem.mu,
            "L": problem.L,
            "C": C,
            "D": float(np.linalg.norm(x0 - x_star)),
            "class": klass,
            "commuting": klass != "general",
        }
    x_star = problem.x_star()
    return {
        "kind": getattr(problem, "name", "finite-sum"),
        "n": problem.n,
        "d": problem.d,
        "mu": None,
        "L": None,
        "C": None,
        "D": float(np.linalg.norm(x0 - x_star)),
        "class": "logistic (no closed form)",
        "commuting": False,
    }


def _evaluate_quadratic(model: ExactModel, settings: list[dict], servers: tuple, x0: np.ndarray, T: int):
    """Every (setting, server kind, η) of the grid: list of (value, full setting), exact."""
    out = []
    for s in settings:
        h, W, x_tilde = model.surrogate(s["theta"], s["K"], s["gamma"], s["alpha"])
        if not h[0] > 0:
            continue  # H̃ not positive definite: no server step converges; not a candidate
        for kind in servers:
            etas, beta = _server_options(kind, float(h[0]), float(h[-1]))
            errs = instance_errors(h, W, x_tilde, model.x_star, x0, kind, etas, beta, T)
            for j, eta in enumerate(etas):
                out.append((float(errs[j, -1]), {**s, "server": kind, "eta": float(eta), "beta": beta}))
    return out


def _logistic_grid(problem, methods, servers) -> list[dict]:
    """A small grid for finite-sum clients (each point is a driver run): the curvature bound L of the
    samples sets γ's scale and η = c/(K·L)."""
    a = problem.a * problem.mask[:, :, None]
    L = float(
        max(
            np.linalg.eigvalsh(np.swapaxes(a, 1, 2) @ a / problem.counts[:, None, None]).max()
            * getattr(problem, "_max_curvature", 1.0),
            1e-12,
        )
        + problem.l2
    )
    out = []
    for method in methods:
        Ks = [1] if method == "gd" else [2, 5, 20]
        for K in Ks:
            for f in [0.0] if K == 1 else [0.1, 0.5]:
                for kind in servers:
                    for c in (0.5, 1.0, 1.5):
                        out.append(
                            {
                                "method": method,
                                "theta": INSTANCE_METHODS[method],
                                "K": K,
                                "gamma": f / L,
                                "alpha": 0.0,
                                "server": kind,
                                "eta": c / (K * L),
                                "beta": 0.0 if kind == "gd" else 0.5,
                            }
                        )
    return out


def _distinct(scored: list, count: int) -> list:
    """The best ``count`` entries whose printed settings differ (a tie in print is one setting)."""
    seen, out = set(), []
    for value, s in scored:
        key = _setting_text(s)
        if key in seen:
            continue
        seen.add(key)
        out.append((value, s))
        if len(out) == count:
            break
    return out


def tune_instance(
    federation: Any,
    *,
    rounds: int = 50,
    x0: Any = None,
    methods: Any = ("gd", "fedavg", "fedprox", "fomaml"),
    servers: Any = SERVERS,
    settings: list[dict] | None = None,
    worst_case: bool = True,
    model: str = "least-squares",
    l2: float = 0.0,
) -> InstanceAdvice:
    """The best LocalUpdate setting for ``rounds`` rounds on ``federation`` (see the module docstring).

    ``federation``: anything :func:`load_federation` takes (``model``, ``l2``: how client data and a ridge are
    read). ``x0``: the start (default 0). ``methods``: names of
    :data:`INSTANCE_METHODS` (the exact LocalUpdate model below) and/or any registered method
    (:func:`fedtheory.methods.names`: fedsplit, scaffold, sdane, ...), each run through :func:`fedtheory.methods.run`
    on this federation at every point of its small grid (:func:`fedtheory.explore.tuning.hyper_grid` at the
    federation's μ, L) — the exact spectral path on quadratics / least squares, the simulator otherwise — and
    ranked with the others by ‖x_T − x*‖. ``servers`` ``servers`` (``"gd"``, ``"heavy_ball"``, ``"nesterov"``; all by default)
    span the grid with :func:`default_grid` and :data:`ETA_MULTIPLES`, unless ``settings`` lists the
    (method, theta, K, gamma, alpha) points explicitly. The objective is ‖x_T − x*‖ at T = ``rounds``.
    ``worst_case``: also evaluate what :func:`fedtheory.explore.tuning.tune` advises for this federation's
    constants, on this federation.

    >>> tune_instance(np.zeros(3), rounds=5)
    Traceback (most recent call last):
    ...
    ValueError: federation must be a QuadraticFederation, a finite-sum federation or a .npz/.csv path, got ndarray
    """
    from threadpoolctl import threadpool_limits

    # many small LAPACK calls and one GEMM per setting: threads on shared cores cost more than they save
    with threadpool_limits(limits=1):
        return _tune_instance(federation, rounds, x0, methods, servers, settings, worst_case, model, l2)


def _tune_instance(federation, rounds, x0, methods, servers, settings, worst_case, model, l2=0.0) -> InstanceAdvice:
    problem = load_federation(federation, model=model, l2=l2)
    if isinstance(rounds, (bool, np.bool_)) or int(rounds) != rounds or not 1 <= rounds <= 10**5:
        raise ValueError(f"rounds must be an integer in [1, 100000], got {rounds!r}")
    T = int(rounds)
    methods, servers = list(methods), list(servers)
    known = registered_methods()
    for m in methods:
        if m not in INSTANCE_METHODS and m not in known:
            raise ValueError(
                f"unknown instance-mode method {m!r} (choose from {', '.join(INSTANCE_METHODS)} or a "
                f"registered method: {', '.join(known)})"
            )
    registered = [m for m in methods if m not in INSTANCE_METHODS]
    methods = [m for m in methods if m in INSTANCE_METHODS]
    if not methods and not registered:
        raise ValueError("give at least one method")
    for k in servers:
        if k not in SERVERS:
            raise ValueError(f"unknown server {k!r} (choose from {', '.join(SERVERS)})")
    x0 = np.zeros(problem.d) if x0 is None else np.asarray(x0, dtype=np.float64).ravel()
    if x0.shape != (problem.d,):
        raise ValueError(f"x0 must have {problem.d} entries (the federation's d), got {x0.shape[0]}")
    exact = hasattr(problem, "eigvecs")
    summary = _federation_summary(problem, x0, exact)
    if exact:
        emodel = ExactModel(problem)
        if settings is None:
            settings = [s for m in methods for s in default_grid(m, emodel.mu, emodel.L, emodel.n, emodel.d)]
        settings = [s for s in settings if not s.get("registered")]
        for s in settings:
            if not 0 <= s["gamma"] * (emodel.L + s["alpha"]) < 1:
                raise ValueError(
                    f"hypothesis gamma < 1/(L + alpha) violated (Lemma 1): gamma={s['gamma']:g}, "
                    f"L={emodel.L:g}, alpha={s['alpha']:g}"
                )
        scored = _evaluate_quadratic(emodel, settings, tuple(servers), x0, T)
        description = (
            f"{len(settings)} (method, K, γ, α) points × servers {servers} × η = Table-2 step at the "
            f"setting's μ̃, L̃ times {list(ETA_MULTIPLES)}, β tuned"
        )
    else:
        settings = _logistic_grid(problem, methods, servers) if settings is None else settings
        settings = [s for s in settings if not s.get("registered")]
        scored = []
        for s in settings:
            c = measured_curve(problem, s, x0, T)
            if np.isfinite(c[-1]):
                scored.append((float(c[-1]), s))
        description = f"{len(settings)} driver runs (K, γ, η grid for finite-sum clients)"
    curves: dict = {}
    if registered:
        reg, curves = _registered_scores(problem, registered, x0, T, summary)
        scored += reg
        description += f"; registered methods {registered} on fedtheory.methods.run at {len(reg)} grid points"
    if not scored:
        raise ValueError("no setting of the grid converges on this federation")
    scored.sort(key=lambda e: (e[0], e[1].get("K", 1)))
    top = _distinct(scored, 5)
    best_value, best = top[0]
    if best.get("registered"):
        curve = curves[_setting_text(best)]
    else:
        curve = exact_curve(emodel, best, x0, T) if exact else measured_curve(problem, best, x0, T)
    wc = (
        _worst_case_on(problem, emodel if exact else None, summary, x0, T, methods or ["gd"])
        if worst_case and exact
        else None
    )
    return InstanceAdvice(
        federation=summary,
        rounds=T,
        exact=exact,
        best=best,
        value=best_value,
        curve=curve,
        runner_ups=[{"setting": s, "value": v} for v, s in top[1:]],
        evaluated=len(scored),
        search_space={
            "description": description,
            "settings": settings,
            "servers": servers,
            "eta_multiples": list(ETA_MULTIPLES),
        },
        worst_case=wc,
        problem=problem,
        x0=x0,
    )


def _registered_hyper(setting: dict) -> dict:
    return {k: v for k, v in setting.items() if k not in ("method", "registered", "path")}


def _registered_scores(problem, names: list, x0: np.ndarray, T: int, summary: dict) -> tuple[list, dict]:
    """(‖x_T − x*‖, setting) of each registered method at each point of its grid on this federation, through
    :func:`fedtheory.methods.run` (the exact spectral path on quadratic and least-squares clients, else "auto"),
    and each setting's curve ‖x_t − x*‖, t = 0..T."""
    import fedtheory.methods as fm

    scored, curves = [], {}
    # the closed forms wherever the clients are quadratic (or least squares): the curve is then exact, and the
    # step-by-step replay (simulate_instance) checks it against the primitives run literally
    path = "spectral" if (hasattr(problem, "eigvecs") or hasattr(problem, "to_quadratic")) else "auto"
    for name in names:
        for hyper in hyper_grid(name, summary["mu"], summary["L"]):
            with np.errstate(all="ignore"):
                h = fm.run(name, problem, x0, T, path=path, **hyper)
            curve = np.asarray(h.dist, dtype=np.float64)
            s = {"method": name, **hyper, "registered": True, "path": h.path}
            curves[_setting_text(s)] = curve
            if np.isfinite(curve[-1]):
                scored.append((float(curve[-1]), s))
    return scored, curves


def _worst_case_on(problem, emodel: ExactModel, summary: dict, x0: np.ndarray, T: int, methods: list) -> dict:
    """What the worst-case explorer advises at this federation's constants, and its exact error here."""
    method = next((m for m in ("fedavg", "fedprox", "fomaml", "gd") if m in methods), "gd")
    # this federation's own weights: a certificate for equal weights does not cover unequal ones
    p = np.asarray(getattr(problem, "p", np.full(summary["n"], 1.0 / summary["n"])), dtype=np.float64)
    weights = None if np.allclose(p, 1.0 / summary["n"], rtol=0, atol=1e-12) else (p / p.sum()).tolist()
    adv = tune(
        method,
        mu=summary["mu"],
        L=summary["L"],
        C=summary["C"],
        D=max(summary["D"], 1e-300),
        rounds=T,
        function_class=summary["class"],
        clients=summary["n"],
        lower_bound=False,
        weights=weights if summary["n"] >= 2 else None,
    )
    out = {
        "method": method,
        "class": summary["class"],
        "guaranteed": adv.value if adv.feasible else None,
        "message": "" if adv.feasible else adv.message,
        "setting": None,
        "on_this_federation": None,
        "curve": None,
    }
    if adv.feasible and adv.best.get("eta"):
        s = adv.best
        setting = {
            "method": method,
            "theta": s["theta"],
            "K": int(s["K"]),
            "gamma": s["gamma"],
            "alpha": s["alpha"],
            "server": s["server"],
            "eta": s["eta"],
            "beta": s["beta"],
        }
        curve = exact_curve(emodel, setting, x0, T)
        out.update(setting=setting, on_this_federation=float(curve[-1]), curve=curve)
    return out


@dataclass
class InstanceSimulation(Result):
    """The driver on the user's federation with the tuned setting: measured against predicted per round."""

    setting: dict
    rounds: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    exact: bool

    title = "fedtheory explore instance --simulate"

    @property
    def max_abs_gap(self) -> float:
        """max over rounds of ``|measured − predicted| / max(1, predicted)`` (absolute below 1, relative above)."""
        return float(np.max(np.abs(self.measured - self.predicted) / np.maximum(1.0, np.abs(self.predicted))))

    def columns(self) -> list[str]:
        return ["round", "measured (driver)", "predicted (closed form)" if self.exact else "measured (grid run)", "gap"]

    def rows(self) -> list[list[Any]]:
        T = len(self.rounds)
        shown = sorted(set(np.unique(np.round(np.geomspace(1, max(T, 1), 20)).astype(int) - 1).tolist()) | {0, T - 1})
        return [
            [
                int(self.rounds[i]),
                float(self.measured[i]),
                float(self.predicted[i]),
                float(abs(self.measured[i] - self.predicted[i])),
            ]
            for i in shown
            if 0 <= i < T
        ]

    def notes(self) -> list[str]:
        return [
            f"setting: {_setting_text(self.setting)}; max |measured − predicted| over {len(self.rounds) - 1} rounds "
            f"= {self.max_abs_gap:.3g} (relative where above 1)"
            + ("" if self.exact else " (logistic: both are driver runs)")
        ]

    def to_json(self) -> dict:
        return {
            "kind": "instance-simulate",
            "setting": self.setting,
            "rounds": self.rounds,
            "measured": self.measured,
            "predicted": self.predicted,
            "max_abs_gap": self.max_abs_gap,
            "exact": self.exact,
        }

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        ax.semilogy(self.rounds, np.maximum(self.measured, 1e-300), label="measured (driver)")
        ax.semilogy(self.rounds, np.maximum(self.predicted, 1e-300), "--", label="predicted")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("‖x_t − x*‖")
        ax.legend(loc="best")


def simulate_instance(advice: InstanceAdvice) -> InstanceSimulation:
    """Run the tuned setting on the driver, on the same federation, from the same x0.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> sim = simulate_instance(tune_instance(make_quadratic(2, 2, mu=1.0, L=4.0, seed=0), rounds=5, methods=("gd",)))
    >>> len(sim.rounds), sim.max_abs_gap < 1e-12
    (6, True)
    """
    if advice.best.get("registered"):
        import fedtheory.methods as fm

        with np.errstate(all="ignore"):  # the primitives literally, against the path the grid used
            h = fm.run(
                advice.best["method"],
                advice.problem,
                advice.x0,
                advice.rounds,
                path="step",
                **_registered_hyper(advice.best),
            )
        measured = np.asarray(h.dist, dtype=np.float64)
    else:
        measured = measured_curve(advice.problem, advice.best, advice.x0, advice.rounds)
    return InstanceSimulation(
        setting=advice.best,
        rounds=np.arange(advice.rounds + 1),
        measured=measured,
        predicted=np.asarray(advice.curve),
        exact=advice.exact,
    )
