"""Array backends: numpy and torch agree, tensors stay tensors on their device, errors are clear."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import fedtheory.backends as backends
from fedtheory.backends import Backend, BackendUnavailableError, available_backends, backend_of, get_backend


def test_numpy_default():
    be = get_backend()
    assert be.name == "numpy" and be.device is None and be.dtype == np.float64
    assert be is get_backend("numpy") is get_backend("numpy", device="cpu") is get_backend(be)
    assert "numpy" in available_backends()
    x = be.asarray([1, 2, 3])
    assert isinstance(x, np.ndarray) and x.dtype == np.float64
    assert be.zeros((2, 3)).dtype == np.float64 and be.eye(3).tolist() == np.eye(3).tolist()
    assert be.xp.__name__ == "array_api_compat.numpy"


def test_unknown_backend_and_bad_device():
    with pytest.raises(ValueError, match=r"^unknown backend 'jax' \(choose numpy or torch\)$"):
        get_backend("jax")
    with pytest.raises(ValueError, match=r"unknown backend"):
        get_backend(3)
    with pytest.raises(ValueError, match=r"backend 'numpy' runs on the CPU only"):
        get_backend("numpy", device="cuda")


def test_torch_missing_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(backends, "_torch_installed", lambda: False)
    assert available_backends() == ["numpy"]
    with pytest.raises(BackendUnavailableError, match=r"needs PyTorch, which is not installed") as info:
        get_backend("torch")
    assert isinstance(info.value, ImportError) and isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_torch_is_imported_lazily():
    code = (
        "import sys, fedtheory.backends as b, fedtheory.problems as p; b.get_backend(); "
        "p.make_quadratic(2, 2, mu=1.0, L=2.0).on('numpy'); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------------------------------
# torch
# ------------------------------------------------------------------------------------------------

torch = pytest.importorskip("torch")


@pytest.fixture
def tb():
    return get_backend("torch", device="cpu")


def _sym(rng, *shape):
    G = rng.normal(size=shape)
    return G + np.swapaxes(G, -1, -2)


def _check_tensor(x, device="cpu"):
    assert isinstance(x, torch.Tensor), type(x)
    assert x.dtype == torch.float64
    assert x.device.type == torch.device(device).type


def test_torch_identity(tb):
    assert tb.name == "torch" and tb.device == "cpu" and tb.dtype == torch.float64
    assert "torch" in available_backends()
    assert tb is get_backend("torch", device=torch.device("cpu")) is get_backend(" Torch ", "CPU")
    assert tb != get_backend("numpy") and isinstance(tb, Backend)
    assert get_backend("torch").device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert tb.xp.__name__ == "array_api_compat.torch"
    with pytest.raises(ValueError, match=r"unknown device 'tpu'"):
        get_backend("torch", device="tpu")


def test_numpy_and_torch_agree(tb):
    npb = get_backend("numpy")
    rng = np.random.default_rng(0)
    A = _sym(rng, 5, 6, 6)
    S = np.einsum("nij,nkj->nik", A, A) + 6 * np.eye(6)  # SPD, batched
    b = rng.normal(size=(5, 6))
    B = rng.normal(size=(5, 6, 3))
    x = rng.normal(size=(4, 6))
    T = {k: tb.asarray(v) for k, v in dict(A=A, S=S, b=b, B=B, x=x).items()}

    def agree(t, ref, tol=1e-12):
        _check_tensor(t)
        ref = np.asarray(ref)
        assert t.shape == ref.shape
        assert np.abs(tb.to_numpy(t) - ref).max() <= tol * max(1.0, np.abs(ref).max())

    # eigh: ascending eigenvalues agree; eigenvectors agree up to sign, checked through reconstruction
    w_t, V_t = tb.eigh(T["A"])
    w_n, V_n = npb.eigh(A)
    agree(w_t, w_n)
    assert np.all(np.diff(w_n, axis=-1) >= 0)
    agree(torch.einsum("nij,nj,nkj->nik", V_t, w_t, V_t), A)
    overlap = np.abs(np.einsum("nji,njk->nik", tb.to_numpy(V_t), V_n))
    assert np.abs(overlap - np.eye(6)).max() <= 1e-10  # distinct eigenvalues: same lines
    # solve: batched vectors, a single vector against a batch of matrices, matrix right-hand sides
    agree(tb.solve(T["S"], T["b"]), npb.solve(S, b))
    assert np.abs(npb.solve(S, b)[:, :, None] - np.linalg.solve(S, b[:, :, None])).max() <= 1e-12
    assert np.abs(np.einsum("nij,nj->ni", S, npb.solve(S, b)) - b).max() <= 1e-12
    agree(tb.solve(T["S"], T["b"][0]), npb.solve(S, b[0]))
    assert npb.solve(S, b[0]).shape == (5, 6)
    agree(tb.solve(T["S"], T["B"]), npb.solve(S, B))
    agree(tb.solve(T["S"][0], T["b"][0]), npb.solve(S[0], b[0]))
    # einsum with two and three operands, matmul
    agree(tb.einsum("nij,nj->ni", T["A"], T["b"]), npb.einsum("nij,nj->ni", A, b))
    agree(tb.einsum("n,nij,nj->i", tb.asarray(np.ones(5)), T["A"], T["b"]), npb.einsum("n,nij,nj->i", np.ones(5), A, b))
    agree(tb.matmul(T["A"], T["B"]), npb.matmul(A, B))
    # norms and elementwise functions
    agree(tb.norm(T["x"]), npb.norm(x))
    agree(tb.norm(T["x"], axis=0), npb.norm(x, axis=0))
    agree(tb.norm(T["x"], axis=None), npb.norm(x, axis=None))
    ax = np.abs(x) + 0.1
    tax = tb.asarray(ax)
    for name in ("sqrt", "exp", "log", "log1p", "expm1", "abs"):
        agree(getattr(tb, name)(tax), getattr(npb, name)(ax))
    agree(tb.where(T["x"] > 0, T["x"], 0.0), npb.where(x > 0, x, 0.0))
    agree(tb.where(T["x"] > 0, 1, 0), npb.where(x > 0, 1, 0))
    assert npb.where(x > 0, 1, 0).dtype == np.float64
    agree(tb.maximum(T["x"], 0.0), npb.maximum(x, 0.0))
    agree(tb.stack([T["x"], T["x"]], axis=1), npb.stack([x, x], axis=1))
    agree(tb.zeros((2, 3)), npb.zeros((2, 3)))
    agree(tb.ones(4), npb.ones(4))
    agree(tb.eye(3), npb.eye(3))


def test_log_space_helpers_stay_exact(tb):
    """log1p/expm1 keep tiny arguments exact on both backends (the drivers rely on them for K up to 10⁶)."""
    s = 1e-17
    for be in (get_backend("numpy"), tb):
        v = be.to_numpy(be.expm1(10**6 * be.log1p(be.asarray([-s]))))
        assert v[0] == pytest.approx(-1e-11, rel=1e-12)


def test_tensors_stay_tensors_and_keep_the_graph(tb):
    x = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    assert tb.asarray(x) is x  # already float64 on the device: no copy, graph kept
    y = tb.norm(tb.sqrt(tb.exp(tb.log(tb.abs(tb.asarray(x))))) ** 2) ** 2
    y.backward()
    assert x.grad.tolist() == pytest.approx([2 * 3.0, 2 * 4.0], rel=1e-14)
    f32 = torch.ones(2, dtype=torch.float32)
    _check_tensor(tb.asarray(f32))
    _check_tensor(tb.asarray(np.ones(2)))
    _check_tensor(tb.asarray(2.0))
    _check_tensor(tb.where(np.array([True, False]), 1.0, 2.0))
    assert tb.is_array(tb.zeros(1)) and not tb.is_array(np.zeros(1)) and not get_backend().is_array(tb.zeros(1))
    assert backend_of(tb.zeros(1)) == tb and backend_of(np.zeros(1)).name == "numpy"
    n = tb.to_numpy(tb.asarray([1.0, 2.0]))
    assert isinstance(n, np.ndarray) and n.tolist() == [1.0, 2.0]
    assert get_backend("numpy").asarray(torch.ones(2)).tolist() == [1.0, 1.0]


def test_cuda_unavailable_is_an_error():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here; the unavailable-device error cannot be provoked")
    for dev in ("cuda", "cuda:0", torch.device("cuda")):
        with pytest.raises(ValueError, match=r"CUDA is not available"):
            get_backend("torch", device=dev)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_stay_on_the_gpu():
    be = get_backend("torch", device="cuda")
    rng = np.random.default_rng(1)
    A = _sym(rng, 3, 4, 4) + 10 * np.eye(4)
    b = rng.normal(size=(3, 4))
    tA, tb_ = be.asarray(A), be.asarray(b)
    outs = [
        be.solve(tA, tb_),
        be.eigh(tA)[0],
        be.einsum("nij,nj->ni", tA, tb_),
        be.norm(tb_),
        be.where(tb_ > 0, tb_, 0.0),
        be.maximum(tb_, 0.0),
        be.exp(tb_),
        be.stack([tb_, tb_]),
        be.zeros(3),
    ]
    for out in outs:
        _check_tensor(out, device="cuda")
    assert np.abs(be.to_numpy(outs[0]) - np.linalg.solve(A, b[:, :, None])[:, :, 0]).max() <= 1e-12
    with pytest.raises(ValueError, match=r"CUDA device\(s\) are visible"):
        get_backend("torch", device=f"cuda:{torch.cuda.device_count()}")


def test_cpu_products_without_grad_run_on_numpy_blas_and_with_grad_on_torch(tb):
    """On the CPU a float64 product no gradient flows through is computed by numpy's BLAS on zero-copy views (torch's
    float64 mat-vecs are slower there): the same bits as the numpy backend, still a tensor. With an operand that
    requires grad it stays in torch and differentiates."""
    rng = np.random.default_rng(0)
    a, b, r = rng.normal(size=(7, 1, 5)), rng.normal(size=(7, 5, 9)), rng.normal(size=(7, 5))
    nb = get_backend("numpy")
    out = tb.matmul(tb.asarray(a), tb.asarray(b))
    _check_tensor(out)
    assert out.grad_fn is None and np.array_equal(out.numpy(), nb.matmul(a, b))
    e = tb.einsum("km,kmd->kd", tb.asarray(r), tb.asarray(b))
    _check_tensor(e)
    assert np.array_equal(e.numpy(), nb.einsum("km,kmd->kd", r, b))
    assert tb.host_views(tb.asarray(a), 2.0)[1] == 2.0 and nb.host_views(a)[0] is a
    # with autograd: torch's kernel, and the gradient of Σ (a b) with respect to a is b summed over its columns
    ta = torch.tensor(a, requires_grad=True)
    assert tb.host_views(ta, tb.asarray(b)) is None
    g = tb.matmul(ta, tb.asarray(b))
    assert g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), nb.matmul(a, b), rtol=1e-13, atol=1e-14)
    g.sum().backward()
    np.testing.assert_allclose(ta.grad.numpy(), np.broadcast_to(b.sum(axis=2)[:, None, :], a.shape), rtol=1e-13)


# --------------------------------------------------------------------------------------------
# whole runs: the torch backend on the CPU computes on numpy, unless a gradient flows
# --------------------------------------------------------------------------------------------


def _runs():
    from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation
    from fedtheory.problems.quadratic import make_quadratic

    ls = LeastSquaresFederation.random(5, m=[6, 4, 6, 3, 6], d=9, seed=2)
    return [
        (ls, "fedavg", {"K": 1, "gamma": 0.05}, {}),
        (ls, "fedavg", {"K": 4, "gamma": 0.05}, {"path": "step"}),
        (ls, "scaffold", {"K": 3, "gamma": 0.05}, {"clients_per_round": 3, "seed": 1}),
        (
            LogisticFederation.random(4, m=10, d=3, seed=0),
            "fedavg",
            {"K": 2, "gamma": 0.3},
            {"batch_size": 4, "seed": 2},
        ),
        (make_quadratic(4, 3, mu=1.0, L=5.0, seed=1), "local-update", {"K": 3, "gamma": 0.05, "server": "adam"}, {}),
        (make_quadratic(4, 3, mu=1.0, L=5.0, seed=1), "fedavg", {"K": 50, "gamma": 0.05}, {"path": "spectral"}),
    ]


@pytest.mark.parametrize("case", range(6))
def test_torch_runs_on_the_cpu_compute_on_numpy_and_return_tensors(tb, case, monkeypatch):
    """Without autograd a CPU run is the numpy backend's run, bit for bit, as tensors; with the switch off
    (HOST_RUNS) torch's own kernels run it and agree to rounding (what a GPU runs)."""
    from fedtheory import methods
    import fedtheory.methods.simulate  # noqa: F401 - the module (the package exports the function)

    sim = sys.modules["fedtheory.methods.simulate"]

    fed, name, hyper, kw = _runs()[case]
    x0 = np.linspace(-0.5, 0.5, fed.d)
    a = methods.run(name, fed, x0, 12, **kw, **hyper)
    b = methods.run(name, fed, x0, 12, backend="torch", device="cpu", **kw, **hyper)
    assert isinstance(b.x, torch.Tensor) and b.backend == "torch" and b.device == "cpu" and b.path == a.path
    assert all(isinstance(v, torch.Tensor) for v in b.state.values()) and b.state.keys() == a.state.keys()
    assert np.array_equal(b.x.numpy(), a.x) and np.array_equal(b.oracle_calls, a.oracle_calls)
    assert all(np.array_equal(b.state[v].numpy(), a.state[v]) for v in a.state)
    monkeypatch.setattr(sim, "HOST_RUNS", False)
    c = methods.run(name, fed, x0, 12, backend="torch", device="cpu", **kw, **hyper)
    assert isinstance(c.x, torch.Tensor) and c.path == a.path
    np.testing.assert_allclose(c.x.numpy(), a.x, rtol=1e-12, atol=1e-14)


