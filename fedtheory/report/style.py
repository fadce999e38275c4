"""The report's stylesheet, inlined into every page (a page is one file: nothing else to fetch).

>>> "table" in CSS
True
"""

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg-alt: #f6f8fa; --pass: #1a7f37; --fail: #cf222e;
        --warn: #9a6700; --link: #0550ae; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
a { color: var(--link); }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .3rem; }
header.site { background: var(--bg-alt); border-bottom: 1px solid var(--line); padding: .5rem 1.5rem; }
header.site nav a { margin-right: 1rem; }
main { max-width: 80rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
h1 { font-size: 1.6rem; margin: .6rem 0; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1.08rem; margin: 1rem 0 .4rem; }
article.claim h3 { margin-top: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
div.scroll { overflow-x: auto; }
ul.plain { list-style: none; margin: 0; padding: 0; }
h4 { font-size: .95rem; margin: .9rem 0 .3rem; color: var(--muted); }
table { border-collapse: collapse; margin: .4rem 0 1rem; font-size: .92rem; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; color: var(--muted); }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; vertical-align: top; text-align: left; }
thead th { background: var(--bg-alt); }
th[scope=row] { background: var(--bg-alt); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .86rem; }
pre { background: var(--bg-alt); border: 1px solid var(--line); padding: .5rem; overflow-x: auto; max-height: 24rem; }
.status { display: inline-block; padding: 0 .45rem; border-radius: .7rem; font-weight: 600; font-size: .85rem;
          border: 1px solid currentColor; white-space: nowrap; }
.pass { color: var(--pass); } .fail { color: var(--fail); } .skip-status { color: var(--warn); }
/* a verdict's badge has the verdict's colour (filled); whether it was expected is the separate .expect mark */
.status.v-verified { color: #fff; background: var(--pass); border-color: var(--pass); }
.status.v-refuted { color: #fff; background: var(--fail); border-color: var(--fail); }
.status.v-vacuous { color: #fff; background: #8250df; border-color: #8250df; }
.status.v-unsettled { color: #fff; background: var(--warn); border-color: var(--warn); }
.status.v-skipped { color: var(--muted); background: var(--bg-alt); border-color: var(--muted); }
.status.v-error { color: #fff; background: #82071e; border-color: #82071e; }
.expect { font-size: .85rem; white-space: nowrap; }
.expect.pass::before { content: "✓ "; } .expect.fail::before { content: "✗ "; }
p.byline { color: var(--muted); margin-top: 0; }
.verdict { font-size: 1.1rem; font-weight: 600; }
article.claim { border: 1px solid var(--line); border-left: 4px solid var(--pass); border-radius: 4px;
                padding: .7rem 1rem; margin: 1rem 0; }
article.claim.fail { border-left-color: var(--fail); } article.claim.skipped { border-left-color: var(--warn); }
article.claim { color: var(--fg); }
.statement { background: #fff; border-left: 3px solid var(--line); padding: .3rem .8rem; margin: .3rem 0; }
.statement math[display=block] { margin: .4rem 0; }
.notes { white-space: pre-wrap; }
p.title { margin: 0 0 .4rem; font-weight: 600; }
math { font-size: 1.12em; }
code.tex { background: #fff8c5; }
.gap { color: var(--warn); }
.muted { color: var(--muted); }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { max-width: 60rem; }
.flag { display: inline-block; margin-right: .5rem; padding: 0 .4rem; background: #fff8c5; border-radius: 3px; }
details summary { cursor: pointer; color: var(--muted); }
"""
