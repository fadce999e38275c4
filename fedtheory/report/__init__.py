"""``fedtheory report``: a readable, offline record of a check run, as a static site.

:func:`fedtheory.report.build.build_report` turns a check JSON (``fedtheory check --json``),
optionally a figures directory (``fedtheory figures --out DIR``) and a baseline check JSON, into a
directory of pages that open from disk with no network (inline CSS, MathML, no JavaScript):
``index.html`` (the diff against the baseline first; per paper counts by status and expectation,
controlled share, time; environment and seed) and ``paper-<key>.html`` (every claim with its
statement, verdict, evidence, counterexample, controls; the inventory; the figures).

Modules: :mod:`~fedtheory.report.data` (reading the inputs), :mod:`~fedtheory.report.latex`
(statements to MathML), :mod:`~fedtheory.report.diff` (what changed), :mod:`~fedtheory.report.site`
(the pages), :mod:`~fedtheory.report.build` (writing the site atomically),
:mod:`~fedtheory.report.command` (the CLI side). Importing this package imports none of them.
"""
