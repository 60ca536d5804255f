"""What the browser and client test scripts share: recording failed checks, waiting for a condition, ports."""
import socket
import sys
import time

# The failed checks, in order; a script reports them and exits non-zero when there are any.
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL: " + message, file=sys.stderr, flush=True)
    return condition


def wait_for(condition, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
