"""The shape explorer in a real browser: JupyterLab in headless Debian chromium, driven by playwright.

The widget tests in test_explorer.py set ``.value`` from Python; this one clicks, so it also covers
what they cannot: the widget renders in JupyterLab, a click travels over the comm to the kernel, and
the kernel's redraw (status HTML and the plotly chart in the Output widget) comes back to the page.
It leaves a screenshot in tests/artifacts/explorer.png for a human to look at.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser_support import (
    CHROMIUM,
    LabServer,
    artifacts_dir,
    chromium_launch_options,
    lab_server,
    skip_reason,
    write_notebook,
)

pytestmark = pytest.mark.browser

if (reason := skip_reason()) is not None:
    pytest.skip(reason, allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402  (after the skip)

NOTEBOOK = "explorer.ipynb"
CELLS = [
    "import workbook",
    'store = workbook.generate("store", scale="tiny", seed=7)\n'
    '[workbook.load(store, s) for s in ("embedded", "referenced", "hybrid")]',
    'workbook.explorer(dataset="store", repeat=2, warmup=0)',
]
LEARNER = "browser-test"

PAGE_TIMEOUT_MS = 60_000
"""Opening JupyterLab and the notebook (the first load compiles nothing, but is a few MB of JS)."""
RUN_TIMEOUT_MS = 120_000
"""Kernel start, generating and loading the tiny store three times, measuring every shape."""
REDRAW_TIMEOUT_MS = 30_000
"""A click's round trip to the kernel and back (a redraw from cached runs takes well under a second)."""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[LabServer]:
    """A JupyterLab server over a directory holding just the explorer notebook; stopped afterwards."""
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / NOTEBOOK, CELLS)
    env = {"WORKBOOK_LEARNER": LEARNER, "WORKBOOK_SCALE": "tiny"}
    with lab_server(root, env, home=tmp_path / "jupyter") as server:
        yield server


@pytest.fixture
def page(lab: LabServer) -> Iterator[Page]:
    """A chromium page (system chromium, never a downloaded one) that the test closes with the browser."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options())
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1200})
            page = context.new_page()
            page.set_default_timeout(REDRAW_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


def no_dialog(page: Page) -> None:
    """Fail with its text if a JupyterLab dialog (kernel choice, load error, ...) covers the notebook."""
    dialogs = page.locator(".jp-Dialog")
    if dialogs.count():
        pytest.fail(f"a JupyterLab dialog blocks the notebook: {dialogs.first.inner_text()!r}")


def test_explorer_toggle_reaches_the_kernel_and_redraws(lab: LabServer, page: Page) -> None:
    started = time.monotonic()
    for stale in ("explorer.png", "explorer-failure.png"):  # a picture left by an earlier run would mislead
        (artifacts_dir() / stale).unlink(missing_ok=True)
    expect.set_options(timeout=15_000)  # the default for checks without their own (5 s) is tight on a busy CI
    console: list[str] = []
    page.on("console", lambda message: message.type == "error" and console.append(message.text))
    page.on("pageerror", lambda error: console.append(f"page error: {error}"))
    try:
        page.goto(lab.url(NOTEBOOK), timeout=PAGE_TIMEOUT_MS)
        notebook = page.locator(".jp-NotebookPanel .jp-Notebook")
        expect(notebook.locator(".jp-Cell")).to_have_count(len(CELLS), timeout=PAGE_TIMEOUT_MS)
        no_dialog(page)
        # Run only once the page talks to a started kernel: before that, JupyterLab may ask which kernel.
        lab.wait_for_connected_kernel(timeout=PAGE_TIMEOUT_MS / 1000)
        expect(page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator")).to_have_attribute(
            "data-status", "idle"
        )

        # Run > Run All Cells, as a learner would.
        page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

        # (a) The widget renders: three shape toggles, hybrid selected, its status line and chart.
        toggles = notebook.locator(".widget-toggle-buttons")
        expect(toggles).to_be_visible(timeout=RUN_TIMEOUT_MS)
        no_dialog(page)
        for shape in ("embedded", "referenced", "hybrid"):
            expect(toggles.get_by_role("button", name=shape, exact=True)).to_be_visible()
        expect(toggles.locator("button.mod-active")).to_have_text("hybrid")
        shape_status = notebook.locator(".widget-html .workbook-shape")
        expect(shape_status).to_have_text("hybrid", timeout=RUN_TIMEOUT_MS)
        title = notebook.locator(".widget-output text.gtitle")
        expect(title).to_have_text("Latency of product_page: hybrid highlighted", timeout=RUN_TIMEOUT_MS)
        # The kernel got this server's environment: the load wrote to the browser-test learner's namespace.
        expect(notebook).to_contain_text(f"workbench_{LEARNER}_store_referenced")

        # (b) A click reaches the kernel: the status line is HTML the kernel writes after the change.
        toggles.get_by_role("button", name="referenced", exact=True).click()
        expect(shape_status).to_have_text("referenced", timeout=REDRAW_TIMEOUT_MS)
        status_line = notebook.locator(".widget-html-content").filter(has=page.locator(".workbook-shape"))
        expect(status_line).to_contain_text("shape referenced · operation product_page")
        expect(toggles.locator("button.mod-active")).to_have_text("referenced")

        # (c) The chart redraws: the Output widget now holds one chart, the referenced one.
        expect(title).to_have_text("Latency of product_page: referenced highlighted", timeout=REDRAW_TIMEOUT_MS)
        expect(notebook.locator(".widget-output .js-plotly-plot")).to_have_count(1)
        no_dialog(page)

        # The picture: the explorer's cell (its code and the whole widget) at the top of the notebook.
        notebook.locator(".jp-Cell").last.evaluate("element => element.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)  # let plotly's transitions settle before the picture
        page.screenshot(path=artifacts_dir() / "explorer.png")
    except (Exception, pytest.fail.Exception) as error:
        try:
            page.screenshot(path=artifacts_dir() / "explorer-failure.png")
            error.add_note("screenshot: tests/artifacts/explorer-failure.png")
        except Exception as screenshot_error:  # the browser itself may be what failed
            error.add_note(f"no screenshot: {screenshot_error}")
        error.add_note(f"browser console errors: {console[-10:]}")
        error.add_note(f"jupyter lab log (tail):\n{lab.log_tail()}")
        raise
    print(f"\nbrowser test: {time.monotonic() - started:.1f} s in the page, chromium {CHROMIUM}")
