r"""The library's federated methods, each a :class:`~fedtheory.methods.ir.Method` built from primitives.

- ``local-update`` (Charles & Konečný, arXiv:2103.05032, Algorithms 1–2): Θ, α, γ and a server step η with
  momentum β (``server``: gd, heavy_ball, nesterov, adam); ``fedavg``, ``fedprox``, ``fedsgd`` and
  ``minibatch-sgd`` are its presets (Table 1).
- ``dane``, ``sdane``, ``acc-sdane`` (Jiang, Rodomanov & Stich, arXiv:2407.07084, eq. (4), Algorithms 1–2) with
  exact or inexact (named local solver) prox steps, on the uniform view n p_i f_i of a weighted federation.
- ``fedsplit`` (Pathak & Wainwright, NeurIPS 2020, arXiv:2005.05238, Algorithm 1): Peaceman–Rachford
  splitting on the consensus problem, z_j^{t+½} = prox_{s f_j}(2x̄^t − z_j^t), z_j^{t+1} = z_j^t + 2(z_j^{t+½} −
  x̄^t), x̄^{t+1} = Σ_j p_j z_j^{t+1}, z_j^0 = x̄^0 = x_0.
- ``scaffold`` (Karimireddy et al., ICML 2020, arXiv:1910.06378, Algorithm 1, options I and II).

>>> from fedtheory.methods import get
>>> get("fedsplit", s=0.5).client, get("scaffold", K=5, gamma=0.1).server
(('z',), ('x', 'c'))
"""

from __future__ import annotations

import math
from typing import Any, Callable

from fedtheory.algorithms.theta import Theta
from fedtheory.methods.ir import (
    Aggregate,
    ClientProgram,
    Combine,
    Gradient,
    LocalSteps,
    Method,
    Prox,
    ProxSolver,
    Scalars,
    ServerMap,
    _int_at_least,
    _positive,
)

__all__ = [
    "local_update",
    "as_method",
    "fedavg",
    "fedprox",
    "fedsgd",
    "minibatch_sgd",
    "dane",
    "sdane",
    "acc_sdane",
    "fedsplit",
    "scaffold",
    "BUILTIN",
]

SERVERS = ("gd", "heavy_ball", "nesterov", "adam")


def _solver(solver: Any, steps: Any = None, step_size: Any = None, test: Any = None) -> ProxSolver:
    """A ProxSolver from a name (``"exact"``, ``"gd"``), a ProxSolver, or a local solver object of
    :mod:`fedtheory.algorithms.local_solvers` (then stopped by ``test``)."""
    if isinstance(solver, ProxSolver):
        return solver
    if callable(getattr(solver, "solve", None)):
        return ProxSolver("local", local=solver, test=test)
    if test is not None:
        raise ValueError(
            f"an accuracy test goes with a local solver object (GD(), FGM(), ...), not with solver={solver!r}"
        )
    if solver in (None, "exact"):
        return ProxSolver("exact")
    return ProxSolver(str(solver), steps=steps, step_size=step_size)


def _adam_map(lr: float, b1: float, b2: float, eps: float):
    def adam(be, scalars, x, q, m, v):
        t = scalars["t"]
        m = b1 * m + (1 - b1) * q
        v = b2 * v + (1 - b2) * q * q
        return x - lr * (m / (1 - b1**t)) / ((v / (1 - b2**t)) ** 0.5 + eps), m, v

    return adam


