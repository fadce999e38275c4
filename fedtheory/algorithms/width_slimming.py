r"""HeteroFL's width slimming (Diao, Ding & Tarokh, *HeteroFL: Computation and Communication Efficient
Federated Learning for Heterogeneous Clients*, ICLR 2021), the baseline FedHM compares against.

A client of width ratio s trains the sub-network that keeps the first round(s·c) units of every hidden
layer (all inputs and all outputs of the network stay); the server averages each parameter over the
clients that hold it and keeps its value where none does. Here a sub-network is a 0/1 *mask* over the
flat parameter vector of a full network: zeroing a hidden unit's incoming weights and bias makes its
ReLU output exactly 0, so the masked full network computes the slim network, and masking the
gradient keeps the dropped coordinates at zero — no second network is built. Clients are batched
(one gradient call per local step for all of them), with the client sampling and mini-batch draws of
:func:`~fedtheory.algorithms.local_update.run_local_update` (draw for draw).

>>> import numpy as np
>>> from fedtheory.models.networks import mlp
>>> net = mlp(4, [8, 8], 3, seed=0)
>>> masks = slimming_masks(net, [1.0, 0.5])
>>> masks.shape, int(masks[0].sum()), int(masks[1].sum())     # full 4·8+8+8·8+8+8·3+3 = 139; slim 4·4+4+4·4+4+4·3+3
((2, 139), 139, 55)
"""

from __future__ import annotations

# the docstring examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from fedtheory.algorithms.clients import ClientLevels, ClientSampler, batch_stream

__all__ = ["slimming_masks", "slim_width", "HeteroFLHistory", "run_heterofl"]


def slim_width(units: int, ratio: float) -> int:
    """round(s·c) units (≥ 1), HeteroFL's slimmed width.

    >>> slim_width(128, 0.35)
    45
    """
    if not 0 < ratio <= 1:
        raise ValueError(f"width ratio must lie in (0, 1], got {ratio}")
    return max(1, int(round(units * ratio)))


def slimming_masks(module: Any, widths: Sequence[float]) -> np.ndarray:
    """(len(widths), d) 0/1 masks of the slimmed sub-networks of a ``torch.nn.Sequential`` of ``Linear``
    and ``Conv2d`` layers (activations, pooling, reshapes and ``Flatten`` in between): the first round(s·c)
    output units (channels) of every layer but the last, and the matching inputs of the next layer.

    >>> from fedtheory.models.networks import digits_cnn
    >>> m = slimming_masks(digits_cnn((4, 8), seed=0), [0.5])
    >>> int(m.sum())            # conv 1→2: 2·9 + 2; conv 2→4: 4·2·9 + 4; linear (4 channels × 4 positions) → 10: 10·16 + 10
    266
    """
    from torch import nn

    layers = [mod for mod in module.modules() if isinstance(mod, (nn.Linear, nn.Conv2d))]
    if not layers:
        raise ValueError("the module has no Linear or Conv2d layer to slim")
    names = {id(p): name for name, p in module.named_parameters()}
    offsets, start = {}, 0
    for name, p in module.named_parameters():
        offsets[name] = (start, tuple(p.shape))
        start += int(p.numel())
    masks = np.zeros((len(widths), start))
    for w_i, ratio in enumerate(widths):
        keep_in = None  # indices of the previous layer's kept outputs, as this layer's input units
        prev_out = None
        for j, layer in enumerate(layers):
            last = j == len(layers) - 1
            out_units = layer.out_features if isinstance(layer, nn.Linear) else layer.out_channels
            in_units = layer.in_features if isinstance(layer, nn.Linear) else layer.in_channels
            keep_out = np.arange(out_units) if last else np.arange(slim_width(out_units, ratio))
            if keep_in is None:
                cols = np.arange(in_units)
            elif isinstance(layer, nn.Linear) and prev_out is not None and in_units != prev_out:
                # a flattened (channels, positions) input: channel c feeds columns c·q … c·q + q − 1
                q = in_units // prev_out
                cols = (keep_in[:, None] * q + np.arange(q)[None, :]).ravel()
            else:
                cols = keep_in
            off, shape = offsets[names[id(layer.weight)]]
            w_mask = np.zeros(shape)
            w_mask[np.ix_(keep_out, cols)] = 1.0
            masks[w_i, off : off + w_mask.size] = w_mask.ravel()
            if layer.bias is not None:
                off_b, shape_b = offsets[names[id(layer.bias)]]
                b_mask = np.zeros(shape_b)
                b_mask[keep_out] = 1.0
                masks[w_i, off_b : off_b + b_mask.size] = b_mask
            keep_in, prev_out = keep_out, out_units
    return masks


