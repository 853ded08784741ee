"""A Nova compute driver whose servers are real guests: the lab's namespace
VMs (systemd, sshd, cloud-init), run by the tier's guest host
(testworld/realcloud/guests) and driven over its API on a Unix socket.

A server boots as a guest when its image is an ext4 filesystem (the lab's
disk format: the guest base image and every snapshot of a guest), or its
boot volume's file (fatcloud.cinder_driver's) holds one; any other image
keeps SnapshotFakeDriver's behaviour (no guest), so the tier's API tests
run as before.
"""

import http.client
import json
import os
import shutil
import socket

import eventlet
from nova import conf
from nova import exception
from nova.api.metadata import base as instance_metadata
from nova.compute import power_state
from nova.compute import task_states
from nova.image import glance
from nova.network import neutron
from nova.virt import configdrive
from nova.virt import hardware
from oslo_log import log as logging

from fatcloud import nova_driver

LOG = logging.getLogger(__name__)

CONF = conf.CONF

# The guest host's API socket, from the tier's environment (up.sh).
SOCKET_ENV = "FATCLOUD_GUEST_SOCKET"

# The guest host's power states as libvirt's driver reports them to Nova.
POWER_STATES = {
    "running": power_state.RUNNING,
    "shutdown": power_state.SHUTDOWN,
    "crashed": power_state.CRASHED,
}

# ext4's superblock starts at byte 1024; its magic is at offset 56 in it.
EXT4_MAGIC_AT, EXT4_MAGIC = 1024 + 56, b"\x53\xef"


def is_ext4(path):
    """Whether the file at path is an ext4 filesystem (a lab disk)."""
    try:
        with open(path, "rb") as f:
            f.seek(EXT4_MAGIC_AT)
            return f.read(2) == EXT4_MAGIC
    except OSError:
        return False


