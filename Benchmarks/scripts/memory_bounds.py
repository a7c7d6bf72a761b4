#!/usr/bin/env python3
"""`serve`'s memory under the scenarios that used to escape --max-memory: peak RSS against idle
RSS + the budget, one fresh process a scenario, on loopback.

    python3 Benchmarks/scripts/memory_bounds.py path/to/image-engine [--budget-mib 256] [--json out.json]

Scenarios (each reports peak RSS, idle RSS, the limit idle + budget + 96 MB, statuses, CPU):
  mb            a 4096² JPEG output of a noise source under mb:200000 (the byte cap's search)
  disk-hits     24 clients that never read one 48 MB result the disk cache holds
  skp           24 clients that never read a 48 MB source answered as it is (skp:png)
  sources       16 sources of 60 MiB at once, each from an origin of its own (127.0.0.N)
  slow-reader   a client reading a 48 MB answer at 1 MiB/s (--response-write-timeout 120): how
                much it gets, and the time
  and, in each, a 400 px thumbnail from another origin asked while the hogs hold their memory
  (status, seconds)

The sources are generated here (noise: nothing compresses it): a 4096² PNG (48 MB), a 4096²
JPEG at quality 95, and a 60 MiB PNG.
"""
import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def png(path, width, height, seed):
    rng = random.Random(seed)
    rows = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))
    def chunk(kind, payload):
        return len(payload).to_bytes(4, "big") + kind + payload + zlib.crc32(kind + payload).to_bytes(4, "big")
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))


def rss(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Serve:
    def __init__(self, engine, port, budget, cache):
        arguments = [engine, "serve", "--bind", f"127.0.0.1:{port}", "--allow-private-sources", "--unsafe",
                     "--max-memory", f"{budget}MiB", "--max-src-bytes", "64MiB", "--response-write-timeout", "120"]
        if cache:
            arguments += ["--cache-dir", cache]
        self.process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = port
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(0.5)
        self.idle = rss(self.process.pid, "VmRSS")

    def get(self, path, timeout=120):
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as reply:
                body = reply.read()
                return reply.status, len(body), time.monotonic() - started
        except urllib.error.HTTPError as error:
            return error.code, len(error.read()), time.monotonic() - started

    def stalled(self, path):
        """A client that sends its request and never reads."""
        connection = socket.socket()
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.connect(("127.0.0.1", self.port))
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        return connection

    def peak(self):
        return rss(self.process.pid, "VmHWM")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("engine")
    parser.add_argument("--budget-mib", type=int, default=256)
    parser.add_argument("--json")
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    results = {}
    try:
        print("making sources...", file=sys.stderr)
        png(os.path.join(work, "noise-4096.png"), 4096, 4096, 1)
        subprocess.run([args.engine, "thumbnail", os.path.join(work, "noise-4096.png"), "--output", os.path.join(work, "jpeg"),
                        "--size", "4096x4096", "--quality", "95"], check=True, stdout=subprocess.DEVNULL)
        shutil.move(os.path.join(work, "jpeg", "noise-4096.jpg"), os.path.join(work, "noise-4096.jpg"))
        png(os.path.join(work, "noise-60.png"), 4600, 4560, 2)  # about 60 MiB of noise
        origin = ThreadingHTTPServer(("0.0.0.0", 0), partial(Quiet, directory=work))
        threading.Thread(target=origin.serve_forever, daemon=True).start()
        source = lambda name, host="127.0.0.1": f"http://{host}:{origin.server_port}/{name}"
        port = 19000 + os.getpid() % 1000
        limit_extra = 96 * 1000 * 1000

        def scenario(name, cache, body):
            serve = Serve(args.engine, port, args.budget_mib, cache)
            before = cpu(serve.process.pid)
            try:
                details = body(serve)
            finally:
                peak, idle = serve.peak(), serve.idle
                seconds = cpu(serve.process.pid) - before
                serve.stop()
            limit = idle + args.budget_mib * 1024 * 1024 + limit_extra
            results[name] = dict(peak_mb=round(peak / 1e6, 1), idle_mb=round(idle / 1e6, 1), limit_mb=round(limit / 1e6, 1),
                                 within=peak <= limit, cpu_s=round(seconds, 2), **details)
            print(name, json.dumps(results[name]), file=sys.stderr)

        def small(serve):
            # From an origin of its own: one origin's share of the budget is another matter.
            status, _, seconds = serve.get("/x/rs:fit:400:400/plain/" + source("noise-4096.jpg", "127.0.0.99"), timeout=30)
            return dict(small_status=status, small_seconds=round(seconds, 2))

        def mb(serve):
            status, size, seconds = serve.get("/x/rs:force:4096:4096/mb:200000/plain/" + source("noise-4096.jpg"))
            return dict(status=status, bytes=size, seconds=round(seconds, 2), **small(serve))

        def held(path_of, prime=None):
            def run(serve):
                if prime:
                    prime(serve)
                clients = [serve.stalled(path_of(index)) for index in range(24)]
                time.sleep(8)
                details = small(serve)
                for client in clients:
                    client.close()
                return details
            return run

        def prime_result(serve):
            status, size, _ = serve.get("/x/f:png/plain/" + source("noise-4096.png"))
            time.sleep(2)  # the disk write lands
            return status, size

        def sources(serve):
            paths = [f"/x/rs:fit:400:400/plain/" + source("noise-60.png", f"127.0.0.{index + 1}") for index in range(16)]
            threads, statuses = [], []
            for path in paths:
                thread = threading.Thread(target=lambda p=path: statuses.append(serve.get(p)[0]))
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join()
            return dict(statuses=sorted(statuses), **small(serve))

        def slow_reader(serve):
            path = "/x/skp:png/plain/" + source("noise-4096.png")
            connection = socket.socket()
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            connection.connect(("127.0.0.1", serve.port))
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            received, started = 0, time.monotonic()
            while True:
                data = connection.recv(64 << 10)
                if not data:
                    break
                received += len(data)
                expected = (time.monotonic() - started) * (1 << 20)
                if received > expected:
                    time.sleep((received - expected) / (1 << 20))
                if received >= os.path.getsize(os.path.join(work, "noise-4096.png")) + 100:
                    break
            connection.close()
            return dict(received=received, body=os.path.getsize(os.path.join(work, "noise-4096.png")),
                        seconds=round(time.monotonic() - started, 1))

        cache = os.path.join(work, "cache")
        scenario("mb", None, mb)
        scenario("disk-hits", cache, held(lambda _: "/x/f:png/plain/" + source("noise-4096.png"), prime_result))
        shutil.rmtree(cache, ignore_errors=True)
        scenario("skp", None, held(lambda index: f"/x/skp:png/plain/" + source("noise-4096.png") + f"?{index}"))
        scenario("sources", None, sources)
        scenario("slow-reader", None, slow_reader)
        origin.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
