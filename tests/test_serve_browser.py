"""`indexer serve` in a real browser: a real server process on a free loopback port over
the bundled corpus, and Debian's headless Chromium driven by selenium through the system
chromedriver (nothing is downloaded). It loads the app, checks the boundary view, runs a
query and checks the chart.

Skipped — loudly — only when the browser cannot be installed (no chromium/chromedriver,
or no selenium). INDEXER_SCREENSHOTS=DIR saves a PNG of each view there (README's come
from `INDEXER_SCREENSHOTS=docs python -m pytest tests/test_serve_browser.py`).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT, free_port
from tests.test_serve import QUERY, serve_db

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage", "--window-size=1400,1000")
SHOTS = os.environ.get("INDEXER_SCREENSHOTS")


def _skip_loudly(reason: str):
    message = (f"BROWSER TEST SKIPPED: {reason}. Install them: apt-get install chromium chromium-driver && "
               "pip install selenium (the CI script does this where apt-get exists)")
    print("\n" + "!" * 100 + "\n" + message + "\n" + "!" * 100, file=sys.stderr)
    warnings.warn(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def server(built_db, tmp_path_factory):
    """`indexer serve` as a real subprocess; a 12-question set keeps the evaluation short
    (the full set when saving screenshots)."""
    db = serve_db(built_db, tmp_path_factory)
    questions = CORPUS / "questions.jsonl"
    if not SHOTS:
        small = tmp_path_factory.mktemp("questions") / "questions-12.jsonl"
        small.write_text("\n".join(questions.read_text(encoding="utf-8").splitlines()[:12]) + "\n", encoding="utf-8")
        questions = small
    port = free_port()
    log = open(tmp_path_factory.mktemp("serve-log") / "serve.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "serve", "--db", str(db), "--port", str(port),
                             "--questions", str(questions)], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(url + "api/health", timeout=1).read()
            break
        except OSError:
            log.seek(0)
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError("indexer serve did not come up: " + log.read()[-2000:])
            time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM or not DRIVER:
        _skip_loudly("Debian's chromium and chromium-driver are not installed")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _skip_loudly("selenium is not installed")
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager fetch a driver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def wait_for(driver, css: str, count: int = 1, timeout: float = 30.0):
    from selenium.webdriver.common.by import By

    deadline = time.time() + timeout
    while time.time() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if len(found) >= count:
            return found
        errors = [e for e in driver.find_elements(By.ID, "error") if e.is_displayed()]
        assert not errors, errors[0].text
        time.sleep(0.1)
    raise AssertionError(f"no {count} × {css!r} within {timeout} s")


def screenshot(driver, name: str) -> None:
    if not SHOTS:
        return
    path = Path(SHOTS) / f"serve-{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    try:  # a 256-colour palette keeps the PNG small for the README
        from PIL import Image

        Image.open(path).convert("RGB").quantize(256).save(path, optimize=True)
    except ImportError:
        pass


def js_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_the_documents_view_draws_each_strategys_cuts(server, browser):
    from selenium.webdriver.common.by import By

    browser.get(server + "#documents")
    lanes = wait_for(browser, ".lane .seg", 3) and browser.find_elements(By.CSS_SELECTOR, ".lane")
    assert [lane.get_attribute("data-lane") for lane in lanes] == ["fixed64", "headers", "parent"]
    by_name = {lane.get_attribute("data-lane"): lane for lane in lanes}
    fixed, headers, parent = by_name["fixed64"], by_name["headers"], by_name["parent"]
    assert fixed.find_elements(By.CSS_SELECTOR, ".seg.overlap"), "fixed64 overlaps are not drawn"
    assert fixed.find_elements(By.CSS_SELECTOR, ".cut.bad"), "fixed64 cuts inside sentences are not marked"
    assert not headers.find_elements(By.CSS_SELECTOR, ".cut.bad")
    assert parent.find_elements(By.CSS_SELECTOR, ".parent .seg"), "children are not drawn inside their parents"
    tokens = [int(t.text) for t in fixed.find_elements(By.CSS_SELECTOR, ".tok")]
    assert tokens and max(tokens) == 64
    screenshot(browser, "documents")
    headers.find_elements(By.CSS_SELECTOR, ".seg")[3].click()
    detail = browser.find_element(By.ID, "chunk-detail")
    assert detail.is_displayed() and "indexed_text" in detail.text
    assert not js_errors(browser)


def test_the_query_view_compares_strategies_and_marks_hits(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server + "#query")
    wait_for(browser, "#query-question option", 2)
    box = browser.find_element(By.ID, "query-text")
    box.send_keys(QUERY)
    browser.find_element(By.ID, "query-run").click()
    cells = wait_for(browser, ".cell .hit", 9) and browser.find_elements(By.CSS_SELECTOR, ".cell")
    assert len(cells) == 9  # 3 collections × embedding, bm25, hybrid
    assert "emb #" in cells[-1].text and "bm25 #" in cells[-1].text and "prompt:" in cells[-1].text
    assert browser.find_elements(By.CSS_SELECTOR, ".cell[data-strategy='parent'] .snippet mark"), \
        "parent hits do not show the children they were found by"
    check_cards_show_whole_lines(browser)
    Select(browser.find_element(By.ID, "query-question")).select_by_index(1)
    marks = wait_for(browser, ".hit .mark", 9)
    assert {m.text.lower() for m in marks} <= {"strict hit", "hit", "miss"}
    assert any(m.text.lower() != "miss" for m in marks)
    screenshot(browser, "query")
    assert not js_errors(browser)


def test_the_query_view_packs_answer_sized_context_under_a_budget(server, browser):
    from selenium.webdriver.common.by import By

    browser.get(server + "#query")
    wait_for(browser, "#query-question option", 2)
    browser.find_element(By.ID, "query-text").send_keys(QUERY)
    browser.find_element(By.ID, "query-budget").send_keys("120")
    browser.find_element(By.ID, "query-run").click()
    blocks = wait_for(browser, ".cell .context", 9)
    assert len(blocks) == 9  # every collection × mode packs its own candidates
    for block in blocks:
        used, budget = re.search(r"context: (\d+) of (\d+) tokens", block.text).groups()
        assert budget == "120" and 0 < int(used) <= 120, block.text
        assert block.find_elements(By.CSS_SELECTOR, ".spantext")
    assert not js_errors(browser)


SNIPPETS = """return [...document.querySelectorAll('#query-results .snippet')].map((pre) => {
  const box = pre.getBoundingClientRect(), more = pre.nextElementSibling;
  return {height: box.height, line: parseFloat(getComputedStyle(pre).lineHeight), full: pre.scrollHeight,
          shown: pre.clientHeight, toggle: more && more.classList.contains('more') && !more.hidden ? more.textContent : null};
});"""


def check_cards_show_whole_lines(browser):
    """Issue 22: a card clipped its text at a fixed height, through the middle of a line.
    Every snippet's height is a whole number of lines; a clamped one shows 4 lines and a
    "more" toggle that opens it to its full height (and "less" closes it again)."""
    from selenium.webdriver.common.by import By

    cards = browser.execute_script(SNIPPETS)
    assert len(cards) >= 9
    for card in cards:
        lines = card["height"] / card["line"]
        assert abs(lines - round(lines)) * card["line"] < 1.0, f"a card cuts a line: {card}"
        clamped = card["full"] > card["shown"] + 1
        assert (card["toggle"] == "more") == clamped, card
        assert round(lines) == 4 if clamped else round(lines) <= 4, card
    assert any(c["toggle"] == "more" for c in cards), "no card long enough to be clamped: the check proves nothing"
    index = next(i for i, c in enumerate(cards) if c["toggle"] == "more")
    button = browser.find_elements(By.CSS_SELECTOR, "#query-results .snippet")[index].find_element(
        By.XPATH, "following-sibling::button[1]")
    button.click()
    opened = browser.execute_script(SNIPPETS)[index]
    assert opened["toggle"] == "less" and abs(opened["height"] - opened["full"]) <= 1 < opened["full"] - cards[index]["height"]
    lines = opened["height"] / opened["line"]
    assert abs(lines - round(lines)) * opened["line"] < 1.0
    button.click()
    assert browser.execute_script(SNIPPETS)[index]["height"] == cards[index]["height"]


def test_the_evaluation_chart_has_a_point_per_row_with_its_numbers_on_hover(server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    browser.get(server + "#evaluation")
    points = wait_for(browser, "#eval-svg .pt", 9, timeout=60)
    rows = browser.find_elements(By.CSS_SELECTOR, "#eval-table tr[data-key]")
    assert len(points) == len(rows) == 9
    ActionChains(browser).move_to_element(points[0]).perform()
    tip = browser.find_element(By.ID, "tooltip")
    assert tip.is_displayed() and "recall@5" in tip.text and "95%" in tip.text and "nDCG@10" in tip.text
    first = rows[0].find_elements(By.TAG_NAME, "td")
    data = json.loads(urllib.request.urlopen(server + "api/evaluation?" + "&".join(
        ["set=" + browser.execute_script("return document.getElementById('eval-set').value")]
        + [f"strategy={s}" for s in ("fixed64", "headers", "parent")])).read())
    api_row = data["rows"][0]
    assert first[5].text == f"{api_row['recall@5']}/{data['questions']}"
    assert first[7].text == f"{api_row['ndcg@10']:.3f}"  # the nDCG@10 column
    assert "indexer eval" in browser.find_element(By.ID, "eval-cli").text
    screenshot(browser, "evaluation")
    assert not js_errors(browser)


def test_the_real_server_refuses_traversal_and_writes(server):
    host, port = server.split("//")[1].rstrip("/").split(":")
    for path in ("/static/../../pyproject.toml", "/static/%2e%2e/%2e%2e/pyproject.toml", "/../indexer/serve/app.py"):
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("GET", path)  # sent as is: http.client does not normalise the path
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        assert response.status == 404 and "[project]" not in body and "Starlette" not in body, path
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request("DELETE", "/api/collections")
    assert conn.getresponse().status == 405


def test_the_evaluation_view_makes_questions_from_the_documents_and_evaluates_them(server, browser):
    """The button for a collection without a question file: made-up questions from the
    documents the collections were built from, then their evaluation (runs last: it adds a set)."""
    from selenium.webdriver.common.by import By

    browser.get(server + "#evaluation")
    wait_for(browser, "#eval-svg .pt", 9, timeout=60)
    before = len(browser.find_elements(By.CSS_SELECTOR, "#eval-set option"))
    field = browser.find_element(By.ID, "eval-n")
    field.clear()
    field.send_keys("8")
    browser.find_element(By.ID, "eval-generate").click()
    deadline = time.time() + 90
    # three sets of 8, pooled; the parent collection holds 3 of the 10 documents: questions
    # about the others are left out of every row, and the view says how many
    while "9 questions from" not in browser.find_element(By.ID, "eval-text").get_attribute("textContent"):
        assert time.time() < deadline, browser.find_element(By.ID, "eval-status").text
        time.sleep(0.2)
    status = browser.find_element(By.ID, "eval-status").text
    assert "made 24 questions (3 sets" in status or "reused 24 made-up questions" in status
    assert "15 of 24 questions are about documents parent (use-m3)" in status
    assert "9 made-up questions cannot tell them apart" in status or "winner on these made-up" in status
    assert "favour bm25 by about" in browser.find_element(By.ID, "eval-text").get_attribute("textContent")
    options = browser.find_elements(By.CSS_SELECTOR, "#eval-set option")
    assert len(options) == before + 1
    chosen = browser.execute_script("return document.getElementById('eval-set').value")
    assert chosen == options[-1].get_attribute("value")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#eval-svg .pt")) == 9
    assert not js_errors(browser)
