"""Refuse every network connection except to this machine, in Pythons the tests start.

conftest.py puts this folder on PYTHONPATH, so every notebook kernel that nbval
starts, and every script a test runs, imports it at start-up: a chapter or a
loader that reached for the network (a model hub, a dataset mirror) would fail
loudly instead of depending on a connection. Loopback and Unix sockets stay open:
kernels and torch.distributed talk to this machine.
"""

import ipaddress
import socket

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo
LOCAL_NAMES = {None, "", "localhost", "localhost.localdomain", socket.gethostname()}


def _is_local_host(host):
    if isinstance(host, bytes):
        host = host.decode()
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(address):
    if isinstance(address, (str, bytes)):  # a Unix socket's path
        return
    if not _is_local_host(address[0]):
        raise OSError(f"network access is blocked while the book is tested: {address!r}")


def connect(self, address):
    _check(address)
    return _connect(self, address)


def connect_ex(self, address):
    _check(address)
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    if not _is_local_host(host):
        raise socket.gaierror(f"name lookup is blocked while the book is tested: {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo
