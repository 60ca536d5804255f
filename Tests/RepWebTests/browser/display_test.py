#!/usr/bin/python3
"""The station display in a real headless browser (Chromium through chromedriver, driven by Selenium).

Starts repd-web first (the page must show that repd is not running), then repd on a generated workout; checks that
the page's rep count shows every rep of every set, in order, as repd announces them (read from the DOM with a
MutationObserver), measures the time from repd publishing each rep (its `wall`) to the DOM showing it. In the second
set it stops repd-web (the page must say it is offline) and starts it again two reps later: the page must reconnect
by itself and show the reps it missed, each of them. Then it stops repd (the "repd is not running" banner must
appear), starts it again on the same journal (the banner must go and the new workout's reps must follow), and writes
screenshots. It also checks that the page loads nothing from another origin (it must work offline), and that
?theme=light and ?theme=dark win over the system's colour scheme (the page's computed colours).

Latency, repd's `wall` → the DOM, over the reps of both runs that came alone ("live"): the median, p95 and maximum
are printed (the goal is a median of at most 200 ms), and only a rep that takes 5 s fails the test: over about 14
live reps a few stalls of a loaded 2-core machine decide the median and the p95. Reps announced together (a set's
first reps, when the set is established) are stepped through 120 ms apart by design, so they are reported apart;
so are the reps that came while repd-web was down.

Usage: display_test.py --bin DIR --out DIR [--docs-screenshot PATH]
Prints a JSON summary on its last line; exits non-zero with the reason when a check fails.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from checks import FAILURES, check, free_port, port_open, wait_for

SETS = [4, 8]          # reps per set in the generated workout
SPEED = 5.0            # replay speed: a 2.2 s rep every 0.44 s


class Subscriber(threading.Thread):
    """A parallel client of repd's socket: every event from the journal's start, with the time it was read."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.events = []
        self.lock = threading.Lock()

    def run(self):
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(self.path)
        conn.sendall(b"subscribe rep,set,sensor since=0\n")
        buffer = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                message["_read"] = time.time()
                with self.lock:
                    self.events.append(message)

    def reps(self):
        with self.lock:
            return [e for e in self.events if e.get("type") == "rep"]

    def set_ends(self):
        with self.lock:
            return [e for e in self.events if e.get("type") == "set_end"]


class Run:
    def __init__(self, args):
        self.bin = args.bin
        self.out = args.out
        self.socket = os.path.join(args.out, "repd.sock")
        self.journal = os.path.join(args.out, "events.db")
        self.fixture = os.path.join(args.out, "workout.csv")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d/" % self.port
        self.repd = None
        self.web = None

    def start_repd(self):
        log = open(os.path.join(self.out, "repd.log"), "ab")
        self.repd = subprocess.Popen(
            [os.path.join(self.bin, "repd"), "--fixture", self.fixture, "--speed", str(SPEED), "--socket", self.socket,
             "--journal", self.journal, "--quiet"], stdout=log, stderr=log)
        check(wait_for(lambda: self.connectable(), 20), "repd did not start listening on " + self.socket)

    def connectable(self):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(self.socket)
            return True
        except OSError:
            return False

    def stop_repd(self):
        self.repd.send_signal(signal.SIGTERM)
        check(self.repd.wait(15) == 0, "repd did not exit 0 after SIGTERM")


def observe(driver):
    """Records every value the count shows from now on, with its set and the time (ms since 1970)."""
    driver.execute_script("""
        window.__seen = [];
        if (window.__observing) return;
        window.__observing = true;
        const el = document.getElementById('count');
        new MutationObserver((records) => {
          const t = Date.now();
          for (const r of records) for (const n of r.addedNodes)
            window.__seen.push({v: n.textContent, set: el.dataset.set, t: t});
        }).observe(el, {childList: true, characterData: true, subtree: true});
    """)


def seen(driver):
    return driver.execute_script("return window.__seen.slice()")


def banner_on(driver, name):
    return driver.execute_script("return document.getElementById(arguments[0]).classList.contains('on')", name)


