"""Yao et al., FedHM (arXiv:2111.14655), Appendix B: Assumptions 3–5 and what they imply for g, on the
bilinear-logistic family of _problem.py.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from fedtheory.algorithms.fedhm import FactorSpace, HybridLayout
from fedtheory.certify.params import Custom
from fedtheory.claims.probing import decide_with_probe, probe_by_tier
from fedtheory.claims.core import Control, claim
from fedtheory.problems.finite_sum import LogisticFederation

from ._problem import (
    EPS,
    _ball_point,
    _project_ball,
    _random_instance,
    constants,
    factor_2_dropped,
    grad_g_client,
    kappa_uv_of,
    make_instance,
    moments,
    sample_grads,
    truncated_roots,
)

# --------------------------------------------------------------------------------------------
# Assumptions 3–5
# --------------------------------------------------------------------------------------------


@claim(
    id="fedhm/assumption-3/logistic-constants",
    ref="Assumption 3 (Assumption 1)",
    title="The bilinear logistic family satisfies Assumption 3 with the computed constants",
    statement=r"Assumption 3: each $f_p$ is continuously differentiable with $L_{\nabla f}$-Lipschitz gradient, $f\ge f_{\rm low}$, "
    r"$\mathbb E[\nabla F_p(w;\zeta)]=\nabla f_p(w)$, $\mathbb E\|\nabla F_p(w;\zeta)-\nabla f_p(w)\|^2\le M_f$ and "
    r"$\mathbb E\|\nabla F_p(w;\zeta)\|^2\le\kappa_f$ for all $w$, $p$ — on the problems every simulation here uses, with "
    r"$f_{\rm low}=0$, $L_{\nabla f}=\max_p\lambda_{\max}(A_p^\top A_p/m_p)/4$, $\kappa_f=M_f=\max_p\frac1{m_p}\sum_j\|a_j\|^2$.",
    kind="probe",
    controls=[
        Control(
            "lipschitz-0.6",
            "0.6·L_∇f: false, L_∇f = max_p λ_max(A_pᵀA_p/m_p)/4 is the Hessian's norm at "
            "w = 0 (σ′(0) = 1/4); the check evaluates the pair ±10⁻³v along the top eigenvector on every run, "
            "where the ratio is 1/0.6·(1 − O(10⁻⁶)) > 1: it fires by construction, at any seed",
            {"lipschitz_factor": 0.6},
        )
    ],
)
def assumption_3(ctx):
    rng = ctx.rng
    worst = {"lipschitz": 0.0, "second_moment": 0.0, "variance": 0.0, "unbiased": 0.0, "below": 0.0}
    factor = ctx.param("lipschitz_factor", 1.0)
    for _ in range(8 if not ctx.full else 30):
        inst = _random_instance(rng)
        c = constants(inst)
        c.L_grad_f *= factor
        fed = inst.fed
        for _ in range(20):
            w, w2 = rng.normal(size=fed.d) * rng.uniform(0.1, 20), rng.normal(size=fed.d) * rng.uniform(0.1, 20)
            for p in range(fed.n):
                gs = sample_grads(fed, p, w)
                full = fed.client_grads(w)[p]
                worst["unbiased"] = max(
                    worst["unbiased"], float(np.linalg.norm(gs.mean(0) - full)) / (1 + np.linalg.norm(full))
                )
                second = float(np.mean(np.sum(gs**2, 1)))
                worst["second_moment"] = max(worst["second_moment"], second / c.kappa_f)
                worst["variance"] = max(worst["variance"], (second - float(full @ full)) / c.M_f)
                g2 = fed.client_grads(w2)[p]
                worst["lipschitz"] = max(
                    worst["lipschitz"], float(np.linalg.norm(full - g2) / (c.L_grad_f * np.linalg.norm(w - w2)))
                )
            worst["below"] = max(worst["below"], -float(fed.loss(w)))

    # adversary: maximize the Lipschitz ratio over pairs (w, w') and the second moment over w, on one instance
    inst = _random_instance(rng)
    c, fed = constants(inst), inst.fed
    c.L_grad_f *= factor

    def lip(z):
        w, w2 = z[: fed.d], z[fed.d :]
        return max(
            float(
                np.linalg.norm(fed.client_grads(w)[p] - fed.client_grads(w2)[p])
                / (c.L_grad_f * np.linalg.norm(w - w2) + 1e-300)
            )
            for p in range(fed.n)
        )

    def mom(z):
        return max(float(np.mean(np.sum(sample_grads(fed, p, z) ** 2, 1))) / c.kappa_f for p in range(fed.n))

    r1 = probe_by_tier(ctx, lip, Custom(2 * fed.d, lambda z: z), seed=rng, n_random=64, n_starts=3, maxiter=(150, 600))
    r2 = probe_by_tier(ctx, mom, Custom(fed.d, lambda z: z * 5), seed=rng, n_random=64, n_starts=3, maxiter=(150, 600))
    # the attaining pair, every run: ±εv around w = 0 along the top eigenvector v of the client with the largest
    # λ_max(A_pᵀA_p/m_p) — the secant slope is σ′(0)λ_max(1 − O(ε²)), so the ratio is 1 − O(1e-6) at ε = 1e-3
    # (rounding ≲ 1e-13): a constant tightened by any factor < 1 − 1e-6 fails here by construction, at any seed
    gram = np.einsum("pmd,pme->pde", fed.a, fed.a) / fed.counts[:, None, None]
    top = int(np.argmax(np.linalg.eigvalsh(gram)[:, -1]))
    v = np.linalg.eigh(gram[top])[1][:, -1]
    attained = lip(np.concatenate([1e-3 * v, -1e-3 * v]))
    tol = 1e-12
    ok = (
        max(worst["lipschitz"], r1.worst_value, attained) <= 1 + tol
        and max(worst["second_moment"], r2.worst_value) <= 1 + tol
        and worst["variance"] <= 1 + tol
        and worst["unbiased"] <= 1e-13
        and worst["below"] <= 0
    )
    return ctx.decide(
        ok,
        measured={
            **{f"random_{k}": v for k, v in worst.items()},
            "probe_lipschitz_ratio": r1.worst_value,
            "attaining_pair_lipschitz_ratio": attained,
            "probe_second_moment_ratio": r2.worst_value,
        },
        tolerance={"ratios": "≤ 1 + 1e-12 (float64 evaluation of exact bounds)", "unbiased": 1e-13},
        counterexample=None if ok else {"worst": worst},
        notes="Batch size 1 (a batch mean only lowers the second moment and the variance). The Lipschitz bound is "
        "attained at w = 0 (σ′ = 1/4); the second-moment bound is approached where every margin is very "
        "negative. Assumption 1 is the informal statement of Assumption 3. A least-squares client would "
        "violate the bounded second moment (its gradient grows without bound), so these checks use logistic "
        "clients.",
    )


@claim(
    id="fedhm/assumption-3/unbiased-factor-gradients",
    ref="Assumption 3 (Appendix B.2, eq. 10)",
    title="Under Assumption 3 the factor-space stochastic gradients are unbiased",
    statement=r"Appendix B.2: ``Recalling Eq. (10), it follows that under Assumption 3, $\mathbb E_{p,t}[\nabla G_p(h_{p,t};\zeta_{p,t})]"
    r"=\nabla g_p(h_{p,t})$'', with $\nabla G_p^\ell=[\nabla F_p^\ell V^\ell;\ (\nabla F_p^\ell)^\top U^\ell]$.",
    kind="numeric",
    controls=[
        Control(
            "v-block-dropped",
            "eq. (10) with the V-block dropped (∇_V G = 0): false a priori wherever ∇_W F·ᵀU ≠ 0, "
            "i.e. at every generic point",
            {"drop_v_block": True},
        )
    ],
)
def unbiased_factor_gradients(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(10 if not ctx.full else 40):
        inst = _random_instance(rng)
        h = inst.space.spectral(rng.normal(size=inst.fed.d), inst.full_ranks) * rng.uniform(0.3, 3)
        for p in range(inst.P):
            mean, _, _ = moments(inst, p, h)
            ref = grad_g_client(inst, p, h)
            if ctx.param("drop_v_block", False):
                for _, sv in inst.space.slices():
                    ref[sv] = 0.0
            worst = max(worst, float(np.linalg.norm(mean - ref) / (1 + np.linalg.norm(ref))))
    tol = 64 * EPS * 10
    return ctx.decide(
        worst <= tol,
        measured={"worst_relative_bias": worst},
        tolerance=tol,
        notes="Exact enumeration over each client's samples; ∇g_p from the full-batch ∇f_p through eq. (10). "
        "Eq. (10) itself is checked against autograd through real factorized torch layers in "
        "fedhm/section-b.1/factor-gradients-eq-10.",
    )


# --------------------------------------------------------------------------------------------
# Assumption 4: what Assumptions 3–4 imply for g
# --------------------------------------------------------------------------------------------


@claim(
    id="fedhm/assumption-4/implied-constants-global",
    ref="Assumption 4 (Appendix B.2)",
    title="Assumptions 3–4 give a bound κ_g on E‖∇G_p(h; ζ)‖² for all h",
    statement=r"Appendix B.2: ``Under Assumptions 3 and 4, it follows that the gradients of $g_p(h)$ are Lipschitz continuous for some "
    r"modulus $L_{\nabla g}>0$ and there exist constants $M_g>0$ and $\kappa_g>0$ such that $\mathbb E\|\nabla G_p(h;\zeta_p)"
    r"-\nabla g_p(h)\|^2\le M_g$ and $\mathbb E\|\nabla G_p(h;\zeta_p)\|^2\le\kappa_g$, $\forall h,\forall p$.''",
    kind="numeric",
    expect="refuted",
)
def assumption_4_global(ctx):
    rng = ctx.rng
    inst = make_instance(rng, P=2, shapes=((3, 4),), samples=4, eta=0.01)
    c = constants(inst)
    w = rng.normal(size=inst.fed.d)
    h = inst.space.spectral(w, inst.full_ranks)
    kappa = kappa_uv_of(h[None, :], inst.space)
    su, sv = inst.space.slices()[0]
    growth = {}
    for scale in (1.0, 10.0, 100.0, 1000.0):
        hc = h.copy()
        hc[su] /= scale  # U/c, V·c: the same W = UVᵀ, the same Assumption-3 data, ‖∇_V G‖ grows like c
        hc[sv] *= scale
        growth[str(scale)] = max(moments(inst, p, hc)[1] for p in range(inst.P))
    bound = c.kappa_g(kappa)
    ok = max(growth.values()) <= bound
    return ctx.decide(
        ok,
        measured={"second_moment_by_scale": growth, "kappa_g_on_the_iterates_ball": bound},
        tolerance="any finite κ_g is exceeded: E‖∇G‖² ≥ c²·E‖∇F_ℓᵀU‖² along (U/c, V·c)",
        counterexample=None
        if ok
        else {
            "features": [inst.fed.a[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
            "labels": [inst.fed.y[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
            "h": h.tolist(),
            "shape": [3, 4],
            "scales": [1.0, 10.0, 100.0, 1000.0],
            "second_moments": growth,
        },
        notes="Along h_c = (U/c, V·c) the model w(h_c) is fixed, so Assumption 3 sees nothing, while "
        "∇_V G = ∇Fᵀ(U/c)… and ∇_U G = ∇F(V·c) grow like c: no κ_g (nor M_g, nor L_∇g) holds for all h. The "
        "proofs only evaluate g at iterates and their averages, which Assumption 4 keeps in the ball "
        "{‖U‖_F, ‖V‖_F ≤ κ_UV}; there the constants exist (fedhm/assumption-4/implied-constants-on-ball).",
    )


@assumption_4_global.replayer
def _(cex, ctx):
    with mpmath.workdps(40):
        m, n = cex["shape"]
        h = [mpmath.mpf(v) for v in cex["h"]]
        r = min(m, n)
        U = mpmath.matrix([[h[1 + i * r + k] for k in range(r)] for i in range(m)])
        V = mpmath.matrix([[h[1 + m * r + j * r + k] for k in range(r)] for j in range(n)])
        worst = mpmath.mpf(0)
        for feats, labels in zip(cex["features"], cex["labels"]):
            total = mpmath.mpf(0)
            for a, y in zip(feats, labels):
                W = U * V.T
                score = mpmath.mpf(a[0]) * h[0] + sum(
                    mpmath.mpf(a[1 + i * n + j]) * W[i, j] for i in range(m) for j in range(n)
                )
                coef = -mpmath.mpf(y) / (1 + mpmath.exp(mpmath.mpf(y) * score))
                Gw = mpmath.matrix([[coef * mpmath.mpf(a[1 + i * n + j]) for j in range(n)] for i in range(m)])
                c = mpmath.mpf(cex["scales"][-1])
                gU, gV = Gw * (V * c), Gw.T * (U / c)
                total += (coef * mpmath.mpf(a[0])) ** 2 + sum(x**2 for x in gU) + sum(x**2 for x in gV)
            worst = max(worst, total / len(feats))
        grows = worst > 1e4 * max(cex["second_moments"][str(1.0)], 1e-300)
    return ctx.decide(
        not grows,
        measured={"second_moment_at_largest_scale_mp": mpmath.nstr(worst, 8)},
        tolerance="40-digit recomputation",
        notes="replayed in mpmath: the second moment grows without bound",
    )


@claim(
    id="fedhm/assumption-4/implied-constants-on-ball",
    ref="Assumption 4 (Appendix B.2)",
    title="On the ball ‖U_ℓ‖_F, ‖V_ℓ‖_F ≤ κ_UV: L_∇g ≤ max(1,2κ²)L_∇f + L_f, κ_g ≤ max(1,2κ²)κ_f, M_g ≤ max(1,2κ²)M_f",
    statement=r"Under Assumption 3, for all $h,h'$ with $\|U_\ell\|_F,\|V_\ell\|_F\le\kappa_{UV}$ (Assumption 4's set) and all $p$: "
    r"$\|\nabla g_p(h)-\nabla g_p(h')\|\le(\max(1,2\kappa_{UV}^2)L_{\nabla f}+L_f)\|h-h'\|$, "
    r"$\mathbb E\|\nabla G_p(h;\zeta)\|^2\le\max(1,2\kappa_{UV}^2)\kappa_f$, $\mathbb E\|\nabla G_p-\nabla g_p\|^2\le"
    r"\max(1,2\kappa_{UV}^2)M_f$, with $L_f\ge\sup_w\|\nabla f_p(w)\|$: the constants the proofs need exist on the ball.",
    kind="probe",
    control_exempt="no instance attaining the derived constants is known: max(1, 2κ²)L_∇f + L_f, max(1, 2κ²)κ_f and "
    "max(1, 2κ²)M_f are worst-case norm-inequality bounds with measured ratios ≤ 0.33 (random and probe), so no "
    "tightened constant is known to be false on the ball",
)
def assumption_4_ball(ctx):
    rng = ctx.rng
    worst = {"lipschitz": 0.0, "second_moment": 0.0, "variance": 0.0}
    for _ in range(6 if not ctx.full else 25):
        inst = _random_instance(rng)
        c = constants(inst)
        kappa = float(rng.uniform(0.3, 3))
        for _ in range(15):
            h, h2 = _ball_point(rng, inst, kappa), _ball_point(rng, inst, kappa)
            if rng.uniform() < 0.5:  # nearby pairs probe the local modulus
                h2 = _project_ball(
                    h + 1e-3 * rng.normal(size=h.size), inst.space, kappa, np.ones(2 * len(inst.space.r_max))
                )
                h = _project_ball(h, inst.space, kappa, np.ones(2 * len(inst.space.r_max)))
            for p in range(inst.P):
                d = np.linalg.norm(grad_g_client(inst, p, h) - grad_g_client(inst, p, h2))
                worst["lipschitz"] = max(worst["lipschitz"], float(d / (c.L_g(kappa) * np.linalg.norm(h - h2))))
                _, second, var = moments(inst, p, h)
                worst["second_moment"] = max(worst["second_moment"], second / c.kappa_g(kappa))
                worst["variance"] = max(worst["variance"], var / c.M_g(kappa))
    inst = _random_instance(rng)
    c, kappa, space = constants(inst), 1.5, inst.space
    k = 2 * len(space.r_max)

    def decode(z):
        fr = 0.5 * (1 + np.tanh(z[2 * space.dim : 2 * space.dim + 2 * k]))
        return (
            _project_ball(z[: space.dim], space, kappa, fr[:k]),
            _project_ball(z[space.dim : 2 * space.dim], space, kappa, fr[k:]),
        )

    def violation(pair):
        h, h2 = pair
        lip = max(
            float(
                np.linalg.norm(grad_g_client(inst, p, h) - grad_g_client(inst, p, h2))
                / (c.L_g(kappa) * np.linalg.norm(h - h2))
            )
            for p in range(inst.P)
        )
        mom = max(moments(inst, p, h)[1] / c.kappa_g(kappa) for p in range(inst.P))
        return max(lip, mom)

    result = probe_by_tier(
        ctx,
        violation,
        Custom(2 * space.dim + 2 * k, decode),
        seed=rng,
        n_random=(32, 128),
        n_starts=(2, 6),
        maxiter=(60, 400),
        target=1 + 1e-9,
    )
    ok = max(worst.values()) <= 1 + 1e-9 and result.worst_value <= 1 + 1e-9
    return decide_with_probe(
        ctx,
        ok,
        result,
        {**{f"random_{k}_ratio": v for k, v in worst.items()}},
        probe_name="probe_worst_ratio",
        tolerance="ratios ≤ 1 + 1e-9",
        notes="Derivation: ‖U V ᵀ − U′V′ᵀ‖ ≤ κ(‖ΔU‖ + ‖ΔV‖), so ‖Δw‖² ≤ max(1, 2κ²)‖Δh‖²; the chain-rule terms "
        "(∇f(w) − ∇f(w′))V are ≤ max(1, 2κ²)L_∇f‖Δh‖ jointly, the terms ∇f(w′)ΔV ≤ L_f‖Δh‖; and "
        "‖[∇F V; ∇Fᵀ U]‖² ≤ 2κ²‖∇F‖². Spectral norms are bounded by Frobenius norms.",
    )


# --------------------------------------------------------------------------------------------
# Assumption 5
# --------------------------------------------------------------------------------------------


@claim(
    id="fedhm/assumption-5/lipschitz-implied",
    ref="Assumption 5 (remark)",
    title="Bounded second moments make f Lipschitz with modulus √κ_f",
    statement=r"Remark after Assumption 5: ``the final assumption, relating to the Lipschitz continuity of $f$ is essentially implied by "
    r"Assumption 3, as the bounded second moments imply that the gradient of $f$ is bounded'' — $\|\nabla f(w)\|^2\le\kappa_f$ "
    r"by Jensen, so $|f(w)-f(w')|\le\sqrt{\kappa_f}\,\|w-w'\|$.",
    kind="probe",
    control_exempt="Jensen's ‖∇f‖² ≤ κ_f is attained only in the limit of a single sample per client at an infinitely "
    "negative margin, outside the sampled family (measured ratios ≤ 0.22), so no tightened constant is known to be "
    "false on these instances",
)
def lipschitz_implied(ctx):
    rng = ctx.rng
    worst_grad, worst_lip = 0.0, 0.0
    for _ in range(6 if not ctx.full else 20):
        inst = _random_instance(rng)
        c, fed = constants(inst), inst.fed
        for _ in range(30):
            w, w2 = rng.normal(size=fed.d) * rng.uniform(0.1, 30), rng.normal(size=fed.d) * rng.uniform(0.1, 30)
            worst_grad = max(worst_grad, float(np.sum(fed.grad(w) ** 2)) / c.kappa_f)
            worst_lip = max(
                worst_lip,
                abs(float(fed.loss(w) - fed.loss(w2))) / (math.sqrt(c.kappa_f) * float(np.linalg.norm(w - w2))),
            )
    inst = _random_instance(rng)
    c, fed = constants(inst), inst.fed
    result = probe_by_tier(
        ctx,
        lambda z: float(np.sum(fed.grad(z) ** 2)) / c.kappa_f,
        Custom(fed.d, lambda z: 10 * z),
        seed=rng,
        n_random=64,
        n_starts=2,
        maxiter=(100, 500),
    )
    ok = max(worst_grad, worst_lip, result.worst_value) <= 1 + 1e-12
    return decide_with_probe(
        ctx,
        ok,
        result,
        {"grad_norm_sq_over_kappa_f": worst_grad, "lipschitz_ratio": worst_lip},
        probe_name="probe_grad_norm_sq_over_kappa_f",
        tolerance="≤ 1 + 1e-12",
    )


@claim(
    id="fedhm/assumption-5/kappa-g-as-lipschitz-constant",
    ref="Assumption 5 (remark)",
    title="κ_g can serve as a Lipschitz constant of f",
    statement=r"Remark after Assumption 5: ``while, in essence, we could use $\kappa_g$ as a Lipschitz constant for $f$, we "
    r"differentiate these two quantities'' — i.e. $|f(w)-f(w')|\le\kappa_g\|w-w'\|$ for a valid $\kappa_g$.",
    kind="numeric",
    expect="refuted",
)
def kappa_g_as_lipschitz(ctx):
    # one client, one sample a with ‖a‖ = 1/2 (so κ_f = ‖a‖² = 1/4 is the exact supremum of E‖∇F‖²)
    a = np.array([0.3, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0])  # bias + a 2×3 matrix feature
    fed = LogisticFederation([a[None, :]], [np.array([1.0])])
    kappa_uv = 0.5  # the ball of Assumption 4: max(1, 2κ²) = 1
    kappa_f = float(a @ a)
    kappa_g = (
        max(1.0, 2 * kappa_uv**2) * kappa_f
    )  # a valid κ_g on that ball (fedhm/assumption-4/implied-constants-on-ball)
    w = -40.0 * a / np.linalg.norm(a)  # deep in the region where f has slope ‖a‖ = 1/2
    w2 = w - 1.0 * a / np.linalg.norm(a)
    slope = abs(float(fed.loss(w2) - fed.loss(w))) / float(np.linalg.norm(w2 - w))
    ok = slope <= kappa_g
    return ctx.decide(
        ok,
        measured={"secant_slope_of_f": slope, "kappa_g": kappa_g, "sqrt_kappa_f": math.sqrt(kappa_f)},
        tolerance="exact comparison (replayed in 50 digits)",
        counterexample=None if ok else {"a": a.tolist(), "w": w.tolist(), "w2": w2.tolist(), "kappa_g": kappa_g},
        notes="κ_g bounds a squared norm: f's Lipschitz constant is √κ_f (fedhm/assumption-5/lipschitz-implied), "
        "which exceeds κ_g ≥ κ_f whenever κ_f < 1 and κ_UV ≤ 1/√2. Here f(w) = log(1 + e^{−aᵀw}) has slope "
        "0.5 while κ_g = 0.25. A remark, not used by the proofs (they carry L_f separately).",
    )


@kappa_g_as_lipschitz.replayer
def _(cex, ctx):
    with mpmath.workdps(50):
        a = [mpmath.mpf(v) for v in cex["a"]]

        def f(w):
            return mpmath.log(1 + mpmath.exp(-sum(x * y for x, y in zip(a, w))))

        w, w2 = [mpmath.mpf(v) for v in cex["w"]], [mpmath.mpf(v) for v in cex["w2"]]
        slope = abs(f(w2) - f(w)) / mpmath.sqrt(sum((x - y) ** 2 for x, y in zip(w, w2)))
    return ctx.decide(
        slope <= cex["kappa_g"],
        measured={"slope_mp": mpmath.nstr(slope, 12)},
        tolerance="50 digits",
        notes="replayed in mpmath",
    )


@claim(
    id="fedhm/assumption-5/kappa-sigma-identities",
    ref="Assumption 5 (remark), eq. (18)",
    title="Assumption 5's quantities are ‖w(ȳ_t)^ℓ − w_t^ℓ‖² and the factor gap ‖ȳ_t − y_{p,t}‖²/2",
    statement=r"Remark after Assumption 5 with eq. (18): ``the first inequality in this assumption assumes that the expected norm "
    r"difference between $w(\bar y_t)^\ell$ and $w_t^\ell$ is bounded while the second assumes that ... the norm difference of "
    r"the factors of $y_{p,t}^\ell$ and $\bar y_t^\ell$ are bounded'': $\|w(\bar y_t)^\ell-W_t^\ell\|_F^2=\|(\frac1P\sum_p"
    r"\sqrt{\Sigma_{r(p,\ell)}})^2-\Sigma\|_F^2$ and $\|\bar y_t^\ell-y_{p,t}^\ell\|^2=2\|\frac1P\sum_i\sqrt{\Sigma_{r(i,\ell)}}"
    r"-\sqrt{\Sigma_{r(p,\ell)}}\|_F^2$.",
    kind="numeric",
    controls=[
        factor_2_dropped(
            "the second identity without its factor 2: false a priori whenever two clients have "
            "different ranks (then ‖avg√Σ − √Σ_p‖ > 0 for some p)"
        )
    ],
)
def kappa_sigma_identities(ctx):
    rng = ctx.rng
    worst = 0.0
    for _ in range(40 if not ctx.full else 200):
        m, n = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        layout = HybridLayout.matrix(m, n, offset=1, d=1 + m * n)
        k = min(m, n)
        space = FactorSpace(layout, (k,))
        w = rng.normal(size=layout.d) * rng.uniform(0.1, 5)
        P = int(rng.integers(1, 5))
        ranks = rng.integers(1, k + 1, size=P)
        ys = np.stack([space.spectral(w, [int(r)]) for r in ranks])
        ybar = ys.mean(axis=0)
        s = np.linalg.svd(w[1:].reshape(m, n), compute_uv=False)
        roots = truncated_roots(s, ranks)
        avg = roots.mean(axis=0)
        lhs1 = float(np.sum((space.w(ybar)[1:] - w[1:]) ** 2))
        rhs1 = float(np.sum((avg * avg - s) ** 2))
        scale = float(np.sum(s**2)) + 1e-300
        worst = max(worst, abs(lhs1 - rhs1) / scale)
        for p in range(P):
            lhs2 = float(np.sum((ybar - ys[p]) ** 2))
            rhs2 = ctx.param("factor_2", 2.0) * float(np.sum((avg - roots[p]) ** 2))
            worst = max(worst, abs(lhs2 - rhs2) / (float(np.sum(s)) + 1e-300))
    tol = 200 * EPS
    return ctx.decide(
        worst <= tol,
        measured={"worst_relative_residual": worst},
        tolerance=tol,
        notes="U_t, V_t with orthonormal columns (thin SVD) and diagonal √Σ's commute, so (avg U√Σ_r)(avg V√Σ_r)ᵀ "
        "= U (avg √Σ_r)² Vᵀ; the dense layers of y_{p,t} are w_t's for every p. Relative to ‖Σ‖²_F and tr Σ.",
    )
