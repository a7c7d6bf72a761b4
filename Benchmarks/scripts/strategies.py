#!/usr/bin/env python3
"""The cache-strategy benchmark: every strategy on the same scrolled product grid.

Starts a loopback image server (its own process), runs each configuration in a process of its
own (strategy-run: one frame thread at 120 Hz over the scroll trace), repeats the whole matrix
with the order rotated each time, and writes Benchmarks/Results/strategies.md, strategies.json
and the charts. Medians over the repetitions, with the range.

    Benchmarks/scripts/strategies.py [--repetitions N] [--quick] [--formats | --server-side]
"""
import argparse
import base64
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCHMARKS)
RESULTS = os.path.join(BENCHMARKS, "Results")
PHOTOS = ["Dragonfly.jpg", "Elephants-q90.jpg", "Honeywave.jpg", "MilkyWay-q90.jpg", "SafeLanding.jpg",
          "Sunset.jpg", "firstgeneration.jpg", "the-mouse.jpg"]
PRODUCTS = 120

LABELS = {
    "S1": "S1 URLSession + URLCache, decode on frame",
    "S1-off": "S1' URLSession + URLCache, decode off frame",
    "S1-down": "S1↓ URLSession + URLCache, cell-size decode off frame",
    "S2": "S2 NSCache of full-size bitmaps (no disk tier)",
    "S2-down": "S2↓ NSCache of cell-size bitmaps (no disk tier)",
    "S3": "S3 engine encodedResponse, decode on frame",
    "S3-off": "S3' engine encodedResponse, decode off frame",
    "S4": "S4 engine decoded (full size)",
    "S5": "S5 engine downsampled (default)",
    "S5-fit": "S5 engine downsampled, fit 400 (the size before fill)",
    "S5-serial": "S5¹ engine downsampled, one decode at a time",
    "S6": "S6 engine downsampled + thumbnails, warm relaunch",
    "S7": "S7 server thumbnails (serve, fill 400×400), server warm",
    "S7-cold": "S7' server thumbnails, server cold",
    "S7-cold-fast": "S7' server thumbnails, server cold, serve --fast-shrink-on-load",
    "S7-webp": "S7 server thumbnails in WebP (q79), server warm",
    "S7-avif": "S7 server thumbnails in AVIF (q63), server warm",
}
# What each row is made of, so a reader can see which factor two rows differ in: what the
# memory tier holds, the decoded size, where the decode runs, the disk tier. Every strategy
# shares a display load with a prefetch of the same product (one download, one decode).
FACTORS = {
    "S1": ("encoded responses", "full size", "frame thread", "URLCache (responses)"),
    "S1-off": ("encoded responses", "full size", "decode queue, 1 per core", "URLCache (responses)"),
    "S1-down": ("encoded responses", "cell (fill 400×400)", "decode queue, 1 per core", "URLCache (responses)"),
    "S2": ("full-size bitmaps", "full size", "decode queue, 1 per core", "none"),
    "S2-down": ("cell-size bitmaps", "cell (fill 400×400)", "decode queue, 1 per core", "none"),
    "S3": ("encoded responses", "cell (fill 400×400)", "frame thread", "originals"),
    "S3-off": ("encoded responses", "cell (fill 400×400)", "decode threads, 1 per core", "originals"),
    "S4": ("full-size bitmaps (admitted up to the whole limit, as S2)", "full size", "decode threads, 1 per core", "originals"),
    "S5": ("cell-size bitmaps", "cell (fill 400×400)", "decode threads, 1 per core", "originals"),
    "S5-fit": ("longest-side-400 bitmaps", "fit 400 (4:3 → 400×300)", "decode threads, 1 per core", "originals"),
    "S5-serial": ("cell-size bitmaps", "cell (fill 400×400)", "one decode thread", "originals"),
    "S6": ("cell-size bitmaps", "cell (fill 400×400)", "decode threads, 1 per core", "originals + thumbnails (filled before launch)"),
    "S7": ("cell-size bitmaps", "400×400 from the server", "decode threads, 1 per core", "server's thumbnails"),
    "S7-cold": ("cell-size bitmaps", "400×400 from the server", "decode threads, 1 per core", "server's thumbnails"),
    "S7-cold-fast": ("cell-size bitmaps", "400×400 from the server", "decode threads, 1 per core", "server's thumbnails"),
    "S7-webp": ("cell-size bitmaps", "400×400 WebP from the server", "decode threads, 1 per core", "server's thumbnails"),
    "S7-avif": ("cell-size bitmaps", "400×400 AVIF from the server", "decode threads, 1 per core", "server's thumbnails"),
}
ORDER = ["S1", "S1-off", "S1-down", "S2", "S2-down", "S3", "S3-off", "S4", "S5", "S5-fit", "S5-serial", "S6", "S7", "S7-cold",
         "S7-cold-fast", "S7-webp", "S7-avif"]
