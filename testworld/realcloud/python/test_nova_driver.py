"""Unit tests of the fatcloud drivers' own logic (run by make
test-realcloud, one file per process: Nova and Cinder share oslo.config's
global options and cannot be imported together). What the drivers do
inside the real services is what testworld/realcloud's Go tests check.
"""

import os
import tempfile
import unittest


class NovaDriverTest(unittest.TestCase):
    def setUp(self):
        from fatcloud import nova_driver
        self.d = nova_driver

    def test_should_fail(self):
        self.assertTrue(self.d.should_fail({"realcloud_fail_spawn": "true"}))
        self.assertTrue(self.d.should_fail({"realcloud_fail_spawn": "True"}))
        self.assertFalse(self.d.should_fail({"realcloud_fail_spawn": "false"}))
        self.assertFalse(self.d.should_fail({}))
        self.assertFalse(self.d.should_fail(None))

    def test_image_id_of(self):
        from nova import objects
        objects.register_all()
        # a server booted from a volume: the ImageMeta has no id
        self.assertIsNone(self.d.image_id_of(objects.ImageMeta.from_dict({})))
        self.assertIsNone(self.d.image_id_of(None))
        meta = objects.ImageMeta.from_dict({"id": "3f1d8a2e-6b4c-4e7f-9a0d-5c2b1e8f7a69"})
        self.assertEqual(self.d.image_id_of(meta), "3f1d8a2e-6b4c-4e7f-9a0d-5c2b1e8f7a69")

    def test_snapshot_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            disk = os.path.join(tmp, "disk")
            with open(disk, "wb") as f:
                f.write(b"disk bytes")
            self.assertEqual(self.d.snapshot_bytes(disk, "u1"), b"disk bytes")
            # no disk (booted from a volume): a marker naming the server
            self.assertIn(b"u1", self.d.snapshot_bytes(os.path.join(tmp, "none"), "u1"))
            self.assertIn(b"u1", self.d.snapshot_bytes(None, "u1"))


if __name__ == "__main__":
    unittest.main()
