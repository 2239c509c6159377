"""The HTML report: Snakemake's own `--report` over the outputs the Snakefile tags with report() (the charts, the
tables, report.md), one self-contained page; opened in a real headless Chromium, a chart is shown as a reader shows
it (Charts, then the chart's eye) and the screenshot is checked to hold the drawn figure, not a blank."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.headless_chromium import Browser, chromium

MATRIX = "seed-16gb"
CHARTS = sorted((REPO / "reports" / MATRIX).glob("*.png"))


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    """The documented command (docs/html-report.md), run over the committed results and reports."""
    folder = tmp_path_factory.mktemp("html-report")
    page = folder / f"{MATRIX}.html"
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(folder),
                           "--report", str(page), "--cores", "1", "--config", f"matrix={MATRIX}",
                           f"results_dir={REPO / 'results'}", f"reports_dir={REPO / 'reports'}"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and page.is_file(), done.stderr[-3000:]
    return page


def _results(page: Path) -> dict:
    found = re.search(r"var results = (\{.*?\});\n", page.read_text(), re.S)
    assert found, "no results in the report"
    return json.loads(found.group(1))


@pytest.mark.slow
def test_the_report_holds_every_chart_and_table_as_committed(html):
    results = _results(html)
    shown = {Path(path).name: entry for path, entry in results.items()}
    assert {p.name for p in CHARTS} | {"cells.csv", "steps.csv", "report.md"} == set(shown)
    for chart in CHARTS:
        entry = shown[chart.name]
        assert entry["mime_type"] == "image/png"
        assert base64.b64decode(entry["data_uri"].split(",", 1)[1]) == chart.read_bytes()  # the file itself
    assert "vramlab: matrix" in html.read_text()  # the workflow's description (docs/snakemake-report/workflow.rst)


# a click on the element of `selector` whose text is `text`, as a reader clicks it
CLICK = """(() => {{ const hit = Array.from(document.querySelectorAll({selector!r}))
  .find(x => x.innerText.trim() === {text!r}); if (!hit) return false; hit.click(); return true; }})()"""
# a click on the eye beside a result's name, which shows it
EYE = """(() => {{ const cell = Array.from(document.querySelectorAll('td')).find(x => x.innerText.trim() === {name!r});
  const eye = cell && cell.closest('tr').querySelector('a[iconname=eye]'); if (!eye) return false; eye.click();
  return true; }})()"""
# the image shown, once decoded: its own size and where it is on the screen
SHOWN = """(() => { const img = document.querySelector('#app img[src^="data:image/png"]');
  if (!img || !img.complete || !img.naturalWidth) return null; const box = img.getBoundingClientRect();
  return {width: img.naturalWidth, height: img.naturalHeight, box: [box.left, box.top, box.right, box.bottom],
          ratio: window.devicePixelRatio}; })()"""


@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason="no Chromium here (Debian: apt-get install chromium; .ci/run does)")
def test_a_chart_renders_in_headless_chromium(html, tmp_path):
    import matplotlib.image
    import numpy as np

    chart = REPO / "reports" / MATRIX / "overview.png"
    with Browser(chromium()) as browser:
        browser.open(html)
        browser.wait_for("document.querySelector('#app').innerText.includes('Charts')")
        assert browser.evaluate(CLICK.format(selector="a", text="Charts"))
        browser.wait_for("document.querySelector('#app').innerText.includes('overview')")
        assert browser.evaluate(EYE.format(name="overview"))
        shown = browser.wait_for(SHOWN)
        shot = browser.screenshot(tmp_path / "overview-in-the-report.png")
    height, width = matplotlib.image.imread(chart).shape[:2]
    assert (shown["width"], shown["height"]) == (width, height)  # the chart's own pixels, decoded
    pixels = matplotlib.image.imread(shot)[..., :3]
    left, top, right, bottom = (round(v * shown["ratio"]) for v in shown["box"])
    figure = pixels[max(top, 0):min(bottom, pixels.shape[0]), max(left, 0):min(right, pixels.shape[1])]
    assert figure.size, f"the chart is outside the screenshot {shot}"
    inked = (figure < 0.9).any(axis=2).mean()  # share of pixels that are not (near) white
    colours = len(np.unique((figure * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert 0.02 < inked < 0.9 and colours > 50, f"the chart is blank in {shot} ({inked:.3f} inked, {colours} colours)"