@dataclass
class HeteroFLHistory:
    """``x`` (rounds+1, d): server models; ``clients``/``levels`` (rounds, M); ``uploaded``: parameters sent."""

    x: np.ndarray
    clients: np.ndarray
    levels: np.ndarray
    uploaded: np.ndarray


def run_heterofl(
    problem: Any,
    masks: np.ndarray,
    x0: Any,
    rounds: int,
    *,
    local_steps: int,
    lr: float,
    levels: Any = None,
    batch_size: int | None = None,
    clients_per_round: int | None = None,
    client_sampling: str = "with_replacement",
    seed: Any = None,
) -> HeteroFLHistory:
    """HeteroFL: each active client trains its level's masked sub-network for ``local_steps`` SGD steps of
    size ``lr``; the server averages every coordinate over the active clients whose mask holds it.

    ``levels``: one mask index per client (fixed setting), ``"dynamic"`` (uniform per round), or None (all 0).

    >>> from fedtheory.models.networks import mlp
    >>> from fedtheory.models.federation import TorchModelFederation
    >>> from fedtheory.problems.datasets import load_dataset, partition_iid
    >>> X, y = load_dataset("iris")
    >>> parts = partition_iid(150, 4, seed=0)
    >>> net = mlp(4, [16], 3, seed=0)
    >>> fed = TorchModelFederation(net, [X[p] for p in parts], [y[p] for p in parts])
    >>> h = run_heterofl(fed, slimming_masks(net, [1.0, 0.5]), fed.initial_point(), 10, local_steps=5, lr=0.1,
    ...                  levels=[0, 1, 0, 1], batch_size=8, seed=0)
    >>> h.x.shape, int(h.uploaded[0])                # 2 full (131) + 2 half (4·8 + 8 + 8·3 + 3 = 67) models
    ((11, 131), 396)
    """
    from fedtheory.problems.finite_sum import sample_batches

    arrays = problem if isinstance(problem, dict) else problem.on("numpy")
    fs = arrays["problem"]
    n, d = fs.n, fs.d
    masks = np.asarray(masks, dtype=np.float64)
    if masks.ndim != 2 or masks.shape[1] != d:
        raise ValueError(f"masks must be (levels, {d}), got {masks.shape}")
    if int(local_steps) != local_steps or local_steps < 1:
        raise ValueError(f"local_steps must be a positive integer, got {local_steps}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    client_levels = ClientLevels.of(levels, n=n, count=masks.shape[0], seed=seed, what="a mask index")
    sampler = ClientSampler(clients_per_round, client_sampling)
    rng = batch_stream(seed, fs.counts, batch_size)
    p_host = np.asarray(fs.p, dtype=np.float64)
    sizes = masks.sum(axis=1).astype(np.int64)
    w = np.asarray(x0, dtype=np.float64).copy()
    xs, cl, lv, up = [w.copy()], [], [], []
    for _ in range(int(rounds)):
        idx, _ = sampler.draw(rng, p_host)
        batches = (
            None
            if batch_size is None
            else [sample_batches(rng, fs.counts, int(batch_size), idx) for _ in range(local_steps)]
        )
        lev = client_levels.draw(idx)
        mk = masks[lev]
        Wc = w[None, :] * mk
        for k in range(int(local_steps)):
            G = np.asarray(
                fs.batched_grads(arrays, Wc, None if batches is None else batches[k], clients=idx), dtype=np.float64
            )
            Wc = Wc - lr * G * mk
        held = mk.sum(axis=0)
        w = np.where(held > 0, (Wc * mk).sum(axis=0) / np.maximum(held, 1), w)
        xs.append(w.copy())
        cl.append(np.asarray(idx))
        lv.append(np.asarray(lev))
        up.append(int(sizes[lev].sum()))
    return HeteroFLHistory(
        np.stack(xs),
        np.stack(cl) if cl else np.zeros((0, 0), int),
        np.stack(lv) if lv else np.zeros((0, 0), int),
        np.asarray(up, dtype=np.int64),
    )
