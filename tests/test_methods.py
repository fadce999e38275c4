"""fedtheory.methods: the IR's validation, the registry, backends, sampling rules, inexact prox, mini-batches,
histories, starting states and path selection."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

from fedtheory import methods
from fedtheory.methods import Aggregate, Combine, Gradient, LocalSteps, Method, ProxSolver, ServerMap, choose_path
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation
from fedtheory.problems.quadratic import make_quadratic

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def quad():
    return make_quadratic(4, 3, mu=1.0, L=10.0, C=2.0, weights="random", seed=0)


@pytest.fixture(scope="module")
def logistic():
    return LogisticFederation.random(n=5, m=[20, 30, 25, 40, 15], d=3, seed=0)


def _gd_method(**kw):
    base = dict(
        name="t",
        server=("x",),
        client=(),
        init={"x": "x0"},
        round=(Gradient("g", at="x"), Aggregate("gbar", "g"), Combine("x", (("x", 1.0), ("gbar", -0.1)))),
        output="x",
    )
    base.update(kw)
    return Method(**base)


# --------------------------------------------------------------------------------------------
# the IR's validation
# --------------------------------------------------------------------------------------------


def test_a_valid_method_and_its_introspection():
    m = _gd_method()
    assert m.scope("x") == "server" and m.scope("g") == "client" and m.client_vars == ("g",)
    assert m.linear and not m.exact_prox and m.local_work() == 1
    assert "grad f_i(x)" in m.describe()


def test_read_before_write():
    with pytest.raises(ValueError, match=r"^method 't': operation 1 \(Combine\) reads 'y' before anything writes it$"):
        _gd_method(round=(Combine("x", (("y", 1.0),)), Combine("y", (("x", 1.0),))))
    # a temporary written later in the round does not count for an earlier read
    with pytest.raises(ValueError, match=r"operation 1 \(Aggregate\) reads 'g' before anything writes it"):
        _gd_method(round=(Aggregate("gbar", "g"), Gradient("g", at="x"), Combine("x", (("gbar", 1.0),))))


def test_scope_errors():
    with pytest.raises(
        ValueError,
        match=r"operation 1 \(Aggregate\) reads the server variable 'x'; it aggregates a "
        r"client variable",
    ):
        _gd_method(round=(Aggregate("x", "x"),))
    with pytest.raises(ValueError, match=r"operation 1 \(Combine\) writes the server state 'x' from client scope"):
        _gd_method(client=("z",), init={"x": "x0", "z": "x0"}, round=(Combine("x", (("z", 1.0),)),))
    with pytest.raises(ValueError, match=r"operation 2 \(Gradient\) writes the server state 'x' from client scope"):
        _gd_method(round=(Gradient("g", at="x"), Gradient("x", at="x")))
    with pytest.raises(ValueError, match=r"operation 1 \(ServerMap\) reads client variables \['z'\]"):
        _gd_method(
            client=("z",), init={"x": "x0", "z": "x0"}, round=(ServerMap(("x",), lambda be, s, z: (z,), ("z",)),)
        )
    with pytest.raises(ValueError, match=r"\['x'\] declared both server and client state"):
        Method("t", server=("x",), client=("x",), init={"x": "x0"}, round=(), output="x")


@pytest.mark.parametrize("value", [1.0, "x1", True, np.zeros(3), None])
def test_bad_init(value):
    with pytest.raises(ValueError, match=r"init\['x'\] must be 'x0' or 0, got"):
        _gd_method(init={"x": value})


def test_init_missing_and_numpy_zero():
    with pytest.raises(ValueError, match=r"state variable 'x' has no initial value in init"):
        _gd_method(init={})
    assert _gd_method(init={"x": np.float64(0.0)}).init == {"x": 0.0}


def test_output_must_be_state():
    with pytest.raises(ValueError, match=r"output 'y' is never defined"):
        _gd_method(output="y")
    with pytest.raises(ValueError, match=r"output 'gbar' is a temporary of the round; it must be a state variable"):
        _gd_method(output="gbar")


def test_primitive_errors():
    with pytest.raises(ValueError, match=r"operation 1 is a str, not one of"):
        _gd_method(round=("step",))
    with pytest.raises(ValueError, match=r"weighting must be 'p' or 'uniform-view', got 'sum'"):
        _gd_method(weighting="sum")
    with pytest.raises(ValueError, match=r"Combine 'v' needs at least one term"):
        Combine("v", ())
    with pytest.raises(ValueError, match=r"LocalSteps needs an integer number of steps >= 1, got 0"):
        LocalSteps("y", start="x", steps=0, gamma=0.1)
    with pytest.raises(ValueError, match=r"must write its last point \(out\) or its message"):
        LocalSteps(None, start="x", steps=2, gamma=0.1)
    for alpha in (0.5, "a", lambda s: 0.5):
        with pytest.raises(ValueError, match=r"LocalSteps with alpha != 0 .* needs an anchor variable"):
            LocalSteps("y", start="x", steps=2, gamma=0.1, alpha=alpha)
    with pytest.raises(ValueError, match=r"LocalSteps theta has K=2, but steps=3"):
        LocalSteps("y", start="x", steps=3, gamma=0.1, theta=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"ProxSolver kind must be 'exact', 'gd' or 'local', got 'newton'"):
        ProxSolver("newton")
    with pytest.raises(ValueError, match=r"ProxSolver 'gd' needs an integer number of steps >= 1, got None"):
        ProxSolver("gd")
    with pytest.raises(ValueError, match=r"ProxSolver step_size must be finite and > 0"):
        ProxSolver("gd", steps=2, step_size=-1.0)
    with pytest.raises(ValueError, match=r"Aggregate mode must be 'mean' or 'sum', got 'max'"):
        Aggregate("x", "z", "max")


def test_unknown_scalar_is_a_run_time_value_error(quad):
    m = _gd_method(round=(Combine("x", (("x", "A"),)),))
    with pytest.raises(ValueError, match=r"coefficient names the scalar 'A', which the method does not define"):
        methods.run(m, quad, np.ones(3), 1)


# --------------------------------------------------------------------------------------------
# the registry and hyperparameters
# --------------------------------------------------------------------------------------------


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown method 'fedsplat'; known: acc-sdane, dane, .*scaffold, sdane$"):
        methods.get("fedsplat")
    assert set(methods.names()) >= {
        "fedavg",
        "fedprox",
        "fedsplit",
        "scaffold",
        "dane",
        "sdane",
        "acc-sdane",
        "local-update",
        "fedsgd",
        "minibatch-sgd",
    }


@pytest.mark.parametrize(
    "name, hyper, message",
    [
        ("fedavg", {"K": 0, "gamma": 0.1}, r"K must be an integer >= 1, got 0"),
        ("fedavg", {"K": 2.5, "gamma": 0.1}, r"K must be an integer >= 1, got 2.5"),
        ("fedavg", {"K": 2}, r"method 'fedavg': .*missing 1 required positional argument: 'gamma'"),
        ("fedavg", {"K": 2, "gamma": 0.1, "foo": 1}, r"method 'fedavg': .*unexpected keyword argument 'foo'"),
        ("fedavg", {"K": 2, "gamma": -0.1}, r"gamma \(client step\) must be finite and >= 0, got -0.1"),
        ("local-update", {"K": 2, "gamma": 0.1, "server": "rmsprop"}, r"server must be one of"),
        ("local-update", {"K": 2, "gamma": 0.1, "beta": 0.5}, r"server 'gd' has no momentum"),
        ("local-update", {"K": 2, "gamma": 0.1, "theta": [1, 1, 1]}, r"K=2 disagrees with theta's K=3"),
        ("local-update", {"K": 2, "gamma": 0.0}, r"eta \(server step\) must be > 0"),
        ("fedprox", {"K": 2, "gamma": 0.1, "alpha": 0.0}, r"alpha \(FedProx proximal weight\) must be finite and > 0"),
        ("fedsplit", {"s": 0.0}, r"FedSplit step s must be finite and > 0, got 0.0"),
        ("fedsplit", {"s": float("inf")}, r"FedSplit step s must be finite and > 0"),
        ("fedsplit", {"s": 1.0, "solver": "gd"}, r"ProxSolver 'gd' needs an integer number of steps >= 1"),
        (
            "fedsplit",
            {"s": 1.0, "solver": "gd", "steps": 3, "start": "hot"},
            r"FedSplit start must be 'warm' or 'cold'",
        ),
        (
            "scaffold",
            {"K": 2, "gamma": 0.1, "option": "III"},
            r"SCAFFOLD option must be 'I', 'II' or 'fresh', got 'III'",
        ),
        ("scaffold", {"K": 2, "gamma": 0.0}, r"SCAFFOLD gamma \(local step\) must be finite and > 0"),
        ("dane", {"lam": -1.0}, r"DANE lam \(lambda\) must be finite and > 0"),
        ("sdane", {"lam": 1.0, "mu": -1.0}, r"S-DANE mu must be finite and >= 0"),
    ],
)
def test_hyperparameter_errors(name, hyper, message):
    with pytest.raises(ValueError, match=message):
        methods.get(name, **hyper)


def test_register_errors():
    with pytest.raises(ValueError, match=r"a method name must be a non-empty string"):
        methods.register("", lambda: None)
    with pytest.raises(ValueError, match=r"method 'fedavg' is already registered \(pass replace=True"):
        methods.register("fedavg", lambda: None)
    with pytest.raises(ValueError, match=r"needs a callable factory"):
        methods.register("x-not-callable", 3)
    with pytest.raises(ValueError, match=r"'fedavg' is one of the library's methods and cannot be unregistered"):
        methods.unregister("fedavg")
    methods.register("x-returns-int", lambda: 3)
    try:
        with pytest.raises(ValueError, match=r"the factory registered as 'x-returns-int' returned int, not a Method"):
            methods.get("x-returns-int")
    finally:
        methods.unregister("x-returns-int")
    with pytest.raises(ValueError, match=r"hyperparameters go with a method name, not with a built Method"):
        methods.get(methods.get("fedavg", K=2, gamma=0.1), K=3)


_OUTSIDE_MODULE = '''
"""FedSplit with over-relaxation rho (Eckstein-Bertsekas): z <- z + 2 rho (prox(2 xbar - z) - xbar).
rho = 1 is Peaceman-Rachford (FedSplit), rho = 1/2 Douglas-Rachford; the fixed points are FedSplit's."""
from fedtheory.methods import Aggregate, Combine, Method, Prox


