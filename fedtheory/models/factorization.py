"""The matrix side of a low-rank factorization (FedHM, Section 2.2): ranks, truncated SVD factors, model shape
alignment, padding, the unrolled convolution — on numpy arrays, or on torch tensors when given them, without ever
importing torch (a tensor exists only once torch is loaded). The concept, its equations and examples:
:mod:`fedtheory.models.low_rank`, which also exposes these names; the torch layers:
:mod:`fedtheory.models.low_rank_layers`.

>>> import numpy as np
>>> U, V = factorize(np.diag([3.0, 2.0, 1.0]), 1)
>>> np.round(recover(U, V), 12).tolist()
[[3.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import math
import sys
from typing import Any, Sequence

import numpy as np

__all__ = [
    "RANK_CONVENTIONS",
    "layer_rank",
    "factorize",
    "recover",
    "eckart_young_error",
    "pad_factors",
    "padded_average",
    "unroll_conv",
    "roll_conv",
    "conv_factor_weights",
]

#: how a rank ratio γ becomes a rank: ``"channels"`` r = ⌊γ·c_out⌋ for a convolution (Tables 5/6:
#: conv_u(c, c·r, 3, 1); this reproduces the model sizes of Tables 2, 3, 7, 8), ``"matrix"``
#: r = ⌊γ·rank(W)⌋ with W the layer's (unrolled) matrix, min(mk, nk) generically (Section 2.2's
#: definition γ = rank(UVᵀ)/rank(W)). For a fully connected layer (k = 1) they agree.
RANK_CONVENTIONS = ("channels", "matrix")


def layer_rank(
    m: int, n: int, ratio: float, *, k: int = 1, convention: str = "channels", out: int | None = None
) -> int:
    """The rank r ≥ 1 of a layer with m inputs, n outputs, k×k filters at rank ratio γ = ``ratio``.

    ``convention`` (see :data:`RANK_CONVENTIONS`): ``"channels"`` gives ⌊γ·out⌋ for a k×k convolution
    (k > 1), ``out`` its output channels (default n; Table 5 writes conv_u(c_in, c_out·γ, 3, 1) for every
    factorized convolution), and ⌊γ·min(m, n)⌋ for k = 1; ``"matrix"`` gives ⌊γ·min(mk, nk)⌋. γ = 1 is
    the full rank of the convention.

    >>> layer_rank(64, 64, 0.125, k=3)                      # Table 5: conv_u(64, 64·r, 3, 1)
    8
    >>> layer_rank(64, 64, 0.125, k=3, convention="matrix")  # Section 2.2: γ·rank(W), W ∈ R^{192×192}
    24
    >>> layer_rank(64, 128, 0.5, k=3)                       # a stage's first convolution: γ·c_out
    64
    >>> layer_rank(128, 10, 0.5)                            # fully connected: γ·min(m, n)
    5
    >>> layer_rank(4, 4, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: rank ratio gamma must lie in (0, 1], got 0.0
    """
    ratio = float(ratio)
    if not (0 < ratio <= 1) or not math.isfinite(ratio):
        raise ValueError(f"rank ratio gamma must lie in (0, 1], got {ratio}")
    if convention not in RANK_CONVENTIONS:
        raise ValueError(f"rank convention must be one of {RANK_CONVENTIONS}, got {convention!r}")
    if min(m, n, k) < 1:
        raise ValueError(f"layer dimensions must be positive, got m={m}, n={n}, k={k}")
    if convention == "matrix":
        full = min(m * k, n * k)
    elif k == 1:  # a fully connected (or 1×1) layer: rank(W) = min(m, n) in both conventions
        full = min(m, n)
    else:
        full = int(out) if out is not None else int(n)
    # a tiny tolerance so 0.3·10 = 2.9999999999999996 still gives 3
    return max(1, int(math.floor(ratio * full + 1e-9)))


def _is_torch(x: Any) -> bool:
    # a tensor exists only once torch is imported: asking never imports it (seconds of start-up)
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _svd(W: Any):
    if _is_torch(W):
        return sys.modules["torch"].linalg.svd(W, full_matrices=False)
    return np.linalg.svd(np.asarray(W, dtype=np.float64), full_matrices=False)


def factorize(W: Any, rank: int) -> tuple[Any, Any]:
    """Spectral factors (U_r Σ_r^{1/2}, V_r Σ_r^{1/2}) of the truncated SVD of ``W`` (m, n).

    Works on a numpy array or a torch tensor (batched over leading axes too). ``rank`` may exceed
    min(m, n): the extra columns are zero (the padding of eq. (12)).

    >>> import numpy as np
    >>> U, V = factorize(np.diag([3.0, 2.0, 1.0]), 2)
    >>> np.round(U @ V.T, 12).tolist()
    [[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]
    """
    rank = int(rank)
    if rank < 1:
        raise ValueError(f"rank must be >= 1, got {rank}")
    Ufull, s, Vh = _svd(W)
    keep = min(rank, s.shape[-1])
    root = s[..., :keep] ** 0.5
    U = Ufull[..., :, :keep] * root[..., None, :]
    V = (
        Vh[..., :keep, :].transpose(-1, -2) * root[..., None, :]
        if _is_torch(W)
        else np.swapaxes(Vh[..., :keep, :], -1, -2) * root[..., None, :]
    )
    if keep < rank:
        U, V = pad_factors(U, V, rank)
    return U, V


def recover(U: Any, V: Any) -> Any:
    """Model shape alignment, eq. (1): W = U Vᵀ (batched over leading axes).

    >>> import numpy as np
    >>> recover(np.ones((2, 1)), np.array([[1.0], [2.0]])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    if _is_torch(U):
        return U @ V.transpose(-1, -2)
    return np.asarray(U) @ np.swapaxes(np.asarray(V), -1, -2)


def eckart_young_error(W: Any, rank: int, *, norm: str = "fro") -> float:
    """min over rank-r matrices M of ‖W − M‖: √(Σ_{i>r} σ_i²) (``"fro"``) or σ_{r+1} (``"spectral"``).

    >>> import numpy as np
    >>> eckart_young_error(np.diag([3.0, 2.0, 1.0]), 1), eckart_young_error(np.diag([3.0, 2.0, 1.0]), 1, norm="spectral")
    (2.23606797749979, 2.0)
    """
    s = np.linalg.svd(np.asarray(W, dtype=np.float64), compute_uv=False)
    tail = s[int(rank) :]
    if norm == "fro":
        return float(np.sqrt(np.sum(tail**2)))
    if norm == "spectral":
        return float(tail[0]) if tail.size else 0.0
    raise ValueError(f"norm must be 'fro' or 'spectral', got {norm!r}")


def pad_factors(U: Any, V: Any, r_max: int) -> tuple[Any, Any]:
    """Eq. (12): append r_max − r zero columns to U (m, r) and V (n, r).

    >>> import numpy as np
    >>> Up, Vp = pad_factors(np.ones((3, 1)), np.ones((2, 1)), 3)
    >>> Up.tolist()
    [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    >>> pad_factors(np.ones((3, 2)), np.ones((2, 2)), 1)
    Traceback (most recent call last):
    ...
    ValueError: cannot pad rank-2 factors to r_max=1 (r_max must be >= the rank)
    """
    r = int(U.shape[-1])
    if int(V.shape[-1]) != r:
        raise ValueError(f"U and V must have the same rank, got {U.shape[-1]} and {V.shape[-1]}")
    if r_max < r:
        raise ValueError(f"cannot pad rank-{r} factors to r_max={r_max} (r_max must be >= the rank)")
    extra = int(r_max) - r
    if extra == 0:
        return U, V
    if _is_torch(U):
        torch = sys.modules["torch"]
        zu = torch.zeros(*U.shape[:-1], extra, dtype=U.dtype, device=U.device)
        zv = torch.zeros(*V.shape[:-1], extra, dtype=V.dtype, device=V.device)
        return torch.cat([U, zu], -1), torch.cat([V, zv], -1)
    zu = np.zeros((*U.shape[:-1], extra))
    zv = np.zeros((*V.shape[:-1], extra))
    return np.concatenate([U, zu], -1), np.concatenate([V, zv], -1)


def padded_average(factors: Sequence[tuple[Any, Any]], weights: Sequence[float] | None = None) -> tuple[Any, Any]:
    """(Σ_p α_p Ũ_p, Σ_p α_p Ṽ_p) of factors of different ranks, zero-padded to the largest (eq. (13)).

    This is the factor-space average h̄ of Appendix B (α_p = 1/P by default), not FedHM's
    aggregation, which averages the recovered weights Σ_p α_p U_pV_pᵀ (eq. (2)).

    >>> import numpy as np
    >>> U, V = padded_average([(np.ones((2, 1)), np.ones((2, 1))), (np.ones((2, 2)), np.ones((2, 2)))])
    >>> U.tolist()
    [[1.0, 0.5], [1.0, 0.5]]
    """
    if not factors:
        raise ValueError("padded_average needs at least one (U, V) pair")
    r_max = max(int(U.shape[-1]) for U, _ in factors)
    P = len(factors)
    w = np.full(P, 1.0 / P) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (P,):
        raise ValueError(f"need one weight per factor pair ({P}), got shape {w.shape}")
    padded = [pad_factors(U, V, r_max) for U, V in factors]
    U = sum(float(a) * Up for a, (Up, _) in zip(w, padded))
    V = sum(float(a) * Vp for a, (_, Vp) in zip(w, padded))
    return U, V


# ---------------------------------------------------------------------------------------------
# convolutions: unrolling (m, n, k, k) to (mk, nk) and the two convolutions of the factors
# ---------------------------------------------------------------------------------------------


def unroll_conv(weight: Any) -> Any:
    """A convolution weight (n, m, k, k) (torch layout) as the matrix W ∈ R^{mk×nk} of Section 2.2,
    W[(i, a), (o, b)] = weight[o, i, a, b]: rows = (input channel, filter row), columns = (output
    channel, filter column).

    >>> import numpy as np
    >>> w = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)
    >>> W = unroll_conv(w)
    >>> W.shape, bool(W[1 * 2 + 0, 1 * 2 + 1] == w[1, 1, 0, 1])
    ((6, 4), True)
    >>> bool(np.array_equal(roll_conv(W, 2, 3, 2), w))
    True
    """
    n, m, kh, kw = weight.shape
    if kh != kw:
        raise ValueError(f"Section 2.2's unrolling needs square k×k filters, got {kh}×{kw}")
    k = kh
    if _is_torch(weight):
        return weight.permute(1, 2, 0, 3).reshape(m * k, n * k)
    return np.ascontiguousarray(np.transpose(np.asarray(weight), (1, 2, 0, 3))).reshape(m * k, n * k)


def roll_conv(W: Any, n: int, m: int, k: int) -> Any:
    """Inverse of :func:`unroll_conv`: the matrix (mk, nk) back to a weight (n, m, k, k)."""
    if tuple(W.shape[-2:]) != (m * k, n * k):
        raise ValueError(f"matrix shape {tuple(W.shape)} is not (mk, nk) = ({m * k}, {n * k})")
    if _is_torch(W):
        return W.reshape(m, k, n, k).permute(2, 0, 1, 3).contiguous()
    return np.ascontiguousarray(np.transpose(np.asarray(W).reshape(m, k, n, k), (2, 0, 1, 3)))


def conv_factor_weights(U: Any, V: Any, m: int, n: int, k: int) -> tuple[Any, Any]:
    """The two convolution weights of factors U (mk, r), V (nk, r): conv_u (r, m, k, 1), a k×1
    convolution m → r, and conv_v (n, r, 1, k), a 1×k convolution r → n (Section 2.2).

    >>> import numpy as np
    >>> cu, cv = conv_factor_weights(np.ones((6, 2)), np.ones((8, 2)), 3, 4, 2)
    >>> cu.shape, cv.shape
    ((2, 3, 2, 1), (4, 2, 1, 2))
    """
    r = int(U.shape[-1])
    if tuple(U.shape) != (m * k, r) or tuple(V.shape) != (n * k, r):
        raise ValueError(
            f"factors must be (mk, r) = ({m * k}, {r}) and (nk, r) = ({n * k}, {r}), "
            f"got {tuple(U.shape)} and {tuple(V.shape)}"
        )
    if _is_torch(U):
        cu = U.reshape(m, k, r).permute(2, 0, 1).unsqueeze(-1).contiguous()
        cv = V.reshape(n, k, r).permute(0, 2, 1).unsqueeze(2).contiguous()
        return cu, cv
    cu = np.transpose(np.asarray(U).reshape(m, k, r), (2, 0, 1))[..., None]
    cv = np.transpose(np.asarray(V).reshape(n, k, r), (0, 2, 1))[:, :, None, :]
    return np.ascontiguousarray(cu), np.ascontiguousarray(cv)
