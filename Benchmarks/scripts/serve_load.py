#!/usr/bin/env python3
"""Driver of serve-load.sh: see that script for what is measured and how to run it.

Everything runs on loopback: two origins, which serve DIR/NAME for any path ending in /NAME —
nginx (static files with sendfile, one worker; its CPU seconds are reported beside A's and
B's rows) for the throughput parts, and this file with --origin (a threaded HTTP server that
counts requests per path) for the parts that count what the origin saw — the servers under
test, and the load (wrk for closed-loop throughput, an open-loop Python client at a fixed rate
for the soak and the faults). Every request of A, B and the soak names a new source
(/TOKEN/NAME), so no cache of either server answers: each request downloads, decodes, resizes
and encodes. Seeded (SEED below); the seed is in the results.
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SEED = 20261124
KEY = bytes.fromhex("6f1c2d3e4f5a6b7c8d9e0fa1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5")
SALT = bytes.fromhex("0a1b2c3d4e5f60718293a4b5c6d7e8f9")


# --- inputs -------------------------------------------------------------------------------

# The longest sides of A's and B's sources: 1600-3000 px, so that no server gets only the DCT
# scale that suits it (thumbor's draft and imgproxy stop at 1/2 below 2048 px for a 512 px
# target, and reach 1/4 exactly at 2048; the engine's default keeps headroom).
SOURCE_SIDES = (1600, 1800, 2040, 2048, 2400, 2600, 3000)


def make_inputs(engine, samples, inputs, sides=SOURCE_SIDES):
    """The JPEGs of A and B (also used by thumbor_quality.py): every JPEG in `samples` with a
    displayed side of max(sides) px or more, fitted to each of `sides` at q90 into `inputs`
    (NAME-SIDE.jpg); their names."""
    large = []
    for name in sorted(os.listdir(samples)):
        if name.lower().endswith(".jpg"):
            info = json.loads(subprocess.run([engine, "inspect", os.path.join(samples, name)], capture_output=True,
                                             text=True, check=True).stdout)
            if max(info["displayWidth"], info["displayHeight"]) >= max(sides):
                large.append(os.path.join(samples, name))
    os.makedirs(inputs, exist_ok=True)
    for side in sides:
        with tempfile.TemporaryDirectory() as fitted:
            subprocess.run([engine, "thumbnail", *large, "--output", fitted, "--max-pixel-size", str(side), "--quality", "90"],
                           check=True, capture_output=True)
            for name in os.listdir(fitted):
                os.rename(os.path.join(fitted, name), os.path.join(inputs, f"{os.path.splitext(name)[0]}-{side}.jpg"))
    return sorted(os.listdir(inputs))


def start_nginx_origin(inputs, workdir):
    """nginx serving `inputs` for any path /TOKEN/NAME: (process, port)."""
    port = free_port()
    run = os.path.join(workdir, "origin-nginx")
    os.makedirs(os.path.join(run, "temp"), exist_ok=True)
    conf = os.path.join(run, "nginx.conf")
    with open(conf, "w") as file:
        file.write(f"""user root;
worker_processes 1;
daemon off;
pid {run}/nginx.pid;
error_log {run}/error.log error;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    client_body_temp_path {run}/temp/body;
    proxy_temp_path {run}/temp/proxy;
    fastcgi_temp_path {run}/temp/fastcgi;
    uwsgi_temp_path {run}/temp/uwsgi;
    scgi_temp_path {run}/temp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            rewrite ^/[^/]+/([^/]+)$ /$1 break;
            root {inputs};
            default_type image/jpeg;
        }}
    }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", conf, "-p", run], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    name = sorted(os.listdir(inputs))[0]
    wait_ready(f"http://127.0.0.1:{port}/ready/{name}", process=process)
    return process, port


# --- origin -------------------------------------------------------------------------------

def run_origin(directory, port):
    counts = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle(self):
            # A server under test that gives up on a download (a timeout, a cancelled request)
            # closes the connection: not an error of the origin's.
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self):
            if self.path.startswith("/__count/"):
                with lock:
                    body = json.dumps({"total": sum(counts.values()), "path": counts.get(self.path[len("/__count"):], 0)}).encode()
                return self.reply(200, body, "application/json")
            with lock:
                counts[self.path] = counts.get(self.path, 0) + 1
            name = os.path.basename(self.path)
            path = os.path.join(directory, name)
            if not name or not os.path.isfile(path):
                return self.reply(404, b"not found\n", "text/plain")
            with open(path, "rb") as file:
                # A Last-Modified, as every static origin (nginx, S3) sends: the servers may
                # use it as the source's validator instead of hashing the bytes.
                self.reply(200, file.read(), "image/jpeg", self.date_time_string(int(os.path.getmtime(path))))

        def reply(self, status, body, content_type, last_modified=None):
            self.send_response(status)
            if last_modified:
                self.send_header("Last-Modified", last_modified)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


# --- processes and measurements -----------------------------------------------------------

def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, timeout=60, process=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited ({process.returncode})")
        try:
            if get(url)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not ready after {timeout} s")


