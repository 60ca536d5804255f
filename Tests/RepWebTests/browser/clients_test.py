#!/usr/bin/python3
"""repd-web under load: many browsers' event streams at once, one that stops reading, bad URLs, repd restarting.

Starts repd on a generated workout with long sets (many reps, so each update is large and frequent) and repd-web,
opens CLIENTS Server-Sent Events streams that read, and one that never reads (with a tiny receive buffer), and
checks that:
  - every reading stream gets the same updates, ending with the state /api/status reports;
  - the stream that stopped reading is disconnected by repd-web, and the others do not wait for it;
  - repd stopping and coming back reaches every stream (repd "down", then "up") and they stay connected;
  - bad URLs get 404 and repd-web keeps serving;
  - repd-web's resident memory (VmRSS, with RssAnon, RssFile and the peak VmHWM) idle, with the streams open while
    the workout streams to them, and after repd's restart, reported.

Usage: clients_test.py --bin DIR --out DIR [--clients N]
Prints a JSON summary on its last line; exits non-zero with the reason when a check fails.
"""
import argparse
import http.client
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from checks import FAILURES, check, free_port, port_open, wait_for


def memory_kib(pid):
    """/proc/PID/status: resident memory (VmRSS), its anonymous and file-backed parts, and the peak (VmHWM), KiB."""
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"):
                values[name] = int(rest.split()[0])
    return values


