"""TCP ports on this machine: whether one is free, and a free one (the local server, `airflow up`)."""

from __future__ import annotations

import socket


def port_free(port: int) -> bool:
    """Nothing listens on ``port`` on 127.0.0.1. Bound as the servers bind (SO_REUSEADDR), so a port
    whose connections closed a moment ago (TIME_WAIT) counts as free again."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port nothing listens on now, chosen by the kernel."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