def fetch(url, timeout=30):
    """(status, headers, body) of one GET on a fresh connection."""
    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, port = hostport.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("GET", "/" + path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def get(url, timeout=30):
    """(status, headers, body length) of one GET."""
    status, headers, body = fetch(url, timeout)
    return status, headers, len(body)


def tree(pid):
    """pid and all its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    fields = file.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
            except OSError:
                pass
    result, stack = [], [pid]
    while stack:
        current = stack.pop()
        result.append(current)
        stack.extend(children.get(current, []))
    return result


def memory(pids):
    """(PSS, RSS) in bytes summed over pids."""
    pss = rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as file:
                for line in file:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
        except OSError:
            pass
    return pss, rss


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


class MemorySampler:
    """Peak PSS and RSS of a process tree, sampled every 0.2 s; a series for charts."""

    def __init__(self, pid, interval=0.2):
        self.pid, self.interval = pid, interval
        self.peak_pss = self.peak_rss = 0
        self.series = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.start = time.time()
        self.thread.start()

    def run(self):
        while not self.stopped.is_set():
            pss, rss = memory(tree(self.pid))
            self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
            self.series.append((time.time() - self.start, pss, rss))
            self.stopped.wait(self.interval)

    def stop(self):
        self.stopped.set()
        self.thread.join()


def wrk(url_base, paths, duration, connections, workdir):
    """Closed-loop load over `paths` in order (each thread its own share): wrk's figures."""
    listing = os.path.join(workdir, f"paths-{random.randrange(1 << 30)}.txt")
    with open(listing, "w") as file:
        file.write("\n".join(paths) + "\n")
    script = os.path.join(workdir, "paths.lua")
    with open(script, "w") as file:
        file.write(f"""
local paths = {{}}
for line in io.lines("{listing}") do paths[#paths + 1] = line end
local next_id = 0
function setup(thread) thread:set("id", next_id); next_id = next_id + 1 end
local counter = -1
request = function()
  if counter < 0 then counter = id end
  local path = paths[(counter % #paths) + 1]
  counter = counter + {connections}
  return wrk.format("GET", path)
end
""")
    output = subprocess.run(["wrk", f"-t{connections}", f"-c{connections}", f"-d{duration}s", "--timeout", "30s", "--latency",
                             "-s", script, url_base], capture_output=True, text=True, check=True).stdout
    return parse_wrk(output)


def parse_wrk(output):
    def seconds(text):
        value, unit = re.match(r"([\d.]+)(us|ms|s|m)", text).groups()
        return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]
    latency = {int(p): seconds(v) for p, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", output, re.M)}
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", output))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {"requests": requests, "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
            "p50_ms": latency[50] * 1000, "p99_ms": latency[99] * 1000,
            "errors": errors + (int(non2xx.group(1)) if non2xx else 0)}


class OpenLoop:
    """Requests at a fixed rate whatever the latency (so a slow server cannot slow the load
    down and hide its tail): (start time, latency, status) per request."""

    def __init__(self, url_base, next_path, rate, workers=64):
        self.url_base, self.next_path, self.rate = url_base, next_path, rate
        self.records, self.lock = [], threading.Lock()
        self.stopped = threading.Event()
        self.pool = ThreadPoolExecutor(workers)
        self.start = time.time()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def one(self, path, scheduled):
        began = time.time()
        try:
            status, headers, _ = get(self.url_base + path, timeout=30)
        except OSError:
            status, headers = 0, {}
        with self.lock:
            self.records.append((scheduled - self.start, time.time() - began, status, headers.get("x-cache-status", "")))

    def run(self):
        n = 0
        while not self.stopped.is_set():
            scheduled = self.start + n / self.rate
            delay = scheduled - time.time()
            if delay > 0:
                self.stopped.wait(delay)
            self.pool.submit(self.one, self.next_path(), scheduled)
            n += 1

    def stop(self):
        self.stopped.set()
        self.thread.join()
        self.pool.shutdown(wait=True)
        return sorted(self.records)


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)} if values else None


# --- URLs -----------------------------------------------------------------------------------

def signed(options, source, ext="jpg"):
    encoded = base64.urlsafe_b64encode(source.encode()).rstrip(b"=").decode()
    path = f"/{options}/{encoded}.{ext}"
    mac = hmac.new(KEY, SALT + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode() + path


def engine_path(origin, token, name, width=512, height=512, mode="fit"):
    return signed(f"rs:{mode}:{width}:{height}/q:80", f"http://127.0.0.1:{origin}/{token}/{name}")


def thumbor_path(origin, token, name, width=512, height=512, mode="fit"):
    fit = "fit-in/" if mode == "fit" else ""
    return f"/unsafe/{fit}{width}x{height}/filters:quality(80)/127.0.0.1:{origin}/{token}/{name}"


# --- servers ----------------------------------------------------------------------------------

class Server:
    def __init__(self, name, command, port, env=None, cwd=None):
        self.name, self.port = name, port
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, env=env, cwd=cwd, stdout=self.log, stderr=self.log, start_new_session=True)
        try:
            wait_ready(f"http://127.0.0.1:{port}/{'healthcheck' if name.startswith('thumbor') else 'ready'}", process=self.process)
        except RuntimeError as error:
            self.log.seek(0)
            raise RuntimeError(f"{error}: {self.log.read().decode(errors='replace')[-500:]}") from None

    def pids(self):
        return tree(self.process.pid)

    def stop(self):
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


