"""The HTML report as a person sees it: headless Chromium opens it from disk, takes a screenshot, and the
charts are there (their bar colours fill a good part of the page). Skips, saying why, without Chromium
(CI installs Debian's `chromium`). The browser is kept off the network: no DNS, no background services."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from quadfleet.cli import main

BAR_COLOURS = ((0x3B, 0x6E, 0xA8), (0xE0, 0x8A, 0x2C))  # coordinator/report/charts.py _BAR, _BAR2


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (apt-get install -y chromium): the report is not rendered here")


def screenshot(browser: str, page, png, profile) -> None:
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1200,2000",
            "--hide-scrollbars", page.as_uri()]
    try:
        proc = subprocess.run(args, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("Chromium did not finish the screenshot in 120 s")
    if not png.exists():
        pytest.skip(f"Chromium could not run here (exit {proc.returncode}): "
                    f"{proc.stderr.decode(errors='replace')[-300:]}")


def colour_counts(png) -> tuple[int, int, int]:
    """(pixels in the chart bar colours, non-white pixels, all pixels) of a screenshot."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    bars = non_white = 0
    for (r, g, b), n in ((c, n) for n, c in img.getcolors(maxcolors=1 << 24)):
        if r < 245 or g < 245 or b < 245:
            non_white += n
        if any(abs(r - R) < 12 and abs(g - G) < 12 and abs(b - B) < 12 for R, G, B in BAR_COLOURS):
            bars += n
    return bars, non_white, img.width * img.height


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    assert main(["sample", "--out", str(out), "--quiet"]) == 0
    assert main(["stats", str(out), "--quiet", "--processes", "1"]) == 0
    return out / "report"


def test_report_renders_with_its_charts_in_chromium(report, tmp_path):
    browser = chromium()
    png = tmp_path / "report.png"
    screenshot(browser, report / "index.html", png, tmp_path / "profile")
    bars, non_white, total = colour_counts(png)
    assert non_white > total * 0.03, "the page rendered (nearly) blank"
    assert bars > 20_000, f"chart bars cover only {bars} pixels: the charts did not load"

    # The same page without its charts: the bar colours are gone, so the count above came from the images.
    bare = tmp_path / "bare"
    shutil.copytree(report, bare, ignore=shutil.ignore_patterns("*.png"))
    png2 = tmp_path / "bare.png"
    screenshot(browser, bare / "index.html", png2, tmp_path / "profile2")
    assert colour_counts(png2)[0] < bars / 20