def local_update(
    K: int | None = None,
    gamma: float | None = None,
    *,
    theta: Any = None,
    alpha: float = 0.0,
    eta: float | None = None,
    beta: float | None = None,
    server: str = "gd",
    beta2: float = 0.999,
    eps: float = 1e-8,
    program: Any = None,
    name: str = "local-update",
) -> Method:
    r"""LocalUpdate(Θ, α, γ, ServerOpt): every client runs K steps g_k = ∇f_i(x_k) + α(x_k − x),
    x_{k+1} = x_k − γg_k from the broadcast point and sends Σ θ_k g_k; the server steps with η
    (``"gd"``), heavy ball or Nesterov momentum β, or Adam (β₁ = β, default 0.9). η defaults to γ (Appendix A:
    FedAvg averages the local models). ``program``: a client program (e.g.
    :class:`~fedtheory.algorithms.maml.MAML`) whose message replaces the K local steps.

    >>> m = local_update(3, 0.1, server="heavy_ball", eta=0.2, beta=0.5)
    >>> m.server, m.hyper["eta"]
    (('x', 'x_prev'), 0.2)
    """
    if program is not None:
        th, K, gamma, alpha = None, int(program.local_steps), float(getattr(program, "gamma", 0.0)), 0.0
        if eta is None:
            raise ValueError("a client program needs the server step eta")
    else:
        th = Theta(theta) if theta is not None and not isinstance(theta, Theta) else theta
        if th is None:
            th = Theta.uniform(_int_at_least(K, "K"))
        elif K is not None and _int_at_least(K, "K") != th.K:
            raise ValueError(f"K={K} disagrees with theta's K={th.K}")
        K = th.K
        gamma = _positive(gamma, "gamma (client step)", allow_zero=True)
        alpha = _positive(alpha, "alpha (proximal weight)", allow_zero=True)
    eta = gamma if eta is None else _positive(eta, "eta (server step)")
    if eta == 0:
        raise ValueError("eta (server step) must be > 0 (it defaults to gamma, which is 0 here)")
    if server not in SERVERS:
        raise ValueError(f"server must be one of {SERVERS}, got {server!r}")
    beta = (0.9 if server == "adam" else 0.0) if beta is None else float(beta)
    if server == "gd" and beta != 0:
        raise ValueError(f"server 'gd' has no momentum (got beta={beta:g}); use 'heavy_ball' or 'nesterov'")
    if not (0 <= beta <= 1):
        raise ValueError(f"beta (server momentum) must lie in [0, 1], got {beta}")
    hyper = {
        "K": K,
        "gamma": gamma,
        "theta": None if th is None else th.to_json(),
        "alpha": alpha,
        "eta": eta,
        "beta": beta,
        "server": server,
    }
    at = "y" if server == "nesterov" else "x"
    local: ClientProgram | LocalSteps
    if program is not None:
        hyper["program"] = repr(program)
        local = ClientProgram("q", at=at, program=program)
    else:
        local = LocalSteps(
            None, start=at, steps=K, gamma=gamma, alpha=alpha, anchor=at if alpha else None, theta=th, message="q"
        )
    ops: list = []
    state: tuple[str, ...] = ("x",)
    init: dict[str, Any] = {"x": "x0"}
    scalars: dict = {}
    if server == "nesterov":
        state, init = ("x", "x_prev"), {"x": "x0", "x_prev": "x0"}
        # x + β(x − x_prev), in that order: the first round (x_prev = x) is exactly a plain step
        ops += [Combine("dx", (("x", 1.0), ("x_prev", -1.0))), Combine("y", (("x", 1.0), ("dx", beta)))]
    ops += [local, Aggregate("qbar", "q")]
    if server == "gd":
        ops.append(Combine("x", (("x", 1.0), ("qbar", -eta))))
    elif server == "heavy_ball":
        state, init = ("x", "x_prev"), {"x": "x0", "x_prev": "x0"}
        ops += [
            Combine("dx", (("x", 1.0), ("x_prev", -1.0))),
            Combine("x_next", (("x", 1.0), ("qbar", -eta), ("dx", beta))),
            Combine("x_prev", (("x", 1.0),)),
            Combine("x", (("x_next", 1.0),)),
        ]
    elif server == "nesterov":
        ops += [Combine("x_prev", (("x", 1.0),)), Combine("x", (("y", 1.0), ("qbar", -eta)))]
    else:
        b1 = beta
        if not b1 < 1:
            raise ValueError(f"Adam needs beta (beta1) < 1, got {b1}")
        hyper.update(beta=b1, beta2=beta2, eps=eps)
        state, init = ("x", "m", "v"), {"x": "x0", "m": 0.0, "v": 0.0}
        scalars = {"t": 0.0}
        ops += [
            Scalars(lambda s: {"t": s["t"] + 1}),
            ServerMap(("x", "m", "v"), _adam_map(eta, b1, float(beta2), float(eps)), ("x", "qbar", "m", "v")),
        ]
    return Method(
        name,
        server=state,
        client=(),
        init=init,
        round=tuple(ops),
        output="x",
        scalars=scalars,
        hyper=hyper,
        reference="Charles & Konečný, arXiv:2103.05032, Algorithms 1-2",
    )


