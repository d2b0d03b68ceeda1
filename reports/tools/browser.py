"""Loads a report in headless Chromium (Debian's chromium and chromedriver,
driven by Selenium) and checks it the way a reader uses it: no console
error, every claim of report.json rendered as a row, each filter (verdict,
device, kind) showing exactly the matching claims, an observation sentence
in the row of every claim with a verdict other than not evaluated, the
"What to set on this stack" card of every platform with every line of
report.json and every link to a claim that exists, the model's
disagreements grouped in classes that hold every one of them, no script
injected by a string of the evidence. The reasons, as a reader meets them:
each line of the grid says its fact first (no path or test name before it,
no count of what ran to open it), the line of every refuted or unexpected
verdict names what differed, no claim's section says a sentence twice, and
with every fold open the page does not scroll sideways. The top of the page, as it loads in a
TOP_WINDOW viewport, must show the summary, the card and the claims grid's
first three rows, with no raw evidence (the differences between versions, the
documented list, the model's cases, the case table) above the grid; the
screenshot is of that top, taken before anything scrolls. The page weighs
at most PAGE_BYTES for two platforms; a fold's body loads as it opens, a link
into a fold not yet loaded shows its target, and with every body loaded no
link in the page leads nowhere.

    python3 -m reports.tools.browser REPORT_DIR [--screenshot PNG]

Exit 0 when every check holds, 1 with one line per failed check, 2 when no
browser can be started (the line says why).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

from .. import wording
from ..ruling import Ruling

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = "/usr/bin/chromedriver"
TOP_WINDOW = (1400, 1600)  # the viewport the top of the report must fit: a portrait-ish desktop screen
RAW_EVIDENCE = ("versions-changed", "documented", "conformance", "performance", "environment", "cases")
# The most a report's page may weigh, for a report of two platforms (two
# torch installs on one machine) and that again for every two more: its
# folds' bodies load when they open (page/folds.py).
PAGE_BYTES = 600_000
WAIT_S = 5  # how long a fold may take to load before the check says it does not


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = next((b for b in CHROMIUM if Path(b).exists()), None) or shutil.which("chromium")
    if binary is None or not Path(CHROMEDRIVER).exists():
        raise RuntimeError("chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={TOP_WINDOW[0]},{TOP_WINDOW[1]}", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


_SHARED: list[Any] = []  # the browser of a shared() span


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """One browser for every check in the span (a test session's pages):
    starting Chromium costs more than most checks."""
    driver = _driver()
    _SHARED.append(driver)
    try:
        yield
    finally:
        _SHARED.remove(driver)
        driver.quit()


@contextlib.contextmanager
def _browser() -> Iterator[Any]:
    """The shared browser, its console drained of the last page's lines, or
    one of this check's own."""
    if _SHARED:
        _SHARED[-1].get_log("browser")
        yield _SHARED[-1]
        return
    driver = _driver()
    try:
        yield driver
    finally:
        driver.quit()


def check(report_dir: Path, screenshot: Path | None) -> list[str]:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    data = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    claims = data["claims"]
    failures: list[str] = wording.problems(data)  # reasons in the reader's terms
    failures += weight(report_dir / "index.html", len(data.get("platforms") or {}))
    with _browser() as driver:
        driver.get((report_dir / "index.html").resolve().as_uri())
        try:
            alert = driver.switch_to.alert
            failures.append(f"a script ran and opened an alert: {alert.text!r}")
            alert.dismiss()
        except NoAlertPresentException:
            pass
        errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        failures += [f"console error: {m}" for m in errors]
        failures += _top(driver)
        if screenshot is not None:  # the top, as a reader first sees it
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.get_screenshot_as_file(str(screenshot))
        failures += _cards(driver, data)
        # The grid's rows and the claims' sections, read in one call (a call
        # a row and a section was most of the check's time).
        page = driver.execute_script(
            "const rows = Array.from(document.querySelectorAll('tr.claim-row'));"
            "const cell = r => r.querySelector('td.observation');"
            "return {rows: rows.map(r => [r.dataset.claim, cell(r) === null ? null : cell(r).textContent]),"
            " sections: Object.fromEntries(arguments[0].map(id => {"
            "  const s = document.getElementById('claim-' + id); return [id, s === null ? null : s.innerText]; }))};",
            [c["id"] for c in claims])
        rendered = [claim for claim, _ in page["rows"]]
        if rendered != [c["id"] for c in claims]:
            missing = sorted({c["id"] for c in claims} - set(rendered))
            failures.append(f"claim rows differ from report.json: {len(rendered)} rendered, {len(claims)} claims; "
                            f"missing: {', '.join(missing) or '-'}")
        for c in claims:  # every claim's text shows as text, whatever it contains
            section = page["sections"].get(c["id"])
            if section is None or c["statement"] not in section:
                failures.append(f"claim {c['id']}: its statement is not rendered as text")
        by_id = {c["id"]: c for c in claims}
        for claim, observation in page["rows"]:  # what was observed, for every claim decided one way or another
            c = by_id.get(claim)
            if c is None or c["verdict"] == Ruling.NOT_EVALUATED:
                continue
            said = (observation or "").strip()
            if not said or "fact(s) hold" in said:
                failures.append(f"claim {c['id']}: no observation sentence in its row ({said[:80]!r})")

        cf = data.get("conformance") or {}
        if cf.get("disagreements"):  # grouped by class, every row under one class
            shown = driver.find_elements(By.CSS_SELECTOR, "tr.disagreement-class")
            counted = sum(int(r.find_element(By.CSS_SELECTOR, "td[data-count]").get_attribute("data-count"))
                          for r in shown)
            if len(shown) != len(cf.get("classes", [])) or counted != len(cf["disagreements"]):
                failures.append(f"disagreements: {len(shown)} class row(s) holding {counted} case(s) rendered, "
                                f"report.json has {len(cf.get('classes', []))} classes and "
                                f"{len(cf['disagreements'])} disagreement(s)")

        def visible() -> list[str]:
            return driver.execute_script("return Array.from(document.querySelectorAll('tr.claim-row'))"
                                         ".filter(r => r.offsetParent !== null).map(r => r.dataset.claim);")

        filters = {"f-verdict": lambda c, v: c["verdict"] == v, "f-kind": lambda c, v: c["kind"] == v,
                   "f-device": lambda c, v: v in c["devices"]}
        for element, keep in filters.items():
            select = Select(driver.find_element(By.ID, element))
            for option in [o.get_attribute("value") for o in select.options if o.get_attribute("value")]:
                select.select_by_value(option)
                want = [c["id"] for c in claims if keep(c, option)]
                if visible() != want:
                    failures.append(f"filter {element}={option}: shows {len(visible())} claim(s), expected {len(want)}")
            select.select_by_value("")
        if visible() != [c["id"] for c in claims]:
            failures.append("clearing the filters does not show every claim again")
        failures += _folds(driver)
        failures += _reasons(driver, data)  # last: it opens every fold
    return failures


def reasons(report_dir: Path) -> list[str]:
    """Only the checks of the reason lines, the claims' sections and the
    page's width (see _reasons)."""
    data = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    with _browser() as driver:
        driver.get((report_dir / "index.html").resolve().as_uri())
        return _reasons(driver, data)


# Each text unit of a claim's section, with its place: the cells of one
# table column share a place, and so do the items of one list (a row each);
# any other element is a place of its own. Nested units are taken out of
# the text of the unit that holds them.
_UNITS = """
const out = {};
for (const section of document.querySelectorAll('div.claim')) {
  const tables = Array.from(section.querySelectorAll('table')), lists = Array.from(section.querySelectorAll('ul'));
  out[section.id] = Array.from(section.querySelectorAll('p, li, td, th, summary, h3')).map((el, i) => {
    const clone = el.cloneNode(true);
    clone.querySelectorAll('p, li, td, th, summary, ul, table, details, svg').forEach(x => x.remove());
    const place = (el.tagName === 'TD' || el.tagName === 'TH') ? 'table ' + tables.indexOf(el.closest('table')) +
                  ' column ' + el.cellIndex : el.tagName === 'LI' ? 'list ' + lists.indexOf(el.parentElement) :
                  el.tagName.toLowerCase() + ' ' + i;
    return [place, clone.textContent];
  });
}
return out;"""


# The claims grid's lines and each section's platform lines, as shown.
_LINES = """
const grid = {}, rows = {};
for (const r of document.querySelectorAll('tr.claim-row')) {
  const cell = r.querySelector('td.observation');
  grid[r.dataset.claim] = cell === null ? '' : cell.textContent.trim();
}
for (const li of document.querySelectorAll('div.claim li.claim-platform')) {
  const id = li.closest('div.claim').id.replace(/^claim-/, '');
  for (const p of JSON.parse(li.dataset.platforms || '[]'))
    (rows[id] = rows[id] || {})[p] = li.querySelector('.reason-line').textContent.replace(/\\s+/g, ' ').trim();
}
return [grid, rows];"""


def _reasons(driver, data: dict) -> list[str]:
    """The reasons as a reader meets them: every line of the claims grid says
    its fact first (no path or test name before it, no count of what ran to
    open it); the line of every refuted or unexpected verdict names what
    differed (in its claim's section, whole; in the grid, cut, the first of
    it); no sentence is said twice in a claim's section; and, every fold
    open, the page does not scroll sideways in its TOP_WINDOW width."""
    failures = _unfold(driver)  # a claim's section with its evidence
    grid, rows = driver.execute_script(_LINES)
    for c in data["claims"]:
        shown = grid.get(c["id"])
        if shown is None:
            continue
        gravest = c.get("gravest_platform", "")
        why = wording.fact_first(shown, c.get("line_named", []), [f["test"] for f in c["facts"]])
        if why:
            failures.append(f"claim {c['id']}: its grid line {why}")
        for p, verdict in c["platforms"].items():
            known = (c.get("known") or {}).get(p) or {}
            if verdict != Ruling.REFUTED and known.get("status") != "unexpected":
                continue
            line = rows.get(c["id"], {}).get(p)
            if line is None:
                failures.append(f"claim {c['id']}: its section has no line for {p}")
                continue
            # A line cut to the page's length (it ends in an ellipsis) names
            # at least the start of what decided it.
            why = wording.names_what_differed(line, c["named"].get(p, []), whole=not line.rstrip().endswith("…"))
            if not why and p == gravest:
                why = wording.names_what_differed(shown, c["named"].get(p, []), whole=False)
            if why:
                failures.append(f"claim {c['id']} on {p} ({verdict}{', ' + known['status'] if known else ''}): "
                                f"its line {why}")
    for section, units in driver.execute_script(_UNITS).items():
        for sentence in wording.repeated([(place, text) for place, text in units]):
            failures.append(f"{section}: says twice {sentence[:120]!r}")
    nowhere = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href^=\"#\"]'), a => a.getAttribute('href').slice(1))"
        ".filter(id => document.getElementById(decodeURIComponent(id)) === null);")
    if nowhere:
        failures.append(f"{len(nowhere)} link(s) in the page lead nowhere: #{', #'.join(sorted(set(nowhere))[:3])}")
    driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; });")
    wide = driver.execute_script("""
        const width = document.documentElement.clientWidth;
        const out = e => e.getBoundingClientRect().right > width + 1;
        const over = Array.from(document.querySelectorAll('body *')).filter(e => out(e) && !out(e.parentElement));
        return [document.documentElement.scrollWidth, width,
                over.slice(0, 3).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                                          (e.className ? '.' + e.className : ''))];""")
    if wide[0] > wide[1]:
        failures.append(f"the page scrolls sideways at {TOP_WINDOW[0]}px: {wide[0]}px wide in {wide[1]}px "
                        f"({', '.join(wide[2]) or 'the page itself'})")
    return failures


