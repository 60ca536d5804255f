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
import os
import socket
import subprocess
import sys
import time

# The testbed, feeder and re-plugging are the umockdev tests' own (Tests/LinuxIIOTests/umockdev/wrist_testbed.py).
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'LinuxIIOTests', 'umockdev'))
from wrist_testbed import WristTestbed, resting

device_file, repd, sock_path, journal, log_path = sys.argv[1:6]


def say(word):
    print(word, flush=True)


bed = WristTestbed(device_file)
env = dict(os.environ, UMOCKDEV_DIR=bed.root)
bed.feed(sample=resting)
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
        bed.unplug()
        say('removed')
    elif command == 'add':
        bed.plug_back()
        bed.feed('/dev/iio:device1', resting)
        say('added')
    elif command == 'stop':
        break
bed.stop_feeding()
if child.poll() is None:
    child.terminate()
try:
    sys.exit(child.wait(15))
except subprocess.TimeoutExpired:
    child.kill()
    sys.exit(1)
