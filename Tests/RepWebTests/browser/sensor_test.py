#!/usr/bin/python3
"""The "sensor lost" banner in a real headless browser, driven by a real repd whose accelerometer goes away.

repd runs on an emulated LIS3DH (umockdev: real libudev and sysfs reads against a test bed, records written into
the device's node; see umockdev_station.py), repd-web reads its socket, and headless Chromium shows the page. The
device is then removed (a udev "remove", as when a sensor is unplugged): repd publishes `sensor` state `lost`, and the
page must show the #sensor-lost banner; the device comes back: repd publishes `back`, and the banner must go. A
parallel client of repd's socket checks that those states really came from repd.

Usage: sensor_test.py --bin DIR --out DIR --device DEVICE.umockdev
Prints a JSON summary on its last line; exits non-zero with the reason when a check fails.
"""
import argparse
import functools
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
import checks
from checks import FAILURES, check, free_port, port_open

wait_for = functools.partial(checks.wait_for, step=0.02)  # the banner's timing is measured to 20 ms

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "umockdev_station.py")


class Station:
    """umockdev_station.py under umockdev-wrapper: a command per line in, a word per line out."""

    def __init__(self, args, sock, journal):
        self.process = subprocess.Popen(
            ["/usr/bin/umockdev-wrapper", "/usr/bin/python3", HELPER, args.device, os.path.join(args.bin, "repd"), sock,
             journal, os.path.join(args.out, "repd.log")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(args.out, "station.log"), "ab"),
            text=True, bufsize=1)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def expect(self, word, timeout):
        if not self.selector.select(timeout):
            return False
        return self.process.stdout.readline().strip() == word

    def send(self, command, answer, timeout=10):
        self.process.stdin.write(command + "\n")
        return self.expect(answer, timeout)

    def stop(self):
        try:
            self.process.stdin.write("stop\n")
            self.process.stdin.close()
        except OSError:
            pass
        try:
            return self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None


class SensorEvents(threading.Thread):
    """A parallel client of repd's socket: its `sensor` events, as repd sent them."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.conn = socket.socket(socket.AF_UNIX)
        self.conn.connect(path)
        self.conn.sendall(b"subscribe sensor\n")
        self.states = []

    def run(self):
        buffer = b""
        while True:
            chunk = self.conn.recv(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("type") == "sensor":
                    self.states.append(message["state"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    summary = {}
    sock = os.path.join(args.out, "repd.sock")
    station = Station(args, sock, os.path.join(args.out, "events.db"))
    port = free_port()
    web_log = open(os.path.join(args.out, "repd-web.log"), "ab")
    web = subprocess.Popen([os.path.join(args.bin, "repd-web"), "--socket", "Rack IIO=" + sock, "--listen",
                            "127.0.0.1:%d" % port], stdout=web_log, stderr=web_log)
    driver = None
    try:
        if not check(station.expect("ready", 20), "repd on the emulated accelerometer did not start (see repd.log)"):
            return 1
        events = SensorEvents(sock)
        events.start()
        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--force-device-scale-factor=1", "--hide-scrollbars"]:
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        # Chromium puts its singleton socket in a folder under $TMPDIR and leaves it there: in the run's folder, it
        # goes with it.
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=dict(os.environ, TMPDIR=args.out)),
                                  options=options)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        check(wait_for(lambda: port_open(port), 20), "repd-web did not listen")
        driver.get("http://127.0.0.1:%d/?theme=dark" % port)
        banner = lambda: driver.execute_script("return document.getElementById('sensor-lost').classList.contains('on')")
        state_text = lambda: driver.execute_script("return document.getElementById('state-text').textContent")
        api_sensor = lambda: json.loads(driver.execute_script(
            "return fetch('api/status').then(r => r.text())"))["stations"][0]["sensor"]

        check(wait_for(lambda: state_text() == "sensor live", 15),
              "the page never showed the sensor live (it says %r)" % state_text())
        check(not banner(), "the 'sensor lost' banner is on while the sensor is live")

        check(station.send("remove", "removed"), "the emulated device could not be removed")
        removed = time.time()
        check(wait_for(banner, 10), "the 'sensor lost' banner did not appear when the accelerometer was removed")
        summary["banner_on_ms"] = round((time.time() - removed) * 1000)
        check(state_text() == "sensor lost", "with the sensor removed the state reads %r" % state_text())
        check(api_sensor() == "lost", "/api/status says the sensor is %r" % api_sensor())
        check(wait_for(lambda: "lost" in events.states, 5), "repd itself did not publish 'lost' (it sent %s)" % events.states)
        driver.save_screenshot(os.path.join(args.out, "display-sensor-lost.png"))

        check(station.send("add", "added"), "the emulated device could not be added back")
        added = time.time()
        check(wait_for(lambda: not banner(), 10), "the 'sensor lost' banner stayed after the accelerometer came back")
        summary["banner_off_ms"] = round((time.time() - added) * 1000)
        check(wait_for(lambda: state_text() == "sensor live", 5), "after the sensor came back the state reads %r" % state_text())
        check(api_sensor() == "back", "/api/status says the sensor is %r" % api_sensor())
        check(wait_for(lambda: events.states[-2:] == ["lost", "back"], 5), "repd sent the sensor states %s" % events.states)
        summary["repd_sensor_states"] = events.states
    finally:
        if driver:
            driver.quit()
        check(station.stop() == 0, "repd on the emulated accelerometer did not exit 0 (see repd.log)")
        web.send_signal(signal.SIGTERM)
        try:
            check(web.wait(10) == 0, "repd-web did not exit 0 after SIGTERM")
        except subprocess.TimeoutExpired:
            web.kill()
            check(False, "repd-web did not stop after SIGTERM")
        summary["seconds"] = round(time.time() - started, 1)
        summary["failures"] = FAILURES
        print(json.dumps(summary))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
