#!/usr/bin/python3
"""A real repd on an emulated accelerometer (umockdev) whose device can be unplugged and plugged back, for
sensor_test.py. Run under umockdev-wrapper (its preload library is what repd's libudev and sysfs reads go through):

  umockdev-wrapper /usr/bin/python3 umockdev_station.py DEVICE.umockdev REPD SOCKET JOURNAL LOG

DEVICE.umockdev is Tests/LinuxIIOTests/umockdev/wrist.umockdev (the same emulated LIS3DH its hotplug test uses).
Commands, one per line on standard input, each answered on standard output once done:
  remove  -> "removed": the device goes away (udev "remove"); repd must publish sensor state "lost"
  add     -> "added": it comes back as iio:device1 and records flow again; repd must publish "back"
  stop, or end of input: repd gets SIGTERM; exits with repd's exit status.
Prints "ready" once repd accepts connections on SOCKET ("failed" if it exits or does not within 20 s).
"""
import atexit
import gc
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev

device_file, repd, sock_path, journal, log_path = sys.argv[1:6]
DEV = '/sys/devices/platform/lis3dh-wrist/iio:device0'


def record(x, y, z, ns):
    """One record in wrist.umockdev's layout: x, y, z as le:s12/16>>4, 2 pad bytes, le:s64 timestamp."""
    enc = lambda v: ((v & 0xFFF) << 4) & 0xFFFF
    return struct.pack('<HHHxxq', enc(x), enc(y), enc(z), ns)


class Feeder(threading.Thread):
    """Writes 50 records per second (a resting sensor) into the device's PTY until stopped or the PTY goes away."""

    def __init__(self, testbed, node):
        super().__init__(daemon=True)
        self.fd = testbed.get_dev_fd(node)
        self.running = True

    def run(self):
        start, i = time.time_ns(), 0
        while self.running:
            try:
                os.write(self.fd, record(i % 5, -i % 3, 1024, start + i * 20_000_000))
            except OSError:
                return
            i += 1
            time.sleep(0.02)


def say(word):
    print(word, flush=True)


testbed = UMockdev.Testbed.new()


def release_testbed():
    """umockdev removes the testbed's folder under /tmp when the testbed is finalized, which the interpreter's exit
    does not always do (a feeder thread may still be writing to a PTY): stop the feeder and release it, however the
    script ends."""
    global testbed
    if 'feeder' in globals():
        feeder.running = False
        feeder.join(2)
    del testbed
    gc.collect()


atexit.register(release_testbed)
testbed.add_from_file(device_file)
env = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir())
feeder = Feeder(testbed, '/dev/iio:device0')
feeder.start()
log = open(log_path, 'ab')
child = subprocess.Popen([repd, '--socket', sock_path, '--journal', journal, '--log-level', 'info'],
                         env=env, stdout=log, stderr=log)
deadline = time.time() + 20
while child.poll() is None and time.time() < deadline:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(sock_path)
        say('ready')
        break
    except OSError:
        time.sleep(0.02)
else:
    say('failed')

for line in sys.stdin:
    command = line.strip()
    if command == 'remove':
        feeder.running = False
        testbed.uevent(DEV, 'remove')
        testbed.remove_device(DEV)
        say('removed')
    elif command == 'add':
        with open(device_file) as f:
            blocks = f.read().split('\n\n')
        # umockdev keeps the old node's name reserved, so the device comes back as iio:device1 (as a re-plugged
        # sensor may on a real system).
        block = [b for b in blocks if b.startswith('P: ' + DEV[len('/sys'):] + '\n')][0]
        testbed.add_from_string(block.replace('iio:device0', 'iio:device1').replace('MINOR=0', 'MINOR=1')
                                .replace('dev=241:0', 'dev=241:1') + '\n')
        feeder = Feeder(testbed, '/dev/iio:device1')
        feeder.start()
        say('added')
    elif command == 'stop':
        break
feeder.running = False
if child.poll() is None:
    child.terminate()
try:
    sys.exit(child.wait(15))
except subprocess.TimeoutExpired:
    child.kill()
    sys.exit(1)
