#!/usr/bin/python3
"""repd's memory with a sensor and clients: feed an umockdev-emulated IIO accelerometer (scripts/bench-accel.umockdev)
at RATE records/s, start REPD on it, connect CLIENTS clients that subscribe to reps and sets, wait SECONDS, and read
/proc/PID/smaps_rollup (Rss, Private_Dirty, …) and /proc/PID/smaps (resident memory by mapping). Repeats RUNS times
(a fresh testbed and daemon each time) and prints one JSON object: per figure the median, min and max, plus the
binary's size and the breakdown of the median run.

Run: umockdev-wrapper /usr/bin/python3 scripts/measure-footprint.py REPD [--runs 5] [--clients 10] [--seconds 5]
     [--rate 100] [--device scripts/bench-accel.umockdev] [--symbols UNSTRIPPED-REPD]
With --symbols (the same build before stripping; needs root for /proc/PID/pagemap), the binary's resident pages are
attributed to Swift modules (from the mangled names), the runtime, or the ELF section they lie in.
"""
import argparse, bisect, collections, json, os, re, socket, statistics, struct, subprocess, sys, tempfile, time
import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))
import accel_feed  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument('repd')
parser.add_argument('--runs', type=int, default=5)
parser.add_argument('--clients', type=int, default=10)
parser.add_argument('--seconds', type=float, default=5)
parser.add_argument('--rate', type=int, default=100)
parser.add_argument('--device', default=os.path.join(here, 'bench-accel.umockdev'))
parser.add_argument('--symbols')
parser.add_argument('--env', action='append', default=[], help='NAME=VALUE for repd (repeatable)')
args = parser.parse_args()




def kib_fields(path):
    fields = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == 'kB':
                fields[parts[0].rstrip(':')] = int(parts[1])
    return fields


def by_mapping(pid):
    """Resident and private dirty KiB per mapping name (the binary, [heap], [stack], anonymous, …)."""
    totals = {}
    name = None
    with open(f'/proc/{pid}/smaps') as f:
        for line in f:
            parts = line.split()
            if '-' in parts[0] and len(parts) >= 5 and ':' in parts[3]:
                name = parts[5] if len(parts) > 5 else '[anonymous]'
                if name.startswith('/'):
                    name = os.path.basename(name) + (' (text)' if 'x' in parts[1] else ' (data)' if 'w' in parts[1] else ' (rodata)')
                if name.startswith('[stack:') or name == '[stack]':
                    name = '[stack]'
            elif parts[0] in ('Rss:', 'Private_Dirty:'):
                entry = totals.setdefault(name, {'rss_kib': 0, 'private_dirty_kib': 0})
                entry['rss_kib' if parts[0] == 'Rss:' else 'private_dirty_kib'] += int(parts[1])
    return {k: v for k, v in sorted(totals.items(), key=lambda kv: -kv[1]['rss_kib']) if v['rss_kib'] > 0}


def owner_table(binary):
    """Sorted (address, owner) for the binary's symbols and sections: owner is a Swift module, 'Swift runtime (C++)',
    'C', or '[section]' for non-code sections."""
    section_re = re.compile(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)')
    table = []
    for line in subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True).stdout.splitlines():
        m = section_re.match(line)
        if m and int(m.group(2), 16) and m.group(1) != '.text':
            table.append((int(m.group(2), 16), f'[{m.group(1)}]'))
    for line in subprocess.run(['nm', '--defined-only', binary], capture_output=True, text=True).stdout.splitlines():
        address, kind, name = line.split(' ', 2)
        if kind not in 'tTwW':
            continue
        m = re.match(r'_?\$s(\d+)(\w+)', name)
        if name.startswith(('$ss', '$sS')):
            owner = 'Swift'
        elif m:
            owner = m.group(2)[:int(m.group(1))]
        elif name.startswith(('_Z', 'swift_', '_swift')):
            owner = 'Swift runtime (C/C++)'
        else:
            owner = 'C'
        table.append((int(address, 16), owner))
    table.sort()
    return [a for a, _ in table], [o for _, o in table]