# The thumbnail formats' rows (server-side thumbnails in JPEG, WebP and AVIF): they answer a
# question of the phone's network, so they run there only.
FORMAT_ROWS = ["S7", "S7-webp", "S7-avif"]
# Server-side thumbnails against client-side downsampling, the server warm and cold (default
# and fast shrink-on-load): --server-side runs only these.
SERVER_SIDE_ROWS = ["S5", "S7", "S7-cold", "S7-cold-fast"]
# The servers that start empty: nothing is fetched before the measured run.
COLD_ROWS = ("S7-cold", "S7-cold-fast")
NETWORKS = {"none": [], "phone": ["--latency-ms", "50", "--mbit", "20"],
            "phone-shared": ["--latency-ms", "50", "--mbit", "20", "--shared-link"]}
NETWORK_LABELS = {"none": "loopback, no throttle", "phone": "50 ms, 20 Mbit/s per connection",
                  "phone-shared": "50 ms, 20 Mbit/s shared by all connections"}
# The shared link's rows: a baseline and its cell-size variant, and the engine's client-side
# and server-side strategies.
SHARED_LINK = ["S1", "S1-down", "S2", "S2-down", "S4", "S5", "S6", "S7", "S7-cold", "S7-cold-fast", "S7-webp", "S7-avif"]


def configurations(quick):
    """(network, strategy, memory MiB, prefetch, cancellation: True, False or "park")."""
    configs = [("none", strategy, 128, True, True) for strategy in ORDER if strategy not in FORMAT_ROWS[1:]]
    if not quick:
        # The limit decides the hits of the caches of decoded images; 32 MiB shows where full-size
        # decoding thrashes, 512 MiB what it takes to stop it.
        configs += [("none", strategy, memory, True, True) for memory in (32, 512) for strategy in ("S2", "S4", "S5")]
    # On the phone network the off-frame, fit and one-decode variants tell nothing new: the
    # network, not the decode, is the bottleneck there.
    configs += [("phone", strategy, 128, True, True) for strategy in ORDER if strategy not in ("S1-off", "S3-off", "S5-fit", "S5-serial")]
    configs += [("phone-shared", strategy, 128, True, True) for strategy in SHARED_LINK]
    for strategy in ("S1", "S5"):
        configs.append(("phone", strategy, 128, False, True))
        configs.append(("phone", strategy, 128, True, False))
    # The grid article's option: scrolled-off requests parked (ScrolledOffTasks) instead of cancelled.
    configs.append(("phone", "S5", 128, True, "park"))
    return configs


def build():
    subprocess.run(["swift", "build", "-c", "release", "--product", "image-engine"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "image-server"], cwd=BENCHMARKS, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "strategy-run"], cwd=BENCHMARKS, check=True)


