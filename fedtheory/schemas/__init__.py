"""JSON Schemas (draft 2020-12) of fedtheory's output formats: ``check``, ``figure``, ``manifest``.

>>> validate({"claims": [], "summary": {s: 0 for s in ("verified", "refuted", "vacuous", "inconclusive",
...           "skipped", "error")} | {"seconds": 0.0},
...           "environment": {"python": "3.11", "packages": {}, "backend": "numpy", "device": None, "seed": 0}},
...          "check")
>>> sorted(load_schema("figure")["required"])[:3]
['caption', 'environment', 'id']
"""

from __future__ import annotations

import functools
import json
from importlib import resources

NAMES = ("check", "figure", "manifest")


@functools.lru_cache(maxsize=None)
def _schema_text(name: str) -> str:
    stem = name.removesuffix(".json").removesuffix(".schema")
    if stem not in NAMES:
        raise ValueError(f"unknown schema {name!r} (known: {', '.join(NAMES)})")
    return resources.files("fedtheory.schemas").joinpath(f"{stem}.schema.json").read_text(encoding="utf-8")


def load_schema(name: str) -> dict:
    """The schema called ``name`` (``check``, ``figure`` or ``manifest``; ``check.schema.json`` also works).

    >>> load_schema("check.schema.json")["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    """
    return json.loads(_schema_text(name))


def validate(instance, name: str) -> None:
    """Raise :class:`jsonschema.ValidationError` unless ``instance`` matches schema ``name``.

    >>> import jsonschema
    >>> try:
    ...     validate([{"id": "a/figure-1"}], "manifest")
    ... except jsonschema.ValidationError as e:
    ...     print("invalid")
    invalid
    """
    import jsonschema

    schema = load_schema(name)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(
        instance
    )
