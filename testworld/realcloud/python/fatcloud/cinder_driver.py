"""A Cinder volume driver whose volumes are sparse files.

The machine has no LVM, iSCSI or Ceph (and LVM needs device-mapper, which
a container does not have): a volume is a file under the backend's
`fatcloud_volume_dir`. Attachments hand out the file's path; Nova's fake
driver never opens it.
"""

import os
import shutil

from oslo_config import cfg

from cinder import exception
from cinder.volume import driver

OPTS = [
    cfg.StrOpt("fatcloud_volume_dir", help="Directory holding the volume files."),
    cfg.IntOpt("fatcloud_capacity_gb", default=1000, help="Capacity reported to the scheduler."),
]

GIB = 1024 ** 3


def volume_file(base, volume_id):
    """The file of a volume (or snapshot) id below base."""
    if not volume_id or "/" in volume_id or volume_id.startswith("."):
        raise ValueError("bad volume id %r" % volume_id)
    return os.path.join(base, volume_id)


def write_sparse(path, size_gb):
    """Create (or grow) path to size_gb GiB without writing data."""
    with open(path, "ab") as f:
        if f.tell() < size_gb * GIB:
            f.truncate(size_gb * GIB)


class FileVolumeDriver(driver.VolumeDriver):
    """Volumes as files."""

    VERSION = "1.0.0"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.configuration.append_config_values(OPTS)
        self._dir = None

    def do_setup(self, context):
        self._dir = self.configuration.fatcloud_volume_dir
        if not self._dir:
            raise exception.InvalidConfigurationValue(option="fatcloud_volume_dir", value="")
        os.makedirs(self._dir, exist_ok=True)

    def check_for_setup_error(self):
        if not os.access(self._dir, os.W_OK):
            raise exception.VolumeBackendAPIException(data="%s is not writable" % self._dir)

    def _path(self, volume_or_snapshot):
        return volume_file(self._dir, volume_or_snapshot.id)

    def create_volume(self, volume):
        write_sparse(self._path(volume), volume.size)
        return {}

    def delete_volume(self, volume):
        try:
            os.unlink(self._path(volume))
        except FileNotFoundError:
            pass

    def extend_volume(self, volume, new_size):
        write_sparse(self._path(volume), new_size)

    def create_cloned_volume(self, volume, src_vref):
        shutil.copyfile(self._path(src_vref), self._path(volume))
        write_sparse(self._path(volume), volume.size)
        return {}

    def create_snapshot(self, snapshot):
        shutil.copyfile(volume_file(self._dir, snapshot.volume_id), self._path(snapshot))

    def delete_snapshot(self, snapshot):
        try:
            os.unlink(self._path(snapshot))
        except FileNotFoundError:
            pass

    def create_volume_from_snapshot(self, volume, snapshot):
        shutil.copyfile(self._path(snapshot), self._path(volume))
        write_sparse(self._path(volume), volume.size)
        return {}

    def copy_image_to_volume(self, context, volume, image_service, image_id, **kwargs):
        # The image's bytes, as they are: the tier's images are raw.
        path = self._path(volume)
        with open(path, "r+b") as f:
            image_service.download(context, image_id, f)
        write_sparse(path, volume.size)

    def copy_volume_to_image(self, context, volume, image_service, image_meta):
        with open(self._path(volume), "rb") as f:
            image_service.update(context, image_meta["id"], {}, f)

    def create_export(self, context, volume, connector):
        return None

    def ensure_export(self, context, volume):
        return None

    def remove_export(self, context, volume):
        return None

    def initialize_connection(self, volume, connector):
        return {"driver_volume_type": "local", "data": {"device_path": self._path(volume)}}

    def terminate_connection(self, volume, connector, **kwargs):
        return None

    def _update_volume_stats(self):
        cap = self.configuration.fatcloud_capacity_gb
        self._stats = {
            "volume_backend_name": self.configuration.safe_get("volume_backend_name") or "file",
            "vendor_name": "fatimage",
            "driver_version": self.VERSION,
            "storage_protocol": "local",
            "total_capacity_gb": cap,
            "free_capacity_gb": cap,
            "reserved_percentage": 0,
            "thin_provisioning_support": True,
            "multiattach": False,
        }

    def get_volume_stats(self, refresh=False):
        if refresh or not self._stats:
            self._update_volume_stats()
        return self._stats
