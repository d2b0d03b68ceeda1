"""Loads a report in headless Chromium (Debian's chromium and chromedriver,
driven by Selenium) and checks it the way a reader uses it: no console
error, every claim of report.json rendered as a row, each filter (verdict,
device, kind) showing exactly the matching claims, an observation sentence
in the row of every claim with a verdict other than not evaluated, the
model's disagreements grouped in classes that hold every one of them, no
script injected by a string of the evidence; saves a screenshot.

    python3 -m reports.browser REPORT_DIR [--screenshot PNG]

Exit 0 when every check holds, 1 with one line per failed check, 2 when no
browser can be started (the line says why).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = "/usr/bin/chromedriver"


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = next((b for b in CHROMIUM if Path(b).exists()), None) or shutil.which("chromium")
    if binary is None or not Path(CHROMEDRIVER).exists():
        raise RuntimeError("chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def check(report_dir: Path, screenshot: Path | None) -> list[str]:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    data = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    claims = data["claims"]
    failures: list[str] = []
    driver = _driver()
    try:
        driver.get((report_dir / "index.html").resolve().as_uri())
        try:
            alert = driver.switch_to.alert
            failures.append(f"a script ran and opened an alert: {alert.text!r}")
            alert.dismiss()
        except NoAlertPresentException:
            pass
        errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        failures += [f"console error: {m}" for m in errors]
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.claim-row")
        rendered = [r.get_attribute("data-claim") for r in rows]
        if rendered != [c["id"] for c in claims]:
            missing = sorted({c["id"] for c in claims} - set(rendered))
            failures.append(f"claim rows differ from report.json: {len(rendered)} rendered, {len(claims)} claims; "
                            f"missing: {', '.join(missing) or '-'}")
        for c in claims:  # every claim's text shows as text, whatever it contains
            section = driver.find_elements(By.ID, f"claim-{c['id']}")
            if not section or c["statement"] not in section[0].text:
                failures.append(f"claim {c['id']}: its statement is not rendered as text")
        for row in rows:  # what was observed, in the grid, for every claim decided one way or another
            c = next((c for c in claims if c["id"] == row.get_attribute("data-claim")), None)
            if c is None or c["verdict"] == "not evaluated":
                continue
            said = row.find_element(By.CSS_SELECTOR, "td.observation").text.strip()
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
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.get_screenshot_as_file(str(screenshot))
    finally:
        driver.quit()
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
        print("reports.browser: Selenium is needed (Debian: apt-get install python3-selenium)", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"reports.browser: {e}", file=sys.stderr)
        return 2
    for f in failures:
        print(f"{args.report / 'index.html'}: {f}", file=sys.stderr)
    if not failures:
        shot = f", screenshot {args.screenshot}" if args.screenshot else ""
        print(f"browser: {args.report / 'index.html'} renders, filters work, no console error{shot}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
