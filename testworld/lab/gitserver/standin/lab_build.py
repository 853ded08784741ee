"""In-tree PEP 517 build backend of the lab's slurm-openstack-tools stand-in.

The real project builds with pbr and setuptools, which pip's build isolation
fetches from PyPI; the lab's package index serves stand-in wheels only, so
the stand-in builds its wheel with the standard library alone (zipfile)
and needs nothing from the index to build. Its runtime dependencies
(Requires-Dist) are resolved from the index as the real ones are.
"""
import base64
import hashlib
import os
import zipfile

NAME = "slurm-openstack-tools"
MODULE = "slurm_openstack_tools"
REQUIRES = ["pbr>=2.0", "openstacksdk>=0.48.0", "ClusterShell"]
SCRIPTS = {"slurm-openstack-rebuild": MODULE + ".reboot:main"}


def _version():
    with open("VERSION") as f:
        return f.read().strip().lstrip("v")


def _dist_info():
    return "%s-%s.dist-info" % (MODULE, _version())


def _metadata():
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + _version(),
             "Summary: lab stand-in for " + NAME]
    lines += ["Requires-Dist: " + r for r in REQUIRES]
    return "\n".join(lines) + "\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(_metadata())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "%s-%s-py3-none-any.whl" % (MODULE, _version())
    di = _dist_info()
    files = []
    for root, _, names in os.walk(MODULE):
        for n in sorted(names):
            if n.endswith(".py"):
                p = os.path.join(root, n)
                with open(p, "rb") as f:
                    files.append((p.replace(os.sep, "/"), f.read()))
    entry = "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(SCRIPTS.items()))
    files += [
        (di + "/METADATA", _metadata().encode()),
        (di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: lab_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (di + "/entry_points.txt", entry.encode()),
    ]
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, data in files:
            z.writestr(zipfile.ZipInfo(p, (2025, 1, 1, 0, 0, 0)), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (p, digest, len(data)))
        record.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (2025, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return name
