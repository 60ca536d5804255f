#!/usr/bin/env python3
"""Follow repd's events from Python, and resume after any disconnect without missing or repeating one.

A reference client for app developers (docs/PROTOCOL.md, "Event ids and resuming"): the standard library only,
Python 3.8 or later. Copy it into an app, or run it and read its output:

    python3 examples/python/repd_events.py --state ~/.local/state/myapp/repd.json

prints every event repd sends as one JSON line on standard output (`rep`, `set_start`, `set_end`, `sensor`: the
lines repd sent, unchanged) and keeps, in the --state file, which journal file and which event id it has handled.
When repd restarts, the connection drops or the app itself is stopped and started again, it reconnects (after 0.5 s,
doubling up to 10 s) and sends `subscribe since=ID` with that id: repd replays what was missed, however much, then
live events follow, with none missing and none twice. What it does, in the protocol's words:

- waits at most 10 s for `hello` and refuses a protocol other than 1 (exit 1);
- with a journal (`hello` names its `journal`): when the state names the same journal, resumes after its id; when it
  names another one (the file was replaced or deleted, and its ids started over), replays the new file from its start;
  without a state, starts with what comes next (since the newest id);
- ignores events with an id that arrive before `subscribed` (the replay sends them again in their place), and any
  id at or below the last one handled (a repeat after a reconnect);
- keeps the id of an event it does not print (an unknown type from a newer repd) as handled, so the next resume goes
  past it;
- prints repd's `error` lines (a since older than the journal keeps: which events are gone) on standard error;
- without a journal (no `journal` in `hello`), prints live events only: they carry no id to resume from.

The state is written right after each event is printed (a temporary file, fsync, rename): a stop by SIGTERM or
SIGINT repeats nothing, but a crash or a power cut between the two prints that one event again at the next start.
An app that acts on events should act idempotently, keyed by (journal, id).

usage: repd_events.py [--socket PATH] [--state FILE] [--events rep,set,sensor]
  --socket  repd's socket (default: /run/repd/events.sock when it exists, else $XDG_RUNTIME_DIR/repd/events.sock,
            else ${TMPDIR:-/tmp}/repd-UID/events.sock: where `repctl` looks)
  --state   where to keep the journal and the last id handled (default: none, so nothing is resumed across runs)
  --events  the event types to subscribe to (rep, set, sensor, samples; default rep,set,sensor)
Exit status: 0 on SIGTERM or SIGINT, 1 when the socket speaks another protocol or the state file cannot be used.
"""

import argparse
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


class StateError(Exception):
    """The state file cannot be read or written."""


class ProtocolError(Exception):
    """The peer is not a repd this client can talk to: exit."""


class Refused(Exception):
    """repd refused the connection (too many clients, permission denied): try again later."""


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
        temporary = self.path + ".tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as f:
                json.dump({"journal": self.journal, "last_id": self.last_id}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)
        except OSError as error:
            raise StateError("%s: cannot write it: %s" % (self.path, error))


class Lines:
    """The lines of a connected socket, decoded from UTF-8, without their newline."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def next(self):
        """The next line; None at the end of the stream. Raises socket.timeout when the socket's timeout passes."""
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > LONGEST_LINE and b"\n" not in self.buffer:
                raise ProtocolError("a line longer than %d bytes: not repd?" % LONGEST_LINE)
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")


def is_id(value):
    return isinstance(value, int) and not isinstance(value, bool)


class Deferred:
    """A context in which SIGTERM and SIGINT wait: an event printed is also recorded in the state before the program
    stops. Outside it they stop the program at once (with exit status 0), also while it waits for repd."""

    def __init__(self):
        self.inside = False
        self.pending = False

    def __enter__(self):
        self.inside = True

    def __exit__(self, *exception):
        self.inside = False
        if self.pending:
            raise SystemExit(0)

    def signal(self, signum, frame):
        if self.inside:
            self.pending = True
        else:
            raise SystemExit(0)


