#!/usr/bin/python3
"""repd-bench's CPU figure: feed an umockdev-emulated IIO accelerometer at RATE records/s (16-record batches) and
measure the reader's CPU from /proc/PID/task/*/schedstat (ns on CPU) and its peak RSS. Readers: repd (the daemon)
and, as the baseline, libiio's iio_readdev on the same stream. Prints one JSON object.

Run: umockdev-wrapper /usr/bin/python3 scripts/bench-iio-cpu.py DEVICE.umockdev REPD SECONDS [RATE]
"""
import json, os, shutil, subprocess, sys, time
import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))
import accel_feed  # noqa: E402

device_file, repd, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
rate = int(sys.argv[4]) if len(sys.argv) > 4 else 1600




def cpu_ns(pid):
    total = 0
    for task in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{task}/schedstat') as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def peak_rss_mb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    return None


def measure(command, env):
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(device_file)
    env = dict(env, UMOCKDEV_DIR=testbed.get_root_dir())
    fd = testbed.get_dev_fd('/dev/iio:device0')
    feeder = accel_feed.Feeder(fd, rate).start()
    child = subprocess.Popen(command(testbed.get_root_dir()), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)  # start-up and configuration are not part of the steady state
    c0, w0 = cpu_ns(child.pid), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu_ns(child.pid), time.monotonic()
    peak = peak_rss_mb(child.pid)
    alive = child.poll() is None
    child.terminate()
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
    feeder.stop()
    return {'cpu_pct': 100 * (c1 - c0) / 1e9 / (w1 - w0), 'rss_peak_mb': peak, 'ran': alive}


result = {'rate': rate, 'seconds': seconds}
result['repd'] = measure(lambda root: [repd, '--socket', os.path.join(root, 'bench.sock'), '--quiet', '--log-level', 'warning'],
                         os.environ)
readdev = shutil.which('iio_readdev')
if readdev:
    result['iio_readdev'] = measure(lambda root: [readdev, '-t', 'lis3dh-accel-dev0', '-b', str(accel_feed.BATCH), '-s', '0', 'iio:device0',
                                                  'accel_x', 'accel_y', 'accel_z', 'timestamp'], os.environ)
print(json.dumps(result))
