r"""FedHM (Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank
Factorization*, Algorithms 1–2): heterogeneous clients train low-rank factorized models; the server
recovers and aggregates them into one full-rank model.

The model is a flat parameter vector w ∈ R^d (a linear model's weights, or a torch network's
parameters in ``named_parameters`` order); a :class:`HybridLayout` names the weights FedHM factorizes
(the layers ρ+1, …, L of the [ρ, L, γ] hybrid network of Section 2.2): a weight is a matrix W ∈
R^{m×n} (``"matrix"``: a linear model's vec(W), row-major; ``"linear"``: a torch ``nn.Linear`` weight,
W = weightᵀ; ``"conv"``: a torch ``nn.Conv2d`` weight unrolled to (mk, nk)). One round (Algorithm 1;
Algorithm 2 is the case E SGD steps, τ = ∞, full participation):

1. the server factorizes w_t for every rank ratio γ_i: each factorized layer's truncated SVD gives
   (U√Σ_r, V√Σ_r) at r = r(γ_i) (spectral initialization, eq. (18));
2. each active client p takes the hybrid network of its level γ_p and runs E SGD steps on its
   factors (eq. (10): ∂/∂U = ∇_W F · V, ∂/∂V = ∇_W Fᵀ · U, plus the Frobenius decay λ/2‖UVᵀ‖²_F)
   and on its dense weights;
3. the server recovers W_p = U_pV_pᵀ (model shape alignment, eq. (1)) and aggregates
   w_{t+1} = Σ_p α_p w_p with α_p = softmax(γ_p/τ) (eq. (2); τ = ∞ is the plain average).

Clients are batched: every client's factors are zero-padded to the largest rank of the layer
(eq. (12) of Appendix B, which changes neither UVᵀ nor the SGD iterates), so a step is one batched
gradient call and a few batched matrix products — no Python loop over clients. Gradients come from
the federation (the finite-sum protocol of :mod:`fedtheory.problems.finite_sum`: least squares,
logistic regression, or a torch network through
:class:`~fedtheory.models.federation.TorchModelFederation`); the factor and server arithmetic is numpy.

A rank ratio γ = 1 is the *dense* (unfactorized) network by default — the paper's experiments use
the original model as the largest (Tables 2–3: 11.17M = ResNet-18) — so FedHM with every client at
γ = 1 is FedAvg (checked iterate for iterate in ``verify/fedhm.py``). ``dense_full_rank=False``
instead factorizes at full rank (the setting of Appendix B's analysis).

Randomness follows :func:`~fedtheory.algorithms.local_update.run_local_update` draw for draw (the
client sample of a round, then its E mini-batches), so the two drivers see the same data stream;
the dynamic setting's per-round levels come from a separate stream.

>>> import numpy as np
>>> from fedtheory.problems.finite_sum import LogisticFederation
>>> fed = LogisticFederation.random(n=4, m=30, d=12, seed=0)
>>> layout = HybridLayout.matrix(3, 4)                       # w = vec(W), W ∈ R^{3×4}
>>> algo = FedHM(ratios=(1.0, 0.5), local_steps=5, lr=0.5)
>>> h = run_fedhm(fed, layout, algo, np.zeros(12) + 0.1, rounds=20, levels=[0, 0, 1, 1], batch_size=5, seed=0)
>>> h.x.shape, bool(h.loss[-1] < h.loss[0])
((21, 12), True)
>>> [algo.level_params(layout, i) for i in range(2)]        # dense 12; rank ⌊0.5·3⌋ = 1: 1·(3 + 4)
[12, 7]
"""

from __future__ import annotations

# the docstring examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from fedtheory.algorithms.clients import ClientLevels, ClientSampler, batch_stream
from fedtheory.models.low_rank import RANK_CONVENTIONS, layer_rank
from fedtheory.validation import check_rounds

__all__ = [
    "LAYER_KINDS",
    "FactorizedLayer",
    "HybridLayout",
    "FactorSpace",
    "FedHM",
    "FedHMHistory",
    "run_fedhm",
    "softmax_weights",
    "server_factors",
    "truncated_model",
]

LAYER_KINDS = ("matrix", "linear", "conv")


