r"""Federated methods as data: describe a method once, then simulate, solve exactly, certify and tune it.

A method is a :class:`~fedtheory.methods.ir.Method`: its server and client state and one round written from a
few primitives (local gradient steps, exact or inexact prox, linear combinations for reflection, extrapolation,
momentum and control variates, weighted aggregation, host scalars). The library's methods are instances
(:mod:`fedtheory.methods.library`): ``local-update``, ``fedavg``, ``fedprox``, ``fedsgd``, ``minibatch-sgd``,
``dane``, ``sdane``, ``acc-sdane``, ``fedsplit``, ``scaffold``; :func:`register` adds one defined anywhere.

One description compiles to

1. the batched simulator on numpy or torch (:func:`run`, ``path="step"``), on quadratic and finite-sum
   federations, with mini-batches and client sampling;
2. the exact spectral path on quadratics (``path="spectral"``): O(d²) per client per round for any K;
3. the federated PEP for n clients (:func:`fedtheory.methods.pep.certify`);
4. the explorer (``fedtheory explore certify|compare|tune METHOD``).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory import methods
>>> q = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
>>> h = methods.run(methods.get("fedsplit", s=1 / np.sqrt(10)), q, np.zeros(4), 80)
>>> h.x.shape, bool(h.dist[-1] < 1e-12)                   # FedSplit's fixed point is x*
((81, 4), True)
>>> h = methods.run(methods.get("fedavg", K=10, gamma=0.05), q, np.zeros(4), 400)
>>> bool(h.dist[-1] > 1e-3)                               # FedAvg's is not
True
"""

from __future__ import annotations

from typing import Any, Callable

from fedtheory.methods.ir import Aggregate, Combine, Gradient, LocalSteps, Method, Prox, ProxSolver, Scalars, ServerMap
from fedtheory.methods.library import BUILTIN
from fedtheory.methods.simulate import PATHS, History, choose_path, simulate

__all__ = [
    "Method",
    "Combine",
    "Gradient",
    "LocalSteps",
    "Prox",
    "ProxSolver",
    "Aggregate",
    "Scalars",
    "ServerMap",
    "History",
    "get",
    "run",
    "register",
    "unregister",
    "names",
    "PATHS",
    "choose_path",
]

_REGISTRY: dict[str, Callable[..., Method]] = dict(BUILTIN)


def names() -> list[str]:
    """The registered method names.

    >>> "fedsplit" in names() and "scaffold" in names()
    True
    """
    return sorted(_REGISTRY)


def register(name: str, factory: Callable[..., Method], *, replace: bool = False) -> Callable[..., Method]:
    """Register ``factory(**hyper) -> Method`` under ``name`` (for a method defined outside the library).

    Returns the factory, so it can be used as a decorator argument's result. ``replace=True`` overwrites.

    >>> from fedtheory.methods import Method, Gradient, Aggregate, Combine
    >>> def gd(eta):
    ...     return Method("my-gd", server=("x",), client=(), init={"x": "x0"}, round=(
    ...         Gradient("g", at="x"), Aggregate("gbar", "g"), Combine("x", (("x", 1.0), ("gbar", -eta)))),
    ...         output="x", hyper={"eta": eta})
    >>> _ = register("my-gd", gd)
    >>> get("my-gd", eta=0.1).hyper
    {'eta': 0.1}
    >>> unregister("my-gd")
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a method name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(f"register({name!r}, ...) needs a callable factory(**hyper) -> Method")
    if name in _REGISTRY and not replace:
        raise ValueError(f"method {name!r} is already registered (pass replace=True to overwrite)")
    _REGISTRY[name] = factory
    return factory


def unregister(name: str) -> None:
    """Remove a method registered with :func:`register` (the library's own cannot be removed)."""
    if name in BUILTIN:
        raise ValueError(f"{name!r} is one of the library's methods and cannot be unregistered")
    _REGISTRY.pop(name, None)


def get(name: str | Method, **hyper: Any) -> Method:
    """The method ``name`` with hyperparameters ``hyper``.

    >>> get("scaffold", K=5, gamma=0.1, eta=1.0, option="II").name
    'scaffold'
    >>> get("fedsplat", s=1.0)
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'fedsplat'; known: acc-sdane, dane, fedavg, fedprox, fedsgd, fedsplit, local-update, minibatch-sgd, scaffold, sdane
    """
    if isinstance(name, Method):
        if hyper:
            raise ValueError("hyperparameters go with a method name, not with a built Method")
        return name
    if not isinstance(name, str):
        raise ValueError(f"method must be a Method or a registered name, got {type(name).__name__}")
    if name not in _REGISTRY:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(names())}")
    try:
        method = _REGISTRY[name](**hyper)
    except TypeError as err:
        raise ValueError(f"method {name!r}: {err}") from None
    if not isinstance(method, Method):
        raise ValueError(f"the factory registered as {name!r} returned {type(method).__name__}, not a Method")
    return method


def run(
    method: Method | str,
    federation: Any,
    x0: Any,
    rounds: int,
    *,
    backend: Any = "numpy",
    device: Any = None,
    seed: Any = None,
    path: str = "auto",
    batch_size: int | None = None,
    clients_per_round: int | None = None,
    client_sampling: str = "without_replacement",
    state: dict | None = None,
    scalars: dict | None = None,
    **hyper: Any,
) -> History:
    """Run ``rounds`` rounds of ``method`` (a :class:`Method`, or a name with ``**hyper``) from ``x0``.

    ``federation``: a :class:`~fedtheory.problems.quadratic.QuadraticFederation` or a
    :class:`~fedtheory.problems.finite_sum.FiniteSumFederation`; ``path``: ``"auto"``, ``"step"`` (the
    primitives literally) or ``"spectral"`` (exact closed forms, quadratics); ``batch_size``: each local
    gradient on a mini-batch of that many samples (finite sums); ``clients_per_round`` M with
    ``client_sampling`` (``"without_replacement"``: weights n p_i/M; ``"with_replacement"``: i.i.d. from p);
    ``seed`` drives every draw; ``backend``/``device``: numpy, or torch on cpu/cuda (arrays stay there);
    ``state``/``scalars``: start from a given state (every state variable; client ones (n, d)) and host scalars
    instead of ``init`` (``state=h.state, scalars=h.scalars`` continues the run ``h``).

    >>> import numpy as np
    >>> from fedtheory.problems.finite_sum import LogisticFederation
    >>> fed = LogisticFederation.random(n=6, m=40, d=3, seed=0)
    >>> h = run("scaffold", fed, np.zeros(3), 30, K=5, gamma=0.5, batch_size=8, clients_per_round=3, seed=1)
    >>> bool(h.loss[-1] < h.loss[0]), int(h.oracle_calls[-1])            # 30 rounds × 3 clients × 5 steps
    (True, 450)
    """
    m = get(method, **hyper)
    return simulate(
        m,
        federation,
        x0,
        rounds,
        path=path,
        backend=backend,
        device=device,
        seed=seed,
        batch_size=batch_size,
        clients_per_round=clients_per_round,
        client_sampling=client_sampling,
        state=state,
        scalars=scalars,
    )
