"""Sphinx directive ``fedtheory-cli``: the ``--help`` of every fedtheory command, read from the parser itself.

So the command-line reference can never fall behind the command line: each (sub)command becomes a section
holding its usage and options exactly as ``fedtheory ... --help`` prints them.
"""

from __future__ import annotations

import argparse
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def commands(parser: argparse.ArgumentParser, prefix: str = "fedtheory"):
    """``(command line, parser)`` for the parser and, depth first, every subcommand under it."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, f"{prefix} {name}")


class CliReference(SphinxDirective):
    has_content = False

    def run(self):
        from fedtheory.cli import build_parser

        sections = []
        os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page is fixed width
        for line, parser in commands(build_parser()):
            parser.prog = line
            if line != "fedtheory":  # the exit codes end every --help; the page shows them once, at the top
                parser.epilog = None
            section = nodes.section(ids=[nodes.make_id(line)])
            section += nodes.title(text=line)
            text = parser.format_help()
            section += nodes.literal_block(text, text, language="text")
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("fedtheory-cli", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
