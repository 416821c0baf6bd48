"""Loopback ports for the benchmarks' own servers (capacity.py, soak.py)."""
import socket, time


def free_port():
    """A port nothing listens on now; the server started next binds it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=15):
    """Returns once something accepts on `port`; SystemExit after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{port}: nothing listens there after {timeout} s")
