"""Unit tests of the fatcloud drivers' own logic (run by make
test-realcloud, one file per process: Nova and Cinder share oslo.config's
global options and cannot be imported together). What the drivers do
inside the real services is what testworld/realcloud's Go tests check.
"""

import os
import tempfile
import unittest


class CinderDriverTest(unittest.TestCase):
    def setUp(self):
        from fatcloud import cinder_driver
        self.d = cinder_driver

    def test_volume_file_refuses_paths(self):
        self.assertEqual(self.d.volume_file("/v", "abc"), "/v/abc")
        for bad in ("", "../x", "a/b", ".hidden"):
            with self.assertRaises(ValueError):
                self.d.volume_file("/v", bad)

    def test_write_sparse_grows_never_shrinks(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "vol")
            with open(p, "wb") as f:
                f.write(b"head")
            self.d.write_sparse(p, 1)
            self.assertEqual(os.path.getsize(p), self.d.GIB)
            with open(p, "rb") as f:
                self.assertEqual(f.read(4), b"head")
            self.d.write_sparse(p, 1)
            self.assertEqual(os.path.getsize(p), self.d.GIB)


if __name__ == "__main__":
    unittest.main()
