#!/usr/bin/python3
# ansible-init stand-in (fatlab): honours meta.ansible_init_disable.
import json, os, sys, time, urllib.request
URL = "http://169.254.169.254/openstack/latest/meta_data.json"
SENTINEL = "/var/lib/ansible-init.done"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
md, last = None, None
for _ in range(50):
    try:
        with opener.open(URL, timeout=2) as r:
            md = json.load(r)
        break
    except Exception as e:
        last = e
        time.sleep(0.1)
if md is None:
    print("ansible-init: cannot fetch metadata: %s" % last, flush=True)
    sys.exit(1)
meta = md.get("meta") or {}
if str(meta.get("ansible_init_disable", "")).strip().lower() == "true":
    print("ansible-init: disabled by metadata (ansible_init_disable=true); exiting", flush=True)
    sys.exit(0)
if os.path.exists(SENTINEL):
    print("ansible-init: already ran (%s exists)" % SENTINEL, flush=True)
    sys.exit(0)
print("ansible-init: running playbooks (stand-in)", flush=True)
with open(SENTINEL + ".tmp", "w") as f:
    f.write(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
os.rename(SENTINEL + ".tmp", SENTINEL)
print("ansible-init: done; wrote " + SENTINEL, flush=True)
