"""LocalUpdate's and S-DANE's federated PEPs written literally in PEPit: independent references for the checks of
the one PEP builder, :func:`fedtheory.methods.pep.build_pep` (which :func:`fedtheory.methods.pep.certify`,
:func:`fedtheory.certify.federated_pep.certify_local_update`'s PEPit engine and
:func:`fedtheory.certify.federated_pep.certify_sdane` use). A helper of the claim files (loaded by path with
:func:`fedtheory.content.load_module`; its name starts with ``_``, so it holds no claims), and of the tests.

These were the library's own builders before issue 22 made one builder of them; they are kept here, written out,
so that the compiled PEPs meet something that does not share their round loop.
"""

from __future__ import annotations

import math

import numpy as np


def literal_local_update_pep(mu, L, K, gamma, alpha, p, het, measure, fc, eta, beta, server, rounds, D):
    """LocalUpdate's federated PEP written literally in PEPit, independently of the compiler
    (:func:`fedtheory.methods.pep.build_pep`, which certify_local_update's PEPit engine now also uses): K local steps
    with proximal weight α and message Σ_k g_k, server GD / heavy ball / Nesterov, units L = 1 (f_i/L, γL, α/L, ηL);
    the floor's fixed point imposed by eliminating the last client's last gradient (the compiler eliminates
    whichever atom has the largest coefficient: another basis of the same PEP). Only the class declaration
    (:func:`fedtheory.certify.pep_clients.pep_federation`: leaves, x*, minimizers, heterogeneity) is shared.
    Returns the unsolved PEP, whose value is the squared measure (function value: the measure in units of L)."""
    from PEPit import Expression, Point

    from fedtheory.certify.pep_clients import pep_federation

    g_, a_, eta_ = gamma * L, alpha / L, (eta or 0.0) * L
    n = len(p)
    pb, fs, xs, _, _ = pep_federation(p, mu, L, het, fc)

    def psum(vecs):
        out = float(p[0]) * vecs[0]
        for pi, v in zip(p[1:], vecs[1:]):
            out = out + float(pi) * v
        return out

    def message(f, x, steps):
        y, q = x, Point(is_leaf=False, decomposition_dict=dict())
        for _ in range(steps):
            gk = f.gradient(y) + a_ * (y - x)
            q = q + gk
            y = y - g_ * gk
        return q, y

    if measure == "floor":
        xb = pb.set_initial_point()
        q_last, y_last = message(fs[n - 1], xb, K - 1)
        total = psum([message(fs[i], xb, K)[0] for i in range(n - 1)] + [q_last])
        # Σ p_i q_i = 0: the last client's last gradient is whatever makes it hold
        last_g = (-1.0 / float(p[n - 1])) * total
        fs[n - 1].add_point((y_last, last_g - a_ * (y_last - xb), Expression()))
        pb.set_performance_metric((xb - xs) ** 2)
    elif measure == "rate":
        x1, x2 = pb.set_initial_point(), pb.set_initial_point()
        pb.set_initial_condition((x1 - x2) ** 2 <= 1.0)
        r1 = x1 - eta_ * psum([message(f, x1, K)[0] for f in fs])
        r2 = x2 - eta_ * psum([message(f, x2, K)[0] for f in fs])
        pb.set_performance_metric((r1 - r2) ** 2)
    else:
        x0 = pb.set_initial_point()
        pb.set_initial_condition((x0 - xs) ** 2 <= D**2)
        x, x_prev = x0, x0
        beta = beta or 0.0
        for _ in range(rounds):
            y = x + beta * (x - x_prev) if server == "nesterov" else x
            step = y - eta_ * psum([message(f, y, K)[0] for f in fs])
            x_new = step + beta * (x - x_prev) if server == "heavy_ball" else step
            x_prev, x = x, x_new
        pb.set_performance_metric(psum([f(x) - f(xs) for f in fs]) if measure == "function-value" else (x - xs) ** 2)
    return pb


def literal_value(mu, L, K, gamma, alpha, p, measure, fc, eta, beta, server, rounds, D, het="C"):
    """The literal PEP's certified value (Clarabel with the SCS cross-check, the reporting margin), and its
    solver."""
    from fedtheory.certify.pep_clients import _WRAPPER, SDP_MARGIN
    from fedtheory.certify.pep import _solve_detail

    pb = literal_local_update_pep(
        mu, L, K, gamma, alpha, np.asarray(p, dtype=np.float64), het, measure, fc, eta, beta, server, rounds, D
    )
    sq, _, solver = _solve_detail(pb, wrapper=_WRAPPER)
    v = sq * L if measure == "function-value" else math.sqrt(max(sq, 0.0))
    return v * (1 + SDP_MARGIN), solver


def literal_value_of(hyper, p, measure, fc, timing, mu=1.0, L=10.0, gamma_factor=1.0):
    """:func:`literal_value` for LocalUpdate's hyperparameters as ``methods.get("local-update", **hyper)`` takes
    them (K, gamma, alpha, eta, beta, server; γ scaled by ``gamma_factor``) and a timed measure's ``timing``
    (rounds, D): the literal PEP of the setting a compiled certificate was asked for."""
    h = hyper
    return literal_value(
        mu, L, h["K"], h["gamma"] * gamma_factor, h.get("alpha", 0.0), p, measure, fc,
        h.get("eta"), h.get("beta"), h.get("server", "gd"), timing.get("rounds"), timing.get("D"),
    )  # fmt: skip


def literal_sdane(R, lam, mu, delta, c, accelerated):
    """S-DANE / Acc-S-DANE's PEP written literally, independently of the compiler: the round loop, output and metric
    of :func:`fedtheory.certify.pep.sdane_pep` (the loop two_client_sdane also runs), and here the local step with
    each local gradient *defined*, ∇f_i(x_i) = ∇f_i(c^r) − ∇f(c^r) − λ(x_i − c^r) + e_i (x_i free points; e_i free
    under Σ_i‖e_i‖² ≤ cλ²Σ_i‖x_i − c^r‖² when c > 0, absent when c = 0), client 2 through g. The compiler instead
    makes the gradients free and defines the points (another basis of the same PEP)."""
    from PEPit import Expression, Point

    from fedtheory.certify.pep_clients import _WRAPPER, _register_wrapper
    from fedtheory.certify.pep import sdane_pep

    def defined_local_points(pb, f1, g, f2, center, gc, gS):
        x1, x2 = Point(), Point()
        e = [Point(), Point()] if c > 0 else [None, None]
        targets = []
        for gci, xi, ei in zip(gc, (x1, x2), e):
            t = gci - gS - lam * (xi - center)
            targets.append(t if ei is None else t + ei)
        f1.add_point((x1, targets[0], Expression()))
        g.add_point((x2, 0.5 * (f1.gradient(x2) - targets[1]), Expression()))
        if c > 0:
            pb.add_constraint(e[0] ** 2 + e[1] ** 2 <= c * lam**2 * ((x1 - center) ** 2 + (x2 - center) ** 2))
        return [x1, x2], targets

    _register_wrapper()
    return sdane_pep(R, lam, mu, delta, c, accelerated, defined_local_points, wrapper=_WRAPPER)
