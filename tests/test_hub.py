"""The "one machine, no Docker" workshop route: JupyterHub with a local-process spawner and
configurable-http-proxy, three learners (one with a non-Latin name) logging in through headless
Debian chromium, each running notebook 00 and answering its question; then the instructor's view
(the hub's admin API and ``python -m workbook class-report`` on the class's progress) shows all three.

Everything listens on 127.0.0.1 on free ports; the hub's database, cookie secret, the learners'
homes and their progress live under the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser_support import artifacts_dir, chromium_launch_options, free_port, load_factor, skip_reason

pytestmark = pytest.mark.browser

if (reason := skip_reason()) is not None:
    pytest.skip(reason, allow_module_level=True)
if shutil.which("configurable-http-proxy") is None:
    pytest.skip("needs configurable-http-proxy (npm install -g configurable-http-proxy@5.3.0)", allow_module_level=True)
try:
    import jupyterhub  # noqa: F401
except ImportError:
    pytest.skip("needs jupyterhub (pip install -e '.[hub]')", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402  (after the skip)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "00_start_here.ipynb"
LEARNERS = ("ana", "zoë", "李")
PASSWORD = "workshop-password"
START_TIMEOUT = 90.0
RUN_SECONDS = 180.0
"""Notebook 00's Run All through the hub on an idle machine; :func:`run_timeout_ms` scales it to the load."""
CLICK_TIMEOUT_MS = 30_000


def run_timeout_ms() -> float:
    """The wait for the hub's Run All, in Playwright's milliseconds: :data:`RUN_SECONDS` times the load per core."""
    return RUN_SECONDS * load_factor() * 1000


HUB_CONFIG = """
import shutil
from pathlib import Path

c = get_config()
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
c.JupyterHub.pid_file = "{state}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = "{password}"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{homes}/{{username}}"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.default_url = "/lab/tree/{notebook}"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = [
    "--allow-root",  # CI runs as root; the servers still listen on 127.0.0.1 only
    "--ServerApp.disable_check_xsrf=False",
    "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
]
c.Spawner.environment = {{
    "WORKBOOK_LEARNER": lambda spawner: spawner.user.name,
    "WORKBOOK_PROGRESS_DIR": "{progress}",
    "WORKBOOK_CACHE_DIR": "{cache}",
    "WORKBOOK_SCALE": "small",
    "PATH": "{path}",
}}
c.Spawner.env_keep = ["LANG", "LC_ALL", "PYTHONPATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]


def copy_the_course(spawner):
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy("{course}/{notebook}", home / "{notebook}")


c.Spawner.pre_spawn_hook = copy_the_course
c.JupyterHub.services = [{{"name": "instructor", "api_token": "{token}"}}]
c.JupyterHub.load_roles = [
    {{"name": "instructor-view", "scopes": ["list:users", "read:users", "read:servers"], "services": ["instructor"]}}
]
"""


@dataclass
class Hub:
    base: str
    token: str
    process: subprocess.Popen[bytes]
    log: Path
    progress: Path

    def api(self, path: str) -> object:
        request = urllib.request.Request(f"{self.base}/hub/api{path}", headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def log_tail(self, lines: int = 60) -> str:
        with suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return "(no hub log)"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    state, homes, progress = tmp_path / "hub", tmp_path / "homes", tmp_path / "progress"
    for directory in (state, homes, progress):
        directory.mkdir()
    port, token = free_port(), secrets.token_hex(16)
    config = state / "jupyterhub_config.py"
    config.write_text(
        HUB_CONFIG.format(
            port=port,
            hub_port=free_port(),
            proxy_api_port=free_port(),
            state=state,
            password=PASSWORD,
            homes=homes,
            singleuser=Path(sys.executable).parent / "jupyterhub-singleuser",
            notebook=NOTEBOOK,
            progress=progress,
            cache=tmp_path / "cache",
            path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            course=ROOT / "notebooks",
            token=token,
        )
    )
    environment = {key: value for key, value in os.environ.items() if key != "MONGODB_URI"}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    log = state / "jupyterhub.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=state,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Hub(base=f"http://127.0.0.1:{port}", token=token, process=process, log=log, progress=progress)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {process.returncode}:\n{server.log_tail()}")
            try:
                server.api("/")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the hub did not answer:\n{server.log_tail()}") from None
                time.sleep(0.5)
        yield server
    finally:
        # The hub stops its learners' servers on shutdown (SIGTERM); the session group catches the rest.
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        for home in homes.iterdir() if homes.exists() else []:
            with suppress(OSError):
                shutil.rmtree(home)


@pytest.fixture
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**chromium_launch_options())
        try:
            yield launched
        finally:
            launched.close()