def start_server(network, extra=()):
    process = subprocess.Popen(
        [os.path.join(BENCHMARKS, ".build/release/image-server"), "--samples", os.path.join(ROOT, "SampleImages"),
         "--products", str(PRODUCTS), "--photos", ",".join(PHOTOS)] + NETWORKS[network] + list(extra),
        stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().split()
    if len(line) != 2 or line[0] != "listening":
        process.kill()
        sys.exit("image-server did not start")
    return process, int(line[1])


def start_thumbnail_service(network, strategy):
    """S7's server side, a fresh one for every run: an unthrottled origin (the data centre's network),
    `image-engine serve` fetching from it, and a front on the phone's network (an image-server
    forwarding to serve, throttled like the other strategies' server). What the phone receives
    is counted by the front. S7-cold-fast's serve runs with --fast-shrink-on-load. Returns the
    processes, the front's port and the origin's."""
    origin, origin_port = start_server("none")
    port = free_port()
    fast = ["--fast-shrink-on-load"] if strategy == "S7-cold-fast" else []
    service = subprocess.Popen([os.path.join(ROOT, ".build/release/image-engine"), "serve", "--unsafe", "--allow-private-sources",
                                "--bind", f"127.0.0.1:{port}", *fast], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=1) as response:
                if response.status == 200:
                    break
        except OSError:
            if time.time() > deadline or service.poll() is not None:
                for process in (service, origin):
                    process.kill()
                sys.exit("image-engine serve did not start")
            time.sleep(0.05)
    front, front_port = start_server(network, ["--upstream", f"http://127.0.0.1:{port}"])
    return [front, service, origin], front_port, origin_port


THUMBNAIL_EXTENSIONS = {"S7": "jpg", "S7-cold": "jpg", "S7-cold-fast": "jpg", "S7-webp": "webp", "S7-avif": "avif"}


def warm_thumbnails(front_port, origin_port, strategy):
    """Fetches every cell's thumbnail through the front, whole, before the measured run: a warm
    server holds them all. (A scrolling client would not do: serve stops a render whose client
    has gone, so the cells it flicked past would stay cold, the slower encoders' most.) The
    URLs are strategy-run's."""
    def fetch(product):
        source = f"http://127.0.0.1:{origin_port}/products/{product:03d}.jpg"
        encoded = base64.urlsafe_b64encode(source.encode()).rstrip(b"=").decode()
        url = f"http://127.0.0.1:{front_port}/unsafe/rs:fill:400:400/{encoded}.{THUMBNAIL_EXTENSIONS[strategy]}"
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
            return response.status
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(fetch, range(PRODUCTS)))
    if any(status != 200 for status in statuses):
        sys.exit(f"warming {strategy}: not every thumbnail was made")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_one(port, strategy, memory, prefetch, cancel, cache_dir, output, origin_port=None):
    command = [os.path.join(BENCHMARKS, ".build/release/strategy-run"), "--strategy", strategy, "--port", str(port),
               "--memory-mib", str(memory), "--cache-dir", cache_dir, "--output", output, "--products", str(PRODUCTS)]
    if origin_port is not None:
        command += ["--origin-port", str(origin_port)]
    if not prefetch:
        command.append("--no-prefetch")
    if cancel == "park":
        command.append("--park-scrolled-off")
    elif not cancel:
        command.append("--no-cancel")
    completed = subprocess.run(command)
    if completed.returncode < 0 and strategy in ("S1", "S1-off", "S1-down"):
        # The URLSession baselines can die in swift-corelibs-foundation when a cancel races the
        # task's completion (URLSession.behaviour(for:): "a task that is not in the registry").
        # That is the baseline's platform, not what is measured: run it again once, and say so.
        CRASHES.append(f"{strategy} {memory} MiB: signal {-completed.returncode}, run again")
        print(f"  {strategy} crashed in FoundationNetworking (signal {-completed.returncode}); running it again", file=sys.stderr)
        completed = subprocess.run(command)
    if completed.returncode != 0:
        raise subprocess.CalledProcessError(completed.returncode, command)
    with open(output) as file:
        return json.load(file)


# Baseline runs that crashed and were run again (reported with the results).
CRASHES = []


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round((len(ordered) - 1) * fraction)))]


