"""Claim statements (text with LaTeX math) to HTML with MathML, in Python: no JavaScript, no CDN.

A statement is prose with math spans (``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``). The prose is
HTML-escaped; each span goes through ``latex2mathml``. A span that does not convert (a syntax error,
an unbalanced delimiter, or a macro latex2mathml does not know, which it would otherwise print raw)
is shown as its LaTeX source in a ``<code class="tex">`` and counted, so a report says how many
statements it could not typeset.

>>> html, failed = typeset(r"For $\\mu I \\preceq A_i$ and $x^{$: done")
>>> html.count("<math"), failed
(1, 1)
>>> '<code class="tex" title="not typeset">$x^{$</code>' in html
True
"""

from __future__ import annotations

import functools
import html as _html
import re

# Order matters: $$ before $, and an escaped \$ is text.
_MATH = re.compile(
    r"(?<!\\)\$\$(?P<dd>.+?)(?<!\\)\$\$"
    r"|\\\[(?P<db>.+?)\\\]"
    r"|(?<!\\)\$(?P<d>.+?)(?<!\\)\$"
    r"|\\\((?P<p>.+?)\\\)",
    re.DOTALL,
)
# latex2mathml prints a macro it does not know as a raw "\name" token instead of raising.
_RAW_MACRO = re.compile(r">\\[A-Za-z]+")
# Standard LaTeX latex2mathml lacks, rewritten to what it knows: \arg as LaTeX defines it, and \textsc
# as upright text (the words survive; only the small capitals are lost).
_REWRITES = (
    (re.compile(r"\\arg(?![A-Za-z])"), r"\\operatorname{arg}"),
    (re.compile(r"\\textsc(?![A-Za-z])"), r"\\textrm"),
)
# An unmatched opening delimiter left in the prose: the statement's math is broken there.
_STRAY = re.compile(r"(?<!\\)\$|\\\(|\\\[")


def split_math(text: str) -> list[tuple[str, str, bool]]:
    """``text`` as ``(kind, content, display)`` pieces: kind ``text`` or ``math`` (content without delimiters).

    >>> split_math(r"if $a<b$ then $$c$$.")
    [('text', 'if ', False), ('math', 'a<b', False), ('text', ' then ', False), ('math', 'c', True), ('text', '.', False)]
    >>> split_math(r"costs \\$5")
    [('text', 'costs \\\\$5', False)]
    """
    pieces: list[tuple[str, str, bool]] = []
    pos = 0
    for m in _MATH.finditer(text):
        if m.start() > pos:
            pieces.append(("text", text[pos : m.start()], False))
        kind = m.lastgroup
        pieces.append(("math", m.group(kind), kind in ("dd", "db")))
        pos = m.end()
    if pos < len(text):
        pieces.append(("text", text[pos:], False))
    return pieces


@functools.lru_cache(maxsize=4096)
def math_to_mathml(latex: str, display: bool = False) -> str | None:
    """MathML for one math span, or None when latex2mathml cannot convert it faithfully.

    >>> math_to_mathml(r"\\frac{1}{2}").startswith('<math xmlns="http://www.w3.org/1998/Math/MathML"')
    True
    >>> "<mo>arg</mo>" in math_to_mathml(r"\\arg\\min_x f"), "<mtext>Update</mtext>" in math_to_mathml(r"\\textsc{Update}")
    (True, True)
    >>> math_to_mathml(r"\\frac{1}{") is None, math_to_mathml(r"\\nosuchmacro x") is None
    (True, True)
    """
    from latex2mathml.converter import convert

    try:
        source = latex.strip()
        for pattern, replacement in _REWRITES:
            source = pattern.sub(replacement, source)
        out = convert(source, display="block" if display else "inline")
    except Exception:  # latex2mathml raises a zoo of its own exceptions (and IndexError) on bad input
        return None
    if _RAW_MACRO.search(out):
        return None
    # The source rides along as an annotation: screen readers and copy-paste get the LaTeX back.
    annotation = f'<annotation encoding="application/x-tex">{_html.escape(latex.strip(), quote=False)}</annotation>'
    inner = re.match(r"(<math[^>]*>)(.*)(</math>)\s*$", out, re.DOTALL)
    if inner is None:
        return None
    return f"{inner.group(1)}<semantics>{inner.group(2)}{annotation}</semantics>{inner.group(3)}"


def _text(s: str) -> str:
    # \$ in prose is a dollar sign; paragraphs are kept as line breaks.
    return _html.escape(s.replace(r"\$", "$"), quote=False).replace("\n\n", "<br><br>")


def typeset(text: str) -> tuple[str, int]:
    """``(html, failed)``: ``text`` as HTML with each math span as MathML; ``failed`` counts spans shown as source.

    >>> typeset("no math & <tags>")
    ('no math &amp; &lt;tags&gt;', 0)
    >>> html, failed = typeset(r"unbalanced $x")
    >>> failed, "$x" in html
    (1, True)
    """
    out: list[str] = []
    failed = 0
    for kind, content, display in split_math(text):
        if kind == "text":
            stray = _STRAY.search(content)
            if stray:  # an opening delimiter without its closing one: show the rest as source
                failed += 1
                out.append(_text(content[: stray.start()]))
                out.append(
                    f'<code class="tex" title="not typeset">{_html.escape(content[stray.start() :], quote=False)}</code>'
                )
            else:
                out.append(_text(content))
            continue
        mathml = math_to_mathml(content, display)
        if mathml is None:
            failed += 1
            delim = ("$$", "$$") if display else ("$", "$")
            source = _html.escape(delim[0] + content + delim[1], quote=False)
            out.append(f'<code class="tex" title="not typeset">{source}</code>')
        else:
            out.append(mathml)
    return "".join(out), failed
