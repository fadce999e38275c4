"""Replays that recompute: a stored counterexample re-checked by running the claim's own check again.

For claims whose instance is cheap to rebuild (model sizes counted on built networks, comparisons of transcribed
tables), replaying the stored numbers would let a bug in the code that produced them — or a corrected
transcription — leave the refutation standing. :func:`recomputing_replay` registers a replay that reruns the check
(same seed, so the same instance) and compares the stored counterexample with the recomputed one only as a
cross-check: when they differ the stored instance is stale, the replay says ``inconclusive`` and the runner runs
the check afresh and stores what it finds.

>>> from fedtheory.claims.core import CheckContext, claim
>>> data = {"printed": 3.27}
>>> @claim(id="demo/table-1", ref="Table 1", title="t", statement="s", kind="numeric", expect="refuted")
... def table_1(ctx):
...     ok = round(3277220 / 1e6, 2) == data["printed"]
...     return ctx.decide(ok, counterexample=None if ok else {"printed": data["printed"]})
>>> _ = recomputing_replay(table_1)
>>> table_1.replay({"printed": 3.27}, CheckContext()).status
'refuted'
>>> table_1.replay({"printed": 3.26}, CheckContext()).status      # stored numbers no longer what the check finds
'inconclusive'
>>> data["printed"] = 3.28                                          # the transcription corrected: no refutation
>>> table_1.replay({"printed": 3.27}, CheckContext()).status
'verified'
"""

from __future__ import annotations

import json

from fedtheory.claims.core import Claim, CheckContext, Evidence

__all__ = ["recomputing_replay"]


def _plain(obj):
    return json.loads(json.dumps(obj, default=str))


def recomputing_replay(claim: Claim) -> Claim:
    """Register on ``claim`` a replay that reruns its check and cross-checks the stored counterexample (see the module
    docstring); returns the claim. A stored ``reading`` key (added by the runner for faithful readings) is ignored."""

    def replay(stored: dict, ctx: CheckContext) -> Evidence:
        evidence = claim.check(ctx)
        fresh = _plain(evidence.counterexample)
        if evidence.status == "refuted" and _plain({k: v for k, v in stored.items() if k != "reading"}) != fresh:
            return ctx.inconclusive(
                measured=evidence.measured,
                notes="recomputed, the check refutes the statement but not with the stored counterexample: "
                "the stored instance is stale. " + evidence.notes,
            )
        evidence.notes = "replay reran the check (the stored counterexample is only compared). " + evidence.notes
        return evidence

    claim.replayer(replay)
    return claim