def pass_figures(record, index):
    metrics = record["frameLoop"]["passes"][index]
    times = metrics["timeToImageMs"]
    return {
        "shown": metrics["cellAppearances"] - metrics["neverShown"],
        "frames": metrics["frames"],
        "framesOver8ms": metrics["framesOver8ms"],
        "framesOver16ms": metrics["framesOver16ms"],
        "longestFrameMs": metrics["longestFrameMs"],
        "missedTicks": metrics["missedTicks"],
        "cellAppearances": metrics["cellAppearances"],
        "shownAtOnce": metrics["shownAtOnce"],
        "neverShown": metrics["neverShown"],
        "blankCellFrames": metrics["blankCellFrames"],
        "timeToImageP50Ms": percentile(times, 0.50),
        "timeToImageP95Ms": percentile(times, 0.95),
        "timeToImageP99Ms": percentile(times, 0.99),
    }


RUN_FIGURES = ["peakResidentMiB", "peakMemoryCacheMiB", "diskMiBAtEnd", "cpuSeconds", "decodes", "serverRequests",
               "serverMiBSent", "serverAbortedResponses"]


def summarize(values):
    values = [value for value in values if value is not None]
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def aggregate(config, records):
    network, strategy, memory, prefetch, cancel = config
    result = {"strategy": strategy, "label": LABELS[strategy], "network": network, "networkLabel": NETWORK_LABELS[network],
              "memoryLimitMiB": memory, "prefetch": prefetch, "cancellation": cancel, "repetitions": len(records),
              "run": {}, "passes": []}
    for name in RUN_FIGURES:
        result["run"][name] = summarize([record[name] for record in records])
    result["run"]["cancellations"] = summarize([record["frameLoop"]["cancellations"] for record in records])
    result["run"]["imagesShown"] = summarize([record["frameLoop"]["imagesShown"] for record in records])
    for index, name in enumerate(["first visit", "revisit", "down again"]):
        figures = [pass_figures(record, index) for record in records]
        result["passes"].append({"pass": index + 1, "name": name,
                                 **{key: summarize([figure[key] for figure in figures]) for key in figures[0]}})
    return result


def machine():
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
    cpu = "unknown"
    with open("/proc/cpuinfo") as file:
        for line in file:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as file:
        memory = int(file.readline().split()[1]) // 1024 // 1024
    return f"{os.cpu_count()} cores ({cpu}), {memory} GiB, {platform.platform()}, {swift}"


def cell(summary, digits=0, unit=""):
    if summary["median"] is None:
        return "–"
    form = f"{{:.{digits}f}}"
    text = form.format(summary["median"]) + unit
    if summary["min"] != summary["max"]:
        text += f" ({form.format(summary['min'])}–{form.format(summary['max'])})"
    return text