FAST = ("--fast-shrink-on-load",)


def engine_env():
    env = dict(os.environ)
    env["IMAGE_ENGINE_KEY"], env["IMAGE_ENGINE_SALT"] = KEY.hex(), SALT.hex()
    return env


def start_engine(args, extra=(), engine=None):
    # Two ports picked apart may still meet another process's bind in between: a start that
    # lost its port is tried again on new ones.
    for attempt in range(3):
        port, metrics = free_port(), free_port()
        if port == metrics:
            continue
        command = [engine or args.engine, "serve", "--bind", f"127.0.0.1:{port}", "--metrics-bind", f"127.0.0.1:{metrics}",
                   "--allow-private-sources", *extra]
        try:
            server = Server("serve", command, port, env=engine_env())
        except RuntimeError as error:
            if "the port is in use" not in str(error) or attempt == 2:
                raise
            continue
        server.metrics_port = metrics
        return server
    raise RuntimeError("serve: no free pair of ports")


def start_thumbor(args, processes, threadpool, workdir):
    port = free_port()
    conf = os.path.join(workdir, f"thumbor-{processes}-{threadpool}.conf")
    with open(os.path.join(args.root, "Benchmarks", "thumbor", "thumbor.conf")) as base, open(conf, "w") as file:
        file.write(base.read() + f"\nENGINE_THREADPOOL_SIZE = {threadpool}\n")
    command = [args.thumbor, "-p", str(port), "-i", "127.0.0.1", "-c", conf, "-l", "error", "--processes", str(processes)]
    return Server(f"thumbor --processes {processes}, threadpool {threadpool}", command, port, cwd=workdir)


def metric(server, name):
    """The sum of a Prometheus metric's samples (every label set)."""
    text = fetch(f"http://127.0.0.1:{server.metrics_port}/metrics")[2].decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name + " ") or line.startswith(name + "{"))


def origin_count(origin, path):
    """How many requests the origin saw for `path`, and in all."""
    return json.loads(fetch(f"http://127.0.0.1:{origin}/__count{path}")[2])


# --- the parts --------------------------------------------------------------------------------

def measure(server, url_base, paths, args, workdir, connections=2):
    pids = server.pids()
    cpu_before = cpu_seconds(pids)
    origin_pids = tree(args.nginx_origin.pid)
    origin_before = cpu_seconds(origin_pids)
    sampler = MemorySampler(server.process.pid)
    result = wrk(url_base, paths, args.duration, connections, workdir)
    sampler.stop()
    cpu = cpu_seconds(server.pids()) - cpu_before
    requests = max(1, result["requests"])
    result.update({"peak_pss_mb": sampler.peak_pss / 2**20, "peak_rss_mb": sampler.peak_rss / 2**20,
                   "cpu_s_per_image": cpu / requests, "connections": connections,
                   "origin_cpu_ms_per_request": 1000 * (cpu_seconds(origin_pids) - origin_before) / requests})
    return result


def unique_paths(maker, origin, names, prefix, count, rng, sizes=None):
    paths = []
    for i in range(count):
        name = names[i % len(names)]
        if sizes:
            width, height, mode = rng.choice(sizes)
            paths.append(maker(origin, f"{prefix}-{i}", name, width, height, mode))
        else:
            paths.append(maker(origin, f"{prefix}-{i}", name))
    return paths


def part_ab(args, origin, names, workdir, rng, label, sizes):
    """A (sizes None: 512×512 fit) or B (sizes: a random (width, height, mode) per request)."""
    print(f"== {label}", file=sys.stderr)
    # thumbor: its best configuration on this machine, from short runs of each candidate.
    if not hasattr(args, "thumbor_best"):
        sweep = []
        for processes, threadpool in [(1, 0), (2, 0), (1, 2), (2, 2), (0, 4)]:
            server = start_thumbor(args, processes, threadpool, workdir)
            try:
                paths = unique_paths(thumbor_path, origin, names, f"sweep{processes}{threadpool}", 8000, rng)
                result = wrk(f"http://127.0.0.1:{server.port}", paths, min(20, args.duration), 2, workdir)
            finally:
                server.stop()
            sweep.append({"processes": processes, "threadpool": threadpool, "rps": result["rps"], "p99_ms": result["p99_ms"],
                          "errors": result["errors"]})
            print(f"   thumbor sweep: processes {processes}, threadpool {threadpool}: {result['rps']:.1f} req/s", file=sys.stderr)
        best = max((s for s in sweep if s["errors"] == 0), key=lambda s: s["rps"], default=max(sweep, key=lambda s: s["rps"]))
        args.thumbor_best, args.thumbor_sweep = (best["processes"], best["threadpool"]), sweep
    # A also runs serve with its in-memory caches off (what each instance behind nginx or a
    # CDN needs): every request of A is a new URL, so those caches only hold memory.
    # And with --fast-shrink-on-load: the DCT scale thumbor's draft and imgproxy pick.
    # A: thumbor, serve and serve --fast-shrink-on-load, each at 2 connections (imgproxy's
    # benchmark shape) and at 8. B: serve and thumbor at 2.
    servers = ["serve", "serve_fast", "thumbor"] if label == "A" else ["serve", "thumbor"]
    rows = [(which, connections) for which in servers for connections in ((2, 8) if label == "A" else (2,))]
    return alternating_runs(args, rows, origin, names, workdir, rng, label, sizes)


