"""The standalone explorer page in headless Chromium: offline, live, and equal to the Python API to 1e-9.

Needs Debian's ``chromium`` and the ``playwright`` package (``.ci/run`` installs both); elsewhere the
tests are skipped with the reason.
"""

import re
import shutil

import numpy as np
import pytest

from fedtheory.analysis.guarantees import local_update_guarantee
from fedtheory.analysis.pareto import worst_case_tradeoff
from fedtheory.explore.page import page_html, write_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt install chromium)")

#: the page's inputs, in the order of the rows below
FIELDS = ("theta", "server", "mu", "L", "alpha", "gamma", "K", "C", "D", "T", "fclass", "n")


def _setting(*values) -> dict:
    return dict(zip(FIELDS, values, strict=True))


SETTINGS = [
    _setting("uniform", "gd", 1.0, 10.0, 0.0, 0.05, 10, 1.0, 10.0, 50, "d1", 3),
    _setting("uniform", "nesterov", 0.01, 100.0, 3.0, 0.009, 1000, 0.3, 2.0, 7, "commuting", 17),
    _setting("last", "heavy_ball", 1.0, 50.0, 0.0, 0.001, 5, 2.0, 1.0, 100, "d1", 2),
    _setting("last", "gd", 2.0, 20.0, 1.0, 0.04, 40, 1.0, 5.0, 3, "general", 2),  # T = 3: outside Lemma 4
    _setting("maml", "nesterov", 1.0, 1000.0, 0.0, 1e-4, 300, 0.5, 3.0, 20, "commuting", 4),
    _setting("uniform", "heavy_ball", 1.0, 1.0, 0.0, 0.5, 10**6, 1.0, 1.0, 0, "d1", 1),
    _setting("maml", "gd", 1.0, 10.0, 0.0, 0.0999, 10**6, 1.0, 1.0, 5, "d1", 1),  # κ ≈ e^{600+}
    _setting("uniform", "gd", 1.0, 100.0, 0.0, 0.001, 1, 1.0, 3.0, 9, "general", 5),  # K = 1: valid in every class
]


def python_values(s):
    out = worst_case_tradeoff(
        s["mu"], s["L"], theta=s["theta"], alpha=s["alpha"], gamma=s["gamma"], K=s["K"], momentum=s["server"]
    )
    g = local_update_guarantee(
        mu=s["mu"],
        L=s["L"],
        C=s["C"],
        D=s["D"],
        theta=s["theta"],
        alpha=s["alpha"],
        gamma=s["gamma"],
        K=s["K"],
        momentum=s["server"],
        function_class=s["fclass"],
        clients=s["n"],
    )
    valid = bool(g.valid[0])
    return {
        "log_kappa": float(out["log_kappa"][0]),
        "rho": float(out["rho"][0]),
        "delta": float(g.params["delta"][0]),
        "floor": float(g.floor[0]) if valid else None,
        "bound": float(g.error_after(s["T"])[0]) if valid else None,
        "valid": valid,
        "claims": list(g.claims),
    }


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = write_page(tmp_path_factory.mktemp("page") / "explore.html")
    requests = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-component-update"],
        )
        context = browser.new_context(offline=True)
        pg = context.new_page()
        pg.on("request", lambda r: requests.append(r.url))
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(path.as_uri())
        pg.wait_for_function("document.body.dataset.updates >= 1")
        pg.requests, pg.errors = requests, errors
        yield pg
        browser.close()


def test_the_page_is_self_contained():
    html = page_html()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the page must not load anything"
    assert "<script>" in html and "fedtheoryCompute" in html


def test_page_opens_offline_without_errors(page):
    assert page.errors == []
    assert all(u.startswith("file://") for u in page.requests), page.requests
    # the page opens on a view with valid points (issue 26): the commuting class, its labels saying so
    assert page.evaluate("() => document.getElementById('fclass').value") == "commuting"
    assert int(page.get_attribute("#plot", "data-points")) > 100
    assert "commuting clients" in page.text_content("#plot_note")
    assert "log scale" in page.text_content("label[for=log10_K]") and "log₁₀" not in page.text_content(".ctl")
    # d ≥ 2 general clients have a valid floor only at K = 1 on the K sweep, and the note says why
    page.select_option("#fclass", "general")
    assert int(page.get_attribute("#plot", "data-points")) == 1
    assert "only K(Θ) = 1" in page.text_content("#plot_note")
    page.select_option("#fclass", "d1")
    assert int(page.get_attribute("#plot", "data-points")) > 100
    page.select_option("#fclass", "general")


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s['theta']}-{s['server']}-K{s['K']}")
def test_javascript_matches_the_python_api(page, setting):
    js = page.evaluate("p => fedtheoryCompute(p)", setting)
    py = python_values(setting)
    assert js["valid"] == py["valid"]
    # the page cites the same rate and floor claims (the Python list adds Lemmas 3–4 and Table 2 behind ρ)
    assert set(js["claims"]) <= set(py["claims"]) | {"localupdate/section-3/theta-1-no-distortion"}
    for key in ("log_kappa", "rho", "delta", "floor", "bound"):
        if py[key] is None:
            assert js[key] is None, (key, js[key])
            continue
        assert abs(js[key] - py[key]) <= 1e-9 * max(1.0, abs(py[key])), (key, js[key], py[key])


def _displayed(page, name):
    return float(page.get_attribute(f"#o_{name}", "data-value"))


def test_moving_sliders_updates_the_results(page):
    before = page.evaluate("document.body.dataset.updates")
    page.select_option("#theta", "uniform")
    page.select_option("#server", "gd")
    page.select_option("#fclass", "d1")
    for slider, value in (
        ("#log10_mu", "0"),
        ("#log10_kappa0", "1"),
        ("#alpha_ratio", "0"),
        ("#C", "1"),
        ("#D", "10"),
        ("#T", "50"),
        ("#log10_K", "1"),
        ("#gamma_frac", "0.5"),
    ):
        page.fill(slider, value)
    rho_before = _displayed(page, "rho")
    page.fill("#log10_K", "3")  # K: 10 -> 1000
    assert int(page.evaluate("document.body.dataset.updates")) > int(before)
    rho_after = _displayed(page, "rho")
    assert rho_after < rho_before  # more local steps: faster (Section 4.2)
    s = _setting("uniform", "gd", 1.0, 10.0, 0.0, 0.5 / 10.0, 1000, 1.0, 10.0, 50, "d1", 10)
    py = python_values(s)
    for key in ("rho", "delta", "floor", "bound"):
        assert abs(_displayed(page, key) - py[key]) <= 1e-9 * max(1.0, abs(py[key]))
    assert abs(_displayed(page, "kappa") - np.exp(py["log_kappa"])) <= 1e-9 * np.exp(py["log_kappa"])


def test_general_class_shows_no_guarantee_at_k_above_one(page):
    page.select_option("#theta", "uniform")
    page.select_option("#fclass", "general")
    page.fill("#alpha_ratio", "0")
    page.fill("#log10_K", "2")
    assert page.get_attribute("#o_bound", "data-value") == "null"
    assert "no valid guarantee known for d ≥ 2" in page.text_content("#o_holds")
    page.select_option("#fclass", "d1")


def test_out_of_hypothesis_slider_setting_names_the_condition(page):
    page.select_option("#theta", "maml")
    page.fill("#alpha_ratio", "0.5")
    assert "only for alpha = 0" in page.text_content("#error")
    page.fill("#alpha_ratio", "0")
    assert page.text_content("#error") == ""
