"""What testbed.py and the browser test's umockdev_station.py (Tests/RepWebTests/browser) share: umockdev's Testbed
holding wrist.umockdev's emulated LIS3DH, records fed into its device's PTY, the device unplugged and plugged back,
and the testbed released when the script exits. Import it from a script run under umockdev-wrapper.

Records are in wrist.umockdev's layout: x, y, z as le:s12/16>>4, 2 pad bytes, le:s64 timestamp (16 bytes).
"""
import atexit
import gc
import os
import struct
import threading
import time

import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev

DEV = '/sys/devices/platform/lis3dh-wrist/iio:device0'


def record(x, y, z, ns):
    """One record in wrist.umockdev's layout."""
    enc = lambda v: ((v & 0xFFF) << 4) & 0xFFFF
    return struct.pack('<HHHxxq', enc(x), enc(y), enc(z), ns)


def moving(i):
    """Record i of a sensor that moves a little (raw counts, 1 g = 1024)."""
    return i % 100, -i % 50, 1024 + (i % 7)


def resting(i):
    """Record i of a sensor at rest (raw counts, 1 g = 1024)."""
    return i % 5, -i % 3, 1024


class Feeder(threading.Thread):
    """Writes 50 records per second (`sample(i)` gives record i's x, y, z) into a device's PTY until stopped or the
    PTY goes away."""

    def __init__(self, testbed, node, sample):
        super().__init__(daemon=True)
        self.fd = testbed.get_dev_fd(node)
        self.sample = sample
        self.running = True
        self.sent = 0

    def run(self):
        start = time.time_ns()
        while self.running:
            i = self.sent
            try:
                os.write(self.fd, record(*self.sample(i), start + i * 20_000_000))
            except OSError:
                return
            self.sent += 1
            time.sleep(0.02)


class WristTestbed:
    """A umockdev Testbed with the devices of a .umockdev file; `root` is its sysfs root (UMOCKDEV_DIR).

    umockdev removes the testbed's folder under $TMPDIR when the testbed is finalized, which the interpreter's exit
    does not always do (a feeder may still be writing to a PTY), so the testbed is released at exit: its feeders
    stopped, the last reference dropped, the garbage collected. Never remove that folder by hand (umockdev aborts).
    """

    def __init__(self, device_file):
        self.device_file = device_file
        self.testbed = UMockdev.Testbed.new()
        self.feeders = []
        atexit.register(self.release)
        self.testbed.add_from_file(device_file)
        self.root = self.testbed.get_root_dir()

    def feed(self, node='/dev/iio:device0', sample=moving):
        """Starts a Feeder on `node` and returns it."""
        feeder = Feeder(self.testbed, node, sample)
        feeder.start()
        self.feeders.append(feeder)
        return feeder

    def stop_feeding(self):
        for feeder in self.feeders:
            feeder.running = False

    def unplug(self):
        """Stops feeding and removes DEV (udev "remove")."""
        self.stop_feeding()
        self.testbed.uevent(DEV, 'remove')
        self.testbed.remove_device(DEV)

    def plug_back(self):
        """Adds DEV back from the device file. umockdev keeps the old node's name reserved, so the device comes back
        as iio:device1 (as a re-plugged sensor may on a real system); returns its sysfs path."""
        with open(self.device_file) as f:
            blocks = f.read().split('\n\n')
        block = [b for b in blocks if b.startswith('P: ' + DEV[len('/sys'):] + '\n')][0]
        self.testbed.add_from_string(block.replace('iio:device0', 'iio:device1').replace('MINOR=0', 'MINOR=1')
                                     .replace('dev=241:0', 'dev=241:1') + '\n')
        return DEV.replace('iio:device0', 'iio:device1')

    def release(self):
        for feeder in self.feeders:
            feeder.running = False
            feeder.join(2)
        self.feeders = []
        self.testbed = None
        gc.collect()