def first_screen(report_dir: Path) -> list[str]:
    """Only the check of the top of the page, as it loads (see _top)."""
    with _browser() as driver:
        driver.get((report_dir / "index.html").resolve().as_uri())
        return _top(driver)


def weight(page: Path, platforms: int) -> list[str]:
    """The page loads fast: at most PAGE_BYTES for two platforms (half that
    for each more), its folds' bodies included (compressed at its end)."""
    size, limit = page.stat().st_size, PAGE_BYTES * max(1.0, platforms / 2)
    return [f"the page weighs {size / 1000:.0f} KB, more than {limit / 1000:.0f} KB for {platforms} platform(s)"
            ] if size > limit else []


_UNFOLD = """
const done = arguments[arguments.length - 1];
if (typeof window.backendcheckUnfold !== 'function') { done('the page has no backendcheckUnfold()'); return; }
window.backendcheckUnfold().then(() => done(document.querySelectorAll('details[data-fold]').length ?
  document.querySelectorAll('details[data-fold]').length + ' fold(s) still without their bodies' : ''),
  e => done('loading the folds failed: ' + e));"""


def _unfold(driver) -> list[str]:
    """Every fold's body in place, as the page's own script puts it."""
    driver.set_script_timeout(WAIT_S)
    why = driver.execute_async_script(_UNFOLD)
    return [f"folds: {why}"] if why else []


