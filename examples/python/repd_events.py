#!/usr/bin/env python3
"""Follow repd's events from Python, and resume after any disconnect without missing or repeating one.

A reference client for app developers (docs/PROTOCOL.md, "Event ids and resuming"): the standard library only,
Python 3.8 or later. Copy it into an app, or run it and read its output:

    python3 examples/python/repd_events.py --state ~/.local/state/myapp/repd.json

prints every event repd sends as one JSON line on standard output, byte for byte the line repd sent (`rep`,
`set_start`, `set_end`, `sensor`, `samples` when asked for, and a journaled event of a type a newer repd adds, or
`damaged`: the app decides what to do with those), and keeps, in the --state file, which journal file and which
event id it has handled. When repd restarts, the connection drops or the app itself is stopped and started again,
it reconnects (after 0.5 s, doubling up to 10 s while repd cannot be reached) and sends `subscribe since=ID` with
that id: repd replays what was missed, however much, then live events follow, with none missing and none twice.
What it does, in the protocol's words:

- waits at most 10 s for `hello` (then tries again later: repd may be busy or stopped) and refuses a protocol other
  than 1 (exit 1);
- with a journal (`hello` names its `journal`): when the state names the same journal, resumes after its id (after
  the journal's newest id when the state is ahead of it: a backup of the file was put back); when it names another
  one (the file was replaced or deleted, and its ids started over), replays the new file from its start; without a
  state, starts with what comes next (after `hello`'s `newest_id`);
- ignores events with an id that arrive before `subscribed` (the replay sends them again in their place), and any
  id at or below the last one handled (a repeat after a reconnect);
- exits 1 when repd refuses the subscription (an event type it does not know);
- prints repd's `error` lines after `subscribed` (a since older than the journal keeps: which events are gone) on
  standard error;
- without a journal (no `journal` in `hello`), prints live events only: they carry no id to resume from. When an
  event with an id comes all the same (repd opened its journal after `hello`), it reconnects to resume by id.

The state is written right after each event is printed (a temporary file, fsync, rename, fsync of its folder): a stop
by SIGTERM or SIGINT repeats nothing, but a crash or a power cut between the two prints that one event again at the
next start. An app that acts on events should act idempotently, keyed by (journal, id). That is one fsync per event:
a replay of thousands of events on an SD card takes a while; an app may record the id every N events instead (and see
up to N again after a crash). One state file serves one client and one choice of --events: a resume sends what was
missed of the types asked for now.

usage: repd_events.py [--socket PATH] [--state FILE] [--events rep,set,sensor]
  --socket  repd's socket (default: /run/repd/events.sock when it exists, else $RUNTIME_DIRECTORY/events.sock, else
            $XDG_RUNTIME_DIR/repd/events.sock, else ${TMPDIR:-/tmp}/repd-UID/events.sock: where `repctl` looks)
  --state   where to keep the journal and the last id handled (default: none, so nothing is resumed across runs)
  --events  the event types to subscribe to (rep, set, sensor, samples; default rep,set,sensor)
Exit status: 0 on SIGTERM or SIGINT, or when standard output is closed (`| head`); 1 when the socket speaks another
protocol or not repd's, repd refuses the subscription, or the state file cannot be used; 2 on a usage error.
"""

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import time

PROTOCOL = 1
HELLO_TIMEOUT = 10.0
FIRST_PAUSE = 0.5
LONGEST_PAUSE = 10.0
LONGEST_LINE = 1 << 20  # repd's lines are a few hundred bytes; a history reply a few hundred KiB at most
EVENT_TYPES = ("rep", "set", "sensor", "samples")
# The event type of each line repd sends for a subscribed type (`set` sends set_start and set_end).
KIND_OF_TYPE = {"rep": "rep", "set_start": "set", "set_end": "set", "sensor": "sensor", "samples": "samples"}
# Replies to commands this client does not send, and a second hello: never printed.
NOT_EVENTS = ("hello", "status", "pong", "history")


class StateError(Exception):
    """The state file cannot be read or written."""


class ProtocolError(Exception):
    """The peer is not a repd this client can talk to, or refused what it asked: exit."""


class TryLater(Exception):
    """repd refused the connection (too many clients, permission denied) or did not say hello in time."""


class NotListening(Exception):
    """Nothing accepts connections at the socket's path (yet)."""


