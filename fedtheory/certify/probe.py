r"""Adversarial probes: search a hypothesis class for the instance closest to breaking a statement.

A probe maximizes a *violation* — a function of one instance, larger meaning closer to breaking
the statement (the caller defines it: typically ``lhs / rhs``, which exceeds 1 exactly on a
counterexample) — over a :class:`~fedtheory.certify.params.Param`, whose every real vector ``z``
decodes to an instance satisfying the hypotheses. Two phases:

1. **random**: ``n_random`` draws ``z ~ param.sample(rng)`` (typical random instances);
2. **optimize**: a local search (``scipy.optimize.minimize``'s method, Nelder–Mead by default) of
   ``-violation(decode(z))`` from ``n_starts`` starts — the best ``n_starts // 2`` random draws and
   fresh draws for the rest (plus any ``starts`` the caller knows, such as an encoded tight instance).
   Nelder–Mead runs :func:`nelder_mead`, scipy's algorithm step for step without importing
   ``scipy.optimize`` (about 0.7 s of CPU: a probe inside a command-line call must not pay it); every
   other method imports scipy when it runs.

Random sampling alone is not a verification (the optimizer climbs into regions sampling misses),
and the optimizer alone gets stuck; together, and reported separately, they are evidence.

Every evaluation is recorded; the result keeps the worst one's ``z``, so it replays exactly:

>>> import numpy as np
>>> from fedtheory.certify.params import Box, Product
>>> from fedtheory.certify.probe import probe
>>> P = Product(x=Box(-1.0, 1.0), y=Box(-1.0, 1.0))
>>> def violation(inst):               # maximal (= 1) only at the corner (0.7, -0.2)
...     return 1.0 - (inst["x"] - 0.7) ** 2 - (inst["y"] + 0.2) ** 2
>>> r = probe(violation, P, seed=0, n_random=32, n_starts=2)
>>> round(r.worst_value, 8), r.random_worst_value < r.worst_value, r.n_failed
(1.0, True, 0)
>>> r.replay(violation, P) == r.worst_value
True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from fedtheory.certify.params import Param, jsonable

__all__ = ["ProbeResult", "probe", "sample_worst", "replay_z", "nelder_mead"]

_METHODS_WITH_SIMPLEX = ("nelder-mead",)
#: the options :func:`nelder_mead` takes; Nelder–Mead with any other scipy option runs scipy's own
_NELDER_MEAD_OPTIONS = {"maxiter", "maxfev", "xatol", "fatol", "adaptive", "initial_simplex"}


@dataclass
class ProbeResult:
    """What a probe found. ``worst_*`` is the largest violation over every evaluation.

    - ``worst_value``, ``worst_instance`` (decoded), ``worst_z`` (list of floats: replay it with
      :meth:`replay`; JSON keeps floats exactly, so a stored ``z`` replays bit for bit);
    - ``random_worst_value``: the best of the random phase alone; ``optimized_worst_value``: the
      best reached by the optimizer phase (``None`` for :func:`sample_worst`);
    - ``n_evaluations`` (calls of the violation), ``n_failed`` (calls that raised or returned a
      non-finite value — counted as ``-inf``; non-zero means the check is partly broken and must
      not be read as a pass), ``first_failure`` (a message and the ``z`` that caused it);
    - ``seed`` (``None`` when a Generator was passed), ``target``, ``found`` (``worst_value >
      target``), ``stopped_early`` (the probe stopped at the first value above ``target``),
      ``method`` and ``starts`` (per optimizer start: its origin, initial and best value and
      evaluations).

    >>> from fedtheory.certify.params import Box
    >>> r = sample_worst(lambda t: t, Box(0.0, 2.0), n=16, seed=1)
    >>> r.optimized_worst_value is None, 0 < r.worst_value <= 2, r.to_json()["n_evaluations"]
    (True, True, 16)
    >>> ProbeResult.from_json(r.to_json()).replay(lambda t: t, Box(0.0, 2.0)) == r.worst_value
    True
    """

    worst_value: float
    worst_instance: Any
    worst_z: list
    random_worst_value: float
    optimized_worst_value: float | None
    n_evaluations: int
    n_failed: int
    seed: int | None
    target: float | None = None
    found: bool = False
    stopped_early: bool = False
    method: str | None = None
    first_failure: dict | None = None
    starts: list = field(default_factory=list)
    param: Param | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        """Plain JSON types (the instance through ``param.to_json``; non-finite floats as strings).

        >>> from fedtheory.certify.params import Box
        >>> sorted(sample_worst(lambda t: t, Box(0.0, 1.0), n=2).to_json())[:4]
        ['first_failure', 'found', 'method', 'n_evaluations']
        """
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "param"}
        inst = self.worst_instance
        if self.param is not None and inst is not None:
            try:
                inst = self.param.to_json(inst)
            except Exception:  # a piece with a narrower to_json than its decode: fall back to generic
                inst = jsonable(inst)
        out["worst_instance"] = inst
        return jsonable(out)

    @classmethod
    def from_json(cls, data: dict) -> "ProbeResult":
        """Rebuild a result stored by :meth:`to_json` (the instance stays in its JSON form)."""

        def num(v: Any) -> Any:
            return float(v) if isinstance(v, str) else v

        kw: dict[str, Any] = {
            f.name: data.get(f.name, f.default if f.default is not dataclasses.MISSING else None)
            for f in dataclasses.fields(cls)
            if f.name != "param"
        }
        for k in ("worst_value", "random_worst_value", "optimized_worst_value", "target"):
            kw[k] = num(kw[k])
        kw["worst_z"] = [float(v) for v in kw["worst_z"]]
        kw["starts"] = kw.get("starts") or []
        return cls(**kw)

    def replay(self, violation: Callable[[Any], float], param: Param | None = None) -> float:
        """``violation(param.decode(worst_z))``: the same ``z`` gives the same instance and value.

        >>> from fedtheory.certify.params import Box
        >>> r = sample_worst(lambda t: t ** 2, Box(-1.0, 1.0), n=8, seed=3)
        >>> r.replay(lambda t: t ** 2, Box(-1.0, 1.0)) == r.worst_value
        True
        """
        param = param if param is not None else self.param
        if param is None:
            raise ValueError("replay needs the parameterization the probe ran on (param=...)")
        return replay_z(violation, param, self.worst_z)


def replay_z(violation: Callable[[Any], float], param: Param, z: Sequence[float]) -> float:
    """The violation at one stored ``z`` (as a float).

    >>> from fedtheory.certify.params import Box
    >>> replay_z(lambda t: 3 * t, Box(0.0, 1.0), [np.pi / 2])
    3.0
    """
    return float(violation(param.decode(np.asarray(z, dtype=np.float64))))


class _Stop(Exception):
    """Raised inside an optimizer's objective to end the probe (target exceeded)."""


