"""Claims and evidence: the contract every checkable statement follows.

A *claim* is one checkable statement of a paper (or a cross-cutting fact). Content files
(``paper_checks/<key>/<section>.py``, ``verify/<topic>.py``) declare claims with the :func:`claim`
decorator; the runner loads those files by path, runs each claim's check and compares the
resulting :class:`Evidence` status with the claim's ``expect``.

>>> from fedtheory.claims.core import claim, Evidence, CheckContext
>>> @claim(id="demo/lemma-1", ref="Lemma 1", title="1 + 1 = 2",
...        statement=r"$1 + 1 = 2$", kind="symbolic")
... def lemma_1(ctx):
...     return ctx.verified(measured={"lhs": 1 + 1}, notes="exact integer arithmetic")
>>> lemma_1.paper, lemma_1.tier, lemma_1.expect
('demo', 'fast', 'verified')
>>> lemma_1.run(CheckContext(seed=0)).status
'verified'
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fedtheory.environment import CAPABILITIES
from fedtheory.serialize import jsonable

KINDS = ("symbolic", "numeric", "simulation", "certificate", "probe")
TIERS = ("fast", "full")
#: ``not-reproduced``: a statement checked on substitute data or at reduced scale failed there (no evidence
#: against the paper); ``reading-dependent``: the statement fails under some of the faithful readings of what the
#: paper leaves open and holds under others (never a refutation).
EXPECTS = ("verified", "refuted", "vacuous", "not-reproduced", "reading-dependent")
STATUSES = ("verified", "refuted", "vacuous", "not-reproduced", "reading-dependent", "inconclusive", "skipped", "error")

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.\-]*(/[a-z0-9][a-z0-9_.\-]*)+$")


@dataclass
class Evidence:
    """What one run of a claim's check found.

    ``measured`` holds the numbers that decide the verdict (worst ratio of left to right side,
    fitted slope, ...); ``counterexample`` is a JSON-able dict that the claim's ``replay`` can
    re-evaluate; ``notes`` say what was assumed where the paper is silent.

    >>> Evidence(status="verified", measured={"worst_ratio": 0.5}).to_json()["status"]
    'verified'
    """

    status: str
    measured: dict = field(default_factory=dict)
    tolerance: Any = None
    counterexample: dict | None = None
    seed: int | None = None
    seconds: float = 0.0
    notes: str = ""
    #: how a symbolic verdict was proved (e.g. "sympy: simplify(lhs - rhs) == 0"); a proof counts as the
    #: claim's control (it could not have come out true for a false identity)
    proof: str | None = None
    #: outcomes of the claim's negative controls: [{name, description, status, fired, measured, notes}]
    controls: list = field(default_factory=list)
    #: outcomes under each faithful reading: [{name, description, status, measured, counterexample, notes}]
    readings: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Evidence status must be one of {STATUSES}, got {self.status!r}")

    def to_json(self) -> dict:
        # not dataclasses.asdict: it deep-copies every list element by element before jsonable copies it again
        return jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


def derive_seed(base_seed: int, key: str) -> int:
    """A stable 32-bit seed for ``key`` under ``base_seed`` (independent of process, worker count).

    >>> derive_seed(0, "localupdate/theorem-1") == derive_seed(0, "localupdate/theorem-1")
    True
    """
    digest = hashlib.sha256(f"{base_seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class CheckContext:
    """What a check receives: its seed, a generator seeded from it, the tier and the backend.

    The ``verified``/``refuted``/``vacuous`` helpers build an :class:`Evidence` carrying the seed.
    """

    seed: int = 0
    tier: str = "fast"
    backend: str = "numpy"
    device: str | None = None
    #: the parameters of the negative control being run (None for the claim's own check)
    control: dict | None = None
    #: the parameters of the faithful reading being checked (None when the claim declares no readings)
    reading: dict | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def param(self, name: str, default: Any) -> Any:
        """The value of a statement's parameter: a control's override, else the reading's, else ``default``.

        Checks take every constant a control may falsify (the bound's constant, the proof step, the planted
        defect) through this, so the same code runs the statement and its negative controls.

        >>> CheckContext(control={"constant": 1.0}).param("constant", 8.0), CheckContext().param("constant", 8.0)
        (1.0, 8.0)
        >>> CheckContext(reading={"scaling": "sum"}).param("scaling", "mean")
        'sum'
        """
        for source in (self.control, self.reading):
            if source and name in source:
                return source[name]
        return default

    @property
    def full(self) -> bool:
        """True when the full tier is running (checks may search deeper)."""
        return self.tier == "full"

    def evidence(self, status: str, **kw: Any) -> Evidence:
        return Evidence(status=status, seed=self.seed, **kw)

    def verified(self, **kw: Any) -> Evidence:
        return self.evidence("verified", **kw)

    def proved(self, proof: str, **kw: Any) -> Evidence:
        """``verified`` by an exact symbolic proof, named in ``proof`` (it counts as the claim's control).

        >>> CheckContext().proved("sympy: simplify(a - a) == 0").proof
        'sympy: simplify(a - a) == 0'
        """
        return self.evidence("verified", proof=proof, **kw)

    def refuted(self, **kw: Any) -> Evidence:
        return self.evidence("refuted", **kw)

    def vacuous(self, **kw: Any) -> Evidence:
        return self.evidence("vacuous", **kw)

    def inconclusive(self, **kw: Any) -> Evidence:
        return self.evidence("inconclusive", **kw)

    def decide(self, ok: bool, **kw: Any) -> Evidence:
        """``verified`` when ``ok`` else ``refuted`` (the check itself states what ``ok`` means)."""
        return self.evidence("verified" if ok else "refuted", **kw)


CheckFn = Callable[[CheckContext], Evidence]
ReplayFn = Callable[[dict, CheckContext], Evidence]


@dataclass(frozen=True)
class Control:
    """A negative control: the claim's check run against a statement known to be false.

    ``params`` reach the check as ``ctx.control`` (read them with :meth:`CheckContext.param`): the bound
    tightened past a known attaining instance, the faulty proof step, a planted violation, the known-wrong
    constant. A control *fires* when that run comes out ``refuted``; a verified claim whose control does not
    fire is ``inconclusive`` (the check could not have seen the statement fail). ``check`` replaces the claim's
    own check where the false statement needs different code.

    >>> Control("constant-1", "the bound with constant 1 instead of 8 (attained: 7.7)", {"constant": 1.0}).name
    'constant-1'
    """

    name: str
    description: str
    params: dict = field(default_factory=dict)
    check: CheckFn | None = None


@dataclass(frozen=True)
class Reading:
    """One faithful reading of what the paper leaves open (a scaling, a generator, a normalisation, a
    definition variant). ``params`` reach the check as ``ctx.reading``. A claim that declares readings is
    ``refuted`` only when every reading fails; mixed outcomes are ``reading-dependent``.

    >>> Reading("batch-mean", "mini-batch gradients averaged over the batch", {"scaling": "mean"}).params
    {'scaling': 'mean'}
    """

    name: str
    description: str
    params: dict = field(default_factory=dict)


@dataclass
class Claim:
    """One checkable statement: metadata plus the check that produces :class:`Evidence`.

    ``replay(counterexample, ctx)`` re-evaluates a stored counterexample (ideally in exact or
    high-precision arithmetic) and returns ``refuted`` while it still breaks the statement.
    """

    id: str
    ref: str
    title: str
    statement: str
    kind: str
    check: CheckFn
    tier: str = "fast"
    expect: str = "verified"
    requires: tuple[str, ...] = ()
    replay: ReplayFn | None = None
    source: str | None = None  # path of the content file that defined the claim (set by the loader)
    #: negative controls (see :class:`Control`); run when the claim's own check verifies
    controls: tuple[Control, ...] = ()
    #: why a verified claim has no negative control (listed as an exception in the run's summary)
    control_exempt: str | None = None
    #: faithful readings of what the paper leaves open (see :class:`Reading`)
    readings: tuple[Reading, ...] = ()
    #: the literal reading of a typo in the paper (the intended reading is a separate claim); counted apart
    typo: bool = False
    #: the gap to the paper's setting when checked on substitute data or at reduced scale: a failure is then
    #: ``not-reproduced``, never ``refuted``
    substitute: str | None = None

    def __post_init__(self) -> None:
        if not _ID_RE.match(self.id):
            raise ValueError(f"claim id {self.id!r} must look like '<paper>/<label>-<n>[/<part>]' in lower case")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.tier not in TIERS:
            raise ValueError(f"claim {self.id}: tier must be one of {TIERS}, got {self.tier!r}")
        if self.expect not in EXPECTS:
            raise ValueError(f"claim {self.id}: expect must be one of {EXPECTS}, got {self.expect!r}")
        self.requires = tuple(self.requires)
        unknown = [r for r in self.requires if r not in CAPABILITIES]
        if unknown:
            # a misspelled capability would make the claim "skipped" forever: a check that can never fail
            raise ValueError(
                f"claim {self.id}: unknown capability {', '.join(map(repr, unknown))} in requires "
                f"(known: {', '.join(CAPABILITIES)})"
            )
        self.controls = tuple(self.controls)
        self.readings = tuple(self.readings)
        for label, items in (("control", self.controls), ("reading", self.readings)):
            names = [item.name for item in items]
            if len(set(names)) != len(names):
                raise ValueError(f"claim {self.id}: {label} names must be unique, got {names}")
        if self.substitute is not None and self.expect == "refuted":
            raise ValueError(
                f"claim {self.id}: a statement checked on a substitute ({self.substitute!r}) cannot "
                "expect 'refuted'; expect 'not-reproduced' or 'verified'"
            )

    @property
    def paper(self) -> str:
        return self.id.split("/", 1)[0]

    def run(self, ctx: CheckContext) -> Evidence:
        """Run the check, timing it; exceptions are the runner's business (they become ``error``)."""
        start = time.perf_counter()
        evidence = self.check(ctx)
        if not isinstance(evidence, Evidence):
            raise TypeError(f"check of {self.id} returned {type(evidence).__name__}, not Evidence")
        evidence.seconds = time.perf_counter() - start
        if evidence.seed is None:
            evidence.seed = ctx.seed
        return evidence

    def replayer(self, fn: ReplayFn) -> ReplayFn:
        """Decorator registering the replay of stored counterexamples (it returns the :class:`Evidence` of the
        stored instance, recomputed)::

            @some_claim.replayer
            def _(counterexample, ctx): ...
        """
        self.replay = fn
        return fn

    def metadata(self) -> dict:
        return {
            "id": self.id,
            "paper": self.paper,
            "ref": self.ref,
            "title": self.title,
            "statement": self.statement,
            "kind": self.kind,
            "tier": self.tier,
            "expect": self.expect,
            "requires": list(self.requires),
            "controls_declared": [{"name": c.name, "description": c.description} for c in self.controls],
            "control_exempt": self.control_exempt,
            "readings_declared": [
                {"name": r.name, "description": r.description, "params": r.params} for r in self.readings
            ],
            "typo": self.typo,
            "substitute": self.substitute,
        }


def claim(
    *,
    id: str,
    ref: str,
    title: str,
    statement: str,
    kind: str,
    tier: str = "fast",
    expect: str = "verified",
    requires: tuple[str, ...] | list[str] = (),
    controls: tuple[Control, ...] | list[Control] = (),
    control_exempt: str | None = None,
    readings: tuple[Reading, ...] | list[Reading] = (),
    typo: bool = False,
    substitute: str | None = None,
) -> Callable[[CheckFn], Claim]:
    """Decorator turning a check function ``f(ctx) -> Evidence`` into a :class:`Claim`.

    >>> @claim(id="demo/lemma-7", ref="Lemma 7", title="x² ≤ c for x in [0, 1]", statement="x^2 <= 1",
    ...        kind="numeric", controls=[Control("c-half", "c = 1/2 is false at x = 1", {"c": 0.5})])
    ... def lemma_7(ctx):
    ...     worst = max(x * x for x in (0.0, 0.5, 1.0))
    ...     return ctx.decide(worst <= ctx.param("c", 1.0), measured={"worst": worst})
    >>> [c.name for c in lemma_7.controls]
    ['c-half']
    """

    def wrap(fn: CheckFn) -> Claim:
        return Claim(
            id=id,
            ref=ref,
            title=title,
            statement=statement,
            kind=kind,
            check=fn,
            tier=tier,
            expect=expect,
            requires=tuple(requires),
            controls=tuple(controls),
            control_exempt=control_exempt,
            readings=tuple(readings),
            typo=typo,
            substitute=substitute,
        )

    return wrap