def as_method(algo: Any) -> Method:
    """The Method of a :class:`~fedtheory.algorithms.local_update.LocalUpdate` or of a client program with a
    ServerOpt (MAML): what :func:`~fedtheory.algorithms.local_update.run_local_update` runs.

    >>> from fedtheory.algorithms import LocalUpdate, ServerOpt
    >>> as_method(LocalUpdate.fedprox(3, 0.1, 0.5, server=ServerOpt("nesterov", 0.2, 0.9))).hyper["server"]
    'nesterov'
    """
    srv = algo.server
    kw = dict(eta=srv.lr, beta=srv.momentum, server=srv.kind, beta2=srv.beta2, eps=srv.eps)
    if getattr(algo, "client_program", False):
        return local_update(program=algo, **kw)
    return local_update(theta=algo.theta, gamma=algo.gamma, alpha=algo.alpha, **kw)


def fedavg(K: int, gamma: float, *, eta: float | None = None, **server: Any) -> Method:
    """FedAvg / local SGD: Θ_{1:K}, α = 0; η = γ by default (the server averages the local models).

    >>> fedavg(4, 0.05).hyper["eta"]
    0.05
    """
    return local_update(K, gamma, eta=eta, name="fedavg", **server)


def fedprox(K: int, gamma: float, alpha: float, *, eta: float | None = None, **server: Any) -> Method:
    """FedProx: FedAvg's K local steps on f_i + α/2‖· − x‖² (α > 0)."""
    _positive(alpha, "alpha (FedProx proximal weight)")
    return local_update(K, gamma, alpha=alpha, eta=eta, name="fedprox", **server)


def fedsgd(eta: float, **server: Any) -> Method:
    """FedSGD: one gradient per client at x, the server steps with η (gradient descent on f)."""
    return local_update(1, 0.0, eta=eta, name="fedsgd", **server)


def minibatch_sgd(K: int, eta: float, **server: Any) -> Method:
    """Mini-batch SGD: K gradients at x per client (each with its own mini-batch), averaged: Θ = (1/K)·1, γ = 0."""
    K = _int_at_least(K, "K")
    return local_update(theta=Theta([1.0 / K] * K), gamma=0.0, eta=eta, name="minibatch-sgd", **server)


def _prox_family(
    name: str, lam: Any, solver: Any, steps: Any, step_size: Any, test: Any, allow_zero: bool = False
) -> tuple[float, ProxSolver]:
    sol = _solver(solver, steps, step_size, test)
    # λ = 0 (no proximal term) is a fixed number of local steps on f_i − ⟨ℓ_i, ·⟩: only a local solver runs it
    lam = _positive(lam, f"{name} lam (lambda)", allow_zero=allow_zero and sol.kind == "local")
    return lam, sol


def _hyper(sol: ProxSolver, **hyper: Any) -> dict:
    out = dict(hyper, solver=sol.name)
    if sol.kind == "local":
        out["test"] = repr(sol.test)
    return out


def _correction(ops: list, at: str) -> None:
    """The DANE family's messages at the prox centre: ∇f_i(c), their mean ∇f_S(c) and ℓ_i = ∇f_i(c) − ∇f_S(c)."""
    ops += [Gradient("gc", at=at, full=True), Aggregate("gbar", "gc"), Combine("ell", (("gc", 1.0), ("gbar", -1.0)))]


def _prox_and_average(ops: list, center: str, step: Any, sol: ProxSolver) -> None:
    """The S-DANE family's local work and what the server averages: x_i = the prox of f_i − ⟨ℓ_i, ·⟩ at the centre,
    the clients' gradients ∇f_i(x_i), x = mean x_i and ḡ = mean ∇f_i(x_i)."""
    ops += [
        Prox("xi", center=center, step=step, solver=sol, linear="ell"),
        Gradient("gx", at="xi", full=True),
        Aggregate("x", "xi"),
        Aggregate("gxbar", "gx"),
    ]


def dane(
    lam: float,
    *,
    solver: Any = "exact",
    steps: int | None = None,
    step_size: float | None = None,
    control_variate: bool = True,
    test: Any = None,
) -> Method:
    r"""DANE (4): x_i = argmin f_i(x) − ⟨∇f_i(x^r) − ∇f_S(x^r), x⟩ + λ/2‖x − x^r‖² = prox_{f_i/λ}(x^r + ℓ_i/λ),
    x^{r+1} = mean x_i. ``control_variate=False``: FedProx with exact (or solver) local solves. ``solver``:
    ``"exact"``, ``"gd"`` (``steps``, ``step_size``) or a local solver of
    :mod:`fedtheory.algorithms.local_solvers` stopped by ``test`` (then λ = 0 is allowed: K local steps).

    >>> dane(2.0).hyper
    {'lam': 2.0, 'control_variate': True, 'solver': 'exact'}
    """
    lam, sol = _prox_family("DANE", lam, solver, steps, step_size, test, allow_zero=True)
    ops: list = []
    if control_variate:
        _correction(ops, "x")
    ops += [
        Prox(
            "xi", center="x", step=1.0 / lam if lam else math.inf, solver=sol, linear="ell" if control_variate else None
        ),
        Aggregate("x", "xi"),
    ]
    return Method(
        "dane",
        server=("x",),
        client=(),
        init={"x": "x0"},
        round=tuple(ops),
        output="x",
        weighting="uniform-view",
        hyper=_hyper(sol, lam=lam, control_variate=control_variate),
        reference="Jiang, Rodomanov & Stich, arXiv:2407.07084, eq. (4)",
    )


