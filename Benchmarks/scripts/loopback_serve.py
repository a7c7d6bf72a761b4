"""A loopback origin serving one directory, and `image-engine serve` allowed to fetch from it:
what the benchmark scripts that drive `serve` over HTTP share."""
import contextlib
import os
import subprocess
import threading
import urllib.request
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(engine, directory, arguments=(), env=None, port_base=18000):
    """Starts the origin on `directory` and `engine serve` (with `arguments`, in `env`) on a port
    from `port_base` up, waits for its /health, and yields (origin port, serve port); both are
    stopped on the way out, whatever happened."""
    origin = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=directory))
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    port = port_base + os.getpid() % 1000
    server = subprocess.Popen([engine, "serve", "--bind", f"127.0.0.1:{port}", "--allow-private-sources", *arguments], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                threading.Event().wait(0.1)
        yield origin.server_port, port
    finally:
        server.terminate()
        server.wait()
        origin.shutdown()
