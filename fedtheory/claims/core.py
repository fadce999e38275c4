"""Claims and evidence: the contract every checkable statement follows.

A *claim* is one checkable statement of a paper (or a cross-cutting fact). Content files
(``paper_checks/<key>.py``, ``verify/<topic>.py``) declare claims with the :func:`claim`
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

from fedtheory.serialize import jsonable

KINDS = ("symbolic", "numeric", "simulation", "certificate", "probe")
TIERS = ("fast", "full")
EXPECTS = ("verified", "refuted", "vacuous")
STATUSES = ("verified", "refuted", "vacuous", "inconclusive", "skipped", "error")

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

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Evidence status must be one of {STATUSES}, got {self.status!r}")

    def to_json(self) -> dict:
        return jsonable(dataclasses.asdict(self))


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

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    @property
    def full(self) -> bool:
        """True when the full tier is running (checks may search deeper)."""
        return self.tier == "full"

    def evidence(self, status: str, **kw: Any) -> Evidence:
        return Evidence(status=status, seed=self.seed, **kw)

    def verified(self, **kw: Any) -> Evidence:
        return self.evidence("verified", **kw)

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
        """Decorator registering the replay of stored counterexamples::

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
) -> Callable[[CheckFn], Claim]:
    """Decorator turning a check function ``f(ctx) -> Evidence`` into a :class:`Claim`."""

    def wrap(fn: CheckFn) -> Claim:
        return Claim(
            id=id, ref=ref, title=title, statement=statement, kind=kind, check=fn,
            tier=tier, expect=expect, requires=tuple(requires),
        )

    return wrap