def _adaptive_lambda(rule: Any):
    """The Scalars update of S-DANE's adaptive λ (Section 5): from round 1 on, λ_r = rule.next(∇f_i(v^{r−1}),
    ∇f_i(v^r), v^{r−1}, v^r, λ_{r−1}) (the rule: :class:`fedtheory.algorithms.dane.AdaptiveLambda`)."""

    def update(s, values):
        lam = s["lam"]
        if s["round"] >= 1:
            lam = float(rule.next(values["g_prev"], values["gc"], values["v_prev"], values["v"], lam))
        return {"lam": lam, "round": s["round"] + 1}

    return update


def sdane(
    lam: Any,
    mu: float = 0.0,
    *,
    solver: Any = "exact",
    steps: int | None = None,
    step_size: float | None = None,
    test: Any = None,
) -> Method:
    r"""S-DANE (Algorithm 1): prox centre v^r; x^{r+1} = mean x_i; v^{r+1} = (λv^r + μx^{r+1} − ḡ^{r+1})/(λ + μ).

    ``lam``: λ > 0, or an adaptive rule with ``lam0`` and ``next(G_prev, G, v_prev, v, lam)``
    (:class:`~fedtheory.algorithms.dane.AdaptiveLambda`; full participation): then λ is a host scalar updated each
    round from the gradients the clients send at v^r, and the method runs on the step path (no PEP).

    >>> sdane(2.0, 0.5).server
    ('x', 'v')
    """
    mu = _positive(mu, "S-DANE mu", allow_zero=True)
    if hasattr(lam, "lam0") and callable(getattr(lam, "next", None)):
        lam0, sol = _prox_family("S-DANE", lam.lam0, solver, steps, step_size, test)
        ops: list = []
        _correction(ops, "v")
        # λ_r from the gradients at v^r just received (it reads none of the correction's outputs)
        ops.append(Scalars(_adaptive_lambda(lam), reads=("g_prev", "gc", "v_prev", "v")))
        _prox_and_average(ops, "v", lambda s: 1.0 / s["lam"], sol)
        ops += [
            Combine("v_prev", (("v", 1.0),)),
            Combine("g_prev", (("gc", 1.0),)),
            Combine(
                "v",
                (
                    ("v", lambda s: s["lam"] / (s["lam"] + mu)),
                    ("x", lambda s: mu / (s["lam"] + mu)),
                    ("gxbar", lambda s: -1.0 / (s["lam"] + mu)),
                ),
            ),
        ]
        return Method(
            "sdane",
            server=("x", "v", "v_prev"),
            client=("g_prev",),
            init={"x": "x0", "v": "x0", "v_prev": "x0", "g_prev": 0.0},
            round=tuple(ops),
            output="x",
            scalars={"lam": lam0, "round": 0.0},
            weighting="uniform-view",
            sampling=False,
            hyper=_hyper(sol, lam=repr(lam), mu=mu),
            reference="Jiang, Rodomanov & Stich, arXiv:2407.07084, Algorithm 1, adaptive λ (Section 5)",
        )
    lam, sol = _prox_family("S-DANE", lam, solver, steps, step_size, test)
    ops = []
    _correction(ops, "v")
    _prox_and_average(ops, "v", 1.0 / lam, sol)
    ops.append(Combine("v", (("v", lam / (lam + mu)), ("x", mu / (lam + mu)), ("gxbar", -1.0 / (lam + mu)))))
    return Method(
        "sdane",
        server=("x", "v"),
        client=(),
        init={"x": "x0", "v": "x0"},
        round=tuple(ops),
        output="x",
        weighting="uniform-view",
        hyper=_hyper(sol, lam=lam, mu=mu),
        reference="Jiang, Rodomanov & Stich, arXiv:2407.07084, Algorithm 1",
    )