def test_torch_runs_with_autograd_or_foreign_code_stay_in_torch(tb):
    from fedtheory import methods
    from fedtheory.methods import get
    from fedtheory.methods.ir import Method, ServerMap
    from fedtheory.methods.simulate import _runs_on_host
    from fedtheory.problems.finite_sum import LeastSquaresFederation

    fed = LeastSquaresFederation.random(4, m=5, d=6, seed=0)
    method = get("fedavg", K=2, gamma=0.05)
    x0 = torch.linspace(-0.5, 0.5, 6, dtype=torch.float64, requires_grad=True)
    assert not _runs_on_host(tb, method, fed, x0, None)
    h = methods.run(method, fed, x0, 5, backend="torch", device="cpu")
    assert h.x.grad_fn is not None  # the run stayed in torch: it differentiates in x0
    h.x[-1].sum().backward()
    assert x0.grad is not None and float(x0.grad.abs().sum()) > 0
    ref = methods.run(method, fed, x0.detach().numpy(), 5)
    np.testing.assert_allclose(h.x.detach().numpy(), ref.x, rtol=1e-12, atol=1e-14)
    assert _runs_on_host(tb, method, fed, x0.detach(), None)
    assert not _runs_on_host(tb, method, fed, x0.detach(), {"x": x0})
    assert not _runs_on_host(get_backend("numpy"), method, fed, np.zeros(6), None)

    class UserFederation(LeastSquaresFederation):  # a gradient of its own: torch may be what it computes with
        def batched_grads(self, arrays, X, idx=None, clients=None, *, factor=None):
            return super().batched_grads(arrays, X, idx, clients, factor=factor)

    user = UserFederation([fed.a[i] for i in range(4)], [fed.y[i] for i in range(4)])
    assert not _runs_on_host(tb, method, user, np.zeros(6), None)
    own_rule = ServerMap(("x",), lambda be, scalars, x, q: (x - 0.05 * q,), ("x", "qbar"))
    user_method = Method(
        name="user",
        server=("x",),
        client=(),
        init={"x": "x0"},
        round=method.round[:2] + (own_rule,),
        output="x",
    )
    assert not _runs_on_host(tb, user_method, fed, np.zeros(6), None)


