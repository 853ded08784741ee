#!/usr/bin/python3
"""Lab stand-in for k3s @VERSION@ (not the real program).

Enough of k3s for the appliance's k3s runtime tasks on a lab VM: `server`
and `agent` run until stopped and tell systemd they are ready (Type=notify)
once their node IP is valid (an agent also needs K3S_URL and K3S_TOKEN, as
the real one); called as kubectl (`get nodes`) or `k3s token create`, it
answers only while a server runs, as the real one answers through the API.
"""
import ipaddress
import json
import os
import secrets
import signal
import socket
import sys
import time

VERSION = "@VERSION@"
STATE = "/run/k3s-standin"
KUBECONFIG = "/etc/rancher/k3s/k3s.yaml"


def fail(msg):
    print("k3s (lab stand-in): " + msg, file=sys.stderr)
    sys.exit(1)


def notify(msg):
    addr = os.environ.get("NOTIFY_SOCKET", "")
    if not addr:
        return
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto(msg.encode(), addr)


def node_ip(args):
    ips = [a.split("=", 1)[1] for a in args if a.startswith("--node-ip=")]
    if len(ips) != 1:
        fail("one --node-ip=<address> wanted, got %r" % args)
    try:
        ipaddress.ip_address(ips[0])
    except ValueError:
        fail("--node-ip=%r: not an IP address" % ips[0])
    return ips[0]


def run(role, args):
    ip = node_ip(args)
    if role == "agent" and not (os.environ.get("K3S_URL") and os.environ.get("K3S_TOKEN")):
        fail("agent: K3S_URL and K3S_TOKEN must be set")
    os.makedirs(STATE, exist_ok=True)
    if role == "server":
        os.makedirs(os.path.dirname(KUBECONFIG), exist_ok=True)
        fd = os.open(KUBECONFIG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("apiVersion: v1\nkind: Config\n# lab stand-in: server https://127.0.0.1:6443\n")
    with open(os.path.join(STATE, role + ".json"), "w") as f:
        json.dump({"pid": os.getpid(), "node_ip": ip, "args": args}, f)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    notify("READY=1\nSTATUS=lab stand-in %s on %s" % (role, ip))
    while True:
        time.sleep(3600)


def server():
    try:
        with open(os.path.join(STATE, "server.json")) as f:
            st = json.load(f)
        os.kill(st["pid"], 0)
        return st
    except (OSError, ValueError, KeyError):
        print("The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?",
              file=sys.stderr)
        sys.exit(1)


def kubectl(args):
    if not os.access(os.environ.get("KUBECONFIG", KUBECONFIG), os.R_OK):
        fail("kubectl: no readable kubeconfig")
    if args[:2] != ["get", "nodes"]:
        fail("kubectl: only `get nodes` is implemented: %r" % args)
    server()
    if "--no-headers" not in args:
        print("NAME   STATUS   ROLES                  AGE   VERSION")
    print("%s   Ready    control-plane,master   1m    %s" % (socket.gethostname(), VERSION))


def main():
    name = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if name == "k3s" and args:
        name, args = args[0], args[1:]
    if name in ("--version", "-v", "version"):
        print("k3s version %s (lab stand-in)" % VERSION)
    elif name in ("server", "agent"):
        run(name, args)
    elif name == "kubectl":
        kubectl(args)
    elif name == "token" and args[:1] == ["create"]:
        server()
        print("%s.%s" % (secrets.token_hex(3), secrets.token_hex(8)))
    else:
        fail("not implemented: %s %s" % (name, " ".join(args)))


main()