def _folds(driver) -> list[str]:
    """A fold's body loads as it opens, and a link into a fold not loaded
    yet (an evidence table's test, to its row of the case table) leads to
    its target, shown: the way a reader meets them."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    folds = driver.find_elements(By.CSS_SELECTOR, "details.evidence[data-fold]")
    if not folds:
        return []
    fold = folds[0]
    driver.execute_script("arguments[0].scrollIntoView(); arguments[0].querySelector('summary').click();", fold)
    try:
        WebDriverWait(driver, WAIT_S).until(lambda d: fold.get_attribute("data-fold") is None)
    except TimeoutException:
        return [f"folds: an evidence fold opened and its body did not load in {WAIT_S} s"]
    links = [a for a in fold.find_elements(By.CSS_SELECTOR, 'a[href^="#case-"]')
             if not driver.find_elements(By.ID, a.get_attribute("href").rsplit("#", 1)[-1])]
    if not links:
        return []
    target = links[0].get_attribute("href").rsplit("#", 1)[-1]
    driver.execute_script("arguments[0].click();", links[0])
    try:
        WebDriverWait(driver, WAIT_S).until(lambda d: d.execute_script(
            "const t = document.getElementById(arguments[0]); return t !== null && t.offsetParent !== null &&"
            " location.hash === '#' + arguments[0];", target))
    except TimeoutException:
        return [f"folds: the link to #{target} in an evidence fold does not show its target"]
    return []


def _top(driver) -> list[str]:
    """What the first screen shows: the summary, the card and the grid's
    first rows within the viewport, and no raw evidence above the grid."""
    where = driver.execute_script("""
        const top = id => { const e = document.getElementById(id); return e ? e.getBoundingClientRect().top : null; };
        const rows = Array.from(document.querySelectorAll('tr.claim-row')).slice(0, 3);
        return {scroll: window.scrollY, height: window.innerHeight, summary: top('summary'),
                card: top('what-to-set'), grid: top('grid'),
                rows: rows.length ? rows[rows.length - 1].getBoundingClientRect().bottom : null,
                raw: arguments[0].map(id => [id, top(id)])};""", list(RAW_EVIDENCE))
    failures = []
    if where["scroll"]:
        failures.append(f"the page opens scrolled to {where['scroll']}px, not at its top")
    for name in ("summary", "card", "grid"):
        if where[name] is None:
            failures.append(f"the top of the page: no {name}")
        elif where[name] > where["height"]:
            failures.append(f"the top of the page: the {name} starts at {where[name]:.0f}px, below the first "
                            f"{where['height']}px screen")
    if where["rows"] is None or where["rows"] > where["height"]:
        failures.append(f"the top of the page: the grid's first claims end at {where['rows'] or 0:.0f}px, below "
                        f"the first {where['height']}px screen")
    if where["grid"] is not None:
        above = [i for i, y in where["raw"] if y is not None and y < where["grid"]]
        if above:
            failures.append(f"the top of the page: raw evidence ({', '.join(above)}) comes before the claims grid")
    return failures


def _cards(driver, data: dict) -> list[str]:
    """One card per platform of report.json, each with its lines, and every
    link of a card leading to a claim's section."""
    from selenium.webdriver.common.by import By

    failures = []
    shown = {c.get_attribute("data-platform"): c for c in driver.find_elements(By.CSS_SELECTOR, "div.card")}
    want = data.get("card") or {}
    if set(shown) != set(want):
        failures.append(f"cards: {sorted(shown)} rendered, report.json has {sorted(want)}")
    for platform, card in want.items():
        element = shown.get(platform)
        if element is None:
            continue
        lines = element.find_elements(By.CSS_SELECTOR, "li.card-line")
        expected = [(x["goal"], x["setting"]) for s in card["sections"] for x in s["lines"]]
        if [(li.get_attribute("data-goal"), li.find_element(By.CSS_SELECTOR, ".mono").text) for li in lines] != expected:
            failures.append(f"card of {platform}: {len(lines)} line(s) rendered, report.json has {len(expected)}")
        for li in lines:
            if not li.find_elements(By.CSS_SELECTOR, "a.card-claim"):
                failures.append(f"card of {platform}: a line links to no claim: {li.text[:80]!r}")
        for a in element.find_elements(By.CSS_SELECTOR, "a.card-claim"):
            target = (a.get_attribute("href") or "").rsplit("#", 1)[-1]
            if not driver.find_elements(By.ID, target):
                failures.append(f"card of {platform}: the link {a.text!r} leads nowhere (#{target})")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backendcheck-browser", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path, help="directory with index.html and report.json")
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args(argv)
    try:
        failures = check(args.report, args.screenshot)
    except ImportError:
        print("reports.tools.browser: Selenium is needed (Debian: apt-get install python3-selenium)", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"reports.tools.browser: {e}", file=sys.stderr)
        return 2
    for f in failures:
        print(f"{args.report / 'index.html'}: {f}", file=sys.stderr)
    if not failures:
        shot = f", screenshot {args.screenshot}" if args.screenshot else ""
        print(f"browser: {args.report / 'index.html'} renders, filters work, no console error{shot}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
