"""Ports handed to stages: free, never twice, and outside the range the kernel picks outgoing ports from."""

import socket

from services.cli import mesh


def test_ports_are_free_distinct_and_not_ephemeral():
    low, high = mesh._ephemeral_range()
    ports = [mesh.free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert not any(low <= p <= high for p in ports)
    for port in ports[:5]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # still free: nothing holds it after the check


def test_a_port_in_use_is_never_handed_out(monkeypatch):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        taken = busy.getsockname()[1]
        # Only the taken port and one free one to choose from: the taken one must be skipped.
        monkeypatch.setattr(mesh, "_ephemeral_range", lambda: (taken + 1000, 65535))  # taken lies below it
        choices = iter([taken, taken, taken + 1])
        monkeypatch.setattr(mesh._ports, "randint", lambda lo, hi: next(choices))
        assert mesh.free_port() == taken + 1
