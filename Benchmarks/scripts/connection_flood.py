#!/usr/bin/env python3
"""How long /health takes while hostile clients hold every connection `serve` allows.

Starts `BINARY serve --unsafe` on loopback with its default --max-connections (2048), opens
that many connections that never finish a request — a third trickle a body after its 400
(and on through the server's lingering close), a third trickle a head (slowloris), a third
connect and say nothing — and trickles a byte into each every 200 ms (each byte restarts an
idle timer). Meanwhile a client asks for /health on a
new connection every 0.5 s and records how long the answer took (a timeout of 30 s counts as
30 s). Hostile clients that are closed reconnect at once, as an attacker would.

Usage: connection_flood.py --binary .build/release/image-engine [--connections N] [--seconds S]
Prints one JSON line: /health latencies (median, p90, max, timeouts) and how many hostile
connections the server closed.
"""
import argparse
import json
import resource
import selectors
import socket
import statistics
import subprocess
import threading
import time

KINDS = [
    b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nx",  # body after its 400
    b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ",  # a head that never ends
    b"",  # silent
]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--connections", type=int, default=2048)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    server = subprocess.Popen(
        [args.binary, "serve", "--unsafe", "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        closed = 0
        lingering = []
        stop = threading.Event()
        selector = selectors.DefaultSelector()

        def open_hostile(index):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, [index % 3, False])

        def hostile():
            for index in range(args.connections):
                open_hostile(index)
            last_trickle = time.monotonic()
            while not stop.is_set():
                for key, events in selector.select(timeout=0.05):
                    sock, state = key.fileobj, key.data
                    if events & selectors.EVENT_WRITE and not state[1]:
                        try:
                            sock.send(KINDS[state[0]])
                        except OSError:
                            pass
                        state[1] = True
                        selector.modify(sock, selectors.EVENT_READ, state)
                    elif events & selectors.EVENT_READ:
                        try:
                            data = sock.recv(65536)
                        except OSError:
                            data = None
                        if data == b"":
                            # The server's half of a lingering close: it still reads, so the
                            # client keeps the socket and goes on trickling.
                            selector.unregister(sock)
                            lingering.append((sock, state))
                        elif data is None:
                            gone(sock, state, registered=True)
                if time.monotonic() - last_trickle >= 0.2:
                    last_trickle = time.monotonic()
                    for key in list(selector.get_map().values()):
                        if key.data[1] and key.data[0] != 2:
                            trickle(key.fileobj, key.data, registered=True)
                    for sock, state in list(lingering):
                        trickle(sock, state, registered=False)

        def trickle(sock, state, registered):
            try:
                sock.send(b"x")
            except OSError:
                gone(sock, state, registered)

        def gone(sock, state, registered):
            # Reset or closed by the server: an attacker connects again at once.
            nonlocal closed
            closed += 1
            if registered:
                selector.unregister(sock)
            else:
                lingering.remove((sock, state))
            sock.close()
            open_hostile(state[0])

        flood = threading.Thread(target=hostile)
        flood.start()
        time.sleep(3)  # let the flood fill the slots
        latencies, timeouts = [], 0
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            started = time.monotonic()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
                    client.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    answer = client.recv(64)
                    if not answer.startswith(b"HTTP/1.1 200"):
                        raise OSError(answer)
                latencies.append(time.monotonic() - started)
            except OSError:
                timeouts += 1
                latencies.append(30.0)
            time.sleep(max(0, 0.5 - (time.monotonic() - started)))
        stop.set()
        flood.join()
        latencies.sort()
        print(json.dumps({
            "connections": args.connections,
            "health_requests": len(latencies),
            "median_ms": round(statistics.median(latencies) * 1000, 1),
            "p90_ms": round(latencies[int(len(latencies) * 0.9) - 1] * 1000, 1),
            "max_ms": round(latencies[-1] * 1000, 1),
            "timeouts": timeouts,
            "hostile_closed_by_server": closed,
        }))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
