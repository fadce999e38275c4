"""The LocalUpdate driver gives the same iterates on every array backend.

One algorithm, one implementation (DESIGN.md): the driver is written once against
:mod:`fedtheory.backends`; these claims check that numpy and torch (cpu, and cuda when present)
produce the same run, and that on torch the run stays in tensors on the requested device.
"""

from __future__ import annotations

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
from fedtheory.algorithms.surrogate import kappa
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import tuned_server
from fedtheory.claims.core import Control, claim
from fedtheory.problems.quadratic import make_quadratic

SERVERS = ("gd", "heavy_ball", "nesterov")
FIELDS = ("x", "dist_surrogate", "dist_empirical", "loss", "grad_norm", "comm_rounds", "oracle_calls")
RTOL = 1e-12
ROUNDS = 40

_STATEMENT = (
    r"For each server (gd, heavy-ball, Nesterov), a general $\Theta$, $\alpha>0$, $d=10$ and non-commuting "
    r"$A_i$, LocalUpdate's iterates on the numpy and torch backends agree to relative $10^{-12}$ on both "
    r"message paths, and the torch run's history arrays are tensors on the requested device."
)


def _compare(ctx, device: str):
    import torch

    rng = ctx.rng
    problem = make_quadratic(5, 10, mu=1.0, L=20.0, C=2.0, weights="random", commuting=False, seed=rng)
    theta = Theta(rng.uniform(0.2, 1.0, size=8))
    alpha = float(rng.uniform(0.1, 2.0))
    gamma = 0.5 / (problem.L + alpha)
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    x0 = rng.normal(size=problem.d) * 3
    worst, worst_field, placement = 0.0, {}, []
    for kind in SERVERS:
        algo = LocalUpdate(theta, alpha, gamma, tuned_server(kind, mu_t, L_t))
        for path in ("spectral", "stepwise"):
            ref = run_local_update(problem, algo, x0, ROUNDS, path=path, backend="numpy")
            # a control runs torch on a perturbed algorithm (α·1.01): a different method, so the iterates must differ
            torch_algo = LocalUpdate(
                theta, alpha * ctx.param("torch_alpha_scale", 1.0), gamma, tuned_server(kind, mu_t, L_t)
            )
            run = run_local_update(problem, torch_algo, x0, ROUNDS, path=path, backend="torch", device=device)
            for f in FIELDS:
                value = getattr(run, f)
                on_device = isinstance(value, torch.Tensor) and value.device.type == torch.device(device).type
                if not on_device:
                    placement.append(f"{kind}/{path}/{f}: {type(value).__name__} on {getattr(value, 'device', 'host')}")
            ref_n, run_n = ref.to_numpy(), run.to_numpy()
            err = float(np.max(np.linalg.norm(run_n.x - ref_n.x, axis=1)) / np.max(np.linalg.norm(ref_n.x, axis=1)))
            worst = max(worst, err)
            for f in ("loss", "dist_surrogate", "grad_norm"):
                a, b = getattr(ref_n, f), getattr(run_n, f)
                rel = float(np.max(np.abs(a - b)) / np.max(np.abs(a)))
                worst_field[f] = max(worst_field.get(f, 0.0), rel)
            if not np.array_equal(ref_n.oracle_calls, run_n.oracle_calls):
                placement.append(f"{kind}/{path}: oracle_calls differ")
    ok = worst <= RTOL and not placement
    return ctx.decide(
        ok,
        measured={
            "max_relative_iterate_difference": worst,
            **{f"max_relative_{f}_difference": v for f, v in worst_field.items()},
            "placement_problems": placement[:10],
            "device": device,
            "rounds": ROUNDS,
        },
        tolerance={
            "relative": RTOL,
            "why": "both backends run float64 and the same operations in the same order; only the BLAS/einsum "
            "kernels' summation order differs (≲ d·eps = 2e-15 per operation), and 40 rounds of a "
            "tuned, contracting server iteration on this instance accumulate well under 1e-12",
        },
        counterexample=None
        if ok
        else {
            "problem": problem.to_json(),
            "theta": theta.to_json(),
            "alpha": alpha,
            "gamma": gamma,
            "x0": x0.tolist(),
            "device": device,
        },
        notes="Relative to max_t‖x_t‖; Θ is general (8 random weights), α > 0, γ = 1/(2(L+α)), servers tuned on [μ̃, L̃]. "
        "Every history array (iterates, distances, loss, gradient norm, counters) is checked to be a torch tensor "
        "on the requested device before to_numpy().",
    )


PERTURBED = Control(
    "perturbed-alpha",
    "numpy's run against torch's run of LocalUpdate with α·1.01: a different "
    "proximal weight changes every local step, so the iterates differ",
    {"torch_alpha_scale": 1.01},
)


def _numpy_torch_on(device: str, requires: tuple, id_suffix: str = ""):
    """The claim that numpy and torch on ``device`` give the same iterates (the same check on every device)."""
    return claim(
        id="verify/backends/numpy-torch-local-update" + id_suffix,
        ref="DESIGN: one algorithm, one implementation",
        title=f"LocalUpdate on numpy and on torch ({device}) gives the same iterates",
        statement=_STATEMENT + f" Device: {device}.",
        kind="simulation",
        controls=[PERTURBED],
        requires=requires,
    )(lambda ctx: _compare(ctx, device))


numpy_torch_local_update = _numpy_torch_on("cpu", ("torch",))
numpy_torch_local_update_cuda = _numpy_torch_on("cuda", ("torch", "cuda"), "/cuda")
