r"""Parameterizations of hypothesis classes: every real vector ``z`` is a valid instance.

A probe (:func:`fedtheory.certify.probe.probe`) searches a theorem's hypothesis class for the
instance closest to breaking it. It searches over an *unconstrained* real vector ``z``; a
parameterization maps ``z`` to an instance that satisfies the hypotheses **by construction**
(a step size strictly inside ``(0, 1/(L+α))``, a Hessian whose spectrum lies in ``[μ, L]`` with both
ends attained, weights on the simplex, ...), so no optimizer step can leave the class and every
candidate counterexample is a legitimate one.

Every parameterization is a :class:`Param` with

- ``size``: how many reals it reads;
- ``decode(z, ctx=None)``: the instance piece for ``z`` (any ``z`` of that length, however large);
- ``sample(rng)``: a ``z`` that decodes to a *typical* random instance (uniform on a box, Dirichlet
  on the simplex, Haar on rotations), used by the random phase of a probe;
- ``encode(value)``: a ``z`` that decodes to ``value`` (where the map can be inverted), so a probe
  can start from a known tight instance;
- ``to_json(value)``: the piece as plain JSON types.

Pieces compose with :class:`Product` (named pieces, decoded in order). A bound of :class:`Box`,
:class:`Spectrum`, :class:`SymmetricMatrix` or :class:`Ball` may be a *callable* of the pieces decoded
before it, which is how dependent hypotheses are written:

>>> import numpy as np
>>> from fedtheory.certify.params import Box, Product, SPDMatrix
>>> P = Product(L=Box(1.0, 100.0, log=True), alpha=Box(0.0, 10.0),
...             gamma=Box(0.0, lambda s: 1 / (s["L"] + s["alpha"]), open_lo=True, open_hi=True),
...             A=SPDMatrix(3, 1.0, lambda s: s["L"]))
>>> P.size          # L, alpha, gamma, then A: 3 rotation reals and 1 interior eigenvalue
7
>>> inst = P.decode(1e6 * np.random.default_rng(0).normal(size=P.size))   # any z is valid
>>> 0 < inst["gamma"] < 1 / (inst["L"] + inst["alpha"])
True
>>> ev = np.linalg.eigvalsh(inst["A"])
>>> bool(abs(ev[0] - 1) < 1e-12 and abs(ev[-1] / inst["L"] - 1) < 1e-12)
True

The maps are smooth where that is cheap (sines, logistic and ``tanh`` squashes, the matrix
exponential), because the probe's optimizers climb them; closed ends of intervals are attained
exactly, open ends never (the value is nudged one ulp inside when rounding would land on the end).
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from fedtheory.serialize import jsonable  # noqa: F401  (re-exported: part of this module's API)
from fedtheory.validation import finite_real

__all__ = [
    "Param",
    "Box",
    "IntRange",
    "Choice",
    "Fixed",
    "Simplex",
    "NonnegWeights",
    "Rotation",
    "Spectrum",
    "SymmetricMatrix",
    "SPDMatrix",
    "Ball",
    "Product",
    "Custom",
    "Mapped",
    "jsonable",
    "QuadraticInstance",
    "quadratic_instance_param",
]

Bound = Any  # a real number, or a callable of the already-decoded sibling pieces (a dict)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _as_z(z: Any, size: int, who: str) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64).ravel()
    if z.size != size:
        raise ValueError(f"{who} reads {size} reals, got a vector of length {z.size}")
    if not np.all(np.isfinite(z)):
        raise ValueError(f"{who} needs a finite z, got {z.tolist()[:8]}")
    return z


def _resolve(bound: Bound, ctx: Mapping | None, name: str, who: str) -> float:
    """A bound's value: itself, or the callable applied to the decoded siblings."""
    if callable(bound):
        if ctx is None:
            raise ValueError(
                f"{who}: bound {name} is a callable of other pieces, so it must be decoded "
                f"inside a Product (no sibling values were given)"
            )
        bound = bound(ctx)
    return finite_real(bound, f"{who}: bound {name}")


def _shape_size(shape: Any) -> tuple[tuple[int, ...] | None, int]:
    if shape is None:
        return None, 1
    shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"shape must be non-negative, got {shape}")
    return shape, int(np.prod(shape, dtype=np.int64))


def _sin_unit(z: np.ndarray) -> np.ndarray:
    # (1 + sin z)/2 reaches 0 and 1 exactly (sin(±π/2) = ±1 in float64) at critical points of the
    # map, so an optimizer pushing towards a closed end settles there instead of running off.
    return 0.5 * (1.0 + np.sin(z))


def _sin_unit_inv(u: np.ndarray) -> np.ndarray:
    return np.arcsin(np.clip(2.0 * np.asarray(u, dtype=np.float64) - 1.0, -1.0, 1.0))