@pytest.mark.parametrize("gpu_rules", [False, True], ids=["cpu-rules", "gpu-rules"])
@pytest.mark.parametrize("K, rounds", [(1, 6), (7, 6), (300, 40)], ids=["K=1", "steps", "summed-operator"])
def test_fedavg_least_squares_kernel_on_device_tensors(tb, K, rounds, gpu_rules, monkeypatch):
    """What a GPU runs, on the CPU: with no host views (as for cuda tensors) FedAvg's least-squares round is
    message_mean_kernel's tensor form — K Gram steps, one product with the summed operator S when the rounds pay
    for it, and with a GPU's rules (launch_bound) S from K = 3 on and the clients' moments at K = 1 — and gives
    numpy's iterates to rounding, on ragged clients; a gradient through x0 still flows."""
    import importlib

    from fedtheory import methods
    from fedtheory.backends.torch_backend import TorchBackend
    from fedtheory.problems import finite_sum
    from fedtheory.problems.finite_sum import LeastSquaresFederation, summed_steps_pay

    monkeypatch.setattr(importlib.import_module("fedtheory.methods.simulate"), "HOST_RUNS", False)
    monkeypatch.setattr(TorchBackend, "host_views", lambda self, *xs: None)
    monkeypatch.setattr(finite_sum, "launch_bound", lambda a: gpu_rules)
    built = []
    tensor_kernel = finite_sum._tensor_mean_kernel
    monkeypatch.setattr(finite_sum, "_tensor_mean_kernel", lambda *a: built.append(a[-2:]) or tensor_kernel(*a))
    fed = LeastSquaresFederation.random(5, [3, 8, 5, 8, 2], 12, seed=4)
    gamma = 0.5 / fed.smoothness()
    ref = methods.run("fedavg", fed, np.ones(12), rounds, K=K, gamma=gamma)
    x0 = torch.ones(12, dtype=torch.float64, requires_grad=True)
    h = methods.run("fedavg", fed, x0, rounds, K=K, gamma=gamma, backend="torch", device="cpu")
    summed = K > 1 and summed_steps_pay(K, rounds, 8)
    assert built == [(summed or (gpu_rules and K > 2), gpu_rules and K == 1)]  # the tensor kernel ran, as chosen
    np.testing.assert_allclose(h.x.detach().numpy(), ref.x, rtol=1e-12, atol=1e-14)
    h.x[-1].sum().backward()
    assert x0.grad is not None and float(x0.grad.abs().sum()) > 0