def count_text(driver):
    return driver.execute_script("return [document.getElementById('count').dataset.set, document.getElementById('count').textContent]")


def sequences(records):
    """The values shown per set, consecutive repeats and 0 (a set starting) left out."""
    per_set = {}
    for r in records:
        if r["set"] == "" or r["v"] == "0":
            continue
        values = per_set.setdefault(int(r["set"]), [])
        if not values or values[-1] != int(r["v"]):
            values.append(int(r["v"]))
    return per_set


def expected(reps, set_ends):
    """What the count must show per set: each rep's number as announced, then the set's final count."""
    per_set = {}
    for e in reps:
        values = per_set.setdefault(e["set"], [])
        if not values or values[-1] != e["rep"]:
            values.append(e["rep"])
    for e in set_ends:
        values = per_set.setdefault(e["set"], [])
        if values and values[-1] != e["reps"]:
            values.append(e["reps"])
    return per_set


def latencies(reps, records):
    """ms from repd publishing each rep (`wall`) to the count showing it; and whether it came alone (live) or
    with others (a set's first reps, announced together when the set is established)."""
    result = []
    for i, e in enumerate(reps):
        shown = next((r["t"] for r in records if r["set"] == str(e["set"]) and r["v"] == str(e["rep"])), None)
        if shown is None:
            continue
        batch = i > 0 and reps[i - 1]["set"] == e["set"] and abs(reps[i - 1]["wall"] - e["wall"]) < 0.05
        batch = batch or (i + 1 < len(reps) and reps[i + 1]["set"] == e["set"] and abs(reps[i + 1]["wall"] - e["wall"]) < 0.05)
        result.append({"set": e["set"], "rep": e["rep"], "wall": e["wall"], "ms": shown - e["wall"] * 1000, "live": not batch,
                       "subscriber_ms": (e["_read"] - e["wall"]) * 1000})
    return result


def same_origin(driver):
    """Every resource the page loaded and every URL in its DOM and style sheets that is not on the page's own origin."""
    return driver.execute_script("""
        const origin = location.origin, foreign = [];
        for (const e of performance.getEntriesByType('resource'))
          if (new URL(e.name).origin !== origin) foreign.push('loaded: ' + e.name);
        for (const el of document.querySelectorAll('[src], [href], [srcset], [action], [poster], [data]'))
          for (const a of ['src', 'href', 'srcset', 'action', 'poster', 'data'])
            if (el.hasAttribute(a) && new URL(el.getAttribute(a), location.href).origin !== origin)
              foreign.push(el.tagName + ' ' + a + '=' + el.getAttribute(a));
        for (const sheet of document.styleSheets) {
          if (sheet.href && new URL(sheet.href).origin !== origin) foreign.push('style sheet ' + sheet.href);
          for (const rule of sheet.cssRules)
            for (const m of rule.cssText.matchAll(/url\\(["']?([^"')]*)/g))
              if (new URL(m[1], location.href).origin !== origin) foreign.push('css url ' + m[1]);
        }
        return {origin: origin, resources: performance.getEntriesByType('resource').length, foreign: foreign};
    """)


def colours(driver):
    """The body's computed background and text colours."""
    return driver.execute_script(
        "const s = getComputedStyle(document.body); return [s.backgroundColor, s.color]")


# The page's --bg and --fg (StationPage.swift), as getComputedStyle reports them.
DARK = ["rgb(12, 15, 19)", "rgb(244, 246, 248)"]
LIGHT = ["rgb(246, 246, 243)", "rgb(13, 17, 23)"]