class Param:
    """Base class: a map from ``size`` reals to one piece of an instance.

    Subclasses implement ``decode``; ``sample`` defaults to ``encode`` of a typical value or to a
    standard normal ``z``. ``map(fn)`` post-processes the decoded value.

    >>> Box(0, 1).map(lambda t: 2 * t).decode([np.pi / 2])
    2.0
    """

    size: int = 0

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A random ``z`` (standard normal unless the subclass knows a better law)."""
        return rng.normal(size=self.size)

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        """A ``z`` with ``decode(z) == value`` (up to rounding); not every map can be inverted."""
        raise NotImplementedError(f"{type(self).__name__} cannot encode values")

    def to_json(self, value: Any) -> Any:
        """``value`` as plain JSON types."""
        return jsonable(value)

    def map(self, fn: Callable[[Any], Any], to_json: Callable[[Any], Any] | None = None) -> "Mapped":
        """This parameterization followed by ``fn`` (e.g. a dict of pieces -> a problem object)."""
        return Mapped(self, fn, to_json=to_json)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


# --------------------------------------------------------------------------------------------
# scalars and boxes
# --------------------------------------------------------------------------------------------


class Box(Param):
    r"""Reals in ``[lo, hi]`` (closed by default; ``open_lo`` / ``open_hi`` make an end strict).

    Map from ``u`` in the unit interval: closed-closed ``u = (1 + sin z)/2``, open-open the logistic
    ``u = 1/(1 + e^{-z})``, closed-open ``u = tanh²z``, open-closed ``u = 1 - tanh²z``; then
    ``x = lo (1-u) + hi u`` (in log space when ``log=True``, which needs ``lo > 0``). A strict end is
    never returned even when the map rounds onto it (the value moves one ulp inside). ``shape``
    gives an array of independent values. ``lo``/``hi`` may be callables of earlier
    :class:`Product` pieces. ``sample`` is uniform (log-uniform) on the interval, except that
    ``atoms={value: probability}`` puts point masses on chosen values (``"lo"``/``"hi"`` for the
    ends, e.g. α = 0 half the time, which also works with callable bounds).

    >>> b = Box(0.0, 1.0, open_hi=True)
    >>> [b.decode([z]) < 1.0 for z in (0.0, 40.0, 1e300)]
    [True, True, True]
    >>> Box(0.0, 2.0).decode([np.pi / 2]), Box(0.0, 2.0).decode([-np.pi / 2])
    (2.0, 0.0)
    >>> round(Box(1e-3, 1e3, log=True).decode(Box(1e-3, 1e3, log=True).encode(10.0)), 12)
    10.0
    >>> Box(2.0, 1.0).decode([0.0])
    Traceback (most recent call last):
    ...
    ValueError: Box needs lo <= hi, got lo=2.0, hi=1.0
    """

    def __init__(
        self,
        lo: Bound,
        hi: Bound,
        *,
        log: bool = False,
        open_lo: bool = False,
        open_hi: bool = False,
        shape: Any = None,
        atoms: Mapping[float | str, float] | None = None,
    ) -> None:
        self.lo, self.hi, self.log = lo, hi, bool(log)
        self.open_lo, self.open_hi = bool(open_lo), bool(open_hi)
        self.shape, self.size = _shape_size(shape)
        self.atoms = dict(atoms or {})
        total = sum(self.atoms.values())
        if any(p < 0 for p in self.atoms.values()) or total > 1:
            raise ValueError(f"Box atoms must be probabilities summing to at most 1, got {self.atoms}")
        for v in self.atoms:
            if (v == "lo" and self.open_lo) or (v == "hi" and self.open_hi):
                raise ValueError(f"Box atom {v!r} is an open end of the interval (never attained)")
            if isinstance(v, str) and v not in ("lo", "hi"):
                raise ValueError(f"Box atoms are numbers or 'lo'/'hi', got {v!r}")
            if not isinstance(v, str) and (callable(lo) or callable(hi)):
                raise ValueError("Box atoms with callable bounds must be 'lo' or 'hi'")
        if not callable(lo) and not callable(hi):
            self._bounds(None)  # fail at construction when the bounds are already known

    def _bounds(self, ctx: Mapping | None) -> tuple[float, float]:
        lo = _resolve(self.lo, ctx, "lo", "Box")
        hi = _resolve(self.hi, ctx, "hi", "Box")
        if lo > hi:
            raise ValueError(f"Box needs lo <= hi, got lo={lo!r}, hi={hi!r}")
        if (self.open_lo or self.open_hi) and not lo < hi:
            raise ValueError(
                f"Box with an open end needs lo < hi (the interval is otherwise empty), got lo={lo!r}, hi={hi!r}"
            )
        if self.open_lo and self.open_hi and not np.nextafter(lo, math.inf) < hi:
            raise ValueError(f"Box with both ends open needs a float strictly between lo={lo!r} and hi={hi!r}")
        if self.log and not lo > 0:
            raise ValueError(f"Box(log=True) needs lo > 0, got lo={lo!r}")
        return lo, hi

    # the unit-interval map and its inverse ---------------------------------------------------
    def _uv(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(u, 1 - u)``, each computed without cancellation so values crowd either end finely."""
        if self.open_lo and self.open_hi:
            # the logistic function and its mirror, overflow-free
            return 0.5 * (1.0 + np.tanh(0.5 * z)), 0.5 * (1.0 - np.tanh(0.5 * z))
        if self.open_lo or self.open_hi:
            e = np.exp(-2.0 * np.abs(z))
            sech2 = 4.0 * e / (1.0 + e) ** 2
            tanh2 = np.tanh(z) ** 2
            return (tanh2, sech2) if self.open_hi else (sech2, tanh2)
        s = np.sin(z)
        # (1 + sin z)/2 reaches 0 and 1 exactly (sin(±π/2) = ±1 in float64) at critical points of the
        # map, so an optimizer pushing towards a closed end settles there instead of running off.
        return 0.5 * (1.0 + s), 0.5 * (1.0 - s)

    def _unit_inv(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        if self.open_lo and self.open_hi:
            u = np.clip(u, 1e-300, 1.0 - 1e-16)
            return np.log(u) - np.log1p(-u)
        if self.open_hi:
            return np.arctanh(np.sqrt(np.clip(u, 0.0, 1.0 - 1e-16)))
        if self.open_lo:
            return np.arctanh(np.sqrt(np.clip(1.0 - u, 0.0, 1.0 - 1e-16)))
        return _sin_unit_inv(u)

    def _from_uv(self, u: np.ndarray, v: np.ndarray, lo: float, hi: float) -> np.ndarray:
        a, b = (math.log(lo), math.log(hi)) if self.log else (lo, hi)
        # measure from the nearer end: x = lo + (hi-lo)u or hi - (hi-lo)(1-u); closed ends are exact
        t = np.where(u <= v, a + (b - a) * u, b - (b - a) * v)
        x = np.exp(t) if self.log else t
        x = np.where(u == 0.0, lo, np.where(v == 0.0, hi, x))
        x = np.clip(x, lo, hi)
        if self.open_lo:
            x = np.where(x <= lo, np.nextafter(lo, np.inf), x)
        if self.open_hi:
            x = np.where(x >= hi, np.nextafter(hi, -np.inf), x)
        return x

    def map_unit(self, u: Any, ctx: Mapping | None = None) -> Any:
        """The value at unit coordinate ``u`` in [0, 1] (0 -> lo, 1 -> hi; strict ends respected).

        >>> Box(1.0, 3.0).map_unit(0.5)
        2.0
        """
        lo, hi = self._bounds(ctx)
        u = np.asarray(u, dtype=np.float64)
        return self._shaped(self._from_uv(u, 1.0 - u, lo, hi))

    def _shaped(self, x: np.ndarray) -> Any:
        if self.shape is None:
            return float(np.asarray(x).reshape(-1)[0])
        return np.asarray(x, dtype=np.float64).reshape(self.shape)

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:
        z = _as_z(z, self.size, "Box")
        lo, hi = self._bounds(ctx)
        return self._shaped(self._from_uv(*self._uv(z), lo, hi))

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        lo, hi = self._bounds(ctx)
        x = np.asarray(value, dtype=np.float64).ravel()
        if self.log:
            span = math.log(hi) - math.log(lo)
            u = (np.log(np.maximum(x, lo)) - math.log(lo)) / span if span > 0 else np.zeros_like(x)
        else:
            u = (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
        u = np.where(x <= lo, 0.0, np.where(x >= hi, 1.0, u))
        return _as_z(self._unit_inv(np.clip(u, 0.0, 1.0)), self.size, "Box.encode")

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        z = self._unit_inv(rng.uniform(size=self.size))
        if self.atoms and self.size:
            values = list(self.atoms)
            probs = np.array([self.atoms[v] for v in values] + [1.0 - sum(self.atoms.values())])
            pick = rng.choice(len(probs), size=self.size, p=probs / probs.sum())
            for j, v in enumerate(values):
                if v in ("lo", "hi"):  # an end, known even when the bounds are callables
                    at = self._unit_inv(np.full(self.size, 0.0 if v == "lo" else 1.0))
                else:
                    at = self.encode(np.full(self.size, float(v)))
                z = np.where(pick == j, at, z)
        return z

    def __repr__(self) -> str:
        lb = "(" if self.open_lo else "["
        rb = ")" if self.open_hi else "]"
        lo = "<fn>" if callable(self.lo) else self.lo
        hi = "<fn>" if callable(self.hi) else self.hi
        return f"Box({lb}{lo}, {hi}{rb}{', log' if self.log else ''}, size={self.size})"


class IntRange(Param):
    """An integer in ``{lo, ..., hi}``: a :class:`Box` on ``[lo - ½, hi + ½]``, rounded.

    Optimizers see a piecewise-constant function of ``z`` (each integer is a plateau); the random
    phase and the multi-start cover it. ``log=True`` samples log-uniformly (needs ``lo >= 1``).

    >>> r = IntRange(1, 10**6, log=True)
    >>> r.decode(r.encode(1000)), r.decode([1e9]) in range(1, 10**6 + 1)
    (1000, True)
    """

    size = 1

    def __init__(self, lo: int, hi: int, *, log: bool = False) -> None:
        lo, hi = int(lo), int(hi)
        if lo > hi:
            raise ValueError(f"IntRange needs lo <= hi, got lo={lo}, hi={hi}")
        if log and lo < 1:
            raise ValueError(f"IntRange(log=True) needs lo >= 1, got lo={lo}")
        self.lo, self.hi = lo, hi
        self._box = Box(lo - 0.5, hi + 0.5, log=log)

    def decode(self, z: Any, ctx: Mapping | None = None) -> int:
        return int(min(max(round(self._box.decode(z)), self.lo), self.hi))

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        return self._box.encode(float(value))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self._box.sample(rng)


class Choice(Param):
    """One of a fixed list of options (an :class:`IntRange` index).

    >>> c = Choice(["gd", "nesterov", "heavy_ball"])
    >>> c.decode(c.encode("nesterov"))
    'nesterov'
    """

    size = 1

    def __init__(self, options: Sequence[Any]) -> None:
        self.options = list(options)
        if not self.options:
            raise ValueError("Choice needs at least one option")
        self._index = IntRange(0, len(self.options) - 1)

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:
        return self.options[self._index.decode(z)]

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        return self._index.encode(self.options.index(value))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self._index.sample(rng)


class Fixed(Param):
    """A constant piece (reads no reals): a value the claim fixes inside a :class:`Product`.

    >>> Product(mu=Fixed(1.0), L=Box(1.0, 10.0)).decode([np.pi / 2])
    {'mu': 1.0, 'L': 10.0}
    """

    size = 0

    def __init__(self, value: Any) -> None:
        self.value = value

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:
        _as_z(z, 0, "Fixed")
        return self.value

    def encode(self, value: Any = None, ctx: Mapping | None = None) -> np.ndarray:
        return np.zeros(0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return np.zeros(0)


# --------------------------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------------------------


class Simplex(Param):
    r"""Weights ``p`` with ``p_i >= min_weight``, ``p_i > 0`` and ``Σ p_i = 1`` (``n - 1`` reals).

    ``p = m + (1 - n m) softmax(x_1, ..., x_{n-1}, 0)`` with ``x_i = s tanh(z_i / s)``,
    ``s = max_log_ratio / 2``: the squash bounds every ratio p_i/p_j by ``e^{max_log_ratio}``
    (default e^50 ≈ 5·10²¹), so weights are as unequal as a probe likes but never underflow to 0.
    ``sample`` draws Dirichlet(``concentration``) weights: unequal in general.

    >>> p = Simplex(4).decode(1e4 * np.random.default_rng(0).normal(size=3))
    >>> bool(np.all(p > 0)), bool(abs(p.sum() - 1) < 1e-15)
    (True, True)
    >>> Simplex(3, min_weight=0.1).decode(Simplex(3, min_weight=0.1).encode([0.2, 0.3, 0.5])).round(12).tolist()
    [0.2, 0.3, 0.5]
    >>> Simplex(1).decode([]).tolist()
    [1.0]
    """

    def __init__(
        self, n: int, min_weight: float = 0.0, *, max_log_ratio: float = 50.0, concentration: float = 1.0
    ) -> None:
        n = int(n)
        if n < 1:
            raise ValueError(f"Simplex needs n >= 1, got n={n}")
        m = float(min_weight)
        if not 0 <= m <= 1.0 / n:
            raise ValueError(f"Simplex needs 0 <= min_weight <= 1/n = {1.0 / n!r}, got min_weight={m!r}")
        if not max_log_ratio > 0:
            raise ValueError(f"Simplex needs max_log_ratio > 0, got {max_log_ratio!r}")
        self.n, self.min_weight, self.concentration = n, m, float(concentration)
        self._s = float(max_log_ratio) / 2.0
        self.size = n - 1

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        z = _as_z(z, self.size, "Simplex")
        logits = np.append(self._s * np.tanh(z / self._s), 0.0)
        q = np.exp(logits - logits.max())
        q /= q.sum()
        p = self.min_weight + (1.0 - self.n * self.min_weight) * q
        return p / p.sum()

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        p = np.asarray(value, dtype=np.float64).ravel()
        if p.size != self.n:
            raise ValueError(f"Simplex({self.n}).encode got {p.size} weights")
        spread = 1.0 - self.n * self.min_weight
        q = (p - self.min_weight) / spread if spread > 0 else np.full(self.n, 1.0 / self.n)
        logq = np.log(np.maximum(q, 1e-300))
        x = np.clip(logq[:-1] - logq[-1], -self._s * (1 - 1e-15), self._s * (1 - 1e-15))
        return self._s * np.arctanh(x / self._s)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        q = rng.dirichlet(np.full(self.n, self.concentration))
        return self.encode(self.min_weight + (1.0 - self.n * self.min_weight) * q)


class NonnegWeights(Param):
    r"""Θ = (θ_1, ..., θ_K) with θ_k >= 0 and non-zero support (``K`` reals).

    ``w_k = (1 + sin z_k)/2`` in [0, 1] (exact zeros are reachable, so supports such as
    Θ_K = (0, ..., 0, 1) are), then ``normalize="max"`` (max θ = ``scale``, default),
    ``"sum"`` (Σθ = ``scale``) or ``None`` (θ = scale·w). The single ``z`` with every w_k = 0
    decodes to ``scale·e_K`` so the support is never empty. ``sample`` draws w uniform with each
    θ_k = 0 with probability ``p_zero`` (sparse supports are typical hypotheses' edge cases).

    >>> th = NonnegWeights(5).decode(1e4 * np.random.default_rng(1).normal(size=5))
    >>> bool(np.all(th >= 0) and th.max() == 1.0)
    True
    >>> NonnegWeights(3).decode(np.full(3, -np.pi / 2)).tolist()
    [0.0, 0.0, 1.0]
    >>> NonnegWeights(3, normalize="sum").decode(NonnegWeights(3).encode([0.0, 1.0, 3.0])).tolist()
    [0.0, 0.25, 0.75]
    """

    def __init__(self, K: int, *, normalize: str | None = "max", scale: float = 1.0, p_zero: float = 0.25) -> None:
        K = int(K)
        if K < 1:
            raise ValueError(f"NonnegWeights needs K >= 1, got K={K}")
        if normalize not in ("max", "sum", None):
            raise ValueError(f"NonnegWeights normalize must be 'max', 'sum' or None, got {normalize!r}")
        if not scale > 0:
            raise ValueError(f"NonnegWeights needs scale > 0, got scale={scale!r}")
        if not 0 <= p_zero < 1:
            raise ValueError(f"NonnegWeights needs 0 <= p_zero < 1, got p_zero={p_zero!r}")
        self.K, self.size, self.normalize, self.scale, self.p_zero = K, K, normalize, float(scale), float(p_zero)

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        w = _sin_unit(_as_z(z, self.size, "NonnegWeights"))
        top = float(w.max())
        if not top > 0:
            w = np.zeros(self.K)
            w[-1] = 1.0
            top = 1.0
        if self.normalize == "max":
            return self.scale * (w / top)
        if self.normalize == "sum":
            return self.scale * (w / w.sum())
        return self.scale * w

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        th = np.asarray(value, dtype=np.float64).ravel()
        if th.size != self.K or np.any(th < 0) or not th.max() > 0:
            raise ValueError(
                f"NonnegWeights({self.K}).encode needs {self.K} weights >= 0 with a positive one, got {th.tolist()}"
            )
        w = th / self.scale if self.normalize is None else th / th.max()
        return _sin_unit_inv(np.clip(w, 0.0, 1.0))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        w = rng.uniform(size=self.K)
        w[rng.uniform(size=self.K) < self.p_zero] = 0.0
        if not w.max() > 0:
            w[rng.integers(self.K)] = 1.0 - rng.uniform()  # in (0, 1]: the support stays non-empty
        return _sin_unit_inv(w)


# --------------------------------------------------------------------------------------------
# rotations and matrices
# --------------------------------------------------------------------------------------------


def _haar_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed matrix in SO(d): QR of a Gaussian matrix with the sign fix."""
    G = rng.normal(size=(d, d))
    Q, R = np.linalg.qr(G)
    Q = Q * np.where(np.diag(R) < 0, -1.0, 1.0)
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def _rotation_log(U: np.ndarray) -> np.ndarray:
    """The principal logarithm of a rotation, a skew-symmetric matrix with angles in [-π, π].

    Through the real Schur form (block diagonal for a normal matrix: 2×2 rotation blocks and ±1s),
    which is ~100× faster than ``scipy.linalg.logm`` and exact for rotations; pairs of -1 (angle π)
    become a rotation by π in their plane.
    """
    import scipy.linalg  # about 0.4 s of CPU to import: only where a rotation is encoded

    T, V = scipy.linalg.schur(U, output="real")
    d = U.shape[0]
    L = np.zeros((d, d))
    minus: list[int] = []
    i = 0
    while i < d:
        if i + 1 < d and abs(T[i + 1, i]) > 1e-14:
            c = 0.5 * (T[i, i] + T[i + 1, i + 1])
            s = 0.5 * (T[i + 1, i] - T[i, i + 1])
            th = math.atan2(s, c)
            L[i + 1, i], L[i, i + 1] = th, -th
            i += 2
        else:
            if T[i, i] < 0:
                minus.append(i)
            i += 1
    for a, b in zip(minus[0::2], minus[1::2]):  # det U = 1: the -1s come in pairs
        L[b, a], L[a, b] = math.pi, -math.pi
    S = V @ L @ V.T
    return 0.5 * (S - S.T)


class Rotation(Param):
    r"""A rotation ``U`` in SO(d), from ``d(d-1)/2`` reals: ``U = expm(S)``, S skew-symmetric.

    The reals fill the strict upper triangle of ``X`` and ``S₀ = X - Xᵀ``; S is S₀ radially squashed to
    Frobenius norm below ``R = π sqrt(2⌊d/2⌋)`` (``S = S₀ · R tanh(‖S₀‖/R)/‖S₀‖``). That ball already
    maps onto all of SO(d) (every rotation has a logarithm with angles in [-π, π]), and the bounded
    norm keeps ``expm`` accurate to rounding for any ``z``, so ``UᵀU = I`` and ``det U = 1`` to
    machine precision. ``sample`` is Haar (encoded through the principal matrix logarithm).
    ``d = 1`` reads no reals and gives ``[[1.0]]``.

    >>> U = Rotation(4).decode(1e4 * np.random.default_rng(2).normal(size=6))
    >>> bool(np.abs(U.T @ U - np.eye(4)).max() < 1e-13), round(float(np.linalg.det(U)), 12)
    (True, 1.0)
    >>> V = Rotation(3).decode(Rotation(3).sample(np.random.default_rng(0)))
    >>> bool(np.abs(Rotation(3).decode(Rotation(3).encode(V)) - V).max() < 1e-12)
    True
    >>> Rotation(1).size, Rotation(1).decode([]).tolist()
    (0, [[1.0]])
    """

    def __init__(self, d: int) -> None:
        d = int(d)
        if d < 1:
            raise ValueError(f"Rotation needs d >= 1, got d={d}")
        self.d, self.size = d, d * (d - 1) // 2
        self._iu = np.triu_indices(d, 1)
        self._R = math.pi * math.sqrt(2 * (d // 2)) if d >= 2 else 1.0

    def _skew(self, z: np.ndarray) -> np.ndarray:
        big = float(np.abs(z).max()) if z.size else 0.0
        if big > 1e150:  # ‖S₀‖ would overflow; the squash maps the whole far ray to one point anyway
            z = z * (1e150 / big)
        X = np.zeros((self.d, self.d))
        X[self._iu] = z
        S = X - X.T
        r = float(np.linalg.norm(S))
        if r > 0:
            S *= self._R * math.tanh(r / self._R) / r
        return S

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        z = _as_z(z, self.size, "Rotation")
        if self.d == 1:
            return np.ones((1, 1))
        import scipy.linalg  # about 0.4 s of CPU to import: only where a rotation is decoded

        return scipy.linalg.expm(self._skew(z))

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        U = np.asarray(value, dtype=np.float64)
        if U.shape != (self.d, self.d):
            raise ValueError(f"Rotation({self.d}).encode needs a ({self.d}, {self.d}) matrix, got {U.shape}")
        if self.d == 1:
            return np.zeros(0)
        if np.abs(U.T @ U - np.eye(self.d)).max() > 1e-8 or np.linalg.det(U) < 0:
            raise ValueError("Rotation.encode needs an orthogonal matrix with det +1")
        S = _rotation_log(U)
        r = float(np.linalg.norm(S))
        if r > 0:
            rr = min(r, self._R * (1 - 1e-12))
            S *= self._R * math.atanh(rr / self._R) / r
        return 0.5 * (S - S.T)[self._iu]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        if self.d == 1:
            return np.zeros(0)
        return self.encode(_haar_rotation(rng, self.d))


class Spectrum(Param):
    """``d`` ascending values in ``[lo, hi]``; with ``attain_extremes`` (default) the smallest is
    exactly ``lo`` and the largest exactly ``hi``, and only the ``d - 2`` interior values are read.

    Interior values are a closed :class:`Box` (``log=True``: log-uniform when sampled), sorted.
    ``d = 1`` with ``attain_extremes`` needs ``lo == hi``. Bounds may be callables of earlier
    :class:`Product` pieces.

    >>> Spectrum(4, 1.0, 10.0).decode([0.0, 1e9]).round(6).tolist()[0::3]
    [1.0, 10.0]
    >>> Spectrum(1, 2.0, 2.0).decode([]).tolist()
    [2.0]
    """

    def __init__(self, d: int, lo: Bound, hi: Bound, *, attain_extremes: bool = True, log: bool = False) -> None:
        d = int(d)
        if d < 1:
            raise ValueError(f"Spectrum needs d >= 1, got d={d}")
        self.d, self.lo, self.hi, self.attain_extremes, self.log = d, lo, hi, bool(attain_extremes), bool(log)
        n_free = (max(d - 2, 0) if d >= 2 else 0) if self.attain_extremes else d
        self.size = n_free
        self._box = Box(lo, hi, log=log, shape=n_free)
        if not callable(lo) and not callable(hi):
            self._bounds(None)

    def _bounds(self, ctx: Mapping | None) -> tuple[float, float]:
        lo, hi = self._box._bounds(ctx)
        if self.attain_extremes and self.d == 1 and lo != hi:
            raise ValueError(
                f"Spectrum: with d=1 the single value cannot attain both lo={lo!r} and hi={hi!r}; "
                f"attaining both needs d >= 2 or lo == hi"
            )
        return lo, hi

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        z = _as_z(z, self.size, "Spectrum")
        lo, hi = self._bounds(ctx)
        inner = np.sort(self._box.decode(z, ctx)) if self.size else np.zeros(0)
        if not self.attain_extremes:
            return inner
        if self.d == 1:
            return np.array([lo])
        return np.concatenate([[lo], inner, [hi]])

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        lam = np.sort(np.asarray(value, dtype=np.float64).ravel())
        if lam.size != self.d:
            raise ValueError(f"Spectrum({self.d}).encode got {lam.size} values")
        inner = lam[1:-1] if self.attain_extremes else lam
        return self._box.encode(inner, ctx) if self.size else np.zeros(0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self._box.sample(rng)


class SymmetricMatrix(Param):
    """``A = U diag(λ) Uᵀ`` with ``U`` a :class:`Rotation` and ``λ`` a :class:`Spectrum` in [lo, hi].

    Reads ``d(d-1)/2`` rotation reals, then the spectrum's. The result is exactly symmetric; its
    eigenvalues lie in [lo, hi] up to rounding, with lo and hi attained when ``attain_extremes``.
    :meth:`decode_eig` returns ``(λ, U)`` (ascending λ, eigenvectors as columns) for code that wants
    the exact spectrum; :meth:`from_unit` builds one from ``z`` with bounds known at call time.

    >>> M = SymmetricMatrix(3, -1.0, 1.0)
    >>> A = M.decode(np.random.default_rng(0).normal(size=M.size))
    >>> bool(np.array_equal(A, A.T)), np.linalg.eigvalsh(A).round(12)[[0, 2]].tolist()
    (True, [-1.0, 1.0])
    """

    def __init__(self, d: int, lo: Bound, hi: Bound, *, attain_extremes: bool = True, log: bool = False) -> None:
        self.d = int(d)
        self.rotation = Rotation(self.d)
        self.spectrum = Spectrum(self.d, lo, hi, attain_extremes=attain_extremes, log=log)
        self.size = self.rotation.size + self.spectrum.size

    def _check(self, lo: float, hi: float) -> None:
        pass

    def decode_eig(self, z: Any, ctx: Mapping | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(λ, U)``: the ascending spectrum and the rotation whose columns are eigenvectors."""
        z = _as_z(z, self.size, type(self).__name__)
        self._check(*self.spectrum._bounds(ctx))
        r = self.rotation.size
        return self.spectrum.decode(z[r:], ctx), self.rotation.decode(z[:r])

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        lam, U = self.decode_eig(z, ctx)
        A = (U * lam) @ U.T
        return 0.5 * (A + A.T)

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        A = np.asarray(value, dtype=np.float64)
        lam, U = np.linalg.eigh(0.5 * (A + A.T))
        if np.linalg.det(U) < 0:
            U[:, 0] = -U[:, 0]
        return np.concatenate([self.rotation.encode(U), self.spectrum.encode(lam, ctx)])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return np.concatenate([self.rotation.sample(rng), self.spectrum.sample(rng)])

    @classmethod
    def from_unit(
        cls, z: Any, lo: float, hi: float, *, d: int | None = None, attain_extremes: bool = True, log: bool = False
    ) -> np.ndarray:
        """The matrix for ``z`` with numeric bounds (for use inside a :class:`Custom` decoder).

        ``d`` is inferred from ``len(z)`` when omitted.

        >>> np.linalg.eigvalsh(SPDMatrix.from_unit([0.3], 1.0, 4.0)).round(12).tolist()   # d = 2
        [1.0, 4.0]
        >>> SPDMatrix.from_unit(np.zeros(4), 1.0, 4.0).shape       # d = 3: 3 rotation reals + 1 interior
        (3, 3)
        """
        z = np.asarray(z, dtype=np.float64).ravel()
        if d is None:

            def size(k: int) -> int:
                return k * (k - 1) // 2 + ((max(k - 2, 0) if k >= 2 else 0) if attain_extremes else k)

            d = next((k for k in range(1, z.size + 3) if size(k) == z.size), None)
            if d is None:
                raise ValueError(f"{cls.__name__}.from_unit: no dimension d reads {z.size} reals")
        return cls(d, lo, hi, attain_extremes=attain_extremes, log=log).decode(z)


class SPDMatrix(SymmetricMatrix):
    """A symmetric matrix with spectrum in ``[mu, L]``, ``0 <= mu <= L`` (μI ⪯ A ⪯ LI).

    With ``attain_extremes`` (default) λ_min = μ and λ_max = L exactly (so μ and L are *the*
    constants of the instance, not loose bounds). ``mu = 0`` gives a positive semidefinite matrix
    (a convex, not strongly convex, quadratic). ``mu`` and ``L`` may be callables of earlier
    :class:`Product` pieces.

    >>> P = SPDMatrix(3, mu=1.0, L=10.0)
    >>> A = P.decode(100 * np.random.default_rng(3).normal(size=P.size))
    >>> ev = np.linalg.eigvalsh(A); bool(abs(ev[0] - 1) < 1e-12 and abs(ev[-1] - 10) < 1e-12)
    True
    >>> SPDMatrix(2, mu=-1.0, L=1.0)
    Traceback (most recent call last):
    ...
    ValueError: SPDMatrix needs 0 <= mu <= L, got mu=-1.0, L=1.0
    """

    def __init__(self, d: int, mu: Bound, L: Bound, *, attain_extremes: bool = True, log: bool = False) -> None:
        super().__init__(d, mu, L, attain_extremes=attain_extremes, log=log)
        if not callable(mu) and not callable(L):
            self._check(*self.spectrum._bounds(None))

    def _check(self, lo: float, hi: float) -> None:
        if not 0 <= lo <= hi:
            raise ValueError(f"SPDMatrix needs 0 <= mu <= L, got mu={lo!r}, L={hi!r}")


class Ball(Param):
    r"""A vector in the closed ball ``‖x‖ <= radius`` of R^d (or on the sphere with ``sphere=True``).

    Ball: ``x = radius · sin(‖z‖) z/‖z‖`` — smooth, and the boundary ‖x‖ = radius is attained
    (at ‖z‖ = π/2). Sphere: ``x = radius · z/‖z‖`` (``z = 0`` gives ``radius·e_1``). ``sample`` is
    uniform in the ball (on the sphere). ``radius`` may be a callable of earlier pieces.

    >>> b = Ball(3, 2.0)
    >>> bool(np.linalg.norm(b.decode([1e8, -3e7, 5.0])) <= 2.0), float(np.linalg.norm(b.decode([np.pi / 2, 0, 0])))
    (True, 2.0)
    """

    def __init__(self, d: int, radius: Bound = 1.0, *, sphere: bool = False) -> None:
        d = int(d)
        if d < 1:
            raise ValueError(f"Ball needs d >= 1, got d={d}")
        self.d, self.size, self.radius, self.sphere = d, d, radius, bool(sphere)
        if not callable(radius):
            self._radius(None)

    def _radius(self, ctx: Mapping | None) -> float:
        r = _resolve(self.radius, ctx, "radius", "Ball")
        if r < 0:
            raise ValueError(f"Ball needs radius >= 0, got radius={r!r}")
        return r

    def decode(self, z: Any, ctx: Mapping | None = None) -> np.ndarray:
        z = _as_z(z, self.size, "Ball")
        rad = self._radius(ctx)
        big = float(np.abs(z).max()) if z.size else 0.0
        if big > 1e150:
            # the norm would overflow; for the ball sin(‖z‖) of such a z is arbitrary anyway, so any
            # point on the same ray (here ‖z‖ = 1e150-ish) is as valid
            z = z * (1e150 / big)
        nz = float(np.linalg.norm(z))
        if self.sphere:
            if nz == 0:
                u = np.zeros(self.d)
                u[0] = 1.0
                return rad * u
            return rad * (z / nz)
        x = rad * z * np.sinc(nz / math.pi)  # sinc(t) = sin(πt)/(πt): x = rad sin(‖z‖) z/‖z‖
        nx = float(np.linalg.norm(x))
        if nx > rad:  # rounding only
            x *= rad / nx
        return x

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        x = np.asarray(value, dtype=np.float64).ravel()
        rad = self._radius(ctx)
        nx = float(np.linalg.norm(x))
        if nx == 0 or rad == 0:
            return np.zeros(self.d)
        if self.sphere:
            return x / nx
        return x / nx * math.asin(min(nx / rad, 1.0))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        g = rng.normal(size=self.d)
        g /= max(float(np.linalg.norm(g)), 1e-300)
        if self.sphere:
            return g
        return g * math.asin(rng.uniform() ** (1.0 / self.d))


# --------------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------------


class Product(Param):
    """Named pieces read one after another from ``z``; ``decode`` returns a dict in that order.

    Pieces are decoded in order, and each sees the values decoded before it (plus any outer
    context) through callable bounds. Names that are not identifiers go in a dict:
    ``Product({"lambda": Box(0, 1)})``.

    >>> P = Product(L=Box(1.0, 10.0), gamma=Box(0.0, lambda s: 1 / s["L"], open_hi=True))
    >>> inst = P.decode(P.encode({"L": 4.0, "gamma": 0.125}))
    >>> P.size, inst["L"], round(inst["gamma"], 12)
    (2, 4.0, 0.125)
    >>> P.split([0.1, 0.2])["gamma"].tolist()
    [0.2]
    """

    def __init__(self, pieces: Mapping[str, Param] | None = None, /, **kw: Param) -> None:
        self.pieces: dict[str, Param] = dict(pieces or {})
        for name, piece in kw.items():
            if name in self.pieces:
                raise ValueError(f"Product: piece {name!r} given twice")
            self.pieces[name] = piece
        for name, piece in self.pieces.items():
            if not isinstance(piece, Param):
                raise TypeError(f"Product piece {name!r} must be a Param, got {type(piece).__name__}")
        self._offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for name, piece in self.pieces.items():
            self._offsets[name] = (start, start + piece.size)
            start += piece.size
        self.size = start

    def split(self, z: Any) -> dict[str, np.ndarray]:
        """``z`` cut into each piece's slice (copies)."""
        z = _as_z(z, self.size, "Product")
        return {name: z[a:b].copy() for name, (a, b) in self._offsets.items()}

    def decode(self, z: Any, ctx: Mapping | None = None) -> dict:
        parts = self.split(z)
        out: dict[str, Any] = {}
        for name, piece in self.pieces.items():
            # siblings decoded so far win over outer names of the same spelling
            out[name] = piece.decode(parts[name], {**(ctx or {}), **out})
        return out

    def encode(self, value: Mapping, ctx: Mapping | None = None) -> np.ndarray:
        zs: list = []
        seen: dict = {}
        for name, piece in self.pieces.items():
            zs.append(np.asarray(piece.encode(value[name], {**(ctx or {}), **seen}), dtype=np.float64).ravel())
            seen[name] = value[name]
        return np.concatenate(zs) if zs else np.zeros(0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        zs = [np.asarray(piece.sample(rng), dtype=np.float64).ravel() for piece in self.pieces.values()]
        return np.concatenate(zs) if zs else np.zeros(0)

    def to_json(self, value: Mapping) -> dict:
        return {name: piece.to_json(value[name]) for name, piece in self.pieces.items()}

    def __repr__(self) -> str:
        return "Product(" + ", ".join(f"{k}={v!r}" for k, v in self.pieces.items()) + ")"


def _arity(fn: Callable) -> int:
    """How many positional arguments ``fn`` accepts (2 means it wants the context too)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


class Custom(Param):
    """A claim-specific map: ``decode(z)`` (or ``decode(z, ctx)``) on ``size`` reals.

    ``sample(rng)`` defaults to standard normal ``z``; ``encode`` and ``to_json`` are optional.

    >>> C = Custom(2, lambda z: float(np.hypot(*z)), sample=lambda rng: rng.uniform(size=2))
    >>> C.decode([3.0, 4.0]), C.sample(np.random.default_rng(0)).shape
    (5.0, (2,))
    """

    def __init__(
        self,
        size: int,
        decode: Callable,
        sample: Callable | None = None,
        *,
        encode: Callable | None = None,
        to_json: Callable | None = None,
    ) -> None:
        self.size = int(size)
        if self.size < 0:
            raise ValueError(f"Custom needs size >= 0, got {size}")
        self._decode, self._sample, self._encode, self._to_json = decode, sample, encode, to_json
        self._with_ctx = _arity(decode) >= 2

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:
        z = _as_z(z, self.size, "Custom")
        return self._decode(z, ctx) if self._with_ctx else self._decode(z)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        if self._sample is None:
            return rng.normal(size=self.size)
        return _as_z(self._sample(rng), self.size, "Custom.sample")

    def encode(self, value: Any, ctx: Mapping | None = None) -> np.ndarray:
        if self._encode is None:
            return super().encode(value, ctx)
        return _as_z(self._encode(value), self.size, "Custom.encode")

    def to_json(self, value: Any) -> Any:
        return jsonable(self._to_json(value) if self._to_json is not None else value)


class Mapped(Param):
    """``base`` followed by ``fn`` (see :meth:`Param.map`); samples as ``base`` does.

    >>> M = Product(a=Box(0, 1), b=Box(0, 1)).map(lambda s: s["a"] + s["b"])
    >>> M.size, M.decode([np.pi / 2, np.pi / 2])
    (2, 2.0)
    """

    def __init__(self, base: Param, fn: Callable[[Any], Any], *, to_json: Callable | None = None) -> None:
        self.base, self.fn, self._to_json = base, fn, to_json
        self.size = base.size

    def decode(self, z: Any, ctx: Mapping | None = None) -> Any:
        return self.fn(self.base.decode(z, ctx))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.base.sample(rng)

    def to_json(self, value: Any) -> Any:
        return jsonable(self._to_json(value) if self._to_json is not None else value)


# --------------------------------------------------------------------------------------------
# the LocalUpdate quadratic class (Charles & Konečný, arXiv:2103.05032, Assumptions 1-2)
# --------------------------------------------------------------------------------------------


class QuadraticInstance(NamedTuple):
    """A federated quadratic with LocalUpdate hyperparameters; unpacks as ``(problem, theta, alpha, gamma)``."""

    problem: Any
    theta: Any
    alpha: float
    gamma: float

    def to_json(self) -> dict:
        return {
            "problem": self.problem.to_json(),
            "theta": self.theta.to_json(),
            "alpha": self.alpha,
            "gamma": self.gamma,
        }


def _range(value: Any, name: str, *, log: bool) -> Box | Fixed:
    if isinstance(value, (tuple, list)):
        lo, hi = (float(v) for v in value)
        return Box(lo, hi, log=log)
    return Fixed(float(value))


def quadratic_instance_param(
    n: int = 3,
    d: int = 3,
    *,
    mu: float = 1.0,
    L: Any = (10**0.2, 1e3),
    C: Any = (0.5, 5.0),
    K: int = 8,
    alpha_max: float = 2.0,
    commuting: bool = False,
    weights: str = "random",
) -> Mapped:
    r"""The hypothesis class of LocalUpdate on quadratics, decoded to a :class:`QuadraticInstance`.

    Charles & Konečný (arXiv:2103.05032): n clients ``f_i(x) = ½(x - c_i)ᵀA_i(x - c_i)`` with
    Assumption 1 (``μI ⪯ A_i ⪯ LI``, here with **both** ends attained by every client, so μ and L
    are the instance's exact constants) and Assumption 2 (``‖c_i‖ <= C``, the farthest centre at
    exactly C when any is non-zero), weights ``p`` on the simplex (unequal; ``weights="uniform"``
    fixes 1/n), Θ non-negative with non-zero support in R^K (max θ_k = 1; trailing zeros shorten
    K(Θ)), proximal weight ``α`` in ``[0, alpha_max·L]`` and client rate ``γ`` in the open
    interval ``(0, 1/(L + α))`` (Lemma 1's regime). ``L`` and ``C`` are numbers or ``(lo, hi)``
    ranges (L log-uniform); ``commuting=True`` gives every client one shared eigenbasis.
    The random phase draws α = 0 (no proximal term: FedAvg) half the time.

    >>> P = quadratic_instance_param(n=2, d=3)
    >>> problem, theta, alpha, gamma = P.decode(50 * np.random.default_rng(0).normal(size=P.size))
    >>> problem.mu, problem.n, 0 < gamma < 1 / (problem.L + alpha), theta.w > 0
    (1.0, 2, True, True)
    >>> sorted(P.to_json(P.decode(P.sample(np.random.default_rng(1)))))
    ['alpha', 'gamma', 'problem', 'theta']
    """
    from fedtheory.algorithms.theta import Theta
    from fedtheory.problems.quadratic import QuadraticFederation

    n, d = int(n), int(d)
    if n < 1 or d < 1:
        raise ValueError(f"quadratic_instance_param needs n >= 1 and d >= 1, got n={n}, d={d}")
    mu = float(mu)
    L_piece = _range(L, "L", log=True)
    L_lo = L_piece.lo if isinstance(L_piece, Box) else L_piece.value
    if not 0 < mu <= L_lo:
        raise ValueError(f"quadratic_instance_param needs 0 < mu <= L, got mu={mu!r}, L={L!r}")
    if d == 1 and not (isinstance(L_piece, Fixed) and L_piece.value == mu):
        raise ValueError(
            f"quadratic_instance_param: with d=1 a client cannot attain both mu={mu!r} and L={L!r}; "
            f"needs d >= 2 or L == mu"
        )
    if weights not in ("random", "uniform"):
        raise ValueError(f"quadratic_instance_param weights must be 'random' or 'uniform', got {weights!r}")
    n_rot = 1 if commuting else n
    pieces: dict[str, Param] = {
        "L": L_piece,
        "C": _range(C, "C", log=False),
        "U": Product({f"U{i}": Rotation(d) for i in range(n_rot)}),
        "lam": Product({f"l{i}": Spectrum(d, mu, lambda s: s["L"]) for i in range(n)}),
        "c": Product({f"c{i}": Ball(d, 1.0) for i in range(n)}),
        "p": Simplex(n) if weights == "random" else Fixed(np.full(n, 1.0 / n)),
        "theta": NonnegWeights(K),
        "alpha": Box(0.0, lambda s: alpha_max * s["L"], atoms={"lo": 0.5}),
        "gamma": Box(0.0, lambda s: 1.0 / (s["L"] + s["alpha"]), open_lo=True, open_hi=True),
    }

    def build(s: dict) -> QuadraticInstance:
        U = np.stack([s["U"][f"U{0 if commuting else i}"] for i in range(n)])
        lam = np.stack([s["lam"][f"l{i}"] for i in range(n)])
        c = np.stack([s["c"][f"c{i}"] for i in range(n)])
        top = float(np.linalg.norm(c, axis=1).max())
        c = c * (s["C"] / top) if top > 0 else c
        A = (U * lam[:, None, :]) @ np.swapaxes(U, 1, 2)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        problem = QuadraticFederation(A=A, c=c, p=s["p"], eigvals=lam, eigvecs=U)
        return QuadraticInstance(problem, Theta(s["theta"]), float(s["alpha"]), float(s["gamma"]))

    return Product(pieces).map(build, to_json=lambda inst: inst.to_json())