def relaxed_fedsplit(s, rho=1.0):
    if not 0 < rho <= 1:
        raise ValueError(f"rho must lie in (0, 1], got {rho}")
    return Method("relaxed-fedsplit", server=(), client=("z",), init={"z": "x0"}, round=(
        Aggregate("xbar", "z"), Combine("v", (("xbar", 2.0), ("z", -1.0))), Prox("zh", center="v", step=s),
        Combine("z", (("z", 1.0), ("zh", 2.0 * rho), ("xbar", -2.0 * rho)))), output="z", sampling=False,
        hyper={"s": s, "rho": rho})
'''


def test_register_a_method_defined_outside_the_repository(tmp_path, quad):
    path = tmp_path / "my_methods_outside.py"
    path.write_text(textwrap.dedent(_OUTSIDE_MODULE))
    spec = importlib.util.spec_from_file_location("my_methods_outside", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "fedtheory" not in str(path.resolve().parent)
    methods.register("relaxed-fedsplit", module.relaxed_fedsplit)
    try:
        assert "relaxed-fedsplit" in methods.names()
        with pytest.raises(ValueError, match=r"rho must lie in \(0, 1\], got 2"):
            methods.get("relaxed-fedsplit", s=0.3, rho=2)
        x0 = np.ones(3)
        # rho = 1 is FedSplit, to the last bit on the step path (the same operations in the same order)
        a = methods.run("relaxed-fedsplit", quad, x0, 20, s=0.3, rho=1.0, path="step")
        b = methods.run("fedsplit", quad, x0, 20, s=0.3, path="step")
        assert np.array_equal(a.x, b.x)
        # rho = 1/2 (Douglas-Rachford) differs from round 1 on and converges to x* as well
        c = methods.run("relaxed-fedsplit", quad, x0, 200, s=0.3, rho=0.5)
        assert np.linalg.norm(c.x[1] - b.x[1]) > 1e-3
        assert c.dist[-1] < 1e-10 * c.dist[0]
        exact = methods.run("relaxed-fedsplit", quad, x0, 200, s=0.3, rho=0.5, path="spectral")
        assert np.abs(exact.x - c.x).max() < 1e-12  # both paths exact, whichever the cost model took
        with pytest.raises(ValueError, match=r"already registered"):
            methods.register("relaxed-fedsplit", module.relaxed_fedsplit)
        methods.register("relaxed-fedsplit", module.relaxed_fedsplit, replace=True)
    finally:
        methods.unregister("relaxed-fedsplit")
    assert "relaxed-fedsplit" not in methods.names()


# --------------------------------------------------------------------------------------------
# backends
# --------------------------------------------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["host-runs", "torch-kernels"])
def host_runs(request, monkeypatch):
    """Both ways a CPU torch run can go: on numpy with tensors handed back (the default), and through torch's own
    kernels (what a GPU runs), so the agreement tests test torch's kernels too on a CPU-only machine."""
    import importlib

    # the module, not the function fedtheory.methods.simulate that its package re-exports
    monkeypatch.setattr(importlib.import_module("fedtheory.methods.simulate"), "HOST_RUNS", request.param)
    return request.param


@needs_torch
@pytest.mark.parametrize(
    "name, hyper, kw",
    [
        ("fedsplit", {"s": 0.3}, {}),
        ("fedsplit", {"s": 0.3, "solver": "gd", "steps": 4, "start": "warm"}, {"path": "step"}),
        ("scaffold", {"K": 5, "gamma": 0.05, "option": "II"}, {"clients_per_round": 2, "seed": 3}),
        ("scaffold", {"K": 5, "gamma": 0.05, "option": "I"}, {"path": "step"}),
        ("local-update", {"K": 4, "gamma": 0.05, "server": "adam", "eta": 0.05}, {}),
        ("acc-sdane", {"lam": 3.0, "mu": 0.5}, {"clients_per_round": 3, "seed": 1}),
    ],
)
def test_numpy_and_torch_agree_on_quadratics(quad, name, hyper, kw, host_runs):
    import torch

    x0 = np.linspace(-1.0, 2.0, 3)
    a = methods.run(name, quad, x0, 25, backend="numpy", **kw, **hyper)
    b = methods.run(name, quad, x0, 25, backend="torch", **kw, **hyper)
    assert isinstance(b.x, torch.Tensor) and b.backend == "torch" and a.path == b.path
    bn = b.to_numpy()
    assert isinstance(bn.x, np.ndarray)
    assert np.max(np.abs(a.x - bn.x)) <= 1e-12 * np.max(np.abs(a.x))
    for v, val in a.state.items():
        assert np.max(np.abs(val - bn.state[v])) <= 1e-12 * (1 + np.max(np.abs(val)))
    assert np.array_equal(a.oracle_calls, bn.oracle_calls)
    np.testing.assert_allclose(a.dist, bn.dist, rtol=1e-10, atol=1e-13)


@needs_torch
def test_numpy_and_torch_agree_on_finite_sums_with_mini_batches(logistic, host_runs):
    kw = dict(K=3, gamma=0.3, batch_size=4, clients_per_round=3, seed=2)
    a = methods.run("scaffold", logistic, np.zeros(3), 15, **kw)
    b = methods.run("scaffold", logistic, np.zeros(3), 15, backend="torch", **kw).to_numpy()
    assert np.max(np.abs(a.x - b.x)) <= 1e-12 * np.max(np.abs(a.x))
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# sampling rules
# --------------------------------------------------------------------------------------------


def test_sampling_rules(quad):
    x0 = np.zeros(3)
    with pytest.raises(
        ValueError,
        match=r"method 'fedsplit' is defined for full participation only "
        r"\(clients_per_round must be None, got 2\)",
    ):
        methods.run("fedsplit", quad, x0, 3, s=1.0, clients_per_round=2)
    with pytest.raises(ValueError, match=r"method 'scaffold' keeps client state: sample clients without replacement"):
        methods.run("scaffold", quad, x0, 3, K=2, gamma=0.05, clients_per_round=2, client_sampling="with_replacement")
    with pytest.raises(ValueError, match=r"clients_per_round M=5 exceeds the n=4 clients"):
        methods.run("scaffold", quad, x0, 3, K=2, gamma=0.05, clients_per_round=5)
    with pytest.raises(ValueError, match=r"client_sampling must be one of"):
        methods.run("fedavg", quad, x0, 3, K=2, gamma=0.05, clients_per_round=2, client_sampling="poisson")
    with pytest.raises(ValueError, match=r"clients_per_round M must be a positive integer, got 0"):
        methods.run("fedavg", quad, x0, 3, K=2, gamma=0.05, clients_per_round=0)
    # a method without client state may sample with replacement (M > n too), the oracle count follows M
    h = methods.run("dane", quad, x0, 3, lam=2.0, clients_per_round=6, client_sampling="with_replacement", seed=0)
    assert h.oracle_calls.tolist() == [0, 12, 24, 36]  # a gradient at the centre + the exact prox, × 6


def test_sampled_clients_keep_the_state_of_the_others(quad):
    """SCAFFOLD with M = 1: in each round exactly one client's c_i may change."""
    rng = np.random.default_rng(5)
    h = methods.run("scaffold", quad, np.ones(3), 1, K=3, gamma=0.05, clients_per_round=1, seed=rng)
    changed = np.flatnonzero(np.linalg.norm(h.state["ci"], axis=1) > 0)
    assert changed.size == 1
    # the drawn client is the one ClientSampler draws from the same seed
    from fedtheory.algorithms.local_update import ClientSampler

    idx, _ = ClientSampler(1, "without_replacement").draw(np.random.default_rng(5), np.asarray(quad.p))
    assert changed.tolist() == idx.tolist()


# --------------------------------------------------------------------------------------------
# inexact prox: warm and cold starts
# --------------------------------------------------------------------------------------------


def test_inexact_prox_warm_and_cold_approach_the_exact_prox(quad):
    x0 = np.array([1.0, -2.0, 0.5])
    rounds = 20
    exact = methods.run("fedsplit", quad, x0, rounds, s=0.2).x
    errors = {"warm": [], "cold": []}
    for steps in (1, 3, 10, 30, 200):
        runs = {}
        for start in ("warm", "cold"):
            step = methods.run("fedsplit", quad, x0, rounds, s=0.2, solver="gd", steps=steps, start=start, path="step")
            spectral = methods.run(
                "fedsplit", quad, x0, rounds, s=0.2, solver="gd", steps=steps, start=start, path="spectral"
            )
            assert np.max(np.abs(step.x - spectral.x)) < 1e-12  # the closed form = the literal steps
            assert step.oracle_calls[-1] == rounds * quad.n * steps
            errors[start].append(float(np.max(np.abs(step.x - exact))))
            runs[start] = step
        # two different solvers (equal in round 1, where the warm start x_0 is also the centre 2x̄ − z = x_0);
        # their gap shrinks with the steps like their errors do
        gap = np.max(np.abs(runs["warm"].x - runs["cold"].x))
        assert np.array_equal(runs["warm"].x[:2], runs["cold"].x[:2])
        assert gap > (1e-6 if steps <= 10 else 1e-10 if steps < 200 else -1.0), (steps, gap)
    for start, err in errors.items():
        assert all(b < a for a, b in zip(err, err[1:])), (start, err)
        assert err[-1] < 1e-10, (start, err)
    # the warm start carries the previous prox output as client state; the cold one does not
    assert methods.get("fedsplit", s=0.2, solver="gd", steps=3, start="warm").client == ("z", "zh")
    assert methods.get("fedsplit", s=0.2, solver="gd", steps=3, start="cold").client == ("z",)


def test_exact_prox_needs_quadratic_clients(logistic):
    with pytest.raises(ValueError, match=r"an exact prox needs quadratic clients; LogisticFederation has none"):
        methods.run("dane", logistic, np.zeros(3), 2, lam=1.0)
    h = methods.run("dane", logistic, np.zeros(3), 10, lam=1.0, solver="gd", steps=30)
    assert h.loss[-1] < h.loss[0]


# --------------------------------------------------------------------------------------------
# finite sums with mini-batches
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("Fed", [LeastSquaresFederation, LogisticFederation])
def test_mini_batch_runs_are_reproducible_by_seed(Fed):
    fed = Fed.random(n=4, m=[12, 20, 9, 15], d=3, seed=1)
    kw = dict(K=3, gamma=0.1, batch_size=4, clients_per_round=2)
    a = methods.run("fedavg", fed, np.zeros(3), 12, seed=7, **kw)
    b = methods.run("fedavg", fed, np.zeros(3), 12, seed=7, **kw)
    c = methods.run("fedavg", fed, np.zeros(3), 12, seed=np.random.default_rng(7), **kw)
    d = methods.run("fedavg", fed, np.zeros(3), 12, seed=8, **kw)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.x, c.x)
    assert np.max(np.abs(a.x - d.x)) > 1e-6
    # full batches and full participation draw nothing: the seed does not matter
    e = methods.run("fedavg", fed, np.zeros(3), 5, K=3, gamma=0.1, seed=1)
    f = methods.run("fedavg", fed, np.zeros(3), 5, K=3, gamma=0.1, seed=2)
    assert np.array_equal(e.x, f.x)


def test_batch_size_errors(quad, logistic):
    with pytest.raises(ValueError, match=r"batch_size needs clients that hold samples"):
        methods.run("fedavg", quad, np.zeros(3), 2, K=2, gamma=0.1, batch_size=2)
    with pytest.raises(ValueError, match=r"batch"):
        methods.run("fedavg", logistic, np.zeros(3), 2, K=2, gamma=0.1, batch_size=1000)


# --------------------------------------------------------------------------------------------
# History, state=, path selection
# --------------------------------------------------------------------------------------------


def test_history_fields_are_lazy_and_correct(quad, logistic):
    h = methods.run("scaffold", quad, np.ones(3), 10, K=4, gamma=0.05)
    assert h._cache == {} and h.rounds == 10 and h.x.shape == (11, 3)
    assert h.comm_rounds.tolist() == list(range(11)) and h.oracle_calls[-1] == 10 * quad.n * 4
    dist = h.dist
    assert set(h._cache) == {"x_star", "dist"}
    np.testing.assert_allclose(dist, np.linalg.norm(h.x - quad.x_star(), axis=1), rtol=1e-14)
    np.testing.assert_allclose(h.loss, [quad.loss(x) for x in h.x], rtol=1e-13)
    np.testing.assert_allclose(h.grad_norm, [np.linalg.norm(quad.grad(x)) for x in h.x], rtol=1e-12, atol=1e-15)
    assert h.dist_empirical is h.dist
    g = methods.run("fedavg", logistic, np.zeros(3), 5, K=2, gamma=0.2)
    np.testing.assert_allclose(g.loss, [logistic.loss(x) for x in g.x], rtol=1e-12)
    assert g.to_numpy()._cache == {}


def test_output_of_a_client_state_method_is_its_weighted_mean(quad):
    h = methods.run("fedsplit", quad, np.ones(3), 4, s=0.5)
    np.testing.assert_allclose(h.x[-1], np.asarray(quad.p) @ h.state["z"], rtol=1e-14)


@pytest.mark.parametrize("path", ["step", "spectral"])
def test_state_start_continues_a_run(quad, path):
    x0 = np.array([2.0, -1.0, 0.5])
    for name, hyper in (
        ("scaffold", {"K": 4, "gamma": 0.05, "option": "II"}),
        ("fedsplit", {"s": 0.4}),
        ("acc-sdane", {"lam": 2.0}),
        ("local-update", {"K": 3, "gamma": 0.05, "server": "nesterov", "eta": 0.1, "beta": 0.5}),
        ("local-update", {"K": 3, "gamma": 0.05, "server": "adam", "eta": 0.1}),
    ):
        whole = methods.run(name, quad, x0, 12, path=path, **hyper)
        first = methods.run(name, quad, x0, 5, path=path, **hyper)
        rest = methods.run(name, quad, x0, 7, path=path, state=first.state, scalars=first.scalars, **hyper)
        assert np.max(np.abs(rest.x - whole.x[5:])) <= 1e-13 * np.max(np.abs(whole.x))
        if first.scalars:  # without the scalars (Adam's t, Acc-S-DANE's A_r, B_r) the run restarts them
            restarted = methods.run(name, quad, x0, 7, path=path, state=first.state, **hyper)
            assert np.max(np.abs(restarted.x - whole.x[5:])) > 1e-6 * np.max(np.abs(whole.x))
    # with sampling: continuing with the same Generator reproduces the draws
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    whole = methods.run("scaffold", quad, x0, 8, K=3, gamma=0.05, clients_per_round=2, seed=g1, path=path)
    first = methods.run("scaffold", quad, x0, 3, K=3, gamma=0.05, clients_per_round=2, seed=g2, path=path)
    rest = methods.run(
        "scaffold", quad, x0, 5, K=3, gamma=0.05, clients_per_round=2, seed=g2, path=path, state=first.state
    )
    assert np.max(np.abs(rest.x - whole.x[3:])) <= 1e-13 * np.max(np.abs(whole.x))


@pytest.mark.parametrize(
    "name, state, message",
    [
        (
            "scaffold",
            {"x": (3,)},
            r"state must give exactly the state variables \['x', 'c', 'ci'\] of 'scaffold', got \['x'\]",
        ),
        ("scaffold", {"x": (3,), "c": (3,), "ci": (3, 3)}, r"state\['ci'\] must have shape \(4, 3\), got \(3, 3\)"),
        ("scaffold", {"x": (2,), "c": (3,), "ci": (4, 3)}, r"state\['x'\] must have shape \(3,\), got \(2,\)"),
        ("fedavg", {"x": (3,), "y": (3,)}, r"state must give exactly"),
    ],
)
def test_state_errors(quad, name, state, message):
    # the state is given by its arrays' shapes (4 clients, d = 3): zeros of those shapes
    with pytest.raises(ValueError, match=message):
        methods.run(name, quad, np.zeros(3), 1, K=2, gamma=0.1, state={k: np.zeros(v) for k, v in state.items()})


def test_run_argument_errors(quad):
    with pytest.raises(ValueError, match=r"x0 must have shape \(3,\), got \(2,\)"):
        methods.run("fedavg", quad, np.zeros(2), 1, K=2, gamma=0.1)
    with pytest.raises(ValueError, match=r"rounds must be a non-negative integer, got -1"):
        methods.run("fedavg", quad, np.zeros(3), -1, K=2, gamma=0.1)
    with pytest.raises(
        ValueError, match=r"federation must be a QuadraticFederation, a FiniteSumFederation or ClientOracles, got dict"
    ):
        methods.run("fedavg", {}, np.zeros(3), 1, K=2, gamma=0.1)
    with pytest.raises(ValueError, match=r"method must be a fedtheory.methods.Method"):
        from fedtheory.methods.simulate import simulate

        simulate("fedavg", quad, np.zeros(3), 1)
    assert methods.run("fedavg", quad, np.ones(3), 0, K=2, gamma=0.1).x.shape == (1, 3)


def test_choose_path(quad, logistic):
    fedavg_big_K = methods.get("fedavg", K=100, gamma=0.01)
    assert choose_path(fedavg_big_K, quad, 10) == "spectral"
    assert choose_path(methods.get("fedavg", K=2, gamma=0.01), quad, 10) == "step"  # little local work
    # an exact prox goes through the eigenbasis on either path: 2 rotations literally, 3 spectrally (x̄ in, the
    # aggregate and the reported mean out), so the literal path is the cheaper one
    assert choose_path(methods.get("fedsplit", s=1.0), quad, 10) == "step"
    # a nonlinear server rule acts on server vectors only: the clients' closed forms still apply
    assert choose_path(methods.get("local-update", K=100, gamma=0.01, server="adam"), quad, 10) == "spectral"
    assert choose_path(fedavg_big_K, logistic, 10) == "step"
    assert choose_path(fedavg_big_K, quad, 10, "step") == "step"
    with pytest.raises(ValueError, match=r"path must be one of \('auto', 'step', 'spectral'\), got 'fast'"):
        choose_path(fedavg_big_K, quad, 10, "fast")
    with pytest.raises(
        ValueError,
        match=r"the spectral path needs quadratic \(or least-squares\) clients, "
        r"got LogisticFederation",
    ):
        choose_path(fedavg_big_K, logistic, 10, "spectral")
    with pytest.raises(ValueError, match=r"the spectral path uses full local gradients"):
        choose_path(fedavg_big_K, quad, 10, "spectral", batch_size=4)
    h = methods.run(fedavg_big_K, quad, np.ones(3), 3)
    assert h.path == "spectral"
    assert methods.run(fedavg_big_K, quad, np.ones(3), 3, path="step").path == "step"


def test_spectral_path_is_exact_for_huge_K(quad):
    """K = 10⁶ local steps cost O(d²) per client on the spectral path; K literal steps agree at K = 200."""
    h = methods.run("scaffold", quad, np.ones(3), 3, K=10**6, gamma=1e-4)
    assert np.all(np.isfinite(h.x)) and h.oracle_calls[-1] == 3 * quad.n * 10**6
    a = methods.run("scaffold", quad, np.ones(3), 5, K=200, gamma=0.01, path="step")
    b = methods.run("scaffold", quad, np.ones(3), 5, K=200, gamma=0.01, path="spectral")
    assert np.max(np.abs(a.x - b.x)) < 1e-12


def test_least_squares_takes_the_spectral_path_when_local_work_is_large_and_it_is_exact():
    """The cost model sends many local steps on least-squares clients through their quadratic (same gradients,
    so the same iterates); few steps, or mini-batches, stay literal."""
    from fedtheory.problems.finite_sum import LeastSquaresFederation

    fed = LeastSquaresFederation.random(4, 30, 50, seed=3)
    gamma = 0.5 / fed.smoothness()
    # SCAFFOLD: its shifted local steps cannot run as FedAvg's summed operator in the sample space
    many = methods.run("scaffold", fed, np.zeros(50), 20, K=200, gamma=gamma)
    literal = methods.run("scaffold", fed, np.zeros(50), 20, K=200, gamma=gamma, path="step")
    assert many.path == "spectral" and literal.path == "step"
    assert np.abs(many.x - literal.x).max() <= 1e-12 * np.abs(literal.x).max()
    assert methods.run("fedavg", fed, np.zeros(50), 20, K=1, gamma=gamma).path == "step"
    assert methods.run("fedavg", fed, np.zeros(50), 2, K=200, gamma=gamma, batch_size=5, seed=0).path == "step"
