#!/usr/bin/env python3
"""A TCP relay whose connections can be frozen: the network path of a half-open link.

    freeze_proxy.py LISTEN_PORT TARGET_PORT

Relays 127.0.0.1:LISTEN_PORT to 127.0.0.1:TARGET_PORT. On SIGUSR1 every connection open at that
moment stops moving bytes in both directions while its sockets stay open (no FIN, no RST), as when
a switch or a peer machine vanishes; connections made afterwards are relayed normally.
"""
import selectors
import signal
import socket
import sys

listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector()
peers = {}      # socket -> the socket it relays to
frozen = set()  # sockets that no longer move bytes


def freeze(_signum, _frame):
    for s in list(peers):
        frozen.add(s)
        try:
            sel.unregister(s)
        except (KeyError, ValueError):
            pass


signal.signal(signal.SIGUSR1, freeze)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen()
sel.register(server, selectors.EVENT_READ)
print("ready", flush=True)


def close(s):
    for x in (s, peers.get(s)):
        if x is None or x in frozen:
            continue
        try:
            sel.unregister(x)
        except (KeyError, ValueError):
            pass
        x.close()
        peers.pop(x, None)


while True:
    try:
        events = sel.select()
    except InterruptedError:
        continue
    for key, _ in events:
        s = key.fileobj
        if s is server:
            client, _ = server.accept()
            upstream = socket.create_connection(("127.0.0.1", target_port))
            peers[client], peers[upstream] = upstream, client
            sel.register(client, selectors.EVENT_READ)
            sel.register(upstream, selectors.EVENT_READ)
            continue
        if s in frozen:
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            close(s)
            continue
        try:
            peers[s].sendall(data)
        except OSError:
            close(s)