def acc_coefficient(A: float, B: float, lam: float) -> float:
    r"""a > 0 solving λa² = (A + a)B (Algorithm 2, line 1): a = B/(2λ) + √(B²/(4λ²) + AB/λ).

    >>> acc_coefficient(0.0, 1.0, 2.0)
    0.5
    """
    return B / (2 * lam) + math.sqrt(B * B / (4 * lam * lam) + A * B / lam)


def _acc_coefficients(lam: float, mu: float):
    def update(s):
        A, B = s["A"], s["B"]
        a = acc_coefficient(A, B, lam)
        return {"a": a, "A1": A + a, "B1": B + mu * a}

    return update


def acc_sdane(
    lam: float,
    mu: float = 0.0,
    *,
    solver: Any = "exact",
    steps: int | None = None,
    step_size: float | None = None,
    test: Any = None,
) -> Method:
    r"""Acc-S-DANE (Algorithm 2): A_0 = 0, B_0 = 1, λa² = (A_r + a)B_r, y^r = (A_r x^r + a v^r)/A_{r+1},
    v^{r+1} = (B_r v^r + μa x^{r+1} − a ḡ^{r+1})/B_{r+1}.

    >>> acc_sdane(2.0).scalars
    {'A': 0.0, 'B': 1.0}
    """
    lam, sol = _prox_family("Acc-S-DANE", lam, solver, steps, step_size, test)
    mu = _positive(mu, "Acc-S-DANE mu", allow_zero=True)
    ops: list = [
        Scalars(_acc_coefficients(lam, mu)),
        Combine("y", (("x", lambda s: s["A"] / s["A1"]), ("v", lambda s: s["a"] / s["A1"]))),
    ]
    _correction(ops, "y")
    _prox_and_average(ops, "y", 1.0 / lam, sol)
    ops += [
        Combine(
            "v",
            (
                ("v", lambda s: s["B"] / s["B1"]),
                ("x", lambda s: mu * s["a"] / s["B1"]),
                ("gxbar", lambda s: -s["a"] / s["B1"]),
            ),
        ),
        Scalars(lambda s: {"A": s["A1"], "B": s["B1"]}),
    ]
    return Method(
        "acc-sdane",
        server=("x", "v"),
        client=(),
        init={"x": "x0", "v": "x0"},
        round=tuple(ops),
        output="x",
        scalars={"A": 0.0, "B": 1.0},
        weighting="uniform-view",
        hyper=_hyper(sol, lam=lam, mu=mu),
        reference="Jiang, Rodomanov & Stich, arXiv:2407.07084, Algorithm 2",
    )


def fedsplit(
    s: float, *, solver: Any = "exact", steps: int | None = None, step_size: float | None = None, start: str = "warm"
) -> Method:
    r"""FedSplit (Pathak & Wainwright, arXiv:2005.05238, Algorithm 1) with step ``s`` > 0.

    ``solver="exact"``: the exact prox; ``solver="gd"`` with ``steps``: an inexact prox by gradient descent on
    s f_j(y) + ½‖y − v‖², started at the previous prox output (``start="warm"``) or at the prox centre
    2x̄ − z_j (``start="cold"``). The paper's inexact analysis (its Section 4) allows any prox approximation of
    bounded error and its experiments do not fix the start; both readings are offered.

    >>> fedsplit(0.5).round[2]
    Prox(out='zh', center='v', step=0.5, solver=ProxSolver(kind='exact', steps=None, step_size=None, local=None, test=None), start=None, linear=None)
    """
    s = _positive(s, "FedSplit step s")
    sol = _solver(solver, steps, step_size)
    if start not in ("warm", "cold"):
        raise ValueError(f"FedSplit start must be 'warm' or 'cold', got {start!r}")
    warm = sol.kind != "exact" and start == "warm"
    client = ("z", "zh") if warm else ("z",)
    init = {"z": "x0", "zh": "x0"} if warm else {"z": "x0"}
    ops = (
        Aggregate("xbar", "z"),
        Combine("v", (("xbar", 2.0), ("z", -1.0))),
        Prox("zh", center="v", step=s, solver=sol, start="zh" if warm else None),
        Combine("z", (("z", 1.0), ("zh", 2.0), ("xbar", -2.0))),
    )
    return Method(
        "fedsplit",
        server=(),
        client=client,
        init=init,
        round=ops,
        output="z",
        sampling=False,
        hyper={"s": s, "solver": sol.kind, "steps": sol.steps, "start": start if sol.kind != "exact" else None},
        reference="Pathak & Wainwright, NeurIPS 2020, arXiv:2005.05238, Algorithm 1",
    )