def check_themes(driver, url, summary):
    """?theme= overrides the system's scheme, whichever it is; without it the page follows the system."""
    seen = {}
    for system in ("dark", "light"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": system}]})
        for theme, want in (("light", LIGHT), ("dark", DARK), (None, LIGHT if system == "light" else DARK)):
            driver.get(url + ("?theme=" + theme if theme else ""))
            got = colours(driver)
            seen["system %s, ?theme=%s" % (system, theme)] = got
            check(got == want, "with a %s system and ?theme=%s the page's colours are %s, not %s" % (system, theme, got, want))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    summary["themes"] = seen


def stats(values):
    if not values:
        return None
    values = sorted(values)
    return {"n": len(values), "median": round(values[len(values) // 2], 1),
            "p95": round(values[min(len(values) - 1, int(len(values) * 0.95))], 1), "max": round(values[-1], 1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--docs-screenshot")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    run = Run(args)
    summary = {}

    subprocess.run([os.path.join(args.bin, "repctl"), "generate", "workout", "--reps", ",".join(map(str, SETS)),
                    "--rest", "10", "--out", run.fixture], check=True, stdout=subprocess.DEVNULL)
    web_log = open(os.path.join(args.out, "repd-web.log"), "ab")

    def start_web():
        return subprocess.Popen([os.path.join(args.bin, "repd-web"), "--socket", "Rack 1=" + run.socket,
                                 "--listen", "127.0.0.1:%d" % run.port], stdout=web_log, stderr=web_log)

    run.web = start_web()
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                 "--force-device-scale-factor=1", "--hide-scrollbars"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    # Chromium puts its singleton socket in a folder under $TMPDIR and leaves it there: in the run's folder, it
    # goes with it.
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=dict(os.environ, TMPDIR=args.out)),
                              options=options)
    # The page's own size (a window's would include the browser's frame): a 1280 x 800 tablet, landscape.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        check(wait_for(lambda: run.web.poll() is None and port_open(run.port), 20), "repd-web did not listen")
        driver.get(run.url + "?theme=dark")
        # Before repd runs: the page is online, and says repd is not running.
        check(wait_for(lambda: not banner_on(driver, "offline") and banner_on(driver, "repd-down"), 15),
              "with no repd, the page did not show 'repd is not running'")
        driver.save_screenshot(os.path.join(args.out, "display-no-repd.png"))
        observe(driver)

        # First run: every rep of every set, in order.
        run.start_repd()
        subscriber = Subscriber(run.socket)
        subscriber.start()
        check(wait_for(lambda: not banner_on(driver, "repd-down"), 10), "the 'repd is not running' banner stayed")
        # In the last set, after its second rep: repd-web stops, and starts again two reps later.
        check(wait_for(lambda: list(count_text(driver)) == [str(len(SETS)), "2"], 60, step=0.05),
              "the count never reached set %d rep 2 (now %s)" % (len(SETS), count_text(driver)))
        offline_from = time.time()
        run.web.send_signal(signal.SIGTERM)
        check(run.web.wait(10) == 0, "repd-web did not exit 0 after SIGTERM")
        check(wait_for(lambda: banner_on(driver, "offline"), 5), "the page did not say it was offline")
        driver.save_screenshot(os.path.join(args.out, "display-offline.png"))
        check(wait_for(lambda: any(e["set"] == len(SETS) and e["rep"] >= 4 for e in subscriber.reps()), 20),
              "repd did not announce rep 4 of the last set")
        run.web = start_web()
        check(wait_for(lambda: not banner_on(driver, "offline"), 10), "the page did not reconnect to repd-web by itself")
        offline_until = time.time()
        summary["display_offline_s"] = round(offline_until - offline_from, 2)
        shot = False
        last = (str(len(SETS)), str(SETS[-1]))

        def progress():
            nonlocal shot
            now = list(count_text(driver))
            if not shot and now == [str(len(SETS)), str(min(6, SETS[-1]))]:
                time.sleep(0.15)
                driver.save_screenshot(os.path.join(args.out, "display.png"))
                if args.docs_screenshot:
                    driver.save_screenshot(args.docs_screenshot)
                shot = True
            return now == list(last)

        check(wait_for(progress, 60, step=0.05), "the count never reached set %d rep %d (now %s)" % (len(SETS), SETS[-1], count_text(driver)))
        check(shot, "no screenshot was taken mid-set")
        origins = same_origin(driver)
        summary["same_origin"] = origins
        check(origins["resources"] >= 1 and not origins["foreign"],
              "the page uses resources from another origin: %s" % origins["foreign"])
        time.sleep(0.3)
        run.stop_repd()
        check(wait_for(lambda: banner_on(driver, "repd-down"), 5), "the 'repd is not running' banner did not appear after repd stopped")
        driver.save_screenshot(os.path.join(args.out, "display-repd-stopped.png"))
        records = seen(driver)
        reps = subscriber.reps()
        want = expected(reps, subscriber.set_ends())
        got = sequences(records)
        summary["first_run"] = {"shown": got, "announced": want}
        check(want == {i + 1: list(range(1, n + 1)) for i, n in enumerate(SETS)},
              "repd did not announce the generated workout's reps: %s" % want)
        check(got == want, "the page showed %s, repd announced %s" % (got, want))
        lat = latencies(reps, records)
        for l in lat:
            l["display_offline"] = offline_from <= l["wall"] <= offline_until
        missed = [l for l in lat if l["display_offline"]]
        summary["reps_while_display_offline"] = [(l["set"], l["rep"]) for l in missed]
        check(len(missed) >= 2, "fewer than 2 reps came while repd-web was down: %s" % missed)
        lat = [l for l in lat if not l["display_offline"]]
        check(len(lat) + len(missed) == sum(SETS), "not every rep was seen in the DOM (%d of %d)" % (len(lat) + len(missed), sum(SETS)))
        # The bars of the last set: a wrist's reps carry their time and tempo (and the times of their window, which
        # are not measures): rep time first, then down and up.
        bars = driver.execute_script(
            "return [...document.querySelectorAll('#bars .metric')].map(b => [b.dataset.metric, b.querySelector('h2 span').textContent])")
        summary["bars"] = bars
        check(len(bars) >= 1 and bars[0] == ["duration", "rep time"]
              and all(b in (["duration", "rep time"], ["eccentric_s", "down"], ["concentric_s", "up"]) for b in bars),
              "the bars show %s, not the rep time and its tempo" % bars)
        chips = driver.execute_script(
            "return [...document.querySelectorAll('footer .chip')].map(c => [+c.dataset.set, +c.dataset.reps])")
        summary["history"] = chips
        check(chips[-len(SETS):] == [[i + 1, n] for i, n in enumerate(SETS)],
              "the sets done read %s" % chips)

        # Second run on the same journal: the banner goes, the new workout's reps follow from the start.
        observe(driver)
        run.start_repd()
        subscriber2 = Subscriber(run.socket)
        subscriber2.start()
        check(wait_for(lambda: not banner_on(driver, "repd-down"), 10), "the page did not recover when repd came back")
        check(wait_for(lambda: list(count_text(driver)) == ["1", str(SETS[0])], 40, step=0.05),
              "after the restart the count never reached set 1 rep %d (now %s)" % (SETS[0], count_text(driver)))
        time.sleep(0.3)
        records2 = seen(driver)
        new_reps = [e for e in subscriber2.reps() if e["id"] > max(e["id"] for e in reps)]
        got2 = sequences(records2)
        want2 = expected([e for e in new_reps if e["set"] == 1], [])
        summary["second_run"] = {"shown": got2, "announced": want2}
        check(got2.get(1) == want2.get(1) == list(range(1, SETS[0] + 1)),
              "after the restart the page showed %s, repd announced %s" % (got2, want2))
        lat2 = latencies([e for e in new_reps if e["set"] == 1], records2)
        check(len(lat2) == SETS[0], "after the restart not every rep was seen in the DOM (%d of %d)" % (len(lat2), SETS[0]))
        for l in lat2:
            l["run"] = 2
        lat += lat2
        live = [l["ms"] for l in lat if l["live"]]
        summary["latency_ms_live"] = stats(live)
        summary["latency_ms_together"] = stats([l["ms"] for l in lat if not l["live"]])
        summary["subscriber_ms"] = stats([l["subscriber_ms"] for l in lat])
        summary["latencies"] = lat
        figures = summary["latency_ms_live"]
        print("latency repd wall -> DOM over %d live reps: median %s ms, p95 %s ms, max %s ms (%d announced together, "
              "not asserted: %s)" % (len(live), figures and figures["median"], figures and figures["p95"],
                                     figures and figures["max"], len(lat) - len(live), summary["latency_ms_together"]),
              flush=True)
        check(len(live) >= 8, "only %d reps came alone: too few to measure the latency" % len(live))
        # The latency is printed above, not judged against the 200 ms goal: a dozen reps on a busy 2-core machine
        # decide a median too. Only a rep stuck for 5 s fails (every rep must reach the page, above, within the
        # waits).
        check(figures is not None and figures["max"] < 5000, "a rep took 5 s or more from repd to the page: %s" % figures)
        status = json.loads(driver.execute_script("return fetch('api/status').then(r => r.text())"))
        summary["api_status_link"] = status["stations"][0]["repd"]
        check(status["stations"][0]["repd"] == "up", "/api/status says repd is %s" % status["stations"][0]["repd"])

        check_themes(driver, run.url, summary)
        driver.get(run.url + "?theme=light")
        wait_for(lambda: not banner_on(driver, "offline"), 10)
        time.sleep(0.3)
        driver.save_screenshot(os.path.join(args.out, "display-light.png"))
        two_stations(driver, run, args, summary)
        run.stop_repd()
    finally:
        driver.quit()
        for process in (run.repd, run.web):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    FAILURES.append("a process did not stop after SIGTERM")
    if run.web.returncode not in (0, None):
        check(False, "repd-web exited %s" % run.web.returncode)
    summary["seconds"] = round(time.time() - started, 1)
    summary["failures"] = FAILURES
    print(json.dumps(summary))
    sys.exit(1 if FAILURES else 0)


def two_stations(driver, run, args, summary):
    """A second repd and a repd-web showing both: side by side without ?station=, one with ?station=NAME."""
    second = os.path.join(args.out, "repd2.sock")
    log = open(os.path.join(args.out, "two-stations.log"), "ab")
    repd2 = subprocess.Popen(
        [os.path.join(args.bin, "repd"), "--fixture", run.fixture, "--speed", "10", "--socket", second, "--journal",
         os.path.join(args.out, "events2.db"), "--quiet"], stdout=log, stderr=log)
    port = free_port()
    web2 = subprocess.Popen([os.path.join(args.bin, "repd-web"), "--socket", "Rack 1=" + run.socket, "--socket",
                             "Rack 2=" + second, "--listen", "127.0.0.1:%d" % port], stdout=log, stderr=log)
    url = "http://127.0.0.1:%d/" % port
    try:
        check(wait_for(lambda: port_open(port), 20), "the second repd-web did not listen")
        driver.get(url + "?theme=dark")
        tiles = lambda: driver.execute_script(
            "return [...document.querySelectorAll('#grid .tile .name')].map(t => t.textContent)")
        check(wait_for(lambda: tiles() == ["Rack 1", "Rack 2"], 10), "the overview shows %s" % tiles())
        check(wait_for(lambda: driver.execute_script(
            "return document.querySelectorAll('#grid .tile .n')[1].textContent") not in ("0", None), 20),
              "Rack 2's tile never counted a rep")
        driver.save_screenshot(os.path.join(args.out, "display-two-stations.png"))
        summary["two_stations"] = {"tiles": tiles()}
        origins = same_origin(driver)
        check(not origins["foreign"], "the overview uses resources from another origin: %s" % origins["foreign"])
        driver.get(url + "?station=Rack%202&theme=dark")

        def same_as_status():
            station = json.loads(driver.execute_script("return fetch('api/status').then(r => r.text())"))["stations"][1]
            return (driver.execute_script("return document.getElementById('station').textContent") == "Rack 2"
                    and list(count_text(driver)) == [str(station["set"]), str(station["count"])] and station["set"])
        check(wait_for(same_as_status, 10), "?station=Rack 2 does not show Rack 2's count")
        summary["two_stations"]["rack_2"] = list(count_text(driver))
    finally:
        for process in (web2, repd2):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