def log_in_run_and_answer(page: Page, hub: Hub, learner: str) -> None:
    """Log in, land in notebook 00, Run All, answer its question wrong then right, as a learner would."""
    page.goto(f"{hub.base}/hub/login", timeout=60_000)
    page.locator("#username_input").fill(learner)
    page.locator("#password_input").fill(PASSWORD)
    page.locator("#login_submit").click()
    quoted = urllib.parse.quote(learner)
    page.wait_for_url(f"**/user/{quoted}/lab/tree/{NOTEBOOK}**", timeout=int(START_TIMEOUT * 1000) * 2)
    cells = len(json.loads((ROOT / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))["cells"])
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    notebook = panel.locator(".jp-Notebook")
    expect(notebook.locator(".jp-Cell")).to_have_count(cells, timeout=run_timeout_ms())
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute(
        "data-status", "idle", timeout=run_timeout_ms()
    )
    question = notebook.locator(".jp-Cell").filter(has_text='workbook.quiz.show("nb00-2")')
    for attempt in (1, 2):
        page.locator("#jp-MainMenu").get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            expect(question.locator(".widget-html").first).to_have_text(
                "Which engine, when nothing is set?", timeout=run_timeout_ms()
            )
            break
        except AssertionError:
            # Once in a full CI run (2026-12-06, learner 2 of 3), Run All ended with the kernel idle and no widget in
            # the question's cell, and the same test then passed alone twice: a learner runs the cells again, so does
            # this, once; a question that never shows still fails here.
            if attempt == 2:
                raise
            print(f"learner {learner!r}: the question's widget did not show after Run All; running all cells again")
    feedback = question.locator(".widget-vbox > .widget-html").last
    check = question.get_by_role("button", name="Check")
    question.get_by_text("To a MongoDB server on localhost:27017").click()
    check.click()
    expect(feedback).to_contain_text("✗ Not yet (attempt 1)", timeout=CLICK_TIMEOUT_MS)
    question.get_by_text("To the offline default, an engine inside this Python process").click()
    check.click()
    expect(feedback).to_contain_text("✓ Correct (attempt 2)", timeout=CLICK_TIMEOUT_MS)


def test_three_learners_log_in_run_notebook_00_and_the_instructor_sees_all_three(hub: Hub, browser) -> None:
    for learner in LEARNERS:
        context = browser.new_context(viewport={"width": 1400, "height": 1100})  # a learner's own cookies
        page = context.new_page()
        try:
            log_in_run_and_answer(page, hub, learner)
            page.screenshot(path=artifacts_dir() / f"hub-{LEARNERS.index(learner)}.png")
        except Exception as error:
            with suppress(Exception):
                page.screenshot(path=artifacts_dir() / "hub-failure.png")
            error.add_note(f"learner {learner!r}; hub log (tail):\n{hub.log_tail()}")
            raise
        finally:
            context.close()

    # The instructor's view, 1: the hub knows the three learners, each with a running server.
    users = {user["name"]: user for user in hub.api("/users")}  # type: ignore[union-attr]
    assert set(LEARNERS) <= set(users)
    for learner in LEARNERS:
        assert users[learner]["servers"][""]["ready"] is True, users[learner]

    # The instructor's view, 2: every learner's attempts arrived in the class's progress, graded, one
    # file per learner under the key the hub user name gives (non-Latin names readable and distinct).
    from workbook.namespace import learner_name
    from workbook.quiz.report import class_report, learner_rows

    keys = {learner_name(learner) for learner in LEARNERS}
    assert {path.stem for path in hub.progress.glob("*.json")} == keys
    rows, notes = learner_rows(hub.progress)
    assert notes == []
    solved = rows[rows["question"] == "nb00-2"].set_index("learner")
    assert set(solved.index) == keys and solved["solved_at_attempt"].tolist() == [2, 2, 2]
    report = class_report(hub.progress).set_index("question").loc["nb00-2"]
    assert (report["learners"], report["solved"], report["attempts"]) == (3, 3, 6)
    command = subprocess.run(
        [sys.executable, "-m", "workbook", "class-report", str(hub.progress)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert command.returncode == 0 and "nb00-2" in command.stdout, command.stdout + command.stderr
    print(command.stdout)
