r"""Low-rank factorization of fully connected and convolutional layers (FedHM, Section 2.2).

Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank
Factorization*. A layer's weight is a matrix W ∈ R^{m×n} (a fully connected layer
computes x W, x ∈ R^m); a convolution with m input channels, n output channels and k×k filters is
*unrolled* to the matrix W ∈ R^{mk×nk}, W[(i, a), (o, b)] = weight[o, i, a, b] (torch's (out, in, kh, kw)
layout). The truncated SVD W ≈ U Vᵀ with U = U_r Σ_r^{1/2} ∈ R^{m×r}, V = V_r Σ_r^{1/2} ∈ R^{n×r}
(the *spectral initialization*, eq. (18) of Appendix B) is the best rank-r approximation
(Eckart–Young): ‖W − UVᵀ‖_F² = Σ_{i>r} σ_i². For a convolution, U reshapes to a k×1 convolution
m → r and Vᵀ to a 1×k convolution r → n; their composition is the k×k convolution with weight UVᵀ
(exactly, for any stride and padding applied along the matching axis).

*Model shape alignment* (eq. (1)) recovers W = UVᵀ; clients of different ranks are aggregated in the
weight space, or — as in the analysis of Appendix B, eq. (12) — their factors are padded with zero
columns to a common rank r_max, which changes neither UVᵀ nor the SGD iterates.

This module is the one place to import from: the matrix functions live in :mod:`fedtheory.models.factorization`
(no torch needed), the torch layers (:class:`LowRankLinear`, :class:`LowRankConv2d`, :func:`factorized_layer`,
:func:`recovered_weight`) in :mod:`fedtheory.models.low_rank_layers`, imported on first use of one of their names,
so that importing this module never imports torch (seconds of start-up for every claim run that loads the FedHM
checks).

>>> import numpy as np
>>> W = np.random.default_rng(0).normal(size=(6, 4))
>>> U, V = factorize(W, 2)
>>> U.shape, V.shape
((6, 2), (4, 2))
>>> bool(np.isclose(np.linalg.norm(W - recover(U, V)) ** 2, eckart_young_error(W, 2) ** 2))
True
>>> Up, Vp = pad_factors(U, V, 3)
>>> Up.shape, bool(np.array_equal(recover(Up, Vp), recover(U, V)))
((6, 3), True)
"""

from __future__ import annotations

from typing import Any

from fedtheory.models import factorization
from fedtheory.models.factorization import *  # noqa: F403 - re-exported: the list is factorization.__all__

#: the torch layers and the functions that build or read them (fedtheory.models.low_rank_layers, loaded on first use
#: through the module __getattr__, so torch is imported only then)
_LAYER_NAMES = ("LowRankLinear", "LowRankConv2d", "factorized_layer", "recovered_weight")

__all__ = [*factorization.__all__, *_LAYER_NAMES]


def __getattr__(name: str) -> Any:
    if name in _LAYER_NAMES:
        from fedtheory.models import low_rank_layers

        return getattr(low_rank_layers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