# --------------------------------------------------------------------------------------------
# where the factorized weights live in the flat parameter vector
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactorizedLayer:
    """One factorized weight: ``size`` entries of w from ``offset``, stored with ``shape``.

    ``kind``: ``"matrix"`` (shape (m, n), row-major), ``"linear"`` (torch (out, in): W = weightᵀ ∈
    R^{in×out}), ``"conv"`` (torch (out, in, k, k): W ∈ R^{in·k×out·k}, Section 2.2's unrolling).

    >>> layer = FactorizedLayer("c", 0, (4, 2, 3, 3), "conv")
    >>> (layer.m, layer.n, layer.k), layer.rank(0.5), layer.rank(0.5, "matrix")
    ((6, 12, 3), 2, 3)
    >>> w = np.arange(72.0)
    >>> bool(np.array_equal(layer.from_matrix(layer.to_matrix(w)), w))
    True
    """

    name: str
    offset: int
    shape: tuple
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in LAYER_KINDS:
            raise ValueError(f"layer kind must be one of {LAYER_KINDS}, got {self.kind!r}")
        want = {"matrix": 2, "linear": 2, "conv": 4}[self.kind]
        if len(self.shape) != want:
            raise ValueError(f"a {self.kind} layer needs a {want}-d shape, got {self.shape}")
        if self.kind == "conv" and self.shape[2] != self.shape[3]:
            raise ValueError(f"conv layer {self.name}: Section 2.2 unrolls square k×k filters, got {self.shape}")
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def k(self) -> int:
        return self.shape[2] if self.kind == "conv" else 1

    @property
    def c_in(self) -> int:
        return {"matrix": self.shape[0], "linear": self.shape[1], "conv": self.shape[1]}[self.kind]

    @property
    def c_out(self) -> int:
        return {"matrix": self.shape[1], "linear": self.shape[0], "conv": self.shape[0]}[self.kind]

    @property
    def m(self) -> int:
        """Rows of the layer's matrix (inputs × k)."""
        return self.c_in * self.k

    @property
    def n(self) -> int:
        """Columns of the layer's matrix (outputs × k)."""
        return self.c_out * self.k

    def rank(self, ratio: float, convention: str = "channels") -> int:
        """r(γ) of :func:`~fedtheory.models.low_rank.layer_rank` for this layer."""
        return layer_rank(self.c_in, self.c_out, ratio, k=self.k, convention=convention)

    def to_matrix(self, flat: np.ndarray) -> np.ndarray:
        """The layer's matrix (..., m, n) from flat vectors (..., d)."""
        seg = flat[..., self.offset : self.offset + self.size]
        lead = seg.shape[:-1]
        if self.kind == "matrix":
            return seg.reshape(*lead, self.m, self.n)
        if self.kind == "linear":
            return np.swapaxes(seg.reshape(*lead, self.c_out, self.c_in), -1, -2)
        k = self.k
        w = seg.reshape(*lead, self.c_out, self.c_in, k, k)
        nd = len(lead)
        perm = tuple(range(nd)) + (nd + 1, nd + 2, nd, nd + 3)  # (..., in, k_h, out, k_w)
        return np.transpose(w, perm).reshape(*lead, self.m, self.n)

    def from_matrix(self, W: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`to_matrix`: (..., m, n) → the layer's flat entries (..., size)."""
        lead = W.shape[:-2]
        if self.kind == "matrix":
            return W.reshape(*lead, self.size)
        if self.kind == "linear":
            return np.swapaxes(W, -1, -2).reshape(*lead, self.size)
        k = self.k
        nd = len(lead)
        w = W.reshape(*lead, self.c_in, k, self.c_out, k)
        perm = tuple(range(nd)) + (nd + 2, nd, nd + 1, nd + 3)  # back to (..., out, in, k_h, k_w)
        return np.ascontiguousarray(np.transpose(w, perm)).reshape(*lead, self.size)


@dataclass(frozen=True)
class HybridLayout:
    """The weights of a d-dimensional parameter vector that FedHM factorizes (the rest stays dense).

    >>> HybridLayout.matrix(3, 4, offset=1, d=13).dense_mask().sum()   # one dense coordinate (a bias)
    np.int64(1)
    """

    d: int
    layers: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        taken = np.zeros(int(self.d), dtype=bool)
        for layer in self.layers:
            if layer.offset < 0 or layer.offset + layer.size > self.d:
                raise ValueError(
                    f"layer {layer.name} [{layer.offset}, {layer.offset + layer.size}) is outside R^{self.d}"
                )
            if taken[layer.offset : layer.offset + layer.size].any():
                raise ValueError(f"layer {layer.name} overlaps another factorized layer")
            taken[layer.offset : layer.offset + layer.size] = True

    @classmethod
    def matrix(cls, m: int, n: int, *, offset: int = 0, d: int | None = None, name: str = "W") -> "HybridLayout":
        """A linear model whose coordinates offset … offset+mn−1 are vec(W), W ∈ R^{m×n} row-major."""
        d = offset + m * n if d is None else int(d)
        return cls(d, (FactorizedLayer(name, int(offset), (int(m), int(n)), "matrix"),))

    @classmethod
    def from_module(cls, module: Any, *, rho: int = 1, keep_last_dense: bool = True) -> "HybridLayout":
        """The [ρ, L, γ] hybrid layout of a torch network: its ``nn.Linear``/``nn.Conv2d`` weights in
        module order, the first ``rho`` left dense, the last (the classifier) dense when
        ``keep_last_dense`` (as the paper's ResNets keep their FC layer); offsets follow
        ``named_parameters`` (the order of ``parameters_to_vector`` and TorchModelFederation).

        >>> from fedtheory.models.networks import mlp
        >>> lay = HybridLayout.from_module(mlp(64, [32, 32], 10), rho=1)
        >>> [(l.name, l.kind, l.m, l.n) for l in lay.layers]
        [('2.weight', 'linear', 32, 32)]
        """
        from torch import nn

        offsets, start = {}, 0
        for name, p in module.named_parameters():
            offsets[name] = (start, tuple(p.shape))
            start += int(p.numel())
        weights = []
        for mod_name, mod in module.named_modules():
            if isinstance(mod, (nn.Linear, nn.Conv2d)):
                key = f"{mod_name}.weight" if mod_name else "weight"
                kind = "linear" if isinstance(mod, nn.Linear) else "conv"
                if isinstance(mod, nn.Conv2d) and (mod.groups != 1 or mod.kernel_size[0] != mod.kernel_size[1]):
                    continue  # grouped or non-square convolutions are not factorized (Section 2.2)
                weights.append(FactorizedLayer(key, offsets[key][0], offsets[key][1], kind))
        if rho < 0:
            raise ValueError(f"rho must be >= 0, got {rho}")
        chosen = weights[rho : len(weights) - 1 if keep_last_dense else len(weights)]
        return cls(start, tuple(chosen))

    def dense_mask(self) -> np.ndarray:
        """(d,) bool: True for the coordinates outside every factorized layer."""
        mask = np.ones(self.d, dtype=bool)
        for layer in self.layers:
            mask[layer.offset : layer.offset + layer.size] = False
        return mask


# --------------------------------------------------------------------------------------------
# the algorithm as data
# --------------------------------------------------------------------------------------------


def softmax_weights(gammas: Any, tau: float) -> np.ndarray:
    """Eq. (2): α_p = exp(γ_p/τ) / Σ_q exp(γ_q/τ); τ = ∞ gives 1/P.

    >>> softmax_weights([1.0, 0.5], float("inf")).tolist()
    [0.5, 0.5]
    >>> [round(a, 4) for a in softmax_weights([1.0, 0.5], 5.0).tolist()]
    [0.525, 0.475]
    """
    g = np.asarray(gammas, dtype=np.float64).ravel()
    if g.size == 0:
        raise ValueError("softmax_weights needs at least one client")
    tau = float(tau)
    if not tau > 0:
        raise ValueError(f"softmax temperature tau must be > 0, got {tau}")
    if math.isinf(tau):
        return np.full(g.size, 1.0 / g.size)
    z = g / tau
    e = np.exp(z - z.max())
    return e / e.sum()


@dataclass(frozen=True)
class FedHM:
    """FedHM's hyperparameters (Algorithm 1).

    ``ratios``: the rank ratios {γ_i} (a client's *level* indexes them); ``local_steps`` E: SGD steps
    per round (Algorithm 2's E; Algorithm 1's local epochs × batches); ``lr`` η; ``tau``: softmax
    temperature of eq. (2) (∞: plain average; the paper uses 5 in the dynamic setting, ∞ in the
    fixed one); ``frobenius_decay`` λ of λ/2‖UVᵀ‖²_F on factorized layers; ``convention``: how γ
    becomes a rank (:data:`~fedtheory.models.low_rank.RANK_CONVENTIONS`); ``dense_full_rank``: γ = 1
    is the unfactorized network (True, the experiments) or full-rank factors (False, Appendix B).

    >>> FedHM(ratios=(1.0, 0.25), local_steps=2, lr=0.1).ratios
    (1.0, 0.25)
    >>> FedHM(ratios=(1.5,), local_steps=2, lr=0.1)
    Traceback (most recent call last):
    ...
    ValueError: rank ratios must lie in (0, 1], got (1.5,)
    """

    ratios: tuple
    local_steps: int
    lr: float
    tau: float = math.inf
    frobenius_decay: float = 0.0
    convention: str = "channels"
    dense_full_rank: bool = True

    def __post_init__(self) -> None:
        ratios = tuple(float(g) for g in np.atleast_1d(self.ratios))
        if not ratios or any(not (0 < g <= 1) for g in ratios):
            raise ValueError(f"rank ratios must lie in (0, 1], got {ratios}")
        object.__setattr__(self, "ratios", ratios)
        if isinstance(self.local_steps, bool) or int(self.local_steps) != self.local_steps or self.local_steps < 1:
            raise ValueError(f"local_steps E must be a positive integer, got {self.local_steps!r}")
        object.__setattr__(self, "local_steps", int(self.local_steps))
        lr = float(self.lr)
        if not (lr > 0 and math.isfinite(lr)):
            raise ValueError(f"learning rate must be > 0, got {self.lr}")
        object.__setattr__(self, "lr", lr)
        if not float(self.tau) > 0:
            raise ValueError(f"softmax temperature tau must be > 0, got {self.tau}")
        lam = float(self.frobenius_decay)
        if not (lam >= 0 and math.isfinite(lam)):
            raise ValueError(f"frobenius_decay must be >= 0, got {self.frobenius_decay}")
        object.__setattr__(self, "frobenius_decay", lam)
        if self.convention not in RANK_CONVENTIONS:
            raise ValueError(f"convention must be one of {RANK_CONVENTIONS}, got {self.convention!r}")

    def is_dense(self, level: int) -> bool:
        """Whether level ``level`` trains the unfactorized network."""
        return self.dense_full_rank and self.ratios[level] == 1.0

    def ranks(self, layout: HybridLayout, level: int) -> list[int | None]:
        """Per factorized layer, the rank of ``level`` (None: dense)."""
        if self.is_dense(level):
            return [None] * len(layout.layers)
        return [layer.rank(self.ratios[level], self.convention) for layer in layout.layers]

    def level_params(self, layout: HybridLayout, level: int) -> int:
        """Trainable parameters of ``level``'s hybrid model: dense entries + Σ r(m + n) (Table 1)."""
        total = int(layout.dense_mask().sum())
        for layer, r in zip(layout.layers, self.ranks(layout, level)):
            total += layer.size if r is None else r * (layer.m + layer.n)
        return total


# --------------------------------------------------------------------------------------------
# the server's factorization and the client-size models
# --------------------------------------------------------------------------------------------


def _svd(W: np.ndarray):
    return np.linalg.svd(W, full_matrices=False)


def server_factors(
    w: np.ndarray,
    layout: HybridLayout,
    ranks: Sequence[int | None],
    pad_to: Sequence[int] | None = None,
    svds: list | None = None,
) -> list:
    """Per factorized layer, (U√Σ_r, V√Σ_r) of w's layer matrix at rank r, zero-padded to ``pad_to``
    (None where the rank is None: the layer stays dense). ``svds``: precomputed SVDs of the layers.

    >>> lay = HybridLayout.matrix(2, 2)
    >>> U, V = server_factors(np.array([3.0, 0.0, 0.0, 1.0]), lay, [1], pad_to=[2])[0]
    >>> (U @ V.T).round(12).tolist()
    [[3.0, 0.0], [0.0, 0.0]]
    """
    out: list[tuple[np.ndarray, np.ndarray] | None] = []
    for i, (layer, r) in enumerate(zip(layout.layers, ranks)):
        if r is None:
            out.append(None)
            continue
        Uf, s, Vh = svds[i] if svds is not None else _svd(layer.to_matrix(w))
        keep = min(int(r), s.size)
        root = np.sqrt(s[:keep])
        R = int(pad_to[i]) if pad_to is not None else int(r)
        U = np.zeros((layer.m, R))
        V = np.zeros((layer.n, R))
        U[:, :keep] = Uf[:, :keep] * root
        V[:, :keep] = Vh[:keep].T * root
        out.append((U, V))
    return out


def truncated_model(w: np.ndarray, layout: HybridLayout, ranks: Sequence[int | None]) -> np.ndarray:
    """w with every factorized layer replaced by its rank-r truncation (the model a level-γ client
    receives, recovered: w(y) of Appendix B).

    >>> truncated_model(np.array([3.0, 0.0, 0.0, 1.0]), HybridLayout.matrix(2, 2), [1]).round(12).tolist()
    [3.0, 0.0, 0.0, 0.0]
    """
    w = np.array(w, dtype=np.float64)
    for layer, fac in zip(layout.layers, server_factors(w, layout, ranks)):
        if fac is not None:
            w[..., layer.offset : layer.offset + layer.size] = layer.from_matrix(fac[0] @ fac[1].T)
    return w


@dataclass(frozen=True)
class FactorSpace:
    """Appendix B's factorized space: h = (the dense entries of w, then vec U_ℓ (m × r_max,ℓ) and vec V_ℓ
    (n × r_max,ℓ) for every factorized layer ℓ), with w(h) = (dense entries, U_ℓV_ℓᵀ) and
    ∇g(h) = (∇_dense f, ∇_ℓ f · V_ℓ, ∇_ℓ fᵀ · U_ℓ) (eq. (10)) for g(h) = f(w(h)) (eq. (7)).

    >>> space = FactorSpace(HybridLayout.matrix(2, 2, offset=1, d=5), (1,))
    >>> h = np.array([7.0, 1.0, 2.0, 3.0, 4.0])               # dense 7; U = (1, 2)ᵀ, V = (3, 4)ᵀ
    >>> space.dim, space.w(h).tolist()
    (5, [7.0, 3.0, 4.0, 6.0, 8.0])
    >>> space.grad(h, np.array([1.0, 1.0, 0.0, 0.0, 0.0])).tolist()   # ∇_W f = [[1, 0], [0, 0]]
    [1.0, 3.0, 0.0, 1.0, 0.0]
    """

    layout: HybridLayout
    r_max: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "r_max", tuple(int(r) for r in self.r_max))
        if len(self.r_max) != len(self.layout.layers):
            raise ValueError(f"need one r_max per factorized layer ({len(self.layout.layers)}), got {len(self.r_max)}")

    @property
    def dense_index(self) -> np.ndarray:
        return np.flatnonzero(self.layout.dense_mask())

    def slices(self) -> list[tuple[slice, slice]]:
        """Per factorized layer, the slices of vec U and vec V in h."""
        out, start = [], self.dense_index.size
        for layer, r in zip(self.layout.layers, self.r_max):
            su = slice(start, start + layer.m * r)
            sv = slice(su.stop, su.stop + layer.n * r)
            out.append((su, sv))
            start = sv.stop
        return out

    @property
    def dim(self) -> int:
        return self.dense_index.size + sum((layer.m + layer.n) * r for layer, r in zip(self.layout.layers, self.r_max))

    def factors(self, h: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per layer (U (..., m, r_max), V (..., n, r_max)) of h (..., dim)."""
        lead = h.shape[:-1]
        return [
            (h[..., su].reshape(*lead, layer.m, r), h[..., sv].reshape(*lead, layer.n, r))
            for layer, r, (su, sv) in zip(self.layout.layers, self.r_max, self.slices())
        ]

    def w(self, h: np.ndarray) -> np.ndarray:
        """w(h) (..., d): model shape alignment, eq. (1)."""
        h = np.asarray(h, dtype=np.float64)
        w = np.zeros((*h.shape[:-1], self.layout.d))
        w[..., self.dense_index] = h[..., : self.dense_index.size]
        for layer, (U, V) in zip(self.layout.layers, self.factors(h)):
            w[..., layer.offset : layer.offset + layer.size] = layer.from_matrix(U @ np.swapaxes(V, -1, -2))
        return w

    def grad(self, h: np.ndarray, grad_w: np.ndarray) -> np.ndarray:
        """∇_h of f(w(h)) from ∇_w f at w(h) (both (..., ·)): eq. (10)."""
        h = np.asarray(h, dtype=np.float64)
        out = np.zeros_like(h)
        out[..., : self.dense_index.size] = grad_w[..., self.dense_index]
        for layer, (U, V), (su, sv) in zip(self.layout.layers, self.factors(h), self.slices()):
            G = layer.to_matrix(grad_w)
            lead = h.shape[:-1]
            out[..., su] = (G @ V).reshape(*lead, -1)
            out[..., sv] = (np.swapaxes(G, -1, -2) @ U).reshape(*lead, -1)
        return out

    def spectral(self, w: np.ndarray, ranks: Sequence[int]) -> np.ndarray:
        """y = (dense entries, U√Σ_r, V√Σ_r padded to r_max) of w at per-layer ``ranks`` (eq. (18));
        ``ranks`` may be the full rank min(m, n) (h̄_0 of Appendix B)."""
        w = np.asarray(w, dtype=np.float64)
        h = np.zeros(self.dim)
        h[: self.dense_index.size] = w[self.dense_index]
        pads = [max(int(r), rm) for r, rm in zip(ranks, self.r_max)]
        if any(p > rm for p, rm in zip(pads, self.r_max)):
            raise ValueError(f"ranks {list(ranks)} exceed this space's r_max {list(self.r_max)}")
        for (su, sv), fac in zip(self.slices(), server_factors(w, self.layout, ranks, self.r_max)):
            h[su] = fac[0].ravel()
            h[sv] = fac[1].ravel()
        return h

    def factor_norms(self, h: np.ndarray) -> np.ndarray:
        """(..., layers, 2): ‖U_ℓ‖_F and ‖V_ℓ‖_F (Assumption 4)."""
        return np.stack(
            [
                np.stack([np.linalg.norm(U, axis=(-2, -1)), np.linalg.norm(V, axis=(-2, -1))], -1)
                for U, V in self.factors(h)
            ],
            -2,
        )


# --------------------------------------------------------------------------------------------
# history and driver
# --------------------------------------------------------------------------------------------


@dataclass
class FedHMHistory:
    """Per-round record of a FedHM run (index 0 = w_0).

    ``x`` (rounds+1, d): server models w_t; ``loss``/``grad_norm``: f(w_t), ‖∇f(w_t)‖;
    ``clients`` and ``levels`` (rounds, M): who took part and at which level; ``weights`` (rounds, M):
    α_p of eq. (2); ``uploaded`` (rounds,): parameters the active clients sent (Σ_p size of its model);
    ``trace``: with ``trace=True``, Appendix B's sequences (see :func:`run_fedhm`).
    """

    x: np.ndarray
    loss: np.ndarray
    grad_norm: np.ndarray
    clients: np.ndarray
    levels: np.ndarray
    weights: np.ndarray
    uploaded: np.ndarray
    algo: FedHM
    layout: HybridLayout
    trace: dict | None = field(default=None, repr=False)

    @property
    def rounds(self) -> int:
        return int(self.x.shape[0]) - 1


def _problem_arrays(problem: Any) -> dict:
    return problem if isinstance(problem, dict) else problem.on("numpy")


def run_fedhm(
    problem: Any,
    layout: HybridLayout,
    algo: FedHM,
    x0: Any,
    rounds: int,
    *,
    levels: Any = None,
    batch_size: int | None = None,
    clients_per_round: int | None = None,
    client_sampling: str = "with_replacement",
    seed: Any = None,
    trace: bool = False,
    evaluate: bool = True,
) -> FedHMHistory:
    """Run ``rounds`` rounds of FedHM from the server model ``x0`` (d,).

    ``problem``: a finite-sum federation (least squares, logistic, or a torch network's
    :class:`~fedtheory.models.federation.TorchModelFederation`); ``layout``: its factorized weights.
    ``levels``: the fixed heterogeneous setting — one level (index into ``algo.ratios``) per client
    (length n) — or ``"dynamic"``: every active client draws its level uniformly each round (the
    dynamic setting of Section 4.1); default: every client at level 0. ``batch_size`` B (None: full
    local loss), ``clients_per_round`` M and ``client_sampling`` as in
    :func:`~fedtheory.algorithms.local_update.run_local_update`; ``seed`` drives every draw.

    ``trace=True`` (every level factorized; needs ``dense_full_rank=False`` or no γ = 1) records
    Appendix B's sequences in the factor space h = (dense entries, vec U, vec V per layer, zero-padded
    to the layer's largest rank r_max,ℓ): per global step t = 0, …, T−1 (T = rounds·E) ``h`` (T, M, dim):
    the point each client's gradient is taken at (y_{p,t} when t mod E = 0, else h_{p,t}), ``G``
    (T, M, dim): the stochastic gradients of eq. (11), ``h_end`` (rounds, M, dim): h_{p,t} at the end of
    each round (before the server step); and ``space``, the :class:`FactorSpace` of h.
    ``evaluate=False`` skips f(w_t) and ‖∇f(w_t)‖ (NaN), which cost a full pass over the data per round.
    """
    rounds = check_rounds(rounds)
    if not isinstance(algo, FedHM):
        raise ValueError(f"algo must be a FedHM, got {type(algo).__name__}")
    arrays = _problem_arrays(problem)
    fs = arrays["problem"]
    n, d = fs.n, fs.d
    if layout.d != d:
        raise ValueError(f"layout is for R^{layout.d}, the problem's parameters are R^{d}")
    x0 = np.asarray(x0, dtype=np.float64)
    if x0.shape != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {x0.shape}")
    n_levels = len(algo.ratios)
    client_levels = ClientLevels.of(levels, n=n, count=n_levels, seed=seed)
    sampler = ClientSampler(clients_per_round, client_sampling)
    p_host = np.asarray(fs.p, dtype=np.float64)
    from fedtheory.problems.finite_sum import sample_batches

    rng = batch_stream(seed, fs.counts, batch_size)
    if sampler.M is not None and sampler.scheme == "without_replacement" and sampler.M > n:
        raise ValueError(f"clients_per_round M={sampler.M} exceeds the n={n} clients (sampling without replacement)")

    level_ranks = [algo.ranks(layout, i) for i in range(n_levels)]
    n_layers = len(layout.layers)
    # r_max,ℓ over the factorized levels (eq. (12)); 0 when no level factorizes the layer
    r_max = [max([r for lr in level_ranks if (r := lr[j]) is not None], default=0) for j in range(n_layers)]
    level_size = np.array([algo.level_params(layout, i) for i in range(n_levels)])
    if trace and any(algo.is_dense(i) for i in range(n_levels)):
        raise ValueError("trace needs every level factorized (Appendix B): use dense_full_rank=False or ratios < 1")
    space = FactorSpace(layout, tuple(r_max))
    dense_index, slices, dim_h = space.dense_index, space.slices(), space.dim

    E, eta, lam = algo.local_steps, algo.lr, algo.frobenius_decay
    xs = [x0]
    log_clients, log_levels, log_weights, uploaded = [], [], [], []
    tr_h, tr_G, tr_end = [], [], []
    w = x0
    for t in range(rounds):
        idx, _ = sampler.draw(rng, p_host)
        M = len(idx)
        batches = (
            None if batch_size is None else [sample_batches(rng, fs.counts, int(batch_size), idx) for _ in range(E)]
        )
        lev = client_levels.draw(idx)
        # server: one SVD per factorized layer, truncated per level, padded to r_max
        svds = [_svd(layer.to_matrix(w)) for layer in layout.layers]
        per_level = [
            server_factors(w, layout, level_ranks[i], r_max, svds) if not algo.is_dense(i) else None
            for i in range(n_levels)
        ]
        Wc = np.repeat(w[None, :], M, axis=0)
        U, V, fact = [], [], []
        for j, layer in enumerate(layout.layers):
            Uj = np.zeros((M, layer.m, r_max[j]))
            Vj = np.zeros((M, layer.n, r_max[j]))
            fj = np.zeros(M, dtype=bool)
            for i in range(n_levels):
                sel, factors = lev == i, per_level[i]
                if not sel.any() or factors is None or factors[j] is None:
                    continue
                Uj[sel], Vj[sel], fj[sel] = factors[j][0], factors[j][1], True
            if fj.any():  # the client receives y: its layer is U Vᵀ (the truncation), not w's layer
                Wc[fj, layer.offset : layer.offset + layer.size] = layer.from_matrix(Uj[fj] @ np.swapaxes(Vj[fj], 1, 2))
            U.append(Uj)
            V.append(Vj)
            fact.append(fj)
        for k in range(E):
            G = np.asarray(
                fs.batched_grads(arrays, Wc, None if batches is None else batches[k], clients=idx), dtype=np.float64
            )
            W_next = Wc - eta * G
            if trace:
                h_now = np.zeros((M, dim_h))
                g_now = np.zeros((M, dim_h))
                h_now[:, : dense_index.size] = Wc[:, dense_index]
                g_now[:, : dense_index.size] = G[:, dense_index]
            for j, layer in enumerate(layout.layers):
                fj = fact[j]
                if not fj.any():
                    continue
                Gm = layer.to_matrix(G[fj])
                if lam:
                    Gm = Gm + lam * layer.to_matrix(Wc[fj])  # ∇ of λ/2‖UVᵀ‖²_F w.r.t. W
                Uj, Vj = U[j][fj], V[j][fj]
                gU = Gm @ Vj  # eq. (10)
                gV = np.swapaxes(Gm, 1, 2) @ Uj
                if trace:
                    su, sv = slices[j]
                    h_now[fj, su] = Uj.reshape(fj.sum(), -1)
                    h_now[fj, sv] = Vj.reshape(fj.sum(), -1)
                    g_now[fj, su] = gU.reshape(fj.sum(), -1)
                    g_now[fj, sv] = gV.reshape(fj.sum(), -1)
                U[j][fj] = Uj - eta * gU
                V[j][fj] = Vj - eta * gV
                W_next[fj, layer.offset : layer.offset + layer.size] = layer.from_matrix(
                    U[j][fj] @ np.swapaxes(V[j][fj], 1, 2)
                )
            if trace:
                tr_h.append(h_now)
                tr_G.append(g_now)
            Wc = W_next
        if trace:
            h_end = np.zeros((M, dim_h))
            h_end[:, : dense_index.size] = Wc[:, dense_index]
            for j in range(n_layers):
                su, sv = slices[j]
                h_end[:, su] = U[j].reshape(M, -1)
                h_end[:, sv] = V[j].reshape(M, -1)
            tr_end.append(h_end)
        alpha = softmax_weights(np.asarray(algo.ratios)[lev], algo.tau)
        w = alpha @ Wc  # eqs. (1)–(2): recovered models, averaged
        xs.append(w)
        log_clients.append(np.asarray(idx))
        log_levels.append(np.asarray(lev))
        log_weights.append(alpha)
        uploaded.append(int(level_size[lev].sum()))
    X = np.stack(xs)
    if evaluate:
        loss, grad_norm = fs.loss_and_grad_norm(arrays, X)
    else:
        loss = grad_norm = np.full(X.shape[0], np.nan)
    tr = None
    if trace:
        tr = {
            "h": np.stack(tr_h) if tr_h else np.zeros((0, 0, dim_h)),
            "G": np.stack(tr_G) if tr_G else np.zeros((0, 0, dim_h)),
            "h_end": np.stack(tr_end) if tr_end else np.zeros((0, 0, dim_h)),
            "space": space,
            "E": E,
        }
    empty = np.zeros((0, 0), dtype=np.int64)
    return FedHMHistory(
        x=X,
        loss=np.asarray(loss, dtype=np.float64),
        grad_norm=np.asarray(grad_norm, dtype=np.float64),
        clients=np.stack(log_clients) if log_clients else empty,
        levels=np.stack(log_levels) if log_levels else empty,
        weights=np.stack(log_weights) if log_weights else np.zeros((0, 0)),
        uploaded=np.asarray(uploaded, dtype=np.int64),
        algo=algo,
        layout=layout,
        trace=tr,
    )
