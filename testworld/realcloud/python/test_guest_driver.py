"""Unit tests of guest_driver's own logic; what it does inside real Nova
(a guest booted, stopped, snapshotted) is what TestGuestSSHBuild checks."""

import http.server
import os
import socketserver
import subprocess
import tempfile
import threading
import unittest


class _Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Handler(http.server.BaseHTTPRequestHandler):
    def address_string(self):
        return "guests"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/servers/known":
            body, ctype, status = b'{"power": "shutdown"}', "application/json", 200
        elif self.path == "/servers/known/console":
            body, ctype, status = b"login: ", "text/plain", 200
        else:
            body, ctype, status = b"no such guest", "text/plain", 404
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class GuestDriverTest(unittest.TestCase):
    def setUp(self):
        from fatcloud import guest_driver
        self.d = guest_driver
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_is_ext4(self):
        fs = os.path.join(self.tmp.name, "fs")
        with open(fs, "wb") as f:
            f.truncate(4 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", fs], check=True)
        self.assertTrue(self.d.is_ext4(fs))
        other = os.path.join(self.tmp.name, "other")
        with open(other, "wb") as f:
            f.write(b"fatimage realcloud base image\n" + b"\0" * (1 << 20))
        self.assertFalse(self.d.is_ext4(other))
        self.assertFalse(self.d.is_ext4(os.path.join(self.tmp.name, "none")))

    def test_first_ipv4(self):
        from nova.network import model
        v6 = model.FixedIP(address="fd00::5", version=6)
        v4 = model.FixedIP(address="10.42.0.7", version=4)
        v4net = model.Subnet(cidr="10.42.0.0/24", ips=[v4],
                             dhcp_server="10.42.0.2")
        vif = model.VIF(id="p1", address="fa:16:3e:00:00:07",
                        devname="tapp1", network=model.Network(
                            bridge="brq0a15ad13-0d",
                            subnets=[model.Subnet(cidr="fd00::/64", ips=[v6]),
                                     v4net]))
        self.assertEqual(self.d.first_ipv4(model.NetworkInfo([vif])), {
            "fixed_ip": "10.42.0.7", "mac": "fa:16:3e:00:00:07",
            "tap": "tapp1", "bridge": "brq0a15ad13-0d", "dhcp": True})
        self.assertIsNone(self.d.first_ipv4(None))

    def test_root_volume_path(self):
        vol = {"mount_device": "/dev/vda", "boot_index": 0,
               "connection_info": {"driver_volume_type": "local",
                                   "data": {"device_path": "/v/vol-1"}}}
        other = {"mount_device": "/dev/vdb", "boot_index": None,
                 "connection_info": {"data": {"device_path": "/v/vol-2"}}}
        bdi = {"root_device_name": "/dev/vda", "ephemerals": [],
               "block_device_mapping": [other, vol]}
        self.assertEqual(self.d.root_volume_path(bdi), "/v/vol-1")
        # a server from an image: no root volume, a data volume or not
        self.assertIsNone(self.d.root_volume_path(None))
        self.assertIsNone(self.d.root_volume_path(
            {"root_device_name": "/dev/vda", "block_device_mapping": []}))
        self.assertIsNone(self.d.root_volume_path(
            {"root_device_name": "/dev/vda", "block_device_mapping": [other]}))

    def test_vif_plugged_events(self):
        from nova.network import model
        waiting = model.VIF(id="p1", active=False)
        plugged = model.VIF(id="p2", active=True)
        self.d.CONF.set_override("vif_plugging_timeout", 120)
        self.addCleanup(self.d.CONF.clear_override, "vif_plugging_timeout")
        self.assertEqual(self.d.vif_plugged_events([waiting, plugged]),
                         [("network-vif-plugged", "p1")])
        self.d.CONF.set_override("vif_plugging_timeout", 0)
        self.assertEqual(self.d.vif_plugged_events([waiting]), [])

    def test_log_unplugged(self):
        from unittest import mock
        from nova.network import model
        self.d.CONF.set_override("vif_plugging_timeout", 120)
        self.addCleanup(self.d.CONF.clear_override, "vif_plugging_timeout")
        client = mock.Mock()
        client.show_port.side_effect = [
            {"port": {"status": "DOWN", "binding:host_id": "realcloud",
                      "binding:vif_type": "bridge"}},
            Exception("port gone")]
        with mock.patch.object(self.d.neutron, "get_client",
                               return_value=client), \
                mock.patch.object(self.d, "LOG") as log:
            self.d.log_unplugged(None, [model.VIF(id="p1", active=False),
                                        model.VIF(id="p2", active=True),
                                        model.VIF(id="p3", active=False)])
        # only the ports not yet ACTIVE; a failed lookup is logged too
        first, second = log.error.call_args_list
        self.assertEqual(first.args[1:], ("p1", "DOWN", "realcloud", "bridge"))
        self.assertEqual((second.args[1], str(second.args[2])), ("p3", "port gone"))

    def test_call(self):
        sock = os.path.join(self.tmp.name, "guests.sock")
        srv = _Unix(sock, _Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.shutdown)
        os.environ[self.d.SOCKET_ENV] = sock
        self.assertEqual(self.d.call("GET", "/servers/known"), {"power": "shutdown"})
        self.assertEqual(self.d.call("GET", "/servers/known/console"), b"login: ")
        with self.assertRaises(self.d.GuestError) as e:
            self.d.call("GET", "/servers/unknown")
        self.assertEqual(e.exception.status, 404)
        self.assertEqual(self.d.POWER_STATES["shutdown"], 4)  # libvirt's SHUTDOWN


if __name__ == "__main__":
    unittest.main()
