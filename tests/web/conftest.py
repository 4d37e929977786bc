"""Fixtures of the dashboard's browser tests: a live server per database on 127.0.0.1, and
Debian's headless Chromium driven by Playwright (never a downloaded browser).

Chromium or Playwright missing: the tests skip, except under ``CI=true``, where that fails.
Screenshots go to ``$PIXELMILL_TEST_ARTIFACTS/dashboard`` when that is set, else to a pytest
temporary folder (its path is printed in the test report)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pixelmill.app import create_app
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.support.servers import live_server
from tests.support.services import IN_CI
from tests.support.settings import job_settings

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Playwright

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def _missing(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def chromium_path() -> str:
    """Debian's Chromium (requirements/apt-dev.txt); PIXELMILL_CHROMIUM overrides the path."""
    explicit = os.environ.get("PIXELMILL_CHROMIUM")
    if explicit:
        return explicit
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    _missing("Chromium is not installed (Debian package chromium; scripts/bootstrap installs it)")
    raise AssertionError("unreachable")


@dataclass
class Live:
    base_url: str
    resources: Resources


@pytest.fixture(scope="module")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The real app under uvicorn, with fast scene settings (small scenes)."""
    settings = job_settings(database_url, tmp_path_factory.mktemp("web-data"))
    resources = wire(build_resources(settings))
    try:
        with live_server(create_app(settings, resources)) as base_url:
            yield Live(base_url, resources)
    finally:
        resources.close()


# Module scope, not session: the sync API keeps an event loop running on the main thread
# while it is open, and later tests that call asyncio.run() must not find it there.
@pytest.fixture(scope="module")
def playwright_driver() -> Iterator[Playwright]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright is not installed (requirements/dev.txt)")
        raise
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright_driver: Playwright) -> Iterator[Browser]:
    browser = playwright_driver.chromium.launch(
        executable_path=chromium_path(),
        headless=True,
        # No sandbox when the tests run as root (containers, CI): nothing but loopback is
        # loaded. A container's small /dev/shm is not used for shared memory.
        args=["--disable-dev-shm-usage"]
        + (["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = os.environ.get("PIXELMILL_TEST_ARTIFACTS")
    path = Path(root) / "dashboard" if root else tmp_path_factory.mktemp("dashboard-shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Tab:
    """A page in a fresh browser context (its own localStorage), with its console recorded."""

    page: Page
    base_url: str
    shots: Path
    name: str
    problems: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)

    def expect_console(self, pattern: str) -> None:
        """A console message the test causes on purpose (the browser logs every 4xx)."""
        self.expected.append(re.compile(pattern))

    def open(self, route: str) -> None:
        self.page.goto(f"{self.base_url}/app/#{route}")

    def shot(self, label: str, **kwargs: Any) -> Path:
        path = self.shots / f"{self.name}-{label}.png"
        self.page.screenshot(path=str(path), **kwargs)
        return path


BILLING_PROBE = "/api/v2/billing/packs"


def billing_probe(msg: ConsoleMessage) -> bool:
    """The dashboard asks ``GET /api/v2/billing/packs`` once per load to learn whether to show
    "Buy credits"; a server without Stripe answers 404 by design, which Chromium logs."""
    url = str((msg.location or {}).get("url", ""))
    return "404" in msg.text and url.endswith(BILLING_PROBE)


@pytest.fixture
def tab(
    browser: Browser, live: Live, shots_dir: Path, request: pytest.FixtureRequest
) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(20_000)
    page = context.new_page()
    name = request.node.name.replace("[", "-").replace("]", "")
    t = Tab(page, live.base_url, shots_dir, name)

    def on_console(msg: ConsoleMessage) -> None:
        expected = any(p.search(msg.text) for p in t.expected) or billing_probe(msg)
        if msg.type in ("error", "warning") and not expected:
            t.problems.append(f"console {msg.type}: {msg.text}")

    def on_error(err: Error) -> None:
        t.problems.append(f"page error: {err}")

    page.on("console", on_console)
    page.on("pageerror", on_error)
    try:
        yield t
    finally:
        if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
            t.shot("failure")
        context.close()
    print(f"\nscreenshots: {shots_dir}")
    assert not t.problems, "the browser reported problems:\n" + "\n".join(t.problems)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test item, so the tab fixture can screenshot a failure."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
