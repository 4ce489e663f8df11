"""Does the page, in a real headless Chromium, show the price and W move when the provider's
price changes? The dashboard boots nom itself (--boot) with a two-step price schedule; the
screenshot is kept as build/dashboard/dashboard-test.png.

nhttpd and memcached run the refund utility here: with their committed profiles an idle
("single") application's best W under refund is 0 at 1 $/Gbit and 40 us at 100 $/Gbit, while
under the default penalty utility W does not depend on the price at all (apps/*/profile)."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import nomrun
from nomvm.ports import free_port_shift

pytestmark = pytest.mark.boot

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
SCREENSHOT = os.path.join(TOP, "build", "dashboard", "dashboard-test.png")
SCHEDULE = "0:1, 60:100"  # the step comes after the boot (15-20 s under TCG here)
ADAPTIVE_APPS = ("nhttpd", "memcached")


def refund_modules(path):
    """apps/default-image.txt with --utility=refund for nhttpd and memcached."""
    with open(os.path.join(TOP, "apps", "default-image.txt")) as f:
        text = f.read()
    for app in ADAPTIVE_APPS:
        text = text.replace(f" {app} --nic=", f" {app} --utility=refund --nic=")
    path.write_text(text)
    return str(path)


@pytest.fixture
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("chromium and chromium-driver (Debian) are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service(driver), options=options)  # no driver download
    yield d
    d.quit()


@pytest.fixture
def dashboard(tmp_path):
    """`python3 -m dashboard --boot ...`: its page's URL; stopped (with its VM) by PID."""
    for elf in ("kernel/nom.elf", "apps/nhttpd/nhttpd.elf", "apps/memcached/memcached.elf",
                "apps/priced/priced.elf"):
        assert os.path.isfile(os.path.join(TOP, "build", elf)), f"build/{elf} not built (make)"
    log = open(tmp_path / "dashboard.log", "w+")
    shift = free_port_shift(nomrun.HOST_PORTS)
    proc = subprocess.Popen([sys.executable, "-m", "dashboard", "--boot", "--port", "0",
                             "--port-shift", str(shift), "--schedule", SCHEDULE,
                             "--modules", refund_modules(tmp_path / "modules.txt")],
                            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            log.seek(0)
            text = log.read()
            url = [w for w in text.split() if w.startswith("http://127.0.0.1:")]
            if url:
                break
            assert proc.poll() is None and time.monotonic() < deadline, text
            time.sleep(0.2)
        yield url[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def cells(d, column):
    """{app: text} of a column's cells for the adaptive applications ('' when not shown), read
    in one script: the page rebuilds its table every second."""
    return d.execute_script(
        "return Object.fromEntries(arguments[0].map(a => "
        "[a, (document.getElementById(a + '-' + arguments[1]) || {}).textContent || '']))",
        list(ADAPTIVE_APPS), column)


def wait_until(d, what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    d.save_screenshot(SCREENSHOT)
    raise AssertionError(f"{what} within {timeout} s; page: price {cells(d, 'price')}, "
                         f"W {cells(d, 'w_us')}; errors: "
                         f"{d.find_element('id', 'errors').text!r}; screenshot {SCREENSHOT}")


def test_page_shows_price_and_w_change_with_the_provider(browser, dashboard):
    os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
    browser.get(dashboard)
    assert browser.title == "nom dashboard"
    wait_until(browser, "both applications acting on a price",  # 0: none published yet
               lambda: not {"", "0"} & set(cells(browser, "price").values()), timeout=180)
    assert set(cells(browser, "price").values()) == {"1"}, \
        f"the boot outlasted the schedule's first step ({SCHEDULE}): {cells(browser, 'price')}"
    w_before = cells(browser, "w_us")
    wait_until(browser, "both applications acting on 100 $/Gbit",
               lambda: set(cells(browser, "price").values()) == {"100"}, timeout=180)
    wait_until(browser, f"W moving away from {w_before}",
               lambda: all(cells(browser, "w_us")[a] not in ("", w_before[a])
                           for a in ADAPTIVE_APPS), timeout=60)
    assert browser.find_element("id", "price").text == "100"  # the board's published price
    time.sleep(2)  # one more refresh draws the new W in the plots
    assert browser.execute_script(
        "return [...document.querySelectorAll('#plots img')]"
        ".every(i => i.complete && i.naturalWidth > 0)"), "a plot did not load"
    browser.save_screenshot(SCREENSHOT)
    assert os.path.getsize(SCREENSHOT) > 10000
