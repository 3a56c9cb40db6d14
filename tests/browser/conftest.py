"""Real-browser tests: headless Chromium, driven by Selenium, against the admin on a live server.

``live_server`` (pytest-django) serves the project from a thread of this test process, on this
worker's test database; the browser reaches it over HTTP, so what a test sets up must be committed:
these tests are transactional (``pytestmark`` in each module) and every table is emptied after each.
The thread shares this process's settings and embedding provider (the hash embedder unless a test
is marked ``real_embedder``), and serves the admin's static files from the apps.

``browser`` is one Chromium per worker (1280x900, starting it costs about a second), with its
cookies cleared for every test. Its ``screenshot(name)`` writes a full-page PNG of the current
screen to ``test-artifacts/screenshots/<test>/NN-<name>.png`` (git-ignored).

Chromium and its driver are Debian's ``chromium`` and ``chromium-driver``; ``make browser`` (part of
``make test``) installs them when they are missing and it runs as root. Without them the tests are
skipped with the reason, except under CI (``CI`` set and not ``false``/``0``), where a missing
browser is a failure: CI must run them.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings

from organizations.models import User
from tests.admin.conftest import make_staff  # noqa: F401 - the fixture, for the tests here
from tests.artifacts import record
from tests.conftest import on_ci

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

WINDOW = (1280, 900)
WAIT_SECONDS = 15.0
SCREENSHOTS = Path(settings.BASE_DIR) / "test-artifacts" / "screenshots"
# What the browser tests log in with (tests/admin/conftest.py's make_staff sets it).
PASSWORD = "unused-password-1"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)
INSTALL_HINT = "install them with `sudo apt-get install chromium chromium-driver` or run `make system-packages` as root"


def _missing(reason: str) -> None:
    """Skip, saying why, or fail under CI, where the browser tests must run."""
    if on_ci():
        pytest.fail(f"browser tests cannot run on CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


def _first_found(names: tuple[str, ...], override: str) -> str | None:
    chosen = os.environ.get(override)
    if chosen:
        return chosen if Path(chosen).is_file() else None
    return next((path for name in names if (path := shutil.which(name))), None)


@pytest.fixture(scope="session")
def _chromium() -> Iterator[WebDriver | str]:
    """One Chromium for this worker, or why there is none.

    The skip (or failure) is left to ``browser``: a session fixture's skip would come before the
    test's database is set up, and tests/conftest.py rebuilds the personas after every test that
    asked for a live server, assuming its tables were emptied.
    """
    try:
        from selenium import webdriver
    except ImportError:
        yield "selenium is not installed (`make install-dev` installs requirements-dev.txt)"
        return
    binary = _first_found(BROWSERS, "CHROMIUM")
    driver_path = _first_found(DRIVERS, "CHROMEDRIVER")
    if binary is None or driver_path is None:
        yield f"no Chromium or no chromedriver (on PATH, or $CHROMIUM / $CHROMEDRIVER); {INSTALL_HINT}"
        return
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        # Chromium's sandbox refuses to run as root, which is how CI runs.
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--lang=en-US",
    ):
        options.add_argument(argument)
    # Given the driver's path, Selenium does not run Selenium Manager (which would download one).
    service = webdriver.ChromeService(executable_path=driver_path)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_window_size(*WINDOW)
    try:
        yield driver
    finally:
        driver.quit()


class Browser:
    """The browser as a test uses it: pages of the live server, forms, explicit waits, screenshots."""

    def __init__(self, driver: WebDriver, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self._shots = shots
        self._taken = 0
        # What a person does, counted: clicks (links, buttons, choices in a list, boxes ticked) and
        # fields typed into. ``job`` records them per curator job.
        self.clicks = 0
        self.typed = 0

    @contextmanager
    def job(self, name: str) -> Iterator[None]:
        """Count the clicks and typed fields of one curator job (test-artifacts/curator-jobs.json)."""
        clicks, typed = self.clicks, self.typed
        yield
        record("curator-jobs", name, {"clicks": self.clicks - clicks, "typed_fields": self.typed - typed})

    # --- pages -----------------------------------------------------------------------------------

    def open(self, path: str) -> None:
        with self.navigating():
            self.driver.get(f"{self.base_url}{path}")

    @property
    def path(self) -> str:
        url: str = self.driver.current_url
        return url.removeprefix(self.base_url)

    @property
    def text(self) -> str:
        """The page's visible text."""
        return str(self.find("body").text)

    @contextmanager
    def navigating(self) -> Iterator[None]:
        """Wait until what happens inside (a click, a submit) has loaded a new page.

        The page being left is marked with a token; the new page has loaded when the document carries
        no such mark and is complete. Asking the old element whether it is stale would race the
        navigation: Chromium's driver can answer "unhandled inspector error" for a node whose
        document is being torn down, so while the pages change hands, driver errors mean "not yet".
        """
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.wait import WebDriverWait

        token, leaving = secrets.token_hex(8), self.path
        self.driver.execute_script("document.documentElement.dataset.testPage = arguments[0]", token)
        yield
        loaded = (
            "return document.readyState === 'complete' && document.documentElement.dataset.testPage !== arguments[0]"
        )
        WebDriverWait(self.driver, WAIT_SECONDS, ignored_exceptions=(WebDriverException,)).until(
            lambda driver: driver.execute_script(loaded, token),
            f"no new page loaded after {leaving}",
        )

    # --- elements --------------------------------------------------------------------------------

    def find(self, css: str) -> WebElement:
        """The first element matching ``css``, waiting for it to appear."""
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.wait import WebDriverWait

        found: WebElement = WebDriverWait(self.driver, WAIT_SECONDS).until(
            expected_conditions.presence_of_element_located(("css selector", css)), f"no element {css!r} on {self.path}"
        )
        return found

    def find_all(self, css: str) -> list[WebElement]:
        """Every element matching ``css`` now (no wait: the page has loaded)."""
        return list(self.driver.find_elements("css selector", css))

    def fill(self, css: str, value: str) -> None:
        field = self.find(css)
        field.clear()
        field.send_keys(value)
        self.typed += 1

    def select(self, css: str, value: str) -> None:
        from selenium.webdriver.support.select import Select

        Select(self.find(css)).select_by_value(value)
        self.clicks += 1

    def choose(self, css: str) -> None:
        """Click what stays on the page: a radio button, a checkbox."""
        self.find(css).click()
        self.clicks += 1

    def click(self, css: str) -> None:
        """Click what loads another page (a link, a submit button) and wait for that page."""
        element = self.find(css)
        with self.navigating():
            element.click()
        self.clicks += 1

    def follow(self, link_text: str) -> None:
        """Click the link reading ``link_text`` and wait for its page."""
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.wait import WebDriverWait

        link = WebDriverWait(self.driver, WAIT_SECONDS).until(
            expected_conditions.element_to_be_clickable(("link text", link_text)),
            f"no link {link_text!r} on {self.path}",
        )
        with self.navigating():
            link.click()
        self.clicks += 1

    # --- the admin -------------------------------------------------------------------------------

    def log_in(self, user: User, password: str = PASSWORD) -> None:
        """Log in through the admin's login form, as a person would."""
        self.open("/admin/login/?next=/admin/")
        self.fill("#id_username", user.get_username())
        self.fill("#id_password", password)
        self.click("#login-form [type=submit]")
        assert self.find_all("#user-tools"), f"{user} could not log in: {self.text[:500]}"

    def messages(self) -> list[str]:
        """The admin's messages on this page."""
        return [element.text for element in self.find_all("ul.messagelist li")]

    # --- screenshots -----------------------------------------------------------------------------

    def screenshot(self, name: str) -> Path:
        """Save the whole current page (not only the window) as ``NN-<name>.png`` for this test."""
        if self._taken == 0:
            shutil.rmtree(self._shots, ignore_errors=True)
            self._shots.mkdir(parents=True)
        self._taken += 1
        path = self._shots / f"{self._taken:02d}-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}.png"
        path.write_bytes(self._full_page_png())
        return path

    def _full_page_png(self) -> bytes:
        metrics: dict[str, Any] = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        content = metrics["cssContentSize"]
        clip = {
            "x": 0,
            "y": 0,
            "width": max(content["width"], WINDOW[0]),
            "height": max(content["height"], 1),
            "scale": 1,
        }
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
        )
        return base64.b64decode(shot["data"])


@pytest.fixture
def browser(live_server: Any, _chromium: WebDriver | str, request: pytest.FixtureRequest) -> Iterator[Browser]:
    """Chromium on the live server, logged out, at a blank page; screenshots go under the test's name."""
    if isinstance(_chromium, str):
        _missing(_chromium)
        return
    driver = _chromium
    driver.delete_all_cookies()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)
    yield Browser(driver, live_server.url, SCREENSHOTS / name)
    # The next test starts from nothing: no session, no page of this one.
    driver.delete_all_cookies()
    driver.get("about:blank")
