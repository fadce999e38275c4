"""How explorer results show themselves: a rich table on a terminal, HTML in a notebook, JSON, a plot.

Every result (:class:`~fedtheory.explore.frontiers.Frontier`, :class:`~fedtheory.explore.tuning.Advice`,
:class:`~fedtheory.explore.comparison.Comparison`, :class:`~fedtheory.explore.simulation.Simulation`)
subclasses :class:`Result`: it says what its columns and rows are and how to draw itself; the rest
(rendering, JSON, saving) lives here once.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory.serialize import jsonable

__all__ = ["Result", "fmt", "setting_text", "entry", "envelope", "ENVELOPE_FIELDS", "ENTRY_FIELDS"]

#: the JSON fields every tune, compare and frontier result has (the same names, the same meaning)
ENVELOPE_FIELDS = (
    "kind",
    "function_class",
    "constants",
    "entries",
    "claims",
    "hypotheses",
    "caveats",
    "message",
    "extra",
)
#: the fields of each entry (one setting of one method)
ENTRY_FIELDS = (
    "method",
    "setting",
    "guaranteed",
    "rounds",
    "floor",
    "local_steps",
    "rho",
    "valid",
    "claims",
    "function_class",
    "lower_bound",
)


def fmt(value: Any) -> str:
    """A short, exact-enough text for a table cell.

    >>> fmt(0.123456789), fmt(3), fmt(float("inf")), fmt(1e-12), fmt("gd"), fmt(None)
    ('0.1235', '3', 'inf', '1e-12', 'gd', '—')
    """
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isinf(v) or math.isnan(v):
            return str(v)
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return str(value)


def setting_text(setting: dict) -> str:
    """A setting as printed (the key of "distinct to the printed precision").

    >>> setting_text({"theta": "uniform", "K": 3, "gamma": 0.0123456, "server": "gd", "eta": 0.5, "beta": 0.0})
    'theta=uniform, K=3, gamma=0.01235, server=gd, eta=0.5, beta=0'
    """
    return ", ".join(f"{k}={fmt(v)}" for k, v in setting.items())


def entry(
    method: str,
    setting: dict,
    *,
    guaranteed: Any,
    rounds: Any,
    floor: Any,
    local_steps: Any,
    rho: Any,
    valid: bool,
    claims: Any,
    function_class: str,
    lower_bound: Any = None,
) -> dict:
    """One setting of one method in the shared JSON form (:data:`ENTRY_FIELDS`); ``guaranteed`` is None
    where no valid guarantee exists.

    >>> sorted(entry("gd", {"K": 1}, guaranteed=0.5, rounds=3, floor=0.0, local_steps=1, rho=0.5, valid=True,
    ...              claims=("a",), function_class="general")) == sorted(ENTRY_FIELDS)
    True
    """
    return {
        "method": method,
        "setting": setting,
        "guaranteed": guaranteed if valid else None,
        "rounds": rounds,
        "floor": floor if valid else None,
        "local_steps": local_steps,
        "rho": rho,
        "valid": bool(valid),
        "claims": list(claims),
        "function_class": function_class,
        "lower_bound": lower_bound,
    }


def envelope(
    kind: str,
    *,
    function_class: str,
    constants: dict,
    entries: list,
    claims: Any,
    hypotheses: Any,
    caveats: Any,
    message: str,
    extra: dict,
) -> dict:
    """The shared JSON form of tune, compare and frontier results (:data:`ENVELOPE_FIELDS`).

    >>> tuple(envelope("tune", function_class="d1", constants={}, entries=[], claims=(), hypotheses=(), caveats=(),
    ...                message="", extra={})) == ENVELOPE_FIELDS
    True
    """
    return {
        "kind": kind,
        "function_class": function_class,
        "constants": constants,
        "entries": entries,
        "claims": list(claims),
        "hypotheses": list(hypotheses),
        "caveats": list(caveats),
        "message": message,
        "extra": extra,
    }


# results serialize through the library's one conversion
plain = jsonable


class Result:
    """Base of explorer results. Subclasses set ``title`` and implement :meth:`columns`, :meth:`rows`,
    :meth:`to_json` and :meth:`draw` (onto a matplotlib figure)."""

    title = "fedtheory explore"

    def columns(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def rows(self) -> list[list[Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def notes(self) -> list[str]:
        """Lines printed under the table (hypotheses, caveats, claim ids)."""
        return []

    def to_json(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def draw(self, fig) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # rendering ----------------------------------------------------------------------------------
    def table(self, max_rows: int = 30):
        """A rich Table (at most ``max_rows`` rows; the JSON has them all)."""
        from rich.table import Table

        t = Table(title=self.title)
        for c in self.columns():
            t.add_column(c, overflow="fold")
        rows = self.rows()
        for r in rows[:max_rows]:
            t.add_row(*[fmt(v) for v in r])
        if len(rows) > max_rows:
            t.caption = f"{max_rows} of {len(rows)} rows shown; --json has them all"
        return t

    def print(self, console: Any = None, max_rows: int = 30) -> None:
        """Print the table and the notes."""
        from rich.console import Console

        console = console or Console()
        console.print(self.table(max_rows))
        for line in self.notes():
            console.print(line, markup=False, highlight=False)

    def __str__(self) -> str:
        import io

        from rich.console import Console

        buf = io.StringIO()
        self.print(Console(file=buf, width=120, force_terminal=False))
        return buf.getvalue()

    def _repr_html_(self) -> str:
        """Notebook view: the table, then the notes, then the plot (inline PNG)."""
        import html  # here: a command-line call never renders HTML

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns())
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(fmt(v))}</td>" for v in r) + "</tr>" for r in self.rows()[:50]
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes())
        return (
            f"<h4>{html.escape(self.title)}</h4><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<ul>{notes}</ul>{self._png_tag()}"
        )

    def _png_tag(self) -> str:
        import base64
        import io

        buf = io.BytesIO()
        fig = self.figure()
        fig.savefig(buf, format="png", dpi=80)
        import matplotlib.pyplot as plt

        plt.close(fig)
        return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'

    def figure(self):
        """A matplotlib figure of the result (Agg backend; nothing is shown)."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(6.4, 4.2))
        self.draw(fig)
        fig.tight_layout()
        return fig

    def save_plot(self, path: str) -> None:
        """Write the plot to ``path`` (format from its suffix)."""
        import matplotlib.pyplot as plt

        from fedtheory.sweep import atomic_writer

        fig = self.figure()
        try:
            with atomic_writer(path, "wb") as fh:
                fig.savefig(fh, dpi=110, format=Path(path).suffix.lstrip(".").lower() or "png")
        finally:
            plt.close(fig)

    def save_json(self, path: str) -> None:
        """Write :meth:`to_json` atomically."""
        from fedtheory.sweep import write_json_atomic

        write_json_atomic(path, plain(self.to_json()), indent=1)
