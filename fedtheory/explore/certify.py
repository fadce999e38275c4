"""``fedtheory explore certify``: ask for a certified worst case of a federated method directly.

Every registered method (:func:`fedtheory.methods.names`) is accepted. ``fedavg``, ``fedprox`` and ``fomaml`` keep
their dedicated certificate (below: spectral engine, ``--commuting``); add ``--compiled`` to send them, like every
other name (``fedsplit``, ``scaffold``, ``dane``, ``sdane``, ``acc-sdane``, ``local-update``, ...), to the PEP
compiled from the method's description, :func:`fedtheory.methods.pep.certify` (:func:`certify_method`), with
``--clients n``, ``--weights p1,p2,...`` and the method's hyperparameters from ``--s``, ``--K``, ``--gamma``,
``--eta``, ``--alpha``, ``--momentum`` (β), ``--server``, ``--option``, ``--lam`` or ``--hyper key=value``
(repeated). ``fedsplit`` without ``--s`` takes s = 1/√(μL).

For the three local-update presets: a thin layer over :func:`fedtheory.certify.federated_pep.certify_local_update`: the method name picks Θ and α
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

__all__ = ["METHODS", "certify", "certify_method", "parse_hyper", "run_certify"]

#: method -> (Θ family, whether α is free)
METHODS = {"fedavg": ("1:K", False), "fedprox": ("1:K", True), "fomaml": ("K", False)}


def certify(
    method: str,
    *,
    mu: float,
    L: float,
    K: int,
    gamma: float,
    alpha: float = 0.0,
    commuting: bool = False,
    free_weights: bool = False,
    **kw: Any,
) -> Certificate:
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
        return certify_floor_d1(
            mu, L, K, gamma, theta=theta, alpha=alpha, C=kw.get("C", 1.0), p="free" if free_weights else kw.get("p")
        )
    return certify_local_update(mu, L, K, gamma, theta=theta, alpha=alpha, **kw)


def parse_hyper(items: Any) -> dict:
    """``key=value`` strings to a dict (values: int, then float, then the string itself).

    >>> parse_hyper(["K=3", "gamma=0.05", "option=I"])
    {'K': 3, 'gamma': 0.05, 'option': 'I'}
    >>> parse_hyper(["K"])
    Traceback (most recent call last):
    ...
    ValueError: --hyper expects key=value, got 'K'
    """
    out: dict = {}
    for item in items or ():
        key, sep, raw = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--hyper expects key=value, got {item!r}")
        value: Any = raw.strip()
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        out[key.strip()] = value
    return out


def parse_weights(text: Any) -> list | None:
    """``"0.2,0.8"`` to [0.2, 0.8] (None passes through).

    >>> parse_weights("0.25, 0.75")
    [0.25, 0.75]
    """
    if text is None:
        return None
    try:
        return [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--weights must be comma-separated numbers, got {text!r}") from None


def certify_method(method: str, *, mu: float, L: float, hyper: dict | None = None, **kw: Any) -> Certificate:
    """The certificate of the PEP compiled from a registered method's description
    (:func:`fedtheory.methods.pep.certify`; ``hyper``: the method's keyword arguments, ``kw``: the certificate's).

    >>> c = certify_method("fedsplit", mu=1.0, L=10.0, clients=2, measure="rate", probe_starts=0)
    >>> c.status, round(c.value, 4)
    ('certified', 0.5195)
    >>> certify_method("fedsplat", mu=1.0, L=10.0)
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'fedsplat'; known: acc-sdane, dane, fedavg, fedprox, fedsgd, fedsplit, local-update, minibatch-sgd, scaffold, sdane
    """
    from fedtheory.methods import names
    from fedtheory.methods.pep import certify as certify_compiled

    if method not in names():
        raise ValueError(f"unknown method {method!r}; known: {', '.join(names())}")
    return certify_compiled(method, mu=mu, L=L, hyper=hyper, **kw)


def _method_hyper(args: argparse.Namespace) -> dict:
    """The hyperparameters given on the command line (only those given), then ``--hyper`` on top."""
    hyper: dict = {}
    for flag, key in (
        ("s", "s"),
        ("K", "K"),
        ("gamma", "gamma"),
        ("eta", "eta"),
        ("alpha", "alpha"),
        ("momentum", "beta"),
        ("server", "server"),
        ("option", "option"),
        ("lam", "lam"),
    ):
        v = getattr(args, flag, None)
        if v is not None:
            hyper[key] = v
    hyper.update(parse_hyper(getattr(args, "hyper", None)))
    return hyper


def run_certify(args: argparse.Namespace, console: Any) -> int:
    """Run ``fedtheory explore certify`` (a ValueError propagates: the CLI prints it as ``error: ...``)."""
    weights = parse_weights(getattr(args, "weights", None))
    if args.method in METHODS and not getattr(args, "compiled", False):
        if args.K is None or args.gamma is None:
            raise ValueError(f"{args.method} needs --K and --gamma")
        extra = {} if weights is None else {"p": weights}
        c = certify(
            args.method,
            mu=args.mu,
            L=args.L,
            K=args.K,
            gamma=args.gamma,
            alpha=args.alpha or 0.0,
            clients=args.clients or 2,
            C=args.C,
            zeta=args.zeta,
            measure=args.measure,
            function_class=args.function_class,
            eta=args.eta,
            server=args.server or "gd",
            momentum=args.momentum,
            rounds=args.rounds,
            D=args.D,
            pieces=args.pieces,
            seed=args.seed,
            engine=args.engine,
            commuting=args.commuting,
            free_weights=args.free_weights,
            **extra,
        )
    else:
        if args.commuting or args.free_weights or args.engine is not None:
            raise ValueError(
                "--commuting, --free-weights and --engine belong to the fedavg/fedprox/fomaml "
                "certificate; the compiled PEP has one engine (PEPit)"
            )
        clients = args.clients if args.clients is not None else (len(weights) if weights else 2)
        c = certify_method(
            args.method,
            mu=args.mu,
            L=args.L,
            hyper=_method_hyper(args),
            clients=clients,
            p=weights,
            C=args.C,
            zeta=args.zeta,
            measure=args.measure,
            function_class=args.function_class,
            rounds=args.rounds,
            D=args.D,
            seed=args.seed,
            probe_starts=args.probe_starts,
            delta=getattr(args, "delta", None),
        )

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