def scaffold(K: int, gamma: float, eta: float = 1.0, option: str = "II") -> Method:
    r"""SCAFFOLD (Karimireddy et al., arXiv:1910.06378, Algorithm 1): from y = x, K steps
    y ← y − γ(∇f_i(y) − c_i + c); option I: c_i⁺ = ∇f_i(x); option II: c_i⁺ = c_i − c + (x − y)/(Kγ);
    x ← x + η Σ p_i(y_i − x) (an unbiased mean over sampled clients), c ← c + Σ_{i∈S} p_i(c_i⁺ − c_i);
    c_i = c = 0 at the start.

    ``option="fresh"``: the variant the S-DANE paper runs as its Scaffold baseline
    (:func:`fedtheory.algorithms.control_variates.run_scaffold` option ``"I"``): control variates computed
    afresh at x every round, c_i = ∇f_i(x) and c their mean over the sampled clients (no client state; DANE
    with λ = 0 and K gradient steps).

    >>> scaffold(3, 0.1, option="I").hyper["option"], scaffold(3, 0.1, option="fresh").client
    ('I', ())
    """
    K = _int_at_least(K, "SCAFFOLD K")
    gamma = _positive(gamma, "SCAFFOLD gamma (local step)")
    eta = _positive(eta, "SCAFFOLD eta (global step)")
    option = "fresh" if str(option).lower() == "fresh" else str(option).upper()
    if option not in ("I", "II", "fresh"):
        raise ValueError(f"SCAFFOLD option must be 'I', 'II' or 'fresh', got {option!r}")
    hyper = {"K": K, "gamma": gamma, "eta": eta, "option": option}
    reference = "Karimireddy et al., ICML 2020, arXiv:1910.06378, Algorithm 1"
    ops: tuple  # the round: its operations differ in type and number between the options
    if option == "fresh":
        ops = (
            Gradient("g0", at="x"),
            Aggregate("gbar", "g0"),
            Combine("corr", (("gbar", 1.0), ("g0", -1.0))),
            LocalSteps("y", start="x", steps=K, gamma=gamma, shift="corr"),
            Combine("dy", (("y", 1.0), ("x", -1.0))),
            Aggregate("Dy", "dy"),
            Combine("x", (("x", 1.0), ("Dy", eta))),
        )
        return Method(
            "scaffold",
            server=("x",),
            client=(),
            init={"x": "x0"},
            round=ops,
            output="x",
            hyper=hyper,
            weighting="uniform-view",
            reference=reference + "; fresh control variates as in Jiang, Rodomanov & Stich, "
            "arXiv:2407.07084, Section 5",
        )
    new_ci: Combine | Gradient
    if option == "II":
        new_ci = Combine("ci_new", (("ci", 1.0), ("c", -1.0), ("x", 1.0 / (K * gamma)), ("y", -1.0 / (K * gamma))))
    else:
        # "an additional pass over the local data to compute the gradient at the server model x" (their Section 4):
        # the full local gradient, also when the local steps use mini-batches
        new_ci = Gradient("ci_new", at="x", full=True)
    ops = (
        Combine("corr", (("c", 1.0), ("ci", -1.0))),
        LocalSteps("y", start="x", steps=K, gamma=gamma, shift="corr"),
        new_ci,
        Combine("dy", (("y", 1.0), ("x", -1.0))),
        Combine("dc", (("ci_new", 1.0), ("ci", -1.0))),
        Aggregate("Dy", "dy", "mean"),
        Aggregate("Dc", "dc", "sum"),
        Combine("x", (("x", 1.0), ("Dy", eta))),
        Combine("c", (("c", 1.0), ("Dc", 1.0))),
        Combine("ci", (("ci_new", 1.0),)),
    )
    return Method(
        "scaffold",
        server=("x", "c"),
        client=("ci",),
        init={"x": "x0", "c": 0.0, "ci": 0.0},
        round=ops,
        output="x",
        hyper=hyper,
        reference=reference,
    )


BUILTIN: dict[str, Callable[..., Method]] = {
    "local-update": local_update,
    "fedavg": fedavg,
    "fedprox": fedprox,
    "fedsgd": fedsgd,
    "minibatch-sgd": minibatch_sgd,
    "dane": dane,
    "sdane": sdane,
    "acc-sdane": acc_sdane,
    "fedsplit": fedsplit,
    "scaffold": scaffold,
}
