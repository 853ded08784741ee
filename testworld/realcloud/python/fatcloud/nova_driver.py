"""Nova's FakeDriver with real snapshot uploads and a spawn-failure switch."""

import io
import os

from nova import exception
from nova.compute import task_states
from nova.image import glance
from nova.virt import fake

# A server whose metadata has this key set to "true" fails to spawn, the way
# a hypervisor error fails it: Nova puts it in ERROR (the tier runs with
# max_attempts = 1, so there is no reschedule).
FAIL_SPAWN_KEY = "realcloud_fail_spawn"

# Where each server's "disk" lives: a copy of its image's bytes, so that a
# snapshot holds what the server booted from. Set by the tier's nova.conf
# environment (FATCLOUD_DISK_DIR); a temporary directory is not used so a
# restarted nova-compute still finds the disks.
DISK_DIR_ENV = "FATCLOUD_DISK_DIR"


def should_fail(metadata):
    """Whether a server's metadata asks for a spawn failure."""
    return str((metadata or {}).get(FAIL_SPAWN_KEY, "")).lower() == "true"


def snapshot_bytes(disk_path, instance_uuid):
    """The bytes a snapshot uploads: the server's disk when it has one (a
    server booted from an image), else a marker naming the server (booted
    from a volume: Cinder holds its disk)."""
    if disk_path and os.path.exists(disk_path):
        with open(disk_path, "rb") as f:
            return f.read()
    return ("fatcloud snapshot of %s\n" % instance_uuid).encode()


class SnapshotFakeDriver(fake.FakeDriver):
    """FakeDriver whose snapshots are real Glance uploads."""

    def _disk_path(self, instance):
        base = os.environ.get(DISK_DIR_ENV)
        if not base:
            return None
        return os.path.join(base, instance.uuid)

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        if should_fail(instance.metadata):
            raise exception.InstanceDeployFailure(
                reason="%s is set in the server's metadata" % FAIL_SPAWN_KEY)
        path = self._disk_path(instance)
        image_id = image_id_of(image_meta)
        if path and image_id and not boots_from_volume(block_device_info):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            glance.API().download(context, image_id, dest_path=path)
        super().spawn(context, instance, image_meta, injected_files,
                      admin_password, allocations, network_info=network_info,
                      block_device_info=block_device_info, power_on=power_on,
                      accel_info=accel_info)

    def snapshot(self, context, instance, image_id, update_task_state):
        if instance.uuid not in self.instances:
            raise exception.InstanceNotRunning(instance_id=instance.uuid)
        update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
        data = snapshot_bytes(self._disk_path(instance), instance.uuid)
        meta = {"disk_format": "raw", "container_format": "bare"}
        update_task_state(task_state=task_states.IMAGE_UPLOADING,
                          expected_state=task_states.IMAGE_PENDING_UPLOAD)
        glance.API().update(context, image_id, meta, io.BytesIO(data),
                            purge_props=False)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        path = self._disk_path(instance)
        if destroy_disks and path and os.path.exists(path):
            os.unlink(path)
        super().destroy(context, instance, network_info,
                        block_device_info=block_device_info,
                        destroy_disks=destroy_disks,
                        destroy_secrets=destroy_secrets)


def image_id_of(image_meta):
    """The image a server boots from, None when it boots from a volume:
    then Nova's ImageMeta has no id set, and reading it raises (an
    unset field of a versioned object is not None)."""
    if image_meta is None or not image_meta.obj_attr_is_set("id"):
        return None
    return image_meta.id


def boots_from_volume(block_device_info):
    return bool(block_device_info and block_device_info.get("root_device_name")
                and block_device_info.get("block_device_mapping"))
