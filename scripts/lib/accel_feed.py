"""Feeds an umockdev-emulated lis3dh (scripts/bench-accel.umockdev: x, y, z as 12-bit left-justified le16, then a
64-bit timestamp) with records at a steady rate, in batches, from a thread of its own."""
import os
import struct
import threading
import time

BATCH = 16


def record(i, t0, rate):
    """The i-th record of a stream that started at t0 (ns): a slow ramp on every axis, 1/rate s apart."""
    enc = lambda v: ((v & 0xFFF) << 4) & 0xFFFF
    return struct.pack('<HHHxxq', enc(i % 200), enc(-(i % 100)), enc(1024 + i % 300), t0 + i * 1_000_000_000 // rate)


class Feeder:
    """Writes BATCH records at a time to the emulated device node `fd`, RATE records per second, until stop()."""

    def __init__(self, fd, rate, batch=BATCH):
        self.fd, self.rate, self.batch = fd, rate, batch
        self.running = True
        self.thread = threading.Thread(target=self._feed, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.running = False

    def _feed(self):
        i, t0, start = 0, time.time_ns(), time.monotonic()
        while self.running:
            os.write(self.fd, b''.join(record(i + k, t0, self.rate) for k in range(self.batch)))
            i += self.batch
            delay = start + i / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