def part_r(args, origin, names, workdir, rng):
    """R: this build's serve against another build's (--baseline), A's shape, 2 and 8 connections."""
    print("== R", file=sys.stderr)
    rows = [(which, connections) for which in ("baseline", "serve") for connections in (2, 8)]
    return alternating_runs(args, rows, origin, names, workdir, rng, "R", None)


def start_server(args, which, workdir):
    """The server a row names, and how its URLs are made: thumbor in its best configuration,
    the --baseline build's serve, or this build's serve (serve_fast: --fast-shrink-on-load)."""
    if which == "thumbor":
        return start_thumbor(args, *args.thumbor_best, workdir), thumbor_path
    if which == "baseline":
        return start_engine(args, engine=args.baseline), engine_path
    return start_engine(args, {"serve_fast": FAST}.get(which, ())), engine_path


def alternating_runs(args, rows, origin, names, workdir, rng, label, sizes):
    """Each (server, connections) row measured args.runs times, the rows' order reversed every
    other run so that a drifting machine weighs on every row alike; every request a new source."""
    count = int(args.duration * 400) + 1000
    runs = {row_key(which, connections): [] for which, connections in rows}
    for run in range(args.runs):
        for which, connections in (rows if run % 2 == 0 else list(reversed(rows))):
            server, maker = start_server(args, which, workdir)
            try:
                paths = unique_paths(maker, origin, names, f"{label}{run}{which}{connections}", count * connections // 2, rng, sizes)
                result = measure(server, f"http://127.0.0.1:{server.port}", paths, args, workdir, connections)
            finally:
                server.stop()
            runs[row_key(which, connections)].append(result)
            print(f"   {which} at {connections} connections, run {run + 1}: {result['rps']:.1f} req/s, p99 {result['p99_ms']:.0f} ms, "
                  f"CPU {result['cpu_s_per_image'] * 1000:.1f} ms/image, PSS {result['peak_pss_mb']:.0f} MB, "
                  f"origin {result['origin_cpu_ms_per_request']:.2f} ms/request, errors {result['errors']}", file=sys.stderr)
    return runs


def row_key(which, connections):
    """A run's key in the results: the server at 2 connections keeps its plain name."""
    return which if connections == 2 else f"{which}@{connections}"


def part_ceiling(args, inputs, workdir, extra=()):
    """`image-engine thumbnail` on the same files with no HTTP: thumbnails per second."""
    print(f"== ceiling {' '.join(extra)}", file=sys.stderr)
    batch = os.path.join(workdir, "batch")
    os.makedirs(batch, exist_ok=True)
    files = []
    for copy in range(max(1, 240 // len(os.listdir(inputs)))):
        for name in os.listdir(inputs):
            target = os.path.join(batch, f"{copy}-{name}")
            if not os.path.exists(target):
                os.symlink(os.path.join(inputs, name), target)
            files.append(target)
    rates = []
    for _ in range(max(3, args.runs)):
        out = os.path.join(workdir, "batch-out")
        shutil.rmtree(out, ignore_errors=True)
        began = time.time()
        subprocess.run([args.engine, "thumbnail", *files, "--output", out, "--max-pixel-size", "512", "--quality", "80", *extra],
                       check=True, capture_output=True)
        rates.append(len(files) / (time.time() - began))
    return rates


def part_c(args, origin, names, workdir):
    """200 concurrent requests for one new URL."""
    print("== C", file=sys.stderr)
    results = {}
    for which in ["serve", "thumbor"]:
        server = start_engine(args) if which == "serve" else start_thumbor(args, *args.thumbor_best, workdir)
        try:
            token = f"hot-{which}-{random.randrange(1 << 30)}"
            path = (engine_path if which == "serve" else thumbor_path)(origin, token, names[0])
            renders_before = metric(server, "image_engine_process_duration_seconds_count") if which == "serve" else 0
            barrier = threading.Barrier(200)

            def one(_):
                barrier.wait()
                return get(f"http://127.0.0.1:{server.port}{path}", timeout=60)[0]
            began = time.time()
            with ThreadPoolExecutor(200) as pool:
                statuses = list(pool.map(one, range(200)))
            wall = time.time() - began
            renders = metric(server, "image_engine_process_duration_seconds_count") - renders_before if which == "serve" else None
        finally:
            server.stop()
        results[which] = {"ok": statuses.count(200), "origin_requests": origin_count(origin, f"/{token}/{names[0]}")["path"],
                          "renders": renders, "wall_s": wall}
        print(f"   {which}: {results[which]}", file=sys.stderr)
    return results


def cluster(args, command, *extra):
    env = engine_env()
    env["IMAGE_ENGINE"] = args.engine
    env["IMAGE_ENGINE_CLUSTER_RUN"] = args.cluster_run
    return subprocess.run([os.path.join(args.root, "scripts", "cluster.sh"), command, *extra], env=env,
                          capture_output=True, text=True)


def access_statuses(args, since):
    with open(os.path.join(args.cluster_run, "logs", "nginx-access.log")) as file:
        lines = file.readlines()[since:]
    counts = {}
    for line in lines:
        status = line.rsplit(" ", 1)[1].strip()
        counts[status] = counts.get(status, 0) + 1
    return counts


def access_lines(args):
    path = os.path.join(args.cluster_run, "logs", "nginx-access.log")
    with open(path) as file:
        return sum(1 for _ in file)


def part_d(args, origin, names, workdir, rng):
    """2 instances behind the committed nginx configuration, cold then warm."""
    print("== D", file=sys.stderr)
    port = free_port()
    started = cluster(args, "start", "--instances", "2", "--port", str(port), "--", "--allow-private-sources")
    if started.returncode != 0:
        raise RuntimeError("cluster.sh start: " + started.stderr)
    try:
        base = f"http://127.0.0.1:{port}"
        result = {}
        since = access_lines(args)
        cold = unique_paths(engine_path, origin, names, "cold", int(args.duration * 400) + 1000, rng)
        result["cold"] = wrk(base, cold, args.duration, 2, workdir)
        result["cold"]["cache_status"] = access_statuses(args, since)
        warm = unique_paths(engine_path, origin, names, "warm", 200, rng)
        for path in warm:
            get(base + path)
        for connections in (2, 32):
            since = access_lines(args)
            key = f"warm_{connections}"
            result[key] = wrk(base, warm, args.duration, connections, workdir)
            result[key]["cache_status"] = access_statuses(args, since)
        print(f"   {result}", file=sys.stderr)
        return result
    finally:
        cluster(args, "stop")


def part_soak(args, origin, names, workdir, rate):
    """One instance at `rate` req/s for soak_minutes: errors, RSS over time, p99 per 30 s."""
    print(f"== soak: {args.soak_minutes} min at {rate:.0f} req/s", file=sys.stderr)
    server = start_engine(args)
    counter = iter(range(1 << 40))
    try:
        sampler = MemorySampler(server.process.pid, interval=1.0)
        load = OpenLoop(f"http://127.0.0.1:{server.port}",
                        lambda: engine_path(origin, f"soak-{next(counter)}", names[random.randrange(len(names))]), rate)
        time.sleep(args.soak_minutes * 60)
        records = load.stop()
        sampler.stop()
    finally:
        server.stop()
    windows = []
    for start in range(0, int(args.soak_minutes * 60), 30):
        latencies = [r[1] for r in records if start <= r[0] < start + 30]
        windows.append({"t": start + 15, "p99_ms": percentile(latencies, 99) * 1000, "count": len(latencies)})
    rss = [(t, r / 2**20) for t, _, r in sampler.series]
    at_two = min(rss, key=lambda s: abs(s[0] - 120))[1]
    return {"rate": rate, "requests": len(records), "errors": sum(1 for r in records if r[2] != 200),
            "rss_minute_2_mb": at_two, "rss_end_mb": rss[-1][1], "rss_series": rss, "p99_windows": windows}


def part_faults(args, origin, names, workdir, rng):
    """2 instances behind nginx under a steady load: kill -9, rolling restart, origin down."""
    print("== faults", file=sys.stderr)
    port = free_port()
    started = cluster(args, "start", "--instances", "2", "--port", str(port), "--", "--allow-private-sources", "--ttl", "5")
    if started.returncode != 0:
        raise RuntimeError("cluster.sh start: " + started.stderr)
    base = f"http://127.0.0.1:{port}"
    cached = unique_paths(engine_path, origin, names, "faults-cached", 100, rng)
    for path in cached:
        get(base + path)
    counter = iter(range(1 << 40))

    def next_path():
        n = next(counter)
        return cached[n % len(cached)] if n % 2 else engine_path(origin, f"faults-new-{n}", names[n % len(names)])

    def pid_of(i):
        with open(os.path.join(args.cluster_run, f"instance-{i}.pid")) as file:
            return int(file.read())

    def restart(i, command):
        process = subprocess.Popen(command, env=engine_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        with open(os.path.join(args.cluster_run, f"instance-{i}.pid"), "w") as file:
            file.write(str(process.pid))
        wait_ready(f"http://127.0.0.1:{port + i}/ready", process=process)

    def command_of(i):
        with open(f"/proc/{pid_of(i)}/cmdline", "rb") as file:
            return [part.decode() for part in file.read().split(b"\0") if part]

    def failures(records, start=0, end=1e9):
        return sum(1 for r in records if start <= r[0] < end and r[2] != 200)

    results = {}
    try:
        rate = 40
        # kill -9 one instance, restart it 10 s later.
        load = OpenLoop(base, next_path, rate)
        time.sleep(5)
        command = command_of(1)
        killed_at = time.time() - load.start
        os.kill(pid_of(1), signal.SIGKILL)
        time.sleep(10)
        restart(1, command)
        restarted_at = time.time() - load.start
        time.sleep(10)
        records = load.stop()
        results["kill9"] = {"requests": len(records), "failed": failures(records),
                            "failed_after_kill_1s": failures(records, killed_at + 1.0),
                            "killed_at_s": killed_at, "restarted_at_s": restarted_at}
        print(f"   kill -9: {results['kill9']}", file=sys.stderr)
        # Rolling restart by SIGTERM.
        load = OpenLoop(base, next_path, rate)
        time.sleep(3)
        for i in (1, 2):
            command = command_of(i)
            pid = pid_of(i)
            os.kill(pid, signal.SIGTERM)
            while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/cmdline", "rb").read():
                time.sleep(0.05)
            restart(i, command)
            # nginx (without active health checks) keeps an instance it saw fail — the 503s
            # while it drained — out of rotation for fail_timeout (5 s): draining the next one
            # sooner would leave no instance to send requests to. An operator's rolling
            # restart waits the same (README, "Running at scale").
            time.sleep(6)
        records = load.stop()
        results["rolling_restart"] = {"requests": len(records), "failed": failures(records)}
        print(f"   rolling restart: {results['rolling_restart']}", file=sys.stderr)
        # The origin stops answering: cached (expired, ttl 5 s) thumbnails are served stale,
        # new ones fail with 502/504; nothing wrong is cached; service recovers with the origin.
        time.sleep(6)
        args.origin_process.send_signal(signal.SIGSTOP)
        down = {"cached": {}, "new": {}}
        new_paths = [engine_path(origin, f"faults-down-{i}", names[i % len(names)]) for i in range(20)]
        for kind, paths in (("cached", cached[:40]), ("new", new_paths)):
            with ThreadPoolExecutor(8) as pool:
                for status, headers, _ in pool.map(lambda p: get(base + p, timeout=60), paths):
                    label = f"{status} {headers.get('x-cache-status', '-')}"
                    down[kind][label] = down[kind].get(label, 0) + 1
        args.origin_process.send_signal(signal.SIGCONT)
        time.sleep(1)
        recovered = {}
        for path in new_paths:
            status, headers, _ = get(base + path, timeout=60)
            label = f"{status} {headers.get('x-cache-status', '-')}"
            recovered[label] = recovered.get(label, 0) + 1
        results["origin_down"] = {"while_down": down, "after_recovery_new_urls": recovered}
        print(f"   origin down: {results['origin_down']}", file=sys.stderr)
    finally:
        args.origin_process.send_signal(signal.SIGCONT)
        cluster(args, "stop")
    return results


# --- report -----------------------------------------------------------------------------------

def summary(runs, key):
    return spread([r[key] for r in runs])


def write_report(args, results):
    out = os.path.join(args.root, "Benchmarks", "Results")
    with open(os.path.join(out, f"{args.stem}.json"), "w") as file:
        json.dump(results, file, indent=1)
    lines = ["# Thumbnail service under load", "",
             f"`Benchmarks/scripts/serve-load.sh {' '.join(args.passed)}` on {results['machine']}, {results['date']}. "
             f"Seed {SEED}. Inputs: {results['inputs']}. Medians of {args.runs} runs of {args.duration} s, alternating servers; "
             "ranges are min-max over runs. Every request of A and B names a new source.", ""]
    for part, title in (("A", "A. imgproxy's benchmark shape: JPEGs of 1600-3000 px → fit 512×512, q80, 2 and 8 connections"),
                        ("B", "B. Many sizes: each request a different (image, size, mode), 2 connections"),
                        ("R", f"R. Against another build (`--baseline {results.get('baseline', '')}`): A's shape")):
        if part not in results:
            continue
        runs = results[part]
        lines += [f"## {title}", "",
                  "| server | connections | req/s | p50 ms | p99 ms | peak PSS MB | peak RSS MB | CPU s/image | origin CPU ms/request | errors |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        names = {"serve": "image-engine serve (defaults)", "serve_fast": f"image-engine serve {' '.join(FAST)}",
                 "thumbor": f"thumbor 7.8 ({results.get('thumbor_best')})", "baseline": "baseline build's serve (defaults)"}
        for key, rs in runs.items():
            which, _, connections = key.partition("@")

            def cell(field, fmt):
                s = summary(rs, field)
                return f"{s['median']:{fmt}} ({s['min']:{fmt}}-{s['max']:{fmt}})"
            lines.append(f"| {names[which]} | {connections or 2} | {cell('rps', '.1f')} | {cell('p50_ms', '.0f')} | "
                         f"{cell('p99_ms', '.0f')} | {cell('peak_pss_mb', '.0f')} | {cell('peak_rss_mb', '.0f')} | "
                         f"{cell('cpu_s_per_image', '.3f')} | {cell('origin_cpu_ms_per_request', '.2f')} | {sum(r['errors'] for r in rs)} |")
        lines.append("")
        for suffix in ("", "@8"):
            if "baseline" + suffix in runs:
                ratio = lambda field: summary(runs["serve" + suffix], field)["median"] / summary(runs["baseline" + suffix], field)["median"]
                lines.append(f"- this build / baseline at {suffix[1:] or 2} connections: req/s {ratio('rps'):.3f}×, "
                             f"p99 {ratio('p99_ms'):.2f}×, CPU per image {ratio('cpu_s_per_image'):.3f}×.")
            if "thumbor" + suffix not in runs:
                continue
            thumbor = runs["thumbor" + suffix]
            for which in ("serve", "serve_fast"):
                if which + suffix not in runs:
                    continue
                ratio = lambda field: summary(runs[which + suffix], field)["median"] / summary(thumbor, field)["median"]
                lines.append(f"- {names[which]} / thumbor at {suffix[1:] or 2} connections: req/s {ratio('rps'):.2f}×, "
                             f"p99 {ratio('p99_ms'):.2f}×, peak PSS {ratio('peak_pss_mb'):.2f}×, CPU per image {ratio('cpu_s_per_image'):.2f}×.")
        if part == "A":
            for which, ceiling_key in (("serve", "ceiling"), ("serve_fast", "ceiling_fast")):
                if ceiling_key not in results:
                    continue
                ceiling = statistics.median(results[ceiling_key])
                reached = "; ".join(f"at {suffix[1:] or 2} connections {summary(runs[which + suffix], 'rps')['median'] / ceiling:.2f}×"
                                    for suffix in ("", "@8") if which + suffix in runs)
                lines.append(f"- No-HTTP ceiling of {names[which]}'s mode (`image-engine thumbnail` on the same files, default jobs): "
                             f"{ceiling:.1f} images/s ({min(results[ceiling_key]):.1f}-{max(results[ceiling_key]):.1f}); serve reaches {reached}.")
        lines.append("")
    if "thumbor_sweep" in results:
        lines += ["thumbor configurations tried (short runs, A's shape): " +
                  "; ".join(f"processes {s['processes']}, threadpool {s['threadpool']}: {s['rps']:.1f} req/s" for s in results["thumbor_sweep"]), ""]
    if "C" in results:
        lines += ["## C. Hot URL: 200 concurrent requests for one new URL", "", "| server | 200s | origin requests | renders | wall s |",
                  "|---|---|---|---|---|"]
        for name, r in results["C"].items():
            lines.append(f"| {name} | {r['ok']} | {r['origin_requests']} | {r['renders'] if r['renders'] is not None else 'n/a'} | {r['wall_s']:.2f} |")
        lines.append("")
    if "D" in results:
        d = results["D"]
        lines += ["## D. Two instances behind nginx (deploy/nginx/image-engine.conf)", "",
                  "| phase | connections | req/s | p50 ms | p99 ms | errors | X-Cache-Status |", "|---|---|---|---|---|---|---|"]
        for phase, connections in (("cold", 2), ("warm_2", 2), ("warm_32", 32)):
            r = d[phase]
            lines.append(f"| {phase.split('_')[0]} | {connections} | {r['rps']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['errors']} | "
                         + ", ".join(f"{k} {v}" for k, v in sorted(r["cache_status"].items())) + " |")
        if "A" in results:
            lines.append(f"\nWarm at 2 connections / A's serve req/s: {d['warm_2']['rps'] / summary(results['A']['serve'], 'rps')['median']:.0f}×.")
        lines.append("")
    if "soak" in results:
        s = results["soak"]
        lines += ["## Soak", "", f"{args.soak_minutes} minutes at {s['rate']:.0f} req/s (80% of A) against one instance: "
                  f"{s['requests']} requests, {s['errors']} errors; RSS {s['rss_minute_2_mb']:.0f} MB at minute 2, "
                  f"{s['rss_end_mb']:.0f} MB at the end ({s['rss_end_mb'] / s['rss_minute_2_mb']:.2f}×). "
                  "![RSS and p99 over the soak](serve-load-soak.png)", ""]
    if "faults" in results:
        f = results["faults"]
        lines += ["## Faults (2 instances behind nginx, 40 req/s, half cached URLs, half new)", "",
                  f"- kill -9 of instance 1: {f['kill9']['failed']} failed of {f['kill9']['requests']} "
                  f"({f['kill9']['failed_after_kill_1s']} later than 1 s after the kill); restarted after 10 s.",
                  f"- rolling restart by SIGTERM: {f['rolling_restart']['failed']} failed of {f['rolling_restart']['requests']}.",
                  f"- origin stopped (SIGSTOP), results expired (--ttl 5): cached URLs {f['origin_down']['while_down']['cached']}; "
                  f"new URLs {f['origin_down']['while_down']['new']}; after the origin returned, the new URLs: "
                  f"{f['origin_down']['after_recovery_new_urls']}.", ""]
    if "A" in results:
        lines += [f"![A: requests per second and p99]({args.stem}.png)", ""]
    text = "\n".join(lines)
    with open(os.path.join(out, f"{args.stem}.md"), "w") as file:
        file.write(text)
    print(text)


def charts(args, results):
    if not any(part in results for part in ("A", "B", "soak")):
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = os.path.join(args.root, "Benchmarks", "Results")
    parts = [p for p in ("A", "B") if p in results]
    if parts:
        figure, axes = plt.subplots(1, 3, figsize=(12, 3.6))
        for axis, key, title in zip(axes, ("rps", "p99_ms", "peak_pss_mb"), ("requests/s (higher is better)", "p99 latency, ms", "peak PSS, MB")):
            for offset, server, colour, name in ((-0.25, "serve", "#1f77b4", "image-engine serve"),
                                                 (0.0, "serve_fast", "#2ca02c", f"serve {' '.join(FAST)}"),
                                                 (0.25, "thumbor", "#ff7f0e", "thumbor 7.8")):
                shown = [p for p in parts if server in results[p]]
                values = [summary(results[p][server], key) for p in shown]
                positions = [parts.index(p) + offset for p in shown]
                axis.bar(positions, [v["median"] for v in values], 0.25, color=colour, label=name,
                         yerr=[[v["median"] - v["min"] for v in values], [v["max"] - v["median"] for v in values]], capsize=3)
            axis.set_xticks(range(len(parts)), [f"{p}" for p in parts])
            axis.set_title(title)
        axes[0].legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(os.path.join(out, f"{args.stem}.png"), dpi=110)
    if "soak" in results:
        s = results["soak"]
        figure, left = plt.subplots(figsize=(9, 3.6))
        left.plot([t / 60 for t, _ in s["rss_series"]], [r for _, r in s["rss_series"]], color="#1f77b4")
        left.set_xlabel("minutes")
        left.set_ylabel("RSS, MB", color="#1f77b4")
        left.set_ylim(bottom=0)
        right = left.twinx()
        right.plot([w["t"] / 60 for w in s["p99_windows"]], [w["p99_ms"] for w in s["p99_windows"]], color="#d62728", marker=".")
        right.set_ylabel("p99 per 30 s, ms", color="#d62728")
        right.set_ylim(bottom=0)
        left.set_title(f"Soak: one instance at {s['rate']:.0f} req/s, every request a new source")
        figure.tight_layout()
        figure.savefig(os.path.join(out, "serve-load-soak.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--origin", nargs=2, metavar=("DIR", "PORT"))
    parser.add_argument("--engine")
    parser.add_argument("--thumbor")
    parser.add_argument("--root")
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parts", default="A,B,C,D")
    parser.add_argument("--soak", action="store_true")
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--baseline", help="part R: another build's image-engine binary to compare with")
    args = parser.parse_args()
    if args.origin:
        return run_origin(args.origin[0], int(args.origin[1]))
    args.passed = sys.argv[sys.argv.index("--root") + 2:]
    random.seed(SEED)
    rng = random.Random(SEED)
    workdir = tempfile.mkdtemp(prefix="serve-load-")
    args.cluster_run = os.path.join(workdir, "cluster")
    parts = set(args.parts.split(","))
    # A partial run (--parts A) writes serve-load-A.md beside the full run's serve-load.md.
    full = parts >= {"A", "B", "C", "D"}
    args.stem = "serve-load" if full else "serve-load-" + "".join(sorted(parts))
    try:
        inputs = os.path.join(workdir, "inputs")
        names = make_inputs(args.engine, os.path.join(args.root, "SampleImages"), inputs)
        origin = free_port()
        args.origin_process = subprocess.Popen([sys.executable, __file__, "--origin", inputs, str(origin)], start_new_session=True)
        wait_ready(f"http://127.0.0.1:{origin}/__count/")
        args.nginx_origin, static_origin = start_nginx_origin(inputs, workdir)
        mean_bytes = statistics.mean(os.path.getsize(os.path.join(inputs, n)) for n in names)
        photos = sorted({name.rsplit("-", 1)[0] for name in names})
        results = {"seed": SEED, "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores",
                   "inputs": f"{len(names)} JPEGs: the {len(photos)} sample JPEGs with a side ≥ {max(SOURCE_SIDES)} px "
                             f"({', '.join(photos)}), each fitted to {', '.join(map(str, SOURCE_SIDES))} px at q90 "
                             f"(mean {mean_bytes / 1024:.0f} KiB)"}
        if "A" in parts:
            results["A"] = part_ab(args, static_origin, names, workdir, rng, "A", None)
            results["ceiling"] = part_ceiling(args, inputs, workdir)
            results["ceiling_fast"] = part_ceiling(args, inputs, workdir, FAST)
        if "B" in parts:
            sizes = [(w, h, m) for w in (96, 160, 240, 320, 480, 640, 800) for h in (0, 120, 320, 600) for m in ("fit", "fill")
                     if not (h == 0 and m == "fill")]
            results["B"] = part_ab(args, static_origin, names, workdir, rng, "B", sizes)
        if hasattr(args, "thumbor_best"):
            results["thumbor_best"] = f"--processes {args.thumbor_best[0]}, ENGINE_THREADPOOL_SIZE {args.thumbor_best[1]}"
            results["thumbor_sweep"] = args.thumbor_sweep
        if "R" in parts:
            results["baseline"] = args.baseline
            results["R"] = part_r(args, static_origin, names, workdir, rng)
        if "C" in parts:
            if not hasattr(args, "thumbor_best"):
                args.thumbor_best = (2, 0)
            results["C"] = part_c(args, origin, names, workdir)
        if "D" in parts:
            results["D"] = part_d(args, origin, names, workdir, rng)
        if args.soak:
            a_rps = summary(results["A"]["serve"], "rps")["median"] if "A" in results else 60
            results["soak"] = part_soak(args, origin, names, workdir, 0.8 * a_rps)
        if args.faults:
            results["faults"] = part_faults(args, origin, names, workdir, rng)
        write_report(args, results)
        charts(args, results)
    finally:
        if hasattr(args, "origin_process"):
            args.origin_process.send_signal(signal.SIGCONT)
            args.origin_process.terminate()
        if hasattr(args, "nginx_origin"):
            args.nginx_origin.terminate()
            args.nginx_origin.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
