"""The reliability soak: abusive clients beside a steady OLTP workload, through pytds.

A real `mesquite serve` runs for DURATION seconds. Four OLTP threads commit one-row
durable transactions and time each; beside them:
- clients that send a large SELECT and never read its result (20, renewed every 30 s);
- lock pile-ups: one session holds a row lock for 3 s while 20 sessions wait on it;
- deeply nested XML (200,000 levels) from a login that is not a sysadmin;
- runaway sorts (a 1.7-billion-row cross join ORDER BY NEWID()) abandoned after 3 s;
- runaway hash joins and aggregates (over cross joins, spilling partitions) abandoned
  after 3 s;
- a database whose 8 MB log fills (9002) under a transaction, then rolls back;
- every KILL_EVERY seconds, kill -9 of the server and a restart (crash recovery).

It reports, and fails (exit 1) unless: the server never exited on its own; the OLTP
workload never waited more than 1 s for a commit outside the kill/restart windows; every
acknowledged commit is present after every restart and at the end; DBCC CHECKDB is clean
on every database at the end.

Usage: soak.py MESQUITE_BINARY [DURATION_S] [KILL_EVERY_S]
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import atexit
from contextlib import closing

import pytds

PASSWORD = "Soak-test-" + str(random.randrange(10**9))
OLTP_THREADS = 4
STALL_LIMIT_S = 1.0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, data):
        self.binary, self.data = binary, data
        self.port, self.dac = free_port(), free_port()
        self.proc = None
        self.unexpected_exits = 0
        self.restart_windows = []  # (start, end) monotonic: kills and restarts

    def start(self):
        env = dict(os.environ, MESQUITE_SA_PASSWORD=PASSWORD)
        log = open(os.path.join(self.data, "serve.out"), "ab")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--data-dir", self.data, "--port", str(self.port), "--dac-port", str(self.dac),
             "--memory-limit-mb", "256"], env=env, stdout=log, stderr=log)
        # Never left running, however this script ends.
        atexit.register(lambda p=self.proc: p.poll() is None and p.kill())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"server exited at start with {self.proc.returncode}")
            try:
                connect(self.port).close()
                return
            except Exception:
                time.sleep(0.1)
        raise SystemExit("server did not start")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def connect(port, database="master", user="sa", password=PASSWORD, autocommit=True, timeout=60):
    return pytds.connect(dsn="127.0.0.1", port=port, user=user, password=password, database=database,
                         autocommit=autocommit, timeout=timeout, login_timeout=30)


OLTP_ERRORS = {}


def close_quietly(conn):
    """Closes a connection (the server rolls back its open transaction)."""
    try:
        if conn is not None:
            conn.close()
    except Exception:
        pass


def oltp(server, tid, acked, stalls, stop, counts):
    key = tid * 100_000_000
    conn = None
    while not stop.is_set():
        start = time.monotonic()
        try:
            if conn is None:
                conn = connect(server.port, "soak", autocommit=False)
            cur = conn.cursor()
            start = time.monotonic()
            cur.execute("INSERT INTO dbo.oltp (id, v) VALUES (%s, %s)", (key, "x" * 40))
            conn.commit()
            now = time.monotonic()
            acked.add(key)
            counts[tid] += 1
            if now - start > STALL_LIMIT_S and not in_window(server, start, now):
                stalls.append((now - start, time.strftime("%H:%M:%S")))
            key += 1
        except pytds.IntegrityError:
            # The key committed just before a kill -9 cut off its acknowledgement: it is
            # there (not acknowledged, so not checked); go on with the next.
            close_quietly(conn)
            conn = None
            key += 1
        except Exception as e:
            # A kill -9 breaks the connection; anything else is worth reporting. The
            # connection is closed so that its open transaction cannot block the retry.
            now = time.monotonic()
            if not in_window(server, start, now):
                kind = f"{type(e).__name__}: {str(e)[:120]}"
                OLTP_ERRORS[kind] = OLTP_ERRORS.get(kind, 0) + 1
            close_quietly(conn)
            conn = None
            time.sleep(0.05)


def in_window(server, a, b):
    """Whether [a, b] touches a kill/restart window (an open one extends to now)."""
    return any(s - 0.5 <= b and (e is None or a <= e + 0.5) for s, e in server.restart_windows)


ROUNDS = {}


def forever(fn, stop, pause):
    """Runs `fn` until stopped, counting its rounds (done, failed: a kill -9 fails some)."""
    name = fn.__qualname__.split(".")[0]
    while not stop.is_set():
        done = ROUNDS.setdefault(name, [0, 0])
        try:
            fn()
            done[0] += 1
        except Exception:
            done[1] += 1
        stop.wait(pause)


def never_readers(server, stop):
    socks = []
    def round_():
        for s in socks:
            try:
                s.close()
            except Exception:
                pass
        socks.clear()
        for _ in range(20):
            c = connect(server.port)
            # Send the query and never read: pytds sends on execute; the result waits.
            c._tds_socket.main_session.submit_plain_query(
                "SELECT a.object_id, REPLICATE('x', 500) FROM sys.all_columns a, sys.all_columns b")
            socks.append(c)
    forever(round_, stop, 30)


def pileup(server, stop):
    def round_():
        with closing(connect(server.port, "soak", autocommit=False)) as holder:
            holder.cursor().execute("UPDATE dbo.hot SET n = n + 1 WHERE id = 1")
            waiters = []
            def wait():
                try:
                    with closing(connect(server.port, "soak")) as c:
                        c.cursor().execute("UPDATE dbo.hot SET n = n + 1 WHERE id = 1")
                except Exception:
                    pass
            for _ in range(20):
                t = threading.Thread(target=wait, daemon=True)
                t.start()
                waiters.append(t)
            time.sleep(3)
            holder.commit()
            for t in waiters:
                t.join(30)
    forever(round_, stop, 2)


def deep_xml(server, stop):
    def round_():
        with closing(connect(server.port, user="plainsoak", password="Plain-soak-1")) as c:
            try:
                c.cursor().execute("SELECT 1 WHERE CAST(REPLICATE(CAST('<a>' AS varchar(max)),200000) + "
                                   "REPLICATE(CAST('</a>' AS varchar(max)),200000) AS xml) IS NOT NULL")
            except pytds.OperationalError:
                pass  # 6335
    forever(round_, stop, 5)


def runaway_sorts(server, stop):
    def round_():
        c = connect(server.port)
        c._tds_socket.main_session.submit_plain_query(
            "SELECT a.object_id, REPLICATE('x', 500) FROM sys.all_columns a, sys.all_columns b, sys.all_columns c "
            "ORDER BY NEWID()")
        time.sleep(3)
        c._tds_socket.close()
    forever(round_, stop, 2)


HASH_QUERIES = [
    "SELECT COUNT(*) FROM (SELECT a.object_id AS x, REPLICATE('x', 500) AS p FROM sys.all_columns a, sys.all_columns b) l "
    "JOIN (SELECT a.object_id AS x, REPLICATE('y', 500) AS p FROM sys.all_columns a, sys.all_columns b) r "
    "ON l.x = r.x AND l.p <> r.p",
    "SELECT k, COUNT(*), MAX(p) FROM (SELECT CAST(a.object_id AS bigint) * 1000000 + b.column_id * 1000 + c.column_id AS k, "
    "REPLICATE('z', 200) AS p FROM sys.all_columns a, sys.all_columns b, sys.all_columns c) t GROUP BY k",
]


def runaway_hashes(server, stop):
    turn = [0]

    def round_():
        c = connect(server.port)
        c._tds_socket.main_session.submit_plain_query(HASH_QUERIES[turn[0] % len(HASH_QUERIES)])
        turn[0] += 1
        time.sleep(3)
        c._tds_socket.close()
    forever(round_, stop, 2)


def log_full(server, stop):
    def round_():
        with closing(connect(server.port, "logcap", autocommit=False)) as c:
            cur = c.cursor()
            try:
                for i in range(20000):
                    cur.execute("INSERT dbo.t (id) VALUES (%s)", (i,))
            except pytds.OperationalError:
                pass  # 9002
            c.rollback()
    forever(round_, stop, 3)


def verify(server, acked):
    started = time.monotonic()
    c = connect(server.port, "soak", timeout=600)
    cur = c.cursor()
    cur.execute("SELECT id FROM dbo.oltp")
    present = {r[0] for r in cur.fetchall()}
    c.close()
    took = time.monotonic() - started
    if took > 10:
        print(f"  (reading back {len(present)} rows took {took:.1f} s)")
    return [k for k in list(acked) if k not in present]


def checkdb(server):
    bad = []
    c = connect(server.port)
    cur = c.cursor()
    cur.execute("SELECT name FROM sys.databases WHERE name <> 'tempdb'")
    for (name,) in cur.fetchall():
        try:
            cur.execute(f"DBCC CHECKDB ([{name}])")
            summary = " ".join(str(m[1]) for m in (cur.messages or []))
            if "0 allocation errors and 0 consistency errors" not in summary:
                bad.append((name, summary[-200:]))
        except Exception as e:
            bad.append((name, repr(e)[:200]))
    c.close()
    return bad


def main():
    binary = sys.argv[1]
    duration = float(sys.argv[2]) if len(sys.argv) > 2 else 600
    kill_every = float(sys.argv[3]) if len(sys.argv) > 3 else 180
    data = tempfile.mkdtemp(prefix="mesquite-soak-")
    server = Server(binary, data)
    server.start()
    c = connect(server.port)
    cur = c.cursor()
    cur.execute("CREATE DATABASE soak")
    cur.execute("CREATE TABLE soak.dbo.oltp (id bigint PRIMARY KEY, v varchar(100) NOT NULL)")
    cur.execute("CREATE TABLE soak.dbo.hot (id int PRIMARY KEY, n int NOT NULL)")
    cur.execute("INSERT soak.dbo.hot VALUES (1, 0)")
    cur.execute("CREATE DATABASE logcap ON (NAME = logcap, FILENAME = 'C:\\logcap.mdf', SIZE = 16MB) "
                "LOG ON (NAME = logcap_log, FILENAME = 'C:\\logcap.ldf', SIZE = 2MB, MAXSIZE = 8MB)")
    cur.execute("CREATE TABLE logcap.dbo.t (id int PRIMARY KEY, pad char(2000) NOT NULL DEFAULT 'x')")
    cur.execute("CREATE LOGIN plainsoak WITH PASSWORD = 'Plain-soak-1'")
    c.close()

    stop = threading.Event()
    acked, stalls, counts = set(), [], [0] * OLTP_THREADS
    threads = [threading.Thread(target=oltp, args=(server, t, acked, stalls, stop, counts), daemon=True)
               for t in range(OLTP_THREADS)]
    threads += [threading.Thread(target=f, args=(server, stop), daemon=True)
                for f in (never_readers, pileup, deep_xml, runaway_sorts, runaway_hashes, log_full)]
    for t in threads:
        t.start()
    began = time.monotonic()
    kills, lost_after_kill, next_kill = 0, [], began + kill_every
    ok = True
    while time.monotonic() - began < duration:
        time.sleep(1)
        if not server.alive():
            server.unexpected_exits += 1
            print(f"FAIL: the server exited on its own ({server.proc.returncode}) at {time.monotonic() - began:.0f} s")
            ok = False
            window = [time.monotonic(), None]
            server.restart_windows.append(window)
            server.start()
            window[1] = time.monotonic()
            server.restart_windows[-1] = tuple(window)
        if time.monotonic() >= next_kill:
            window_start = time.monotonic()
            server.restart_windows.append((window_start, None))
            snapshot = set(acked)
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait()
            server.start()
            server.restart_windows[-1] = (window_start, time.monotonic())
            kills += 1
            missing = verify(server, snapshot)
            lost_after_kill += missing
            print(f"kill -9 #{kills} at {window_start - began:.0f} s: restart took "
                  f"{time.monotonic() - window_start:.1f} s, {len(snapshot)} acknowledged commits, "
                  f"{len(missing)} missing")
            next_kill = time.monotonic() + kill_every
    stop.set()
    time.sleep(2)
    missing_end = verify(server, set(acked))
    bad = checkdb(server)
    elapsed = time.monotonic() - began
    total = sum(counts)
    print(f"soak: {elapsed:.0f} s, {total} OLTP commits ({total / elapsed:.0f}/s), {kills} kill -9 restarts, "
          f"{server.unexpected_exits} unexpected exits")
    print(f"  OLTP commits slower than {STALL_LIMIT_S:.0f} s outside restarts: {len(stalls)}"
          + (f" (longest {max(s for s, _ in stalls):.2f} s; at " + ", ".join(f"{t} {d:.2f} s" for d, t in stalls[:10]) + ")"
             if stalls else ""))
    print(f"  acknowledged commits missing: {len(lost_after_kill)} after kills, {len(missing_end)} at the end")
    print(f"  DBCC CHECKDB: {'clean' if not bad else bad}")
    print(f"  OLTP errors outside restarts: {sum(OLTP_ERRORS.values())}"
          + "".join(f"\n    {n} x {k}" for k, n in sorted(OLTP_ERRORS.items())))
    print("  abusers (rounds completed, failed): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(ROUNDS.items())))
    ok = (ok and not stalls and not lost_after_kill and not missing_end and not bad and not OLTP_ERRORS
          and server.unexpected_exits == 0)
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        print("FAIL: SIGTERM did not stop the server within 60 s")
        server.proc.kill()
        ok = False
    if not ok:
        log = os.path.join(data, "serve.out")
        print("--- server output (tail) ---")
        print(open(log, "rb").read()[-3000:].decode("utf-8", "replace"))
    shutil.rmtree(data, ignore_errors=True)
    print("soak:", "pass" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
