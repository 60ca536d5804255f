#!/usr/bin/python3
"""Scenarios that need umockdev's Testbed API (Python GObject bindings). Run under umockdev-wrapper:

  umockdev-wrapper /usr/bin/python3 testbed.py setup   DEVICE.umockdev REPCTL OUT.json
  umockdev-wrapper /usr/bin/python3 testbed.py silent  DEVICE.umockdev REPCTL OUT.json
  umockdev-wrapper /usr/bin/python3 testbed.py SIGINT  DEVICE.umockdev REPCTL OUT.json   (or SIGTERM, SIGHUP)
  umockdev-wrapper /usr/bin/python3 testbed.py hotplug DEVICE.umockdev REPD   OUT.json
  umockdev-wrapper /usr/bin/python3 testbed.py stall   DEVICE.umockdev REPD   OUT.json
  umockdev-wrapper /usr/bin/python3 testbed.py badvalue DEVICE.umockdev REPD  OUT.json   (or unreadable)

Each writes what it observed to OUT.json; the Swift tests make the assertions. Records are fed through the
device's PTY in the wrist.umockdev layout: x, y, z as le:s12/16>>4, 2 pad bytes, le:s64 timestamp (16 bytes).
"""
import json, os, signal, socket, subprocess, sys, time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from wrist_testbed import DEV, WristTestbed

scenario, device_file, program, out_path = sys.argv[1:5]
ATTRIBUTES = ['buffer/enable', 'buffer/length', 'buffer/watermark', 'trigger/current_trigger', 'sampling_frequency',
              'scan_elements/in_accel_x_en', 'scan_elements/in_accel_y_en', 'scan_elements/in_accel_z_en',
              'scan_elements/in_timestamp_en', 'scan_elements/in_temp_en']


def attributes(root, device=DEV):
    values = {}
    for name in ATTRIBUTES:
        with open(os.path.join(root, device.lstrip('/'), name)) as f:
            values[name] = f.read().strip()
    return values


class Client:
    """A client of repd's socket in the testbed: connects (retrying until repd listens), sends one command, and
    collects every message (sensor events whole, samples counted) with the time it came."""

    def __init__(self, sock_path, command):
        # The socket file appears at bind(), a moment before listen(): until then a connect is refused. Retry (for
        # long: an ASan build on a busy machine has taken more than 10 s to get there).
        deadline = time.time() + 45
        while True:
            self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.socket.connect(sock_path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.socket.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.02)
        self.socket.sendall(command)
        self.socket.settimeout(0.2)
        self.messages = []
        self.buffered = b''
        # A journaled event that came live between hello and `subscribed` comes again in a `since=` replay (as
        # docs/PROTOCOL.md says): kept once, by its id.
        self.ids = set()

    def pump(self, seconds, until=lambda: False):
        """Reads for `seconds`, or until `until()` holds."""
        end = time.time() + seconds
        while time.time() < end and not until():
            try:
                data = self.socket.recv(65536)
            except socket.timeout:
                continue
            if not data:
                return
            self.buffered += data
            while b'\n' in self.buffered:
                line, self.buffered = self.buffered.split(b'\n', 1)
                message = json.loads(line)
                if 'id' in message:
                    if message['id'] in self.ids:
                        continue
                    self.ids.add(message['id'])
                if message['type'] == 'samples':
                    message = {'type': 'samples', 'samples': len(message['samples'])}
                message['at'] = time.time()
                self.messages.append(message)

    def sensor(self):
        """The sensor events so far: state, kind, message."""
        return [{k: m.get(k) for k in ('state', 'kind', 'message')} for m in self.messages if m['type'] == 'sensor']

    def samples(self, since=0):
        return sum(m['samples'] for m in self.messages if m['type'] == 'samples' and m['at'] > since)


bed = WristTestbed(device_file)
root = bed.root
env = dict(os.environ, UMOCKDEV_DIR=root)
result = {'before': attributes(root)}

if scenario == 'setup':
    feeder = bed.feed()
    child = subprocess.Popen([program, 'sensors', '--read', '60', '--rate', '90', '--json'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 45
    while time.time() < deadline and attributes(root)['buffer/enable'] != '1':
        time.sleep(0.01)
    result['during'] = attributes(root)
    out, err = child.communicate(timeout=60)
    feeder.running = False
    result['after'] = attributes(root)
    result['exit'] = child.returncode
    result['stdout'] = out
    result['stderr'] = err

elif scenario == 'restore':
    # An attribute that disappears during capture cannot be put back at stop: repctl must say so.
    feeder = bed.feed()
    child = subprocess.Popen([program, 'sensors', '--read', '60', '--json'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 45
    while time.time() < deadline and attributes(root)['buffer/enable'] != '1':
        time.sleep(0.01)
    os.remove(os.path.join(root, DEV.lstrip('/'), 'scan_elements/in_temp_en'))
    out, err = child.communicate(timeout=60)
    feeder.running = False
    result['exit'] = child.returncode
    result['stderr'] = err

elif scenario in ('SIGINT', 'SIGTERM', 'SIGHUP'):
    # Ctrl-C (or SIGTERM, or the terminal closing) during `sensors --read` must still put the device back.
    feeder = bed.feed()
    # The test runner's children may inherit SIGHUP ignored (repctl then keeps it ignored, as under nohup) or blocked
    # (repctl unblocks it).
    default_hangup = lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL)
    child = subprocess.Popen([program, 'sensors', '--read', '100000', '--timeout', '60'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_hangup)
    deadline = time.time() + 45
    while time.time() < deadline and attributes(root)['buffer/enable'] != '1':
        time.sleep(0.01)
    result['during'] = attributes(root)
    # Signalled once repctl has read samples from the device node (its read bytes, /proc/PID/io, grew past the
    # setup's), not after a fixed 0.5 s: a busy machine may take longer to the first. Its standard output cannot
    # tell: `sensors --read N` prints the samples when it stops (N read, or interrupted), not as they come.
    def read_bytes():
        with open('/proc/%d/io' % child.pid) as f:
            return next(int(line.split()[1]) for line in f if line.startswith('rchar:'))
    start = read_bytes()
    deadline = time.time() + 30
    while time.time() < deadline and read_bytes() < start + 256:
        time.sleep(0.01)
    child.send_signal(getattr(signal, scenario))
    out, err = child.communicate(timeout=30)
    feeder.running = False
    result['after'] = attributes(root)
    result['exit'] = child.returncode
    result['samples'] = len([line for line in out.split('\n') if line and not line.startswith('#')])
    result['stderr'] = err

elif scenario == 'nonode':
    # udev names a node that is not there (a container that sees sysfs but not the device): polled instead.
    os.remove(os.path.join(root, 'dev/iio:device0'))
    listing = subprocess.run([program, 'sensors'], env=env, capture_output=True, text=True, timeout=30)
    child = subprocess.run([program, 'sensors', '--read', '3', '--timeout', '5'], env=env, capture_output=True,
                           text=True, timeout=30)
    result['listing'] = listing.stdout
    result['exit'] = child.returncode
    result['stdout'] = child.stdout
    result['stderr'] = child.stderr
    result['after'] = attributes(root)

elif scenario == 'silent':
    # A buffer that never delivers (nothing is written to the PTY): after the delivery deadline repctl must poll
    # in_accel_*_raw instead, and both captures must put back what they changed.
    child = subprocess.Popen([program, 'sensors', '--read', '3', '--rate', '50', '--timeout', '4'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 45
    while time.time() < deadline and attributes(root)['buffer/enable'] != '1':
        time.sleep(0.01)
    result['during_buffered'] = attributes(root)
    out, err = child.communicate(timeout=60)
    result['after'] = attributes(root)
    result['exit'] = child.returncode
    result['stdout'] = out
    result['stderr'] = err

elif scenario == 'hotplug':
    sock_path = os.path.join(root, 'repd.sock')
    feeder = bed.feed()
    child = subprocess.Popen([program, '--socket', sock_path, '--log-level', 'debug'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The socket file appears at bind(), a moment before listen(): until then a connect is refused. Retry (for long:
    # an ASan build on a busy machine has taken more than 10 s to get there).
    deadline = time.time() + 45
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.connect(sock_path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            client.close()
            if time.time() > deadline:
                raise
            time.sleep(0.02)
    client.sendall(b'subscribe sensor,samples\n')
    client.settimeout(0.2)
    messages = []
    buffered = b''

    def pump(seconds, until=lambda: False):
        """Reads for `seconds`, or until `until()` holds (a wait for what the test judges, not a fixed window)."""
        global buffered
        end = time.time() + seconds
        while time.time() < end and not until():
            try:
                data = client.recv(65536)
            except socket.timeout:
                continue
            if not data:
                return
            buffered += data
            while b'\n' in buffered:
                line, buffered = buffered.split(b'\n', 1)
                message = json.loads(line)
                if message['type'] == 'status':
                    result['status'] = message
                messages.append({'type': message['type'], 'state': message.get('state'),
                                 'samples': len(message['samples']) if message['type'] == 'samples' else 0, 'at': time.time()})

    # Waits end when what the Swift side judges holds (more than 20 samples), or after 30 s: a busy machine (the
    # AddressSanitizer run beside the ThreadSanitizer one) may take longer than the 1.5 and 3 s windows these were.
    pump(30, lambda: sum(m['samples'] for m in messages) > 20)
    result['samples_before_removal'] = sum(m['samples'] for m in messages)
    bed.unplug()
    result['removed_at'] = time.time()
    pump(1.5)  # no samples may come while the device is away: a longer window only judges that harder
    result['samples_while_removed'] = sum(m['samples'] for m in messages if m['at'] > result['removed_at'] + 0.5)
    readded = bed.plug_back()
    result['readded_at'] = time.time()
    feeder = bed.feed('/dev/iio:device1')
    pump(30, lambda: sum(m['samples'] for m in messages if m['at'] > result['readded_at']) > 20
         and any(m['type'] == 'sensor' and m['state'] == 'back' for m in messages))
    feeder.running = False
    result['samples_after_return'] = sum(m['samples'] for m in messages if m['at'] > result['readded_at'])
    result['sensor_states'] = [m['state'] for m in messages if m['type'] == 'sensor']
    client.sendall(b'status\n')
    pump(10, lambda: 'status' in result)
    child.terminate()
    out, err = child.communicate(timeout=60)
    result['exit'] = child.returncode
    result['stderr'] = err
    result['after_readded'] = attributes(root, readded)

elif scenario == 'stall':
    # The buffer delivers, then nothing while the device stays (a lost edge-triggered interrupt, a removed trigger):
    # repd must say so once and start the capture again, which resumes the samples.
    sock_path = os.path.join(root, 'repd.sock')
    feeder = bed.feed()
    child = subprocess.Popen([program, '--socket', sock_path, '--journal', os.path.join(root, 'journal.db'),
                              '--log-level', 'debug'], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    client = Client(sock_path, b'subscribe sensor,samples since=0\n')
    client.pump(60, lambda: client.samples() > 20)
    result['samples_before_stall'] = client.samples()
    feeder.running = False
    feeder.join(5)
    client.pump(30, lambda: any(m['state'] == 'lost' for m in client.sensor()))
    result['during_stall'] = attributes(root)
    feeder = bed.feed()
    restarted = time.time()
    client.pump(30, lambda: bool(client.sensor()) and client.sensor()[-1]['state'] in ('back', 'polling')
                and client.samples(restarted) > 20)
    result['samples_after_restart'] = client.samples(restarted)
    client.pump(1.0)
    client.socket.sendall(b'status\n')
    client.pump(10, lambda: any(m['type'] == 'status' for m in client.messages))
    result['status'] = next((m for m in client.messages if m['type'] == 'status'), None)
    result['sensor'] = client.sensor()
    feeder.running = False
    child.terminate()
    out, err = child.communicate(timeout=60)
    result['exit'] = child.returncode
    result['stderr'] = err
    result['after'] = attributes(root)

elif scenario in ('badvalue', 'unreadable'):
    # Polling. badvalue: an in_accel_z_raw that reads "oops": one error, however often repd tries again, then
    # `polling` once when the value reads as a number again. unreadable: an in_accel_x_raw whose every read fails
    # (a directory: EISDIR), though the device is there: lost after that many failures in a row, once.
    raw = os.path.join(root, DEV.lstrip('/'), 'in_accel_z_raw')
    if scenario == 'badvalue':
        with open(raw, 'w') as f:
            f.write('oops\n')
    else:
        unreadable = os.path.join(root, DEV.lstrip('/'), 'in_accel_x_raw')
        os.remove(unreadable)
        os.mkdir(unreadable)
    config = os.path.join(root, 'repd.toml')
    with open(config, 'w') as f:
        f.write('[sensor]\nforce_polling = true\n')
    sock_path = os.path.join(root, 'repd.sock')
    child = subprocess.Popen([program, '--config', config, '--socket', sock_path, '--journal',
                              os.path.join(root, 'journal.db'), '--log-level', 'debug'], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # since=0: the error may come before the subscription does; the journal holds it.
    client = Client(sock_path, b'subscribe sensor since=0\n')
    client.pump(30, lambda: any(m['state'] in ('error', 'lost') for m in client.sensor()))
    # repd tries again every 0.5 s meanwhile (the rescan interval): none of those attempts is news.
    client.pump(3.0)
    if scenario == 'badvalue':
        with open(raw, 'w') as f:
            f.write('1024\n')
        client.pump(30, lambda: any(m['state'] == 'polling' for m in client.sensor()))
        client.pump(1.5)
    result['sensor'] = client.sensor()
    child.terminate()
    out, err = child.communicate(timeout=60)
    result['exit'] = child.returncode
    result['stderr'] = err

elif scenario == 'permission':
    # An attribute the user may read but not write: repd must name the file and the fix. Runs repctl as
    # "nobody" (root bypasses file permissions), with the testbed readable for everyone.
    for folder, dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o666)
    os.chmod(os.path.join(root, DEV.lstrip('/'), 'buffer/enable'), 0o444)
    child = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', program, 'sensors', '--read', '5',
                            '--timeout', '5'], env=env, capture_output=True, text=True, timeout=30)
    result['exit'] = child.returncode
    result['stderr'] = child.stderr
    result['after'] = attributes(root)

with open(out_path, 'w') as f:
    json.dump(result, f, indent=1)