class _Evaluator:
    """Calls the violation, records every value, the worst per phase, and the failures."""

    def __init__(self, violation: Callable, param: Param, target: float | None, fast_fail: bool) -> None:
        self.violation, self.param = violation, param
        self.target, self.fast_fail = target, fast_fail
        self.n, self.n_failed = 0, 0
        self.first_failure: dict | None = None
        self.best = {"random": (-math.inf, None), "optimize": (-math.inf, None)}
        self.phase = "random"
        self.stopped = False
        self.local_best = -math.inf  # best of the current optimizer start

    def __call__(self, z: Any) -> float:
        z = np.array(z, dtype=np.float64).ravel()
        self.n += 1
        try:
            value = float(self.violation(self.param.decode(z)))
            problem = None if math.isfinite(value) else f"violation returned a non-finite value ({value!r})"
        except Exception as exc:  # a failed instance counts as -inf, visibly (n_failed)
            value, problem = -math.inf, f"{type(exc).__name__}: {exc}"
        if problem is not None:
            self.n_failed += 1
            if self.first_failure is None:
                self.first_failure = {"message": problem, "z": z.tolist(), "phase": self.phase}
            value = -math.inf
        if value > self.best[self.phase][0]:
            self.best[self.phase] = (value, z)
        self.local_best = max(self.local_best, value)
        if self.target is not None and value > self.target and self.fast_fail:
            self.stopped = True
            raise _Stop
        return value

    def worst(self) -> tuple[float, np.ndarray | None]:
        r, o = self.best["random"], self.best["optimize"]
        return o if o[0] > r[0] else r