class Stream:
    """One browser's /events stream, read without blocking; keeps the last state per station."""

    def __init__(self, port, receive_buffer=None):
        self.sock = socket.socket()
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        self.sock.setblocking(False)
        self.buffer = b""
        self.head = None
        self.closed = False
        self.messages = 0
        self.last = None
        self.links = []  # the "repd" link states seen, in order, without repeats

    def feed(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return
        self.buffer += chunk
        if self.head is None and b"\r\n\r\n" in self.buffer:
            self.head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if self.head is None:
            return
        # Chunked transfer encoding: strip the chunk headers the simple way (sizes are hex lines between chunks).
        while True:
            if b"\r\n" not in self.buffer:
                return
            size_line, rest = self.buffer.split(b"\r\n", 1)
            size = int(size_line, 16)
            if len(rest) < size + 2:
                return
            self.events(rest[:size])
            self.buffer = rest[size + 2:]
            if size == 0:
                self.closed = True
                return

    pending = b""

    def events(self, data):
        self.pending += data
        while b"\n\n" in self.pending:
            event, self.pending = self.pending.split(b"\n\n", 1)
            lines = event.decode().split("\n")
            name = next((l[7:] for l in lines if l.startswith("event: ")), "message")
            data = "".join(l[6:] for l in lines if l.startswith("data: "))
            if name == "message" and data:
                self.messages += 1
                self.last = json.loads(data)
                if not self.links or self.links[-1] != self.last["repd"]:
                    self.links.append(self.last["repd"])


def get(port, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request(method, path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--clients", type=int, default=100)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    summary = {"clients": args.clients}
    sock_path = os.path.join(args.out, "repd.sock")
    journal = os.path.join(args.out, "events.db")
    fixture = os.path.join(args.out, "long-sets.csv")
    port = free_port()
    subprocess.run([os.path.join(args.bin, "repctl"), "generate", "workout", "--reps", "100,100", "--period", "1.0",
                    "--rest", "10", "--out", fixture], check=True, stdout=subprocess.DEVNULL)
    log = open(os.path.join(args.out, "processes.log"), "ab")

    def start_repd():
        process = subprocess.Popen([os.path.join(args.bin, "repd"), "--fixture", fixture, "--speed", "20", "--socket",
                                    sock_path, "--journal", journal, "--quiet"], stdout=log, stderr=log)
        check(wait_for(lambda: connectable(sock_path), 20), "repd did not listen")
        return process

    web = subprocess.Popen([os.path.join(args.bin, "repd-web"), "--socket", sock_path, "--listen",
                            "127.0.0.1:%d" % port, "--client-timeout", "2"], stdout=log, stderr=log)
    repd = None
    streams = []
    try:
        check(wait_for(lambda: port_open(port), 20), "repd-web did not listen")
        time.sleep(1)
        summary["memory_idle_kib"] = memory_kib(web.pid)

        # Bad URLs: 404, and repd-web keeps serving.
        for path in ["/nope", "/events/x", "/api", "/api/status/x", "/index.html", "/%2e%2e/etc/passwd", "/?x=" + "a" * 2000]:
            status, _ = get(port, path)
            if path.startswith("/?"):
                check(status == 200, "GET %s... answered %d, not 200" % (path[:8], status))
            else:
                check(status == 404, "GET %s answered %d, not 404" % (path, status))
        status, body = get(port, "/api/status")
        check(status == 200 and json.loads(body)["service"] == "repd-web", "/api/status after bad URLs: %d" % status)

        streams = [Stream(port) for _ in range(args.clients)]
        stalled = Stream(port, receive_buffer=4096)
        selector = selectors.DefaultSelector()
        for s in streams:
            selector.register(s.sock, selectors.EVENT_READ, s)

        def pump(seconds):
            deadline = time.time() + seconds
            while time.time() < deadline:
                for key, _ in selector.select(timeout=0.05):
                    stream = key.data
                    stream.feed()
                    if stream.closed:
                        selector.unregister(stream.sock)

        pump(1)
        check(all(s.messages >= 1 for s in streams), "not every stream got the first state")
        repd = start_repd()
        # Until the stalled stream is dropped (its socket sees EOF or a reset) while the others keep reading.
        stalled_dropped_after = None
        t0 = time.time()
        while time.time() - t0 < 25:
            pump(0.5)
            if stalled_dropped_after is None and json.loads(get(port, "/api/status")[1])["browsers_dropped"] >= 1:
                stalled_dropped_after = round(time.time() - t0, 1)
            if stalled_dropped_after is not None:
                pump(1)
                break
        summary["stalled_dropped_after_s"] = stalled_dropped_after
        check(stalled_dropped_after is not None, "the stream that stopped reading was not disconnected")
        # It was this one (every reading stream is still open, below): reading it now drains what the kernels hold,
        # then (usually: the end of an orphaned connection is up to the kernels) its end.
        stalled.sock.setblocking(True)
        stalled.sock.settimeout(5)
        drained = 0
        try:
            while True:
                chunk = stalled.sock.recv(1 << 16)
                if not chunk:
                    summary["stalled_end_seen"] = "eof"
                    break
                drained += len(chunk)
        except OSError as error:
            summary["stalled_end_seen"] = repr(error)
        summary["stalled_bytes_buffered"] = drained
        summary["memory_with_clients_kib"] = memory_kib(web.pid)
        check(not any(s.closed for s in streams), "%d reading streams were closed" % sum(s.closed for s in streams))
        counts = sorted({s.last["count"] for s in streams if s.last})
        summary["counts_seen_while_live"] = counts[:1] + counts[-1:]
        summary["messages_per_stream"] = [min(s.messages for s in streams), max(s.messages for s in streams)]

        # repd stops: every stream hears "down"; it comes back: "up" again, and they are all still connected.
        repd.send_signal(signal.SIGTERM)
        check(repd.wait(15) == 0, "repd did not exit 0")
        t0 = time.time()
        while time.time() - t0 < 10 and not all(s.last and s.last["repd"] == "down" for s in streams):
            pump(0.2)
        check(all(s.last and s.last["repd"] == "down" for s in streams), "not every stream heard that repd stopped")
        repd = start_repd()
        t0 = time.time()
        while time.time() - t0 < 10 and not all(s.last and s.last["repd"] == "up" for s in streams):
            pump(0.2)
        check(all(s.last["repd"] == "up" for s in streams), "not every stream heard that repd came back")
        summary["links_seen"] = streams[0].links
        pump(2)
        status, body = get(port, "/api/status")
        state = json.loads(body)
        summary["browsers_in_status"] = state["browsers"]
        summary["browsers_dropped"] = state["browsers_dropped"]
        check(state["browsers"] == args.clients, "/api/status counts %d browsers, not %d" % (state["browsers"], args.clients))
        check(state["browsers_dropped"] == 1, "/api/status counts %d dropped browsers, not 1" % state["browsers_dropped"])
        # Freeze the state (repd stops again), let every stream catch up, and compare each with /api/status.
        repd.send_signal(signal.SIGTERM)
        check(repd.wait(15) == 0, "repd did not exit 0")
        t0 = time.time()
        while time.time() - t0 < 10 and not all(s.last["repd"] == "down" for s in streams):
            pump(0.2)
        pump(0.3)
        final = json.loads(get(port, "/api/status")[1])["stations"][0]
        key = lambda state: (state["repd"], state["set"], state["count"], state["last_id"])
        mismatched = [s for s in streams if key(s.last) != key(final)]
        summary["final_state"] = key(final)
        check(not mismatched, "%d streams do not show the state /api/status reports %s (e.g. %s)"
              % (len(mismatched), key(final), key(mismatched[0].last) if mismatched else None))
        summary["memory_after_restart_kib"] = memory_kib(web.pid)
        check(web.poll() is None, "repd-web died")

        # SIGTERM with every stream open: repd-web ends them and exits 0 promptly.
        t0 = time.time()
        web.send_signal(signal.SIGTERM)
        code = web.wait(10)
        summary["shutdown_s"] = round(time.time() - t0, 2)
        check(code == 0, "repd-web exited %s after SIGTERM" % code)
    finally:
        for process in (repd, web):
            if process and process.poll() is None:
                process.kill()
                process.wait()
        for s in streams:
            s.sock.close()
    summary["seconds"] = round(time.time() - started, 1)
    summary["failures"] = FAILURES
    print(json.dumps(summary))
    sys.exit(1 if FAILURES else 0)


def connectable(path):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(path)
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