class GuestError(Exception):
    def __init__(self, status, text):
        super().__init__("guest host answered %s: %s" % (status, text))
        self.status = status


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("guests", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def call(method, path, body=None, timeout=300):
    """One request to the guest host: the answer's body (JSON decoded
    unless text); GuestError for anything but 200."""
    conn = _UnixConnection(os.environ[SOCKET_ENV], timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read()
        if resp.status != 200:
            raise GuestError(resp.status, text.decode(errors="replace"))
        if resp.getheader("Content-Type", "").startswith("application/json"):
            return json.loads(text)
        return text
    finally:
        conn.close()


def first_ipv4(network_info):
    """How the guest joins the network of its first IPv4 address: the
    address, its VIF's MAC, the tap Nova names for it, the bridge the VIF
    names (the Linux bridge agent's brq<network id>, where libvirt would
    plug the tap) and whether the subnet has a DHCP server (the guest
    takes the address from it); None without one."""
    for vif in network_info or []:
        for subnet in vif["network"]["subnets"]:
            for ip in subnet["ips"]:
                if ip["version"] == 4:
                    return {"fixed_ip": ip["address"], "mac": vif["address"],
                            "tap": vif["devname"],
                            "bridge": vif["network"]["bridge"],
                            "dhcp": bool(subnet.get_meta("dhcp_server"))}
    return None


def root_volume_path(block_device_info):
    """The file of the volume a server boots from (the device_path of
    FileVolumeDriver's connection), None when it boots from an image."""
    if not nova_driver.boots_from_volume(block_device_info):
        return None
    root = block_device_info["root_device_name"]
    for bdm in block_device_info["block_device_mapping"]:
        if bdm.get("mount_device") == root or bdm.get("boot_index") == 0:
            data = (bdm.get("connection_info") or {}).get("data") or {}
            return data.get("device_path")
    return None


def instance_dir(instance):
    """The server's directory below instances_path, as libvirt's driver
    keeps its config drive there."""
    return os.path.join(CONF.instances_path, instance.uuid)


def vif_plugged_events(network_info):
    """The network-vif-plugged events a spawn waits for, as libvirt's
    driver does: one per port Neutron has not yet reported ACTIVE, none
    when vif_plugging_timeout is 0."""
    if not CONF.vif_plugging_timeout:
        return []
    return [("network-vif-plugged", vif["id"]) for vif in network_info or []
            if vif.get("active", True) is False]


def log_unplugged(context, network_info):
    """Logs each port a spawn waited for in vain with what Neutron says of
    it (status, binding): whether the Linux bridge agent or the DHCP agent
    held it back shows in neutron's logs at that port."""
    client = neutron.get_client(context, admin=True)
    for _, port_id in vif_plugged_events(network_info):
        try:
            p = client.show_port(port_id)["port"]
            LOG.error("no network-vif-plugged for port %s: status %s, "
                      "binding host %s, vif_type %s", port_id, p["status"],
                      p.get("binding:host_id"), p.get("binding:vif_type"))
        except Exception as e:  # the diagnosis must not hide the failure
            LOG.error("no network-vif-plugged for port %s (%s)", port_id, e)


class GuestDriver(nova_driver.SnapshotFakeDriver):
    """SnapshotFakeDriver whose servers from a lab disk are real guests."""

    def _guest(self, instance):
        """The guest host's view of the server, None when not a guest."""
        try:
            return call("GET", "/servers/%s" % instance.uuid)
        except GuestError as e:
            if e.status == 404:
                return None
            raise

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        super().spawn(context, instance, image_meta, injected_files,
                      admin_password, allocations, network_info=network_info,
                      block_device_info=block_device_info, power_on=power_on,
                      accel_info=accel_info)
        # A boot volume is the guest's disk: the guest host boots from its
        # file and writes what the guest wrote back into it.
        volume = root_volume_path(block_device_info)
        path = volume or self._disk_path(instance)
        if not (path and is_ext4(path)):
            return
        net = first_ipv4(network_info)
        if net is None:
            raise exception.InstanceDeployFailure(
                reason="a guest needs an IPv4 address on its port")
        checksum = (image_meta.checksum if not volume and
                    image_meta.obj_attr_is_set("checksum") else "")
        spec = dict(net, uuid=instance.uuid, name=instance.display_name,
                    hostname=instance.hostname,
                    project_id=instance.project_id, image=path,
                    volume=volume or "",
                    disk_format="raw", checksum=checksum or "",
                    config_drive=self._config_drive(
                        instance, injected_files, admin_password,
                        network_info))
        # Like libvirt's driver, the spawn ends once Neutron says the
        # agent plugged the port (the server turns ACTIVE after that).
        try:
            with self.virtapi.wait_for_instance_event(
                    instance, vif_plugged_events(network_info),
                    deadline=CONF.vif_plugging_timeout,
                    error_callback=self._vif_failed):
                call("POST", "/servers", spec)
        except GuestError as e:
            raise exception.InstanceDeployFailure(reason=str(e))
        except eventlet.timeout.Timeout:
            log_unplugged(context, network_info)
            call("DELETE", "/servers/%s" % instance.uuid)
            if CONF.vif_plugging_is_fatal:
                raise exception.VirtualInterfaceCreateException()

    @staticmethod
    def _config_drive(instance, injected_files, admin_password,
                      network_info):
        """The server's config drive when it needs one (config_drive, or
        force_config_drive), built as libvirt's driver builds disk.config:
        Nova's ConfigDriveBuilder writes an ISO 9660 image labelled
        config-2 with genisoimage; "" without one."""
        if not configdrive.required_by(instance):
            return ""
        path = os.path.join(instance_dir(instance), "disk.config")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        extra_md = {"admin_pass": admin_password} if admin_password else {}
        inst_md = instance_metadata.InstanceMetadata(
            instance, content=injected_files, extra_md=extra_md,
            network_info=network_info)
        with configdrive.ConfigDriveBuilder(instance_md=inst_md) as cdb:
            cdb.make_drive(path)
        return path

    @staticmethod
    def _vif_failed(event_name, instance):
        # Neutron reported the port failed (status ERROR), as libvirt's
        # driver handles it.
        if CONF.vif_plugging_is_fatal:
            raise exception.VirtualInterfaceCreateException()

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        if self._guest(instance) is not None:
            call("DELETE", "/servers/%s" % instance.uuid)
        shutil.rmtree(instance_dir(instance), ignore_errors=True)
        super().destroy(context, instance, network_info,
                        block_device_info=block_device_info,
                        destroy_disks=destroy_disks,
                        destroy_secrets=destroy_secrets)

    def _act(self, instance, action, timeout=0):
        if self._guest(instance) is None:
            return False
        call("POST", "/servers/%s/action" % instance.uuid,
             {"action": action, "timeout": timeout})
        return True

    def power_off(self, instance, timeout=0, retry_interval=0):
        # timeout 0: at once (a forced stop); else a clean shutdown that
        # turns into a hard one after timeout seconds, as libvirt's does.
        self._act(instance, "stop", timeout)
        super().power_off(instance, timeout, retry_interval)

    def power_on(self, context, instance, network_info,
                 block_device_info=None, accel_info=None):
        self._act(instance, "start")
        super().power_on(context, instance, network_info,
                         block_device_info=block_device_info,
                         accel_info=accel_info)

    def reboot(self, context, instance, network_info, reboot_type,
               block_device_info=None, bad_volumes_callback=None,
               accel_info=None):
        if not self._act(instance, "reboot_hard"
                         if reboot_type == "HARD" else "reboot"):
            super().reboot(context, instance, network_info, reboot_type,
                           block_device_info=block_device_info,
                           bad_volumes_callback=bad_volumes_callback,
                           accel_info=accel_info)

    def get_info(self, instance, use_cache=True):
        g = self._guest(instance)
        if g is None:
            return super().get_info(instance, use_cache=use_cache)
        return hardware.InstanceInfo(
            state=POWER_STATES.get(g["power"], power_state.NOSTATE))

    def get_console_output(self, context, instance):
        if self._guest(instance) is None:
            return super().get_console_output(context, instance)
        return call("GET", "/servers/%s/console" % instance.uuid)

    def snapshot(self, context, instance, image_id, update_task_state):
        if self._guest(instance) is None:
            return super().snapshot(context, instance, image_id,
                                    update_task_state)
        update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
        out = "%s.snapshot-%s" % (self._disk_path(instance), image_id)
        try:
            call("POST", "/servers/%s/export" % instance.uuid,
                 {"path": out, "disk_format": "raw"})
            update_task_state(task_state=task_states.IMAGE_UPLOADING,
                              expected_state=task_states.IMAGE_PENDING_UPLOAD)
            meta = {"disk_format": "raw", "container_format": "bare"}
            with open(out, "rb") as data:
                glance.API().update(context, image_id, meta, data,
                                    purge_props=False)
        finally:
            if os.path.exists(out):
                os.unlink(out)