def markdown(results, info, repetitions):
    lines = [f"# Cache strategies on a scrolled product grid\n",
             f"Machine: {info}. {PRODUCTS} products (8 photos of 8-15 MP, 1.1-4.2 MB, each product its own URL), "
             f"2 columns, 400 px cells, scroll at 3000 pt/s down, up (revisit), down, resting 0.3 s at each end; "
             f"frame thread at 120 Hz. Time to image counts the cells whose image arrived before they scrolled off. "
             f"Blank cell-frames count, for every 120 Hz tick (ticks an overrunning frame missed included), the cells "
             f"on screen without their image. Every client-side row asks for what the cell shows: the strategies "
             f"that downsample decode an aspect-fill 400×400 square, cropped while decoding. The baselines (S1, S2) "
             f"decode on a queue as wide as the engine's decode limit (one per core), display decodes first, and "
             f"share one download (and decode) between a display load and a prefetch of the same product, as the "
             f"engine does. S6 is a warm relaunch: a first process filled the disk, the measured one starts with "
             f"an empty memory cache. Medians of {repetitions} repetitions, range in parentheses.\n"]

    def table(title, rows, columns):
        if not rows:  # a partial run (--formats, --server-side) has no rows for most tables
            return
        lines.append(f"\n## {title}\n")
        lines.append("| " + " | ".join(name for name, _ in columns) + " |")
        lines.append("|" + "---|" * len(columns))
        for row in rows:
            lines.append("| " + " | ".join(render(row) for _, render in columns) + " |")

    def by(network, memory, prefetch=True, cancel=True):
        return [result for strategy in ORDER for result in results
                if result["strategy"] == strategy and result["network"] == network and result["memoryLimitMiB"] == memory
                and result["prefetch"] == prefetch and result["cancellation"] == cancel]

    revisit = lambda key, digits=0, unit="": (lambda row: cell(row["passes"][1][key], digits, unit))
    first = lambda key, digits=0, unit="": (lambda row: cell(row["passes"][0][key], digits, unit))
    run = lambda key, digits=0, unit="": (lambda row: cell(row["run"][key], digits, unit))
    name = ("strategy", lambda row: row["label"])
    frame_columns = [name,
                     ("frames > 8.3 ms", revisit("framesOver8ms")), ("frames > 16.7 ms", revisit("framesOver16ms")),
                     ("longest frame", revisit("longestFrameMs", 1, " ms")),
                     ("shown at once", revisit("shownAtOnce")), ("never shown", revisit("neverShown")),
                     ("blank cell-frames", revisit("blankCellFrames")),
                     ("time to image p50 / p95 / p99", lambda row: " / ".join(
                         cell(row["passes"][1][key], 1) for key in ("timeToImageP50Ms", "timeToImageP95Ms", "timeToImageP99Ms")) + " ms"),
                     ("memory cache", run("peakMemoryCacheMiB", 1, " MiB")), ("peak RSS", run("peakResidentMiB", 0, " MiB"))]
    table("What each row is made of", [{"strategy": strategy} for strategy in ORDER],
          [("strategy", lambda row: LABELS[row["strategy"]]), ("memory cache holds", lambda row: FACTORS[row["strategy"]][0]),
           ("decoded size", lambda row: FACTORS[row["strategy"]][1]), ("decodes on", lambda row: FACTORS[row["strategy"]][2]),
           ("disk tier", lambda row: FACTORS[row["strategy"]][3])])
    table("Revisit (scrolling back up), no throttle, 128 MiB memory cache", by("none", 128), frame_columns)
    table("First visit, no throttle, 128 MiB", by("none", 128),
          [name, ("frames > 8.3 ms", first("framesOver8ms")), ("frames > 16.7 ms", first("framesOver16ms")),
           ("longest frame", first("longestFrameMs", 1, " ms")), ("shown", first("shown")),
           ("never shown", first("neverShown")), ("time to image p50", first("timeToImageP50Ms", 1, " ms")),
           ("server requests", run("serverRequests")), ("MiB sent", run("serverMiBSent", 0)), ("decodes", run("decodes")),
           ("CPU", run("cpuSeconds", 1, " s")), ("disk", run("diskMiBAtEnd", 0, " MiB"))])
    sweep = [result for strategy in ("S2", "S4", "S5") for memory in (32, 128, 512) for result in by("none", memory)
             if result["strategy"] == strategy]
    table("Memory limits (revisit, no throttle)", sweep,
          [name, ("limit", lambda row: f"{row['memoryLimitMiB']} MiB"), ("shown at once", revisit("shownAtOnce")),
           ("never shown", revisit("neverShown")), ("blank cell-frames", revisit("blankCellFrames")),
           ("frames > 8.3 ms", revisit("framesOver8ms")), ("memory cache", run("peakMemoryCacheMiB", 1, " MiB")),
           ("peak RSS", run("peakResidentMiB", 0, " MiB")), ("server requests", run("serverRequests"))])
    table("Phone network (50 ms, 20 Mbit/s per connection), revisit, 128 MiB", by("phone", 128), frame_columns)
    table("Phone network, one shared link (50 ms, 20 Mbit/s for all connections together), revisit, 128 MiB",
          by("phone-shared", 128), frame_columns)
    table("Phone network, one shared link, first visit, 128 MiB", by("phone-shared", 128),
          [name, ("shown", first("shown")), ("never shown", first("neverShown")),
           ("time to image p50", first("timeToImageP50Ms", 1, " ms")), ("server requests", run("serverRequests")),
           ("MiB sent", run("serverMiBSent", 1)), ("downloads abandoned", run("serverAbortedResponses"))])
    server_side = [row for network in ("phone-shared", "phone", "none") for row in by(network, 128)
                   if row["strategy"] in SERVER_SIDE_ROWS]
    table("Server-side thumbnails (S7, S7' with the default and the fast shrink-on-load) against client-side downsampling (S5), "
          "128 MiB", server_side,
          [name, ("network", lambda row: row["networkLabel"]), ("first visit shown", first("shown")),
           ("revisit shown at once", lambda row: f"{cell(row['passes'][1]['shownAtOnce'])} of {cell(row['passes'][1]['cellAppearances'])}"),
           ("revisit blank cell-frames", revisit("blankCellFrames")), ("revisit time to image p50", revisit("timeToImageP50Ms", 1, " ms")),
           ("MiB sent to the phone", run("serverMiBSent", 1)), ("decodes", run("decodes")), ("CPU", run("cpuSeconds", 1, " s"))])
    for network in ("phone-shared", "phone", "none"):
        pair = {row["strategy"]: row for row in by(network, 128)}
        for variant in SERVER_SIDE_ROWS[1:]:
            if "S5" in pair and variant in pair and pair["S5"]["run"]["serverMiBSent"]["median"]:
                ratio = pair[variant]["run"]["serverMiBSent"]["median"] / pair["S5"]["run"]["serverMiBSent"]["median"]
                lines.append(f"\n{NETWORK_LABELS[network]}: {variant} sends the phone {100 * ratio:.1f}% of the bytes S5 does.")
    formats = [row for network in ("phone-shared", "phone") for row in by(network, 128) if row["strategy"] in FORMAT_ROWS]
    table("Server-side thumbnails by format (S7, warm server): what the phone downloads and shows, 128 MiB", formats,
          [name, ("network", lambda row: row["networkLabel"]), ("MiB sent to the phone", run("serverMiBSent", 2)),
           ("first visit shown", first("shown")), ("first visit time to image p50", first("timeToImageP50Ms", 1, " ms")),
           ("revisit shown at once", lambda row: f"{cell(row['passes'][1]['shownAtOnce'])} of {cell(row['passes'][1]['cellAppearances'])}"),
           ("revisit blank cell-frames", revisit("blankCellFrames")), ("decodes", run("decodes")),
           ("CPU (the phone's decodes)", run("cpuSeconds", 1, " s"))])
    knobs = [result for strategy in ("S1", "S5") for result in results if result["strategy"] == strategy and result["network"] == "phone"
             and result["memoryLimitMiB"] == 128]
    table("Prefetch and cancellation on the fast flick (phone network, 128 MiB, whole trace)", knobs,
          [name, ("prefetch", lambda row: "on" if row["prefetch"] else "off"),
           ("cancellation", lambda row: {True: "on", False: "off", "park": "parked (ScrolledOffTasks)"}[row["cancellation"]]),
           ("server requests", run("serverRequests")), ("MiB sent", run("serverMiBSent", 0)),
           ("downloads abandoned", run("serverAbortedResponses")), ("decodes", run("decodes")),
           ("images shown", run("imagesShown")), ("first visit shown", first("shown")),
           ("revisit blank cell-frames", revisit("blankCellFrames")), ("CPU", run("cpuSeconds", 1, " s"))])
    return "\n".join(lines) + "\n"


