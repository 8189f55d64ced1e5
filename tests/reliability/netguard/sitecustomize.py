# Loaded by every Python process of the no-network test (PYTHONPATH points here), the app's
# benchmark child included: records any attempt to open a network socket or resolve a name,
# and refuses it.
import os
import socket
import sys

_LOG = os.environ.get("ADVISOR_NETGUARD_LOG")
_NET = {getattr(socket, "AF_INET", 2), getattr(socket, "AF_INET6", 10)}


def _hook(event, args):
    if event in (
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "urllib.Request",
    ) or (event == "socket.__new__" and args and args[1] in _NET):
        if _LOG:
            with open(_LOG, "a", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()} {event} {args!r:.200}\n")
        raise PermissionError(f"network access blocked by the test: {event}")


sys.addaudithook(_hook)