def resident_by_owner(pid, binary, table):
    """KiB of the binary's resident pages per owner (the owner of the page's first byte)."""
    addresses, owners = table
    page = os.sysconf('SC_PAGE_SIZE')
    real = os.path.realpath(binary)
    totals = collections.Counter()
    with open(f'/proc/{pid}/maps') as maps, open(f'/proc/{pid}/pagemap', 'rb') as pagemap:
        for line in maps:
            parts = line.split()
            if len(parts) < 6 or os.path.realpath(parts[5]) != real:
                continue
            start, end = (int(x, 16) for x in parts[0].split('-'))
            offset = int(parts[2], 16)
            pagemap.seek(start // page * 8)
            entries = pagemap.read((end - start) // page * 8)
            base = None
            for i in range((end - start) // page):
                if not struct.unpack_from('<Q', entries, i * 8)[0] >> 63:
                    continue
                file_offset = offset + i * page  # the binary's vaddr equals its file offset in the text segment
                j = bisect.bisect_right(addresses, file_offset) - 1
                totals[owners[j] if j >= 0 else '[headers]'] += page // 1024
    return dict(totals.most_common())


def connect(path):
    deadline = time.monotonic() + 10
    while True:
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            client.sendall(b'subscribe rep,set,sensor\n')
            return client
        except OSError:
            client.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def measure_once():
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(args.device)
    root = testbed.get_root_dir()
    env = dict(os.environ, UMOCKDEV_DIR=root, **dict(e.split('=', 1) for e in args.env))
    fd = testbed.get_dev_fd('/dev/iio:device0')
    feeder = accel_feed.Feeder(fd, args.rate).start()
    state = tempfile.mkdtemp(prefix='repd-footprint-')
    path = os.path.join(root, 'footprint.sock')
    child = subprocess.Popen([args.repd, '--socket', path, '--journal', os.path.join(state, 'events.db'), '--quiet',
                              '--log-level', 'warning'], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    clients = []
    try:
        clients = [connect(path) for _ in range(args.clients)]
        for client in clients:
            client.setblocking(False)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:  # the clients read what they get, as apps do
            for client in clients:
                try:
                    client.recv(65536)
                except BlockingIOError:
                    pass
            time.sleep(0.1)
        rollup = kib_fields(f'/proc/{child.pid}/smaps_rollup')
        status = kib_fields(f'/proc/{child.pid}/status')
        mappings = by_mapping(child.pid)
        owners = resident_by_owner(child.pid, args.repd, table) if table else None
        threads = len(os.listdir(f'/proc/{child.pid}/task'))
        alive = child.poll() is None
    finally:
        for client in clients:
            client.close()
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
        feeder.stop()
        subprocess.run(['rm', '-rf', state])
    return {
        'rss_mib': rollup['Rss'] / 1024,
        'private_dirty_mib': rollup['Private_Dirty'] / 1024,
        'pss_mib': rollup['Pss'] / 1024,
        'anonymous_mib': rollup['Anonymous'] / 1024,
        'rss_peak_mib': status['VmHWM'] / 1024,
        'ran': alive,
        'threads': threads,
        'mappings': mappings,
        'owners': owners,
    }


# A binary copied or unpacked moments ago has dirty page-cache pages, which smaps counts as Private_Dirty of the
# process mapping them (15 MiB instead of 2.7 for repd): write them back first.
os.sync()
table = owner_table(args.symbols) if args.symbols else None
runs = [measure_once() for _ in range(args.runs)]
result = {'repd': args.repd, 'env': args.env, 'threads': [r['threads'] for r in runs], 'binary_bytes': os.path.getsize(args.repd), 'clients': args.clients, 'rate': args.rate,
          'seconds': args.seconds, 'runs': args.runs, 'all_ran': all(r['ran'] for r in runs)}
for key in ('rss_mib', 'private_dirty_mib', 'pss_mib', 'anonymous_mib', 'rss_peak_mib'):
    values = [r[key] for r in runs]
    result[key] = {'median': round(statistics.median(values), 2), 'min': round(min(values), 2), 'max': round(max(values), 2)}
median_run = sorted(runs, key=lambda r: r['rss_mib'])[len(runs) // 2]
result['mappings_of_median_run'] = median_run['mappings']
if table:
    result['binary_kib_by_owner_of_median_run'] = median_run['owners']
print(json.dumps(result))
