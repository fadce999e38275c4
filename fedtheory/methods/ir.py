r"""A federated method as data: its state and one round written from a few primitives.

A :class:`Method` names its **server state** (vectors in ℝᵈ held by the server, e.g. ``x``, a control variate
``c``, the previous iterate for momentum), its **client state** (one vector per client, e.g. FedSplit's ``z``,
SCAFFOLD's ``ci``), how each starts (from x₀ or at 0), host-side **scalars** (Acc-S-DANE's A_r, B_r) and one
**round**: a sequence of operations, each writing one variable, read in order (a read before a write sees the
previous round's value). The primitives:

- :class:`Combine` — a linear combination of variables: reflection 2x̄ − z, extrapolation, momentum, the
  arithmetic of control variates. Its scope is the client when any term is a client variable.
- :class:`Gradient` — every (sampled) client's ∇f_i at a point.
- :class:`LocalSteps` — K local gradient steps y ← y − γ(∇f_i(y) + α(y − anchor) + shift) from ``start``; writes
  the last point and/or the message Σ_k θ_k g_k (Θ of Charles & Konečný).
- :class:`Prox` — prox_{s f_i}(centre): exact, or inexact through a named local solver
  (:class:`ProxSolver`), warm-started at a variable or cold-started at the centre.
- :class:`Aggregate` — a server variable from a client variable: ``"mean"`` is the unbiased estimate of
  Σ_i p_i v_i over the sampled clients, ``"sum"`` is Σ_{i∈S} p_i v_i (SCAFFOLD's control-variate update).
- :class:`Scalars` — a host-side update of the scalars (coefficients may name a scalar or be a function of them).
- :class:`ServerMap` — a nonlinear server rule (Adam); a method that uses one has no spectral path or PEP.
- :class:`ClientProgram` — a client message computed by a program of its own (MAML: exact gradients through K
  inner steps), for what the primitives above do not express; it has the simulator and the spectral path, no PEP.

Client sampling is part of running a method (``clients_per_round``), not of its description: only the sampled
clients execute client-scope operations, and the client state of the others is left as it was.

The same description compiles four ways (:mod:`fedtheory.methods`): the batched simulator (numpy or torch),
the exact spectral path on quadratics, the federated PEP, and the explorer.

>>> from fedtheory.methods.ir import Method, Combine, Prox, Aggregate
>>> m = Method("toy-prox", server=("x",), client=(), init={"x": "x0"},
...            round=(Prox("y", center="x", step=0.5), Aggregate("x", "y")), output="x")
>>> m.client_vars, m.linear
(('y',), True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Union

import numpy as np

from fedtheory.algorithms.theta import Theta

__all__ = [
    "Coef",
    "Combine",
    "Gradient",
    "LocalSteps",
    "Prox",
    "ProxSolver",
    "Aggregate",
    "Scalars",
    "ServerMap",
    "ClientProgram",
    "Method",
    "coef_value",
    "OPS",
]

#: a coefficient: a number, the name of a scalar, or a function of the scalars (a dict) and the hyperparameters
Coef = Union[float, int, str, Callable[[Mapping[str, float]], float]]


def coef_value(c: Coef, scalars: Mapping[str, float]) -> float:
    """The value of a coefficient under the current scalars.

    >>> coef_value(2, {}), coef_value("A", {"A": 0.5}), coef_value(lambda s: s["A"] + 1, {"A": 0.5})
    (2.0, 0.5, 1.5)
    """
    if isinstance(c, str):
        if c not in scalars:
            raise ValueError(
                f"coefficient names the scalar {c!r}, which the method does not define (scalars: {sorted(scalars)})"
            )
        return float(scalars[c])
    if callable(c):
        return float(c(scalars))
    return float(c)


@dataclass(frozen=True)
class Combine:
    """``out = Σ coef · var`` (``terms``: pairs (var, coef)).

    >>> Combine("v", (("xbar", 2.0), ("z", -1.0))).reads
    ('xbar', 'z')
    """

    out: str
    terms: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", tuple((str(v), c) for v, c in self.terms))
        if not self.terms:
            raise ValueError(f"Combine {self.out!r} needs at least one term")

    @property
    def reads(self) -> tuple:
        return tuple(v for v, _ in self.terms)


@dataclass(frozen=True)
class Gradient:
    """``out_i = ∇f_i(at_i)`` for every sampled client (``full=True``: the full local loss even when the run
    draws mini-batches, as DANE's gradient at the prox centre).

    >>> Gradient("g", at="x").reads
    ('x',)
    """

    out: str
    at: str
    full: bool = False

    @property
    def reads(self) -> tuple:
        return (self.at,)


@dataclass(frozen=True)
class LocalSteps:
    r"""K local steps from ``start``: y_{k+1} = y_k − γ g_k, g_k = ∇f_i(y_k) + α(y_k − anchor) + shift.

    ``out``: the last point y_{K+1} (or None); ``message``: Σ_k θ_k g_k (or None) with ``theta`` (default
    Θ_{1:K}). ``anchor`` and ``shift`` are variables (None: α-term or shift absent).

    >>> LocalSteps("y", start="x", steps=3, gamma=0.1, shift="corr").reads
    ('x', 'corr')
    """

    out: str | None
    start: str
    steps: int
    gamma: Coef
    alpha: Coef = 0.0
    anchor: str | None = None
    shift: str | None = None
    theta: Theta | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.steps, bool) or int(self.steps) != self.steps or self.steps < 1:
            raise ValueError(f"LocalSteps needs an integer number of steps >= 1, got {self.steps!r}")
        object.__setattr__(self, "steps", int(self.steps))
        if self.theta is not None:
            th = self.theta if isinstance(self.theta, Theta) else Theta(self.theta)
            if th.K != self.steps:
                raise ValueError(f"LocalSteps theta has K={th.K}, but steps={self.steps}")
            object.__setattr__(self, "theta", th)
        if self.out is None and self.message is None:
            raise ValueError("LocalSteps must write its last point (out) or its message (message)")
        alpha_given = isinstance(self.alpha, str) or callable(self.alpha) or float(self.alpha) != 0
        if alpha_given and self.anchor is None:
            raise ValueError(
                "LocalSteps with alpha != 0 (a number, a scalar's name or a function of the scalars) "
                "needs an anchor variable"
            )

    @property
    def reads(self) -> tuple:
        return tuple(v for v in (self.start, self.anchor, self.shift) if v is not None)

    @property
    def writes(self) -> tuple:
        return tuple(v for v in (self.out, self.message) if v is not None)

    def weights(self) -> Theta:
        return self.theta if self.theta is not None else Theta.uniform(self.steps)


@dataclass(frozen=True)
class ProxSolver:
    """How a client computes prox_{s f_i}(v) = argmin_y s f_i(y) + ½‖y − v‖².

    ``kind="exact"``: the exact minimizer. ``kind="gd"``: ``steps`` gradient steps of size ``step_size`` on the
    prox objective (default 1/(s L + 1), L the clients' smoothness), from the Prox's ``start`` (warm) or from its
    ``center`` (cold). ``kind="local"``: ``local``, a solver of :mod:`fedtheory.algorithms.local_solvers` (GD,
    FGM, OGM-G, SGD, Exact, Boundary, ...), on the subproblem F_i(y) = f_i(y) − ⟨ℓ_i, y⟩ + λ/2‖y − c_i‖² with c_i
    the Prox's ``center``, ℓ_i its ``linear`` term and λ = 1/s, started at c_i and stopped by ``test``
    (:class:`~fedtheory.algorithms.local_solvers.StabilizedTest`, :class:`~fedtheory.algorithms.local_solvers.DaneTest`,
    or None for a solver with a fixed number of steps K, which the solver itself insists on): the DANE family's
    "any local solver that meets the round's accuracy test". It runs on the simulator's step path only and has no
    PEP.

    >>> ProxSolver("gd", steps=5)
    ProxSolver(kind='gd', steps=5, step_size=None, local=None, test=None)
    >>> from fedtheory.algorithms.local_solvers import GD, StabilizedTest
    >>> ProxSolver("local", local=GD(), test=StabilizedTest()).name
    'gd'
    >>> ProxSolver("newton")
    Traceback (most recent call last):
    ...
    ValueError: ProxSolver kind must be 'exact', 'gd' or 'local', got 'newton'
    """

    kind: str = "exact"
    steps: int | None = None
    step_size: float | None = None
    local: Any = None
    test: Any = None

    def __post_init__(self) -> None:
        if self.kind not in ("exact", "gd", "local"):
            raise ValueError(f"ProxSolver kind must be 'exact', 'gd' or 'local', got {self.kind!r}")
        if self.kind == "gd":
            if isinstance(self.steps, bool) or self.steps is None or int(self.steps) != self.steps or self.steps < 1:
                raise ValueError(f"ProxSolver 'gd' needs an integer number of steps >= 1, got {self.steps!r}")
            if self.step_size is not None and not (math.isfinite(float(self.step_size)) and self.step_size > 0):
                raise ValueError(f"ProxSolver step_size must be finite and > 0, got {self.step_size!r}")
        if self.kind == "local":
            if not callable(getattr(self.local, "solve", None)):
                raise ValueError(
                    "ProxSolver 'local' needs a local solver with a solve(subproblem, test) method "
                    f"(fedtheory.algorithms.local_solvers), got {self.local!r}"
                )
        elif self.local is not None or self.test is not None:
            raise ValueError(f"ProxSolver {self.kind!r} takes no local solver or test (those are kind 'local')")

    @property
    def step_count(self) -> int:
        """The number of gradient steps of a ``gd`` solver (checked when it was made); a ValueError for a solver
        without a fixed number (``exact``, ``local``).

        >>> ProxSolver("gd", steps=3).step_count
        3
        """
        if self.steps is None:
            raise ValueError(f"ProxSolver {self.kind!r} has no fixed number of gradient steps")
        return int(self.steps)

    @property
    def name(self) -> str:
        """``exact``, ``gd``, or the local solver's own name (``fgm``, ``sgd``, ...)."""
        return getattr(self.local, "name", type(self.local).__name__) if self.kind == "local" else self.kind


@dataclass(frozen=True)
class Prox:
    """``out_i = prox_{s f_i}(center_i + s ℓ_i)`` = argmin_y f_i(y) − ⟨ℓ_i, y⟩ + ‖y − center_i‖²/(2s) through
    ``solver``. ``linear``: the variable ℓ (None: 0), e.g. DANE's drift correction ∇f_i(c) − ∇f_S(c);
    ``start``: the ``"gd"`` solver's first point (a variable: warm start, e.g. the previous prox output) or None
    (cold start at ``center``). A ``"local"`` solver starts at ``center`` and its test measures ‖y − center‖;
    with it ``step`` may be ``math.inf`` (λ = 1/s = 0: DANE with λ = 0 and a fixed number of local steps).

    >>> Prox("zh", center="v", step=0.1, solver=ProxSolver("gd", steps=3), start="zh").reads
    ('v', 'zh')
    >>> Prox("xi", center="v", step=0.5, linear="ell").reads
    ('v', 'ell')
    """

    out: str
    center: str
    step: Coef
    solver: ProxSolver = ProxSolver()
    start: str | None = None
    linear: str | None = None

    def __post_init__(self) -> None:
        if self.solver.kind == "local" and self.start not in (None, self.center):
            raise ValueError(
                f"Prox {self.out!r}: a local solver starts at the centre {self.center!r} (its test "
                f"measures the distance from it), not at {self.start!r}"
            )

    @property
    def reads(self) -> tuple:
        warm = (self.start,) if self.start is not None and self.solver.kind == "gd" else ()
        return (self.center,) + warm + ((self.linear,) if self.linear is not None else ())


@dataclass(frozen=True)
class Aggregate:
    """A server variable from a client variable: ``mode="mean"`` (Σ p_i v_i, unbiased over a sample) or
    ``"sum"`` (Σ_{i∈S} p_i v_i: the clients not sampled contribute nothing).

    >>> Aggregate("xbar", "z").mode
    'mean'
    """

    out: str
    var: str
    mode: str = "mean"

    def __post_init__(self) -> None:
        if self.mode not in ("mean", "sum"):
            raise ValueError(f"Aggregate mode must be 'mean' or 'sum', got {self.mode!r}")

    @property
    def reads(self) -> tuple:
        return (self.var,)


@dataclass(frozen=True)
class Scalars:
    """A host-side update of the scalars where it stands in the round: ``fn(scalars) -> dict`` of new or changed
    scalars, or, with ``reads`` (variable names), ``fn(scalars, values) -> dict`` where ``values`` maps each read
    variable to its current value as a host numpy array (server (d,), client (m, d) over the m participating
    clients): a scalar sequence that adapts to the run, as S-DANE's adaptive λ (Section 5). A round with such an
    update is not linear in the state (no PEP) and runs on the step path.

    >>> Scalars(lambda s, v: {"lam": float(abs(v["x"]).max())}, reads=("x",)).adaptive
    True
    """

    fn: Callable[..., Mapping[str, float]]
    reads: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads", tuple(self.reads))

    @property
    def adaptive(self) -> bool:
        """Whether the update reads the state (then it is not a function of the scalars alone)."""
        return bool(self.reads)


@dataclass(frozen=True)
class ServerMap:
    """A nonlinear server rule: ``outs = fn(backend, scalars, *inputs)`` on server variables (e.g. Adam)."""

    outs: tuple
    fn: Callable
    inputs: tuple

    @property
    def reads(self) -> tuple:
        return tuple(self.inputs)


@dataclass(frozen=True)
class ClientProgram:
    """``out_i`` = the message of a client program at the broadcast server point ``at``.

    ``program`` follows the client-program protocol of :class:`fedtheory.algorithms.maml.MAML`:
    ``local_steps`` (gradient evaluations per round), ``batches_per_round(has_batches)``,
    ``quadratic_operators(F, be)`` (B_i with message B_i(x − c_i) on quadratic clients),
    ``quadratic_messages(F, x, be)`` (the literal computation) and
    ``finite_sum_messages(arrays, x, clients, batches, be)``.
    """

    out: str
    at: str
    program: Any

    @property
    def reads(self) -> tuple:
        return (self.at,)


OPS = (Combine, Gradient, LocalSteps, Prox, Aggregate, Scalars, ServerMap, ClientProgram)


def _writes(op: Any) -> tuple:
    if isinstance(op, LocalSteps):
        return op.writes
    if isinstance(op, ServerMap):
        return tuple(op.outs)
    if isinstance(op, Scalars):
        return ()
    return (op.out,)


@dataclass(frozen=True)
class Method:
    """A federated method: state, initial values, one round, and what the server reports.

    ``server``/``client``: names of the state variables; ``init``: each state variable's start, ``"x0"`` or a
    number (0: the zero vector); ``round``: the operations; ``output``: a server variable, or a client
    variable whose p-weighted mean is reported (FedSplit's x̄); ``scalars``: initial host scalars;
    ``weighting``: ``"p"`` (clients f_i, weights p) or ``"uniform-view"`` (clients n p_i f_i averaged
    uniformly, as the DANE family defines a weighted federation); ``stateful_sampling``: whether client
    sampling is defined; ``hyper``: the hyperparameters it was built from; ``reference``: where it comes from.

    Validation happens here: every variable is written before it is read (or is state), scopes are consistent
    (an Aggregate reads a client variable and writes a server one), and the output is a state variable.

    >>> from fedtheory.methods.ir import Method, Combine
    >>> Method("bad", server=("x",), client=(), init={"x": "x0"}, round=(Combine("x", (("y", 1.0),)),), output="x")
    Traceback (most recent call last):
    ...
    ValueError: method 'bad': operation 1 (Combine) reads 'y' before anything writes it
    """

    name: str
    server: tuple
    client: tuple
    init: Mapping[str, Any]
    round: tuple
    output: str
    scalars: Mapping[str, float] = field(default_factory=dict)
    weighting: str = "p"
    sampling: bool = True
    hyper: Mapping[str, Any] = field(default_factory=dict)
    reference: str = ""
    if TYPE_CHECKING:  # each variable's scope, set by __post_init__; a field for the type checker only
        _scope: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "server", tuple(self.server))
        object.__setattr__(self, "client", tuple(self.client))
        object.__setattr__(self, "round", tuple(self.round))
        object.__setattr__(self, "init", dict(self.init))
        object.__setattr__(self, "scalars", dict(self.scalars))
        who = f"method {self.name!r}"
        if self.weighting not in ("p", "uniform-view"):
            raise ValueError(f"{who}: weighting must be 'p' or 'uniform-view', got {self.weighting!r}")
        both = set(self.server) & set(self.client)
        if both:
            raise ValueError(f"{who}: {sorted(both)} declared both server and client state")
        for v in self.server + self.client:
            if v not in self.init:
                raise ValueError(f"{who}: state variable {v!r} has no initial value in init")
            val = self.init[v]
            number = isinstance(val, (int, float, np.integer, np.floating)) and not isinstance(val, (bool, np.bool_))
            if not ((isinstance(val, str) and val == "x0") or (number and float(val) == 0.0)):
                raise ValueError(f"{who}: init[{v!r}] must be 'x0' or 0, got {val!r}")
        scope = {v: "server" for v in self.server}
        scope.update({v: "client" for v in self.client})
        for k, op in enumerate(self.round, 1):
            name = type(op).__name__
            if not isinstance(op, OPS):
                raise ValueError(f"{who}: operation {k} is a {name}, not one of {[o.__name__ for o in OPS]}")
            for r in op.reads:
                if r not in scope:
                    raise ValueError(f"{who}: operation {k} ({name}) reads {r!r} before anything writes it")
            if isinstance(op, Combine):
                s = "client" if any(scope[v] == "client" for v in op.reads) else "server"
            elif isinstance(op, Aggregate):
                if scope[op.var] != "client":
                    raise ValueError(
                        f"{who}: operation {k} (Aggregate) reads the server variable {op.var!r}; "
                        "it aggregates a client variable"
                    )
                s = "server"
            elif isinstance(op, ServerMap):
                bad = [v for v in op.inputs if scope[v] != "server"]
                if bad:
                    raise ValueError(f"{who}: operation {k} (ServerMap) reads client variables {bad}")
                s = "server"
            elif isinstance(op, ClientProgram):
                if scope[op.at] != "server":
                    raise ValueError(
                        f"{who}: operation {k} (ClientProgram) runs at a broadcast server point, "
                        f"not at the client variable {op.at!r}"
                    )
                s = "client"
            else:
                s = "client"
            for w in _writes(op):
                if w in scope and w in (self.server + self.client) and scope[w] != s:
                    raise ValueError(f"{who}: operation {k} ({name}) writes the {scope[w]} state {w!r} from {s} scope")
                scope[w] = s
        if self.output not in scope:
            raise ValueError(f"{who}: output {self.output!r} is never defined")
        if self.output not in self.server + self.client:
            raise ValueError(
                f"{who}: output {self.output!r} is a temporary of the round; it must be a state "
                f"variable (server {list(self.server)}, client {list(self.client)}), which is kept "
                "between rounds and exists at the start"
            )
        object.__setattr__(self, "_scope", scope)

    # introspection ------------------------------------------------------------------------------
    def scope(self, var: str) -> str:
        """``"server"`` or ``"client"``."""
        return self._scope[var]

    @property
    def client_vars(self) -> tuple:
        """Every client-scope variable (state and temporaries), in order of first appearance."""
        return tuple(v for v, s in self._scope.items() if s == "client")

    @property
    def linear(self) -> bool:
        """Whether a round is affine in the state on quadratics (no nonlinear server rule, no scalar update that
        reads the state, no test-stopped local solver): the condition for the PEP's and the probes' analysis of a
        round (the spectral path only needs quadratic clients)."""
        return not any(
            isinstance(op, ServerMap)
            or (isinstance(op, Scalars) and op.adaptive)
            or (isinstance(op, Prox) and op.solver.kind == "local")
            for op in self.round
        )

    @property
    def pep_ready(self) -> bool:
        """Whether every primitive has a PEP counterpart (a linear round, no client program)."""
        return self.linear and not any(isinstance(op, ClientProgram) for op in self.round)

    @property
    def step_only(self) -> bool:
        """Whether the method runs on the literal path only: a test-stopped local solver (it works on the
        clients' oracles), or a scalar update that reads the state (host arrays in original coordinates)."""
        return any(
            (isinstance(op, Prox) and op.solver.kind == "local") or (isinstance(op, Scalars) and op.adaptive)
            for op in self.round
        )

    @property
    def exact_prox(self) -> bool:
        return any(isinstance(op, Prox) and op.solver.kind == "exact" for op in self.round)

    def local_work(self) -> int:
        """Local gradient evaluations per participating client per round (a Prox's exact solve, or a solve by a
        test-stopped local solver, counts as 1: the latter's real count is in the run's trace).

        >>> from fedtheory.methods import get
        >>> get("scaffold", K=5, gamma=0.1).local_work(), get("fedsplit", s=1.0).local_work()
        (5, 1)
        """
        total = 0
        for op in self.round:
            if isinstance(op, Gradient):
                total += 1
            elif isinstance(op, LocalSteps):
                total += op.steps
            elif isinstance(op, Prox):
                # a test-stopped local solver's count varies by round and client: the run's trace records it
                total += op.solver.step_count if op.solver.kind == "gd" else 1
            elif isinstance(op, ClientProgram):
                total += int(op.program.local_steps)
        return total

    def aggregation_weights(self, p: Any) -> np.ndarray:
        """The weights the method aggregates with under full participation: p, or 1/n for the uniform view.

        >>> from fedtheory.methods import get
        >>> get("dane", lam=1.0).aggregation_weights([0.25, 0.75]).tolist()
        [0.5, 0.5]
        """
        p = np.asarray(p, dtype=np.float64)
        return np.full(p.shape[0], 1.0 / p.shape[0]) if self.weighting == "uniform-view" else p

    def state_norm_sq(self, server: Mapping[str, Any], client: Mapping[str, Any], p: Any) -> float:
        """The squared norm of a state difference in which the *rate* of a round is measured (one definition,
        used by the PEP and the probes): Σ_server ‖Δv‖² + Σ_client Σ_i w_i‖Δv_i‖², w the aggregation weights.

        >>> from fedtheory.methods import get
        >>> m = get("scaffold", K=2, gamma=0.1)
        >>> m.state_norm_sq({"x": [1.0, 0.0], "c": [0.0, 0.0]}, {"ci": [[2.0, 0.0], [0.0, 0.0]]}, [0.5, 0.5])
        3.0
        """
        w = self.aggregation_weights(p)
        total = sum(float(np.sum(np.asarray(server[v], dtype=np.float64) ** 2)) for v in self.server)
        for v in self.client:
            Z = np.asarray(client[v], dtype=np.float64)
            total += float(np.sum(w * np.sum(Z**2, axis=1)))
        return total

    def initial_value(self, var: str, x0: Any, be: Any, n: int) -> Any:
        """The starting array of a state variable: (d,) for the server, (n, d) for a client variable."""
        v = self.init[var]
        base = x0 if v == "x0" else 0 * x0
        if self._scope[var] == "client":
            return base[None, :] + 0 * be.zeros((n, int(x0.shape[0])))
        return base + 0

    def describe(self) -> str:
        """One line per operation (for ``fedtheory explore`` and error messages).

        >>> from fedtheory.methods import get
        >>> print(get("fedsplit", s=0.5).describe().splitlines()[1])
          1. xbar = aggregate(z, mean)
        """
        lines = [f"{self.name}: server {list(self.server)}, client {list(self.client)}, output {self.output}"]
        for k, op in enumerate(self.round, 1):
            if isinstance(op, Combine):
                body = " + ".join(f"{c if not callable(c) else 'f(scalars)'}·{v}" for v, c in op.terms)
                lines.append(f"  {k}. {op.out} = {body}")
            elif isinstance(op, Gradient):
                lines.append(f"  {k}. {op.out} = grad f_i({op.at})")
            elif isinstance(op, LocalSteps):
                lines.append(f"  {k}. {', '.join(op.writes)} = {op.steps} local steps from {op.start}")
            elif isinstance(op, Prox):
                centre = op.center if op.linear is None else f"{op.center} + s·{op.linear}"
                lines.append(f"  {k}. {op.out} = prox(s f_i)({centre}) [{op.solver.name}]")
            elif isinstance(op, Aggregate):
                lines.append(f"  {k}. {op.out} = aggregate({op.var}, {op.mode})")
            elif isinstance(op, Scalars):
                lines.append(f"  {k}. scalars update" + (f" from {', '.join(op.reads)}" if op.reads else ""))
            elif isinstance(op, ClientProgram):
                lines.append(f"  {k}. {op.out} = {type(op.program).__name__} message at {op.at}")
            else:
                lines.append(f"  {k}. {', '.join(op.outs)} = server map({', '.join(op.inputs)})")
        return "\n".join(lines)


def _positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be finite and {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return v


def _int_at_least(value: Any, name: str, lo: int = 1) -> int:
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer, float))
        or int(value) != value
        or value < lo
    ):
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)