def charts(raw, path):
    try:
        import matplotlib
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"], check=True)
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    headline = [(strategy, raw[("none", strategy, 128, True, True)][0]) for strategy in ORDER if ("none", strategy, 128, True, True) in raw]
    colors = plt.get_cmap("tab20")

    figure, axis = plt.subplots(figsize=(12, 5.5))
    for index, (strategy, record) in enumerate(headline):
        passes = record["frameLoop"]["passes"][1]
        times = sorted(passes["timeToImageMs"])
        shown = len(times)
        total = passes["cellAppearances"]
        if not times:
            continue
        xs = [max(t, 0.01) for t in times]
        ys = [(i + 1) / total for i in range(shown)]
        axis.step(xs, ys, where="post", label=f"{LABELS[strategy]} ({shown}/{total} shown)", color=colors(index))
    axis.set_xscale("log")
    axis.axvline(1000 / 120, color="grey", linestyle=":", linewidth=1)
    axis.text(1000 / 120 * 1.05, 0.02, "one frame (8.3 ms)", color="grey", fontsize=8)
    axis.set_xlabel("time from a cell appearing to its image shown (ms, log scale)")
    axis.set_ylabel("fraction of cells that appeared")
    axis.set_ylim(0, 1.02)
    axis.set_title("Revisit (scrolling back up): time to image, 128 MiB, no throttle")
    # Beside the plot: inside it, the legend hid the curves that stay near 0.
    axis.legend(fontsize=7.5, loc="center left", bbox_to_anchor=(1.01, 0.5))
    axis.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(os.path.join(path, "strategies-time-to-image.png"), dpi=110, bbox_inches="tight")
    # The same chart in ImagePipeline's "Choosing a cache strategy" article.
    catalog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Sources", "ImagePipeline", "Documentation.docc", "Resources")
    figure.savefig(os.path.join(catalog, "strategies-time-to-image.png"), dpi=110, bbox_inches="tight")
    plt.close(figure)

    figure, axes = plt.subplots(len(headline), 1, figsize=(9, 1.35 * len(headline) + 0.8), sharex=True)
    for index, (strategy, record) in enumerate(headline):
        frames = record["frameLoop"]["frames"]
        axis = axes[index]
        axis.plot([f[0] for f in frames], [max(f[1], 0.01) for f in frames], linewidth=0.7, color=colors(index))
        axis.set_yscale("log")
        axis.set_ylim(0.01, 2000)
        axis.axhline(1000 / 120, color="red", linestyle=":", linewidth=0.8)
        axis.axhline(1000 / 60, color="orange", linestyle=":", linewidth=0.8)
        axis.set_ylabel("ms", fontsize=8)
        axis.text(0.005, 0.82, LABELS[strategy], transform=axis.transAxes, fontsize=8)
        axis.tick_params(labelsize=7)
    axes[-1].set_xlabel("time in the trace (s): down, up (revisit), down again; dotted: 8.3 and 16.7 ms budgets")
    figure.suptitle("Frame-thread work per frame (log scale), 128 MiB, no throttle", fontsize=10)
    figure.tight_layout()
    figure.savefig(os.path.join(path, "strategies-frame-times.png"), dpi=110)
    plt.close(figure)

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for index, (strategy, record) in enumerate(headline):
        memory = record["frameLoop"]["memory"]
        top.plot([m[0] for m in memory], [m[1] for m in memory], label=LABELS[strategy], color=colors(index), linewidth=1)
        bottom.plot([m[0] for m in memory], [m[2] for m in memory], label=LABELS[strategy], color=colors(index), linewidth=1)
    top.set_ylabel("resident memory (MiB)")
    bottom.set_ylabel("memory-cache cost (MiB)")
    bottom.set_xlabel("time in the trace (s)")
    top.set_title("Memory over the trace, 128 MiB memory-cache limit, no throttle")
    top.legend(fontsize=7.5, ncol=2)
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(os.path.join(path, "strategies-memory.png"), dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="128 MiB only and one repetition (for trying it out)")
    parser.add_argument("--server-side", action="store_true",
                        help="only S5, S7 and S7' (default and fast shrink-on-load) at 128 MiB on every network, "
                             "written to server-side-grid.md and server-side-grid.json")
    parser.add_argument("--formats", action="store_true",
                        help="only the thumbnail formats' rows (S7 in JPEG, WebP, AVIF on the phone's networks), "
                             "written to formats-grid.md and formats-grid.json")
    parser.add_argument("--scrolled-off", action="store_true",
                        help="only S5 on the phone network with scrolled-off requests cancelled, kept and parked "
                             "(ScrolledOffTasks), written to scrolled-off.md and scrolled-off.json")
    arguments = parser.parse_args()
    repetitions = 1 if arguments.quick else arguments.repetitions
    build()
    configs = configurations(arguments.quick)
    name = "strategies"
    if arguments.formats:
        configs = [config for config in configs if config[1] in FORMAT_ROWS and config[0] != "none" and config[3] and config[4]]
        name = "formats-grid"
    elif arguments.scrolled_off:
        configs = [config for config in configs if config[:4] == ("phone", "S5", 128, True)]
        name = "scrolled-off"
    elif arguments.server_side:
        configs = [config for config in configs if config[1] in SERVER_SIDE_ROWS and config[2] == 128 and config[3] and config[4]]
        name = "server-side-grid"
    os.makedirs(RESULTS, exist_ok=True)
    raw = {}
    scratch = tempfile.mkdtemp(prefix="strategies-")
    started = time.time()
    try:
        for network in NETWORKS:
            server, port = start_server(network)
            try:
                selected = [config for config in configs if config[0] == network]
                for repetition in range(repetitions):
                    # Rotate the order each time, so no strategy always runs first or last.
                    shift = (repetition * len(selected)) // max(repetitions, 1)
                    for config in selected[shift:] + selected[:shift]:
                        _, strategy, memory, prefetch, cancel = config
                        cache_dir = tempfile.mkdtemp(dir=scratch)
                        output = os.path.join(cache_dir, "record.json")
                        if strategy == "S6":
                            # Fill the disk in one process, then measure a new one on it: a relaunch.
                            run_one(port, strategy, memory, prefetch, cancel, cache_dir, output)
                        if strategy.startswith("S7"):
                            processes, front_port, origin_port = start_thumbnail_service(network, strategy)
                            try:
                                if strategy not in COLD_ROWS:
                                    # Warm: users before this one asked for every thumbnail
                                    # (the CDN's or serve's cache holds them all).
                                    warm_thumbnails(front_port, origin_port, strategy)
                                record = run_one(front_port, strategy, memory, prefetch, cancel, cache_dir, output, origin_port)
                            finally:
                                for process in processes:
                                    process.kill()
                                    process.wait()
                        else:
                            record = run_one(port, strategy, memory, prefetch, cancel, cache_dir, output)
                        raw.setdefault(config, []).append(record)
                        shutil.rmtree(cache_dir, ignore_errors=True)
                        print(f"  {network:5} {strategy:6} {memory:3} MiB prefetch={prefetch} cancel={cancel} "
                              f"rep {repetition + 1}: revisit frames>8.3ms={record['frameLoop']['passes'][1]['framesOver8ms']} "
                              f"never shown={record['frameLoop']['passes'][1]['neverShown']} ({time.time() - started:.0f} s)",
                              file=sys.stderr)
            finally:
                server.kill()
                server.wait()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results = [aggregate(config, raw[config]) for config in configs if config in raw]
    info = machine()
    with open(os.path.join(RESULTS, f"{name}.json"), "w") as file:
        json.dump({"machine": info, "products": PRODUCTS, "photos": PHOTOS, "repetitions": repetitions,
                   "crashedAndRepeated": CRASHES, "results": results}, file, indent=1)
    report = markdown(results, info, repetitions)
    if CRASHES:
        report += "\nBaseline runs that crashed in FoundationNetworking and were run again: " + "; ".join(CRASHES) + ".\n"
    with open(os.path.join(RESULTS, f"{name}.md"), "w") as file:
        file.write(report)
    if name == "strategies":  # the charts are the whole matrix's: a partial run leaves them alone
        charts(raw, RESULTS)
    print(report)
    print(f"Written to {RESULTS} in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