def _rng_and_seed(seed: Any, rng: np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    if rng is not None:
        return rng, None
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        raise ValueError("probe needs a seed (an int) or rng (a numpy Generator): probes are reproducible")
    return np.random.default_rng(int(seed)), int(seed)


def _result(
    ev: _Evaluator,
    param: Param,
    seed: int | None,
    target: float | None,
    method: str | None,
    optimized: bool,
    starts: list,
) -> ProbeResult:
    value, z = ev.worst()
    if z is None:  # every evaluation failed (or none ran): keep the first z tried, if any
        z = np.asarray(ev.first_failure["z"]) if ev.first_failure else np.zeros(param.size)
        instance = None
    else:
        instance = param.decode(z)
    return ProbeResult(
        worst_value=float(value),
        worst_instance=instance,
        worst_z=[float(v) for v in z],
        random_worst_value=float(ev.best["random"][0]),
        optimized_worst_value=float(ev.best["optimize"][0]) if optimized else None,
        n_evaluations=ev.n,
        n_failed=ev.n_failed,
        seed=seed,
        target=target,
        found=bool(target is not None and value > target),
        stopped_early=ev.stopped,
        method=method,
        first_failure=ev.first_failure,
        starts=starts,
        param=param,
    )


def sample_worst(
    violation: Callable[[Any], float],
    param: Param,
    *,
    n: int,
    seed: Any = 0,
    rng: np.random.Generator | None = None,
    target: float | None = None,
    fast_fail: bool = True,
) -> ProbeResult:
    """Random sampling only: the worst of ``n`` draws ``z ~ param.sample(rng)``.

    The baseline a probe is compared against (and a cheap first look). Same result type as
    :func:`probe`, with ``optimized_worst_value = None``.

    >>> from fedtheory.certify.params import Box
    >>> r = sample_worst(lambda t: t, Box(0.0, 1.0), n=100, seed=0)
    >>> 0.9 < r.worst_value < 1.0, r.n_evaluations
    (True, 100)
    """
    if int(n) < 0:
        raise ValueError(f"sample_worst needs n >= 0, got n={n}")
    gen, seed_used = _rng_and_seed(seed, rng)
    ev = _Evaluator(violation, param, target, fast_fail)
    try:
        for _ in range(int(n)):
            ev(param.sample(gen))
    except _Stop:
        pass
    return _result(ev, param, seed_used, target, None, False, [])


def probe(
    violation: Callable[[Any], float],
    param: Param,
    *,
    seed: Any = 0,
    rng: np.random.Generator | None = None,
    n_random: int = 256,
    n_starts: int = 8,
    maxiter: int = 200,
    method: str = "Nelder-Mead",
    target: float | None = None,
    fast_fail: bool = True,
    starts: Sequence[Sequence[float]] = (),
    step: float | None = 0.5,
    options: dict | None = None,
) -> ProbeResult:
    r"""Maximize ``violation(param.decode(z))`` by random sampling then multi-start local search.

    Parameters
    ----------
    violation : instance -> float, larger = closer to breaking the statement (e.g. lhs/rhs).
        A call that raises or returns a non-finite value counts as ``-inf`` and in ``n_failed``.
    param : the hypothesis class (:mod:`fedtheory.certify.params`); every ``z`` is a valid instance.
    seed, rng : an int seed (recorded in the result), or a numpy Generator (``seed=`` also takes
        one; it is advanced, and the result records ``seed=None``). Same seed, same result.
    n_random : random draws of phase 1.
    n_starts : optimizer starts: the best ``n_starts // 2`` random draws (finite values only) and
        fresh draws for the rest; ``starts`` (extra ``z`` vectors, e.g. an encoded known tight
        instance) run first, in addition.
    maxiter, method : per start, passed to ``scipy.optimize.minimize`` (``"Nelder-Mead"``,
        ``"Powell"``, ``"L-BFGS-B"``, or any method that needs no gradient argument); ``options``
        overrides scipy options. Nelder-Mead starts from a simplex of edge ``step`` in z (scipy's
        default 5% simplex when ``step=None``), with tight tolerances, so ``maxiter`` is the budget.
    target : a threshold above which a value is a counterexample (``found``); with ``fast_fail``
        (default) the probe stops at the first such value instead of climbing further.

    The optimizer's own answer is not trusted: every evaluation is recorded and the worst one kept.

    >>> from fedtheory.certify.params import Box
    >>> r = probe(lambda t: -(t - 0.3) ** 2, Box(0.0, 1.0), seed=0, n_random=8, n_starts=2)
    >>> abs(r.worst_instance - 0.3) < 1e-6, r.seed, r.found
    (True, 0, False)
    >>> probe(lambda t: t, Box(0.0, 1.0), seed=0, target=0.5).stopped_early
    True
    """
    n_random, n_starts, maxiter = int(n_random), int(n_starts), int(maxiter)
    if n_random < 0 or n_starts < 0 or maxiter < 1:
        raise ValueError(
            f"probe needs n_random >= 0, n_starts >= 0 and maxiter >= 1, "
            f"got n_random={n_random}, n_starts={n_starts}, maxiter={maxiter}"
        )
    gen, seed_used = _rng_and_seed(seed, rng)
    ev = _Evaluator(violation, param, target, fast_fail)
    log: list[dict] = []
    try:
        # phase 1: random -------------------------------------------------------------------
        zs, values = [], []
        for _ in range(n_random):
            z = np.asarray(param.sample(gen), dtype=np.float64).ravel()
            zs.append(z)
            values.append(ev(z))
        # phase 2: multi-start local search ------------------------------------------------
        ev.phase = "optimize"
        order = sorted((i for i in range(len(values)) if math.isfinite(values[i])), key=lambda i: -values[i])
        n_best = min(n_starts // 2, len(order))
        plan: list[tuple[str, np.ndarray | None]] = [("given", np.asarray(s, dtype=np.float64).ravel()) for s in starts]
        plan += [("random-best", zs[i]) for i in order[:n_best]]
        plan += [("fresh", None)] * (n_starts - n_best)
        if param.size == 0:
            plan = plan[:1] if plan else []  # nothing to optimize over: one evaluation suffices
        for origin, z0 in plan:
            if z0 is None:
                z0 = np.asarray(param.sample(gen), dtype=np.float64).ravel()
            entry = {"origin": origin, "initial_value": -math.inf, "best_value": -math.inf, "evaluations": 0}
            log.append(entry)
            before, ev.local_best = ev.n, -math.inf
            try:
                entry["initial_value"] = ev(z0)
                if param.size:
                    _local_search(ev, z0, method, maxiter, step, options)
            finally:
                entry["best_value"], entry["evaluations"] = ev.local_best, ev.n - before
    except _Stop:
        pass
    return _result(ev, param, seed_used, target, method, True, log)


def _local_search(
    ev: _Evaluator, z0: np.ndarray, method: str, maxiter: int, step: float | None, options: dict | None
) -> None:
    def objective(z: np.ndarray) -> float:
        v = ev(z)
        return -v if math.isfinite(v) else math.inf

    name = method.lower()
    opts: dict[str, Any] = {"maxiter": maxiter}
    if name in _METHODS_WITH_SIMPLEX:
        opts.update(xatol=1e-10, fatol=1e-14, adaptive=z0.size > 4)
        if step is not None:
            opts["initial_simplex"] = np.vstack([z0, z0 + step * np.eye(z0.size)])
    elif name == "powell":
        opts.update(xtol=1e-8, ftol=1e-14)
    elif name == "l-bfgs-b":
        opts.update(ftol=1e-15, gtol=1e-12)
    opts.update(options or {})
    with np.errstate(all="ignore"):
        if name in _METHODS_WITH_SIMPLEX and set(opts) <= _NELDER_MEAD_OPTIONS:
            nelder_mead(objective, z0, **opts)
        else:
            import scipy.optimize  # about 0.7 s of CPU to import: only for the methods that need it

            scipy.optimize.minimize(objective, z0, method=method, options=opts)


class _MaxEvaluations(Exception):
    """Inside :func:`nelder_mead`: the evaluation budget is spent (scipy's ``_MaxFuncCallError``)."""


def nelder_mead(
    fun: Callable[[np.ndarray], float],
    x0: Any,
    *,
    maxiter: float | None = None,
    maxfev: float | None = None,
    xatol: float = 1e-4,
    fatol: float = 1e-4,
    adaptive: bool = False,
    initial_simplex: Any = None,
) -> tuple[np.ndarray, float]:
    """Minimize ``fun`` by Nelder–Mead: ``scipy.optimize.minimize(fun, x0, method="Nelder-Mead", options=...)``
    without bounds or callback, operation for operation — the same points evaluated in the same order, the same
    floats — so a probe gives the same result bit for bit without importing ``scipy.optimize`` (a test compares
    the two on the installed scipy). Returns (best point, its value); ``fun`` receives a copy of each point.

    >>> x, f = nelder_mead(lambda z: float((z[0] - 1.0) ** 2 + (z[1] + 2.0) ** 2), [0.0, 0.0], xatol=1e-10,
    ...                    fatol=1e-14)
    >>> np.round(x, 6).tolist(), f < 1e-12
    ([1.0, -2.0], True)
    """
    # scipy 1.17's _minimize_neldermead and _wrap_scalar_function_maxfun_validation, restricted to what a probe
    # passes (no bounds, no callback, no args); the arithmetic keeps scipy's expressions and their order
    x0 = np.atleast_1d(np.asarray(x0))
    if x0.ndim != 1:
        raise ValueError("'x0' must only have one dimension.")
    if x0.dtype.kind in np.typecodes["AllInteger"]:
        x0 = np.asarray(x0, dtype=float)
    x0 = np.atleast_1d(x0).flatten()
    x0 = np.asarray(x0, dtype=x0.dtype if np.issubdtype(x0.dtype, np.inexact) else np.float64)
    if adaptive:
        dim = float(len(x0))
        rho, chi, psi, sigma = 1, 1 + 2 / dim, 0.75 - 1 / (2 * dim), 1 - 1 / dim
    else:
        rho, chi, psi, sigma = 1, 2, 0.5, 0.5
    if initial_simplex is None:
        N = len(x0)
        sim = np.empty((N + 1, N), dtype=x0.dtype)
        sim[0] = x0
        for k in range(N):
            y = np.array(x0, copy=True)
            y[k] = (1 + 0.05) * y[k] if y[k] != 0 else 0.00025
            sim[k + 1] = y
    else:
        sim = np.atleast_2d(initial_simplex).copy()
        sim = np.asarray(sim, dtype=sim.dtype if np.issubdtype(sim.dtype, np.inexact) else np.float64)
        if sim.ndim != 2 or sim.shape[0] != sim.shape[1] + 1:
            raise ValueError("`initial_simplex` should be an array of shape (N+1,N)")
        if len(x0) != sim.shape[1]:
            raise ValueError("Size of `initial_simplex` is not consistent with `x0`")
        N = sim.shape[1]
    # scipy's budgets: N·200 of each when neither is given; the one not given is unlimited (N·200 if the other is)
    maxiter_ = np.inf if maxiter is None else float(maxiter)
    maxfun = np.inf if maxfev is None else float(maxfev)
    if maxiter is None and maxfev is None:
        maxiter_ = maxfun = N * 200
    elif maxiter is None and maxfun == np.inf:
        maxiter_ = N * 200
    elif maxfev is None and maxiter_ == np.inf:
        maxfun = N * 200
    calls = [0]

    def f(x: np.ndarray) -> Any:
        if calls[0] >= maxfun:
            raise _MaxEvaluations
        calls[0] += 1
        fx: Any = fun(np.copy(x))
        if not np.isscalar(fx):
            try:
                fx = np.asarray(fx).item()
            except (TypeError, ValueError) as e:
                raise ValueError("The user-provided objective function must return a scalar value.") from e
        return fx

    fsim = np.full((N + 1,), np.inf, dtype=float)
    try:
        for k in range(N + 1):
            fsim[k] = f(sim[k])
    except _MaxEvaluations:
        pass
    finally:
        ind = np.argsort(fsim)
        sim = np.take(sim, ind, 0)
        fsim = np.take(fsim, ind, 0)
    ind = np.argsort(fsim)
    fsim = np.take(fsim, ind, 0)
    sim = np.take(sim, ind, 0)
    iterations = 1
    while calls[0] < maxfun and iterations < maxiter_:
        try:
            if np.max(np.ravel(np.abs(sim[1:] - sim[0]))) <= xatol and np.max(np.abs(fsim[0] - fsim[1:])) <= fatol:
                break
            xbar = np.add.reduce(sim[:-1], 0) / N
            xr = (1 + rho) * xbar - rho * sim[-1]
            fxr = f(xr)
            doshrink = 0
            if fxr < fsim[0]:
                xe = (1 + rho * chi) * xbar - rho * chi * sim[-1]
                fxe = f(xe)
                if fxe < fxr:
                    sim[-1], fsim[-1] = xe, fxe
                else:
                    sim[-1], fsim[-1] = xr, fxr
            elif fxr < fsim[-2]:
                sim[-1], fsim[-1] = xr, fxr
            else:
                if fxr < fsim[-1]:  # outside contraction
                    xc = (1 + psi * rho) * xbar - psi * rho * sim[-1]
                    fxc = f(xc)
                    if fxc <= fxr:
                        sim[-1], fsim[-1] = xc, fxc
                    else:
                        doshrink = 1
                else:  # inside contraction
                    xcc = (1 - psi) * xbar + psi * sim[-1]
                    fxcc = f(xcc)
                    if fxcc < fsim[-1]:
                        sim[-1], fsim[-1] = xcc, fxcc
                    else:
                        doshrink = 1
                if doshrink:
                    for j in range(1, N + 1):
                        sim[j] = sim[0] + sigma * (sim[j] - sim[0])
                        fsim[j] = f(sim[j])
            iterations += 1
        except _MaxEvaluations:
            pass
        ind = np.argsort(fsim)
        sim = np.take(sim, ind, 0)
        fsim = np.take(fsim, ind, 0)
    return sim[0], float(np.min(fsim))
