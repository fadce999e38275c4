"""``fedtheory explore certify``: ask for a certified worst case of a local-update method directly.

A thin layer over :func:`fedtheory.certify.federated_pep.certify_local_update`: the method name picks Θ and α
(``fedavg``: Θ_{1:K}, α = 0; ``fedprox``: Θ_{1:K}, α from ``--alpha``; ``fomaml``: Θ_K), the rest are the
certificate's own arguments; ``--commuting`` asks for the d = 1 / commuting class instead (two clients, the floor:
:func:`fedtheory.certify.commuting.certify_floor_d1`, with ``--free-weights`` the sup over the weights too). The
result prints as upper, lower, gap, solver and seconds, and ``--json`` writes
the whole :class:`~fedtheory.certify.federated_pep.Certificate`. The arguments are declared in
``fedtheory.cli`` (so that ``fedtheory --help`` imports no solver).

>>> c = certify("fedavg", mu=1.0, L=10.0, K=2, gamma=0.05, pieces=8, probe_starts=1)
>>> c.status, round(c.value, 4)
('certified', 0.2623)
"""
from __future__ import annotations

import argparse
from typing import Any

from fedtheory.certify.federated_pep import Certificate, certify_local_update

__all__ = ["METHODS", "certify", "run_certify"]

#: method -> (Θ family, whether α is free)
METHODS = {"fedavg": ("1:K", False), "fedprox": ("1:K", True), "fomaml": ("K", False)}


def certify(method: str, *, mu: float, L: float, K: int, gamma: float, alpha: float = 0.0, commuting: bool = False,
            free_weights: bool = False, **kw: Any) -> Certificate:
    """The certificate of ``method`` (``fedavg``, ``fedprox`` or ``fomaml``); other keywords go to
    :func:`~fedtheory.certify.federated_pep.certify_local_update`, or with ``commuting=True`` (d = 1 / commuting
    clients, two of them, the floor) to :func:`~fedtheory.certify.commuting.certify_floor_d1`.

    >>> round(certify("fedavg", mu=1.0, L=100.0, K=10, gamma=0.005, commuting=True).lower, 4)
    0.456

    >>> certify("sgd", mu=1.0, L=2.0, K=1, gamma=0.1)
    Traceback (most recent call last):
    ...
    ValueError: method must be one of ['fedavg', 'fedprox', 'fomaml'], got 'sgd'
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    theta, free_alpha = METHODS[method]
    if not free_alpha and alpha != 0:
        raise ValueError(f"method {method!r} has no proximal term (alpha = 0); use fedprox for alpha={alpha:g}")
    if method == "fedprox" and not alpha > 0:
        raise ValueError(f"fedprox needs a proximal weight --alpha > 0, got alpha={alpha:g}")
    if free_weights and not commuting:
        raise ValueError("free weights (the sup over p) are available for the commuting class only: add --commuting")
    if commuting:
        from fedtheory.certify.commuting import certify_floor_d1

        needed = {"measure": "floor", "clients": 2, "function_class": "quadratic", "zeta": None, "engine": None}
        bad = {k: kw.get(k, v) for k, v in needed.items() if kw.get(k, v) != v}
        if bad:
            raise ValueError(f"the commuting certificate is for the floor of two quadratic clients under C; got {bad}")
        return certify_floor_d1(mu, L, K, gamma, theta=theta, alpha=alpha, C=kw.get("C", 1.0),
                                p="free" if free_weights else kw.get("p"))
    return certify_local_update(mu, L, K, gamma, theta=theta, alpha=alpha, **kw)


def run_certify(args: argparse.Namespace, console: Any) -> int:
    """Run ``fedtheory explore certify`` (a ValueError propagates: the CLI prints it as ``error: ...``)."""
    c = certify(args.method, mu=args.mu, L=args.L, K=args.K, gamma=args.gamma, alpha=args.alpha,
                clients=args.clients, C=args.C, zeta=args.zeta, measure=args.measure,
                function_class=args.function_class, eta=args.eta, server=args.server, momentum=args.momentum,
                rounds=args.rounds, D=args.D, pieces=args.pieces, seed=args.seed, engine=args.engine,
                commuting=args.commuting,
                free_weights=args.free_weights)

    def fmt(v):
        return "—" if v is None else f"{v:.8g}"

    console.print(f"{args.method} {args.measure} ({args.function_class}): status {c.status}")
    console.print(f"upper {fmt(c.value)}  lower {fmt(c.lower)}  gap {fmt(c.gap)}")
    console.print(f"solver {c.solver}  seconds {c.seconds:.2f}  claim {c.claim_id}")
    if c.notes:
        console.print(f"notes: {c.notes}")
    if args.json:
        from fedtheory.sweep import write_json_atomic

        write_json_atomic(args.json, c.to_json(), indent=1)
    return 0 if c.status == "certified" else 1