def default_socket_path():
    """Where repctl looks for repd's socket (RepProtocol's DefaultSocketPath.forClient)."""
    if os.path.exists("/run/repd/events.sock"):
        return "/run/repd/events.sock"
    runtime = os.environ.get("RUNTIME_DIRECTORY")
    if runtime:
        return runtime.split(":")[0] + "/events.sock"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return xdg + "/repd/events.sock"
    base = (os.environ.get("TMPDIR") or "/tmp").rstrip("/") or "/"
    return "%s/repd-%d/events.sock" % (base, os.getuid())


class Position:
    """Which journal file the handled events came from (`hello`'s `journal`) and the last id handled, kept in a
    file when `path` is given."""

    def __init__(self, path):
        self.path = path
        self.journal = None
        self.last_id = None
        # Without a state: the id after which to start when repd's journal shows up (an event with an id came on a
        # connection whose hello had no journal).
        self.first_unseen = None
        if path is None or not os.path.exists(path):
            return
        try:
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            journal, last_id = saved["journal"], saved["last_id"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise StateError("%s: not a state this program wrote (%s)" % (path, error))
        if not isinstance(journal, str) or not isinstance(last_id, int) or isinstance(last_id, bool) or last_id < 0:
            raise StateError("%s: expected {\"journal\": TEXT, \"last_id\": a whole number from 0}" % path)
        self.journal, self.last_id = journal, last_id

    def start(self, journal, last_id):
        """Follows `journal` from after `last_id`."""
        self.journal, self.last_id = journal, last_id
        self.save()

    def handled(self, event_id):
        """Records that the event `event_id` was handled."""
        self.last_id = event_id
        self.save()

    def save(self):
        if self.path is None or self.journal is None:
            return
        temporary = "%s.%d.tmp" % (self.path, os.getpid())
        try:
            with open(temporary, "w", encoding="utf-8") as f:
                json.dump({"journal": self.journal, "last_id": self.last_id}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)
            # The rename is on the disk only once its folder is.
            folder = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError as error:
            raise StateError("%s: cannot write it: %s" % (self.path, error))


class Lines:
    """The lines of a connected socket, as bytes without their newline."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def next(self, deadline=None):
        """The next line; None at the end of the stream. With `deadline` (time.monotonic()), raises socket.timeout
        when the whole line has not come by then."""
        while b"\n" not in self.buffer:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > LONGEST_LINE and b"\n" not in self.buffer:
                raise ProtocolError("a line longer than %d bytes: not repd?" % LONGEST_LINE)
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class Deferred:
    """A context in which SIGTERM and SIGINT wait: an event printed is also recorded in the state before the program
    stops. Outside it they stop the program at once (with exit status 0), also while it waits for repd."""

    def __init__(self):
        self.inside = False
        self.pending = False

    def __enter__(self):
        self.inside = True

    def __exit__(self, kind, value, traceback):
        self.inside = False
        if self.pending and kind is None:
            raise SystemExit(0)

    def signal(self, signum, frame):
        if self.inside:
            self.pending = True
        else:
            raise SystemExit(0)


def is_id(value):
    return isinstance(value, int) and not isinstance(value, bool)


def follow(path, position, events, deliver, say, handling=None):
    """One connection to repd: `hello`, `subscribe` (resuming when repd has a journal), then events until the
    connection ends. Calls `deliver(line)` with each event's line (bytes, without its newline), in order, and records
    its id in `position`, both inside the context `handling` when given (`Deferred`). Returns True when repd
    accepted the subscription before the connection ended, False otherwise. Raises NotListening when it cannot
    connect, TryLater, ProtocolError, StateError, or OSError when the connection fails after it was made."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HELLO_TIMEOUT)
        try:
            sock.connect(path)
        except OSError as error:
            raise NotListening(error.strerror or str(error))
        lines = Lines(sock)
        try:
            first = lines.next(deadline=time.monotonic() + HELLO_TIMEOUT)
        except socket.timeout:
            raise TryLater("no hello from %s within %.0f s (is it repd's socket? is repd stopped?)"
                           % (path, HELLO_TIMEOUT))
        if first is None:
            return False
        try:
            hello = json.loads(first)
        except ValueError:
            raise ProtocolError("%s does not speak repd's protocol (its first line is not JSON)" % path)
        kind = hello.get("type") if isinstance(hello, dict) else None
        if kind == "error":
            raise TryLater("repd refused the connection: %s" % hello.get("message", "refused"))
        if kind != "hello":
            raise ProtocolError("%s does not speak repd's protocol (its first line is not a hello)" % path)
        if hello.get("protocol") != PROTOCOL:
            raise ProtocolError("%s speaks protocol %s; this client speaks %d" % (path, hello.get("protocol"), PROTOCOL))
        sock.settimeout(None)

        command = {"cmd": "subscribe", "events": events}
        journal = hello.get("journal")
        resuming = isinstance(journal, str)
        if resuming:
            newest = hello.get("newest_id", 0)
            if position.journal is None or position.last_id is None:
                # A first run: what comes next (or what came since repd's journal showed up on an earlier connection).
                position.start(journal, newest if position.first_unseen is None else min(newest, position.first_unseen))
            elif position.journal != journal:
                say("repd's journal is another file (%s, not %s): its ids started over; following it from its start"
                    % (journal, position.journal))
                position.start(journal, 0)
            elif is_id(newest) and newest < position.last_id:
                # The same file, older than what was handled: a backup put back. repd hands out ids after the newest
                # it ever handed out, so none is lost by starting at the file's newest.
                say("repd's journal ends at id %d, before the last one handled (%d): a backup of it put back? "
                    "following it from there" % (newest, position.last_id))
                position.start(journal, newest)
            command["since"] = position.last_id
        sock.sendall((json.dumps(command) + "\n").encode("utf-8"))

        subscribed = False
        while True:
            line = lines.next()
            if line is None:
                return subscribed
            try:
                message = json.loads(line)
            except ValueError:
                say("skipped a line that is not JSON: %.200r" % line)
                continue
            if not isinstance(message, dict):
                continue
            kind = message.get("type")
            if kind == "subscribed":
                subscribed = True
            elif kind == "error":
                if not subscribed:
                    raise ProtocolError("repd refused the subscription: %s" % message.get("message"))
                say("repd: %s" % message.get("message"))
            elif kind == "bye":
                if message.get("reason") == "journal replaced":
                    say("repd went over to another journal file; reconnecting to follow it")
                else:
                    say("repd is stopping")
            elif kind in NOT_EVENTS:
                pass
            elif is_id(message.get("id")):
                event_id = message["id"]
                if not resuming:
                    # repd opened its journal after this connection's hello: resume by id from the next one.
                    say("repd's journal opened; reconnecting to follow it by id")
                    if position.journal is None:
                        position.first_unseen = event_id - 1
                    return subscribed
                # Before `subscribed` the replay sends these again in their place; at or below the last id handled,
                # it is a repeat.
                if not subscribed or event_id <= position.last_id:
                    continue
                with handling or contextlib.nullcontext():
                    deliver(line)
                    position.handled(event_id)
            elif KIND_OF_TYPE.get(kind) in events:
                deliver(line)  # no journal (no id to resume from), or `samples`
    finally:
        sock.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--socket", default=None, help="repd's socket (default: where repctl looks)")
    parser.add_argument("--state", default=None, help="the file that keeps the journal and the last id handled")
    parser.add_argument("--events", default="rep,set,sensor", help="event types (default rep,set,sensor)")
    args = parser.parse_args()
    path = args.socket or default_socket_path()
    events = [e for e in args.events.split(",") if e]
    if not events:
        parser.error("--events needs at least one event type")
    for event in events:
        if event not in EVENT_TYPES:
            parser.error("--events: %r is not an event type (%s)" % (event, ", ".join(EVENT_TYPES)))

    def say(text):
        print("repd_events: " + text, file=sys.stderr, flush=True)

    handling = Deferred()
    signal.signal(signal.SIGTERM, handling.signal)
    signal.signal(signal.SIGINT, handling.signal)
    # A parent may have started this program with them blocked (a mask is inherited): they would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

    def deliver(line):
        try:
            sys.stdout.buffer.write(line + b"\n")
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            # The reader went away (`| head`): nothing more to do; do not let Python complain at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(0)

    try:
        position = Position(args.state)
    except StateError as error:
        say(str(error))
        return 1
    pause = FIRST_PAUSE
    said = None
    while True:
        try:
            if follow(path, position, events, deliver, say, handling):
                pause = FIRST_PAUSE  # it worked for a while: the next try comes soon
            said = None
            say("the connection to %s ended; reconnecting in %.1f s" % (path, pause))
        except (ProtocolError, StateError) as error:
            say(str(error))
            return 1
        except TryLater as error:
            say("%s; trying again in %.1f s" % (error, pause))
            said = None
        except NotListening as error:
            reason = "no repd is listening at %s (%s)" % (path, error)
            if reason != said:
                say(reason + "; waiting for it")
                said = reason
        except OSError as error:
            say("the connection to %s was lost (%s); reconnecting in %.1f s" % (path, error.strerror or error, pause))
            said = None
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)


if __name__ == "__main__":
    sys.exit(main())