def follow(path, position, events, deliver, say, handling=None):
    """One connection to repd: `hello`, `subscribe` (resuming when repd has a journal), then events until the
    connection ends. Calls `deliver(line)` with each event's line, in order, and records its id in `position`, both
    inside the context `handling` when given (`Deferred`). Returns when repd closes the connection; raises OSError
    when it cannot connect, Refused or ProtocolError."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HELLO_TIMEOUT)
        sock.connect(path)
        lines = Lines(sock)
        try:
            first = lines.next()
        except socket.timeout:
            raise ProtocolError("no hello from %s within %.0f s: is it repd's socket?" % (path, HELLO_TIMEOUT))
        if first is None:
            return
        try:
            hello = json.loads(first)
        except ValueError:
            raise ProtocolError("%s does not speak repd's protocol (its first line is not JSON)" % path)
        kind = hello.get("type") if isinstance(hello, dict) else None
        if kind == "error":
            raise Refused(hello.get("message", "refused"))
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
                position.start(journal, newest)  # a first run: what comes next
            elif position.journal != journal:
                say("repd's journal is another file (%s, not %s): its ids started over; following it from its start"
                    % (journal, position.journal))
                position.start(journal, 0)
            command["since"] = position.last_id
        sock.sendall((json.dumps(command) + "\n").encode("utf-8"))

        subscribed = False
        while True:
            line = lines.next()
            if line is None:
                return
            try:
                message = json.loads(line)
            except ValueError:
                say("skipped a line that is not JSON: %.200s" % line)
                continue
            if not isinstance(message, dict):
                continue
            kind = message.get("type")
            if kind == "subscribed":
                subscribed = True
            elif kind == "error":
                say("repd: %s" % message.get("message"))
            elif kind in ("hello", "status", "pong", "history"):
                pass  # replies to commands this client does not send
            elif kind == "bye":
                say("repd is stopping")
            elif resuming and is_id(message.get("id")):
                event_id = message["id"]
                # Before `subscribed` the replay sends these again in their place; at or below the last id handled,
                # it is a repeat.
                if not subscribed or event_id <= position.last_id:
                    continue
                with handling or Deferred():
                    deliver(line)
                    position.handled(event_id)
            else:
                deliver(line)  # no journal (no id to resume from), or `samples`
    finally:
        sock.close()


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\nusage:")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit status: 0 on SIGTERM or SIGINT, 1 when the socket speaks another protocol or the state file "
        "cannot be used.")
    parser.add_argument("--socket", default=None, help="repd's socket (default: where repctl looks)")
    parser.add_argument("--state", default=None, help="the file that keeps the journal and the last id handled")
    parser.add_argument("--events", default="rep,set,sensor", help="event types (default rep,set,sensor)")
    args = parser.parse_args()
    path = args.socket or default_socket_path()
    events = [e for e in args.events.split(",") if e]
    if not events:
        parser.error("--events needs at least one event type")

    def say(text):
        print("repd_events: " + text, file=sys.stderr, flush=True)

    handling = Deferred()
    signal.signal(signal.SIGTERM, handling.signal)
    signal.signal(signal.SIGINT, handling.signal)
    # A parent may have started this program with them blocked (a mask is inherited): they would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

    def deliver(line):
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
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
    waiting = None
    while True:
        try:
            follow(path, position, events, deliver, say, handling)
            say("the connection to %s ended; reconnecting" % path)
            pause = FIRST_PAUSE
        except (ProtocolError, StateError) as error:
            say(str(error))
            return 1
        except Refused as error:
            say("repd refused the connection: %s; trying again in %.1f s" % (error, pause))
        except OSError as error:
            reason = "no repd is listening at %s (%s)" % (path, error.strerror or error)
            if reason != waiting:
                say(reason + "; waiting for it")
                waiting = reason
            time.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)
            continue
        waiting = None
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)


if __name__ == "__main__":
    sys.exit(main())
