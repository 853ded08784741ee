"""Start a service whose console script comes with a package the tier does
not install (nova-compute, cinder-volume pull libvirt and LVM), or that
must see the fatcloud drivers: launch.py SERVICE ARGS...
"""

import sys


def main():
    service, args = sys.argv[1], sys.argv[2:]
    sys.argv = [service] + args
    if service == "nova-compute":
        # nova.cmd's import monkey-patches eventlet: it comes first.
        from nova.cmd import compute
        from fatcloud import guest_driver
        # Nova loads compute_driver below nova.virt only: the driver is
        # registered there as nova.virt.fatcloud_driver.
        sys.modules["nova.virt.fatcloud_driver"] = guest_driver
        return compute.main()
    if service == "cinder-volume":
        from cinder.cmd import volume
        return volume.main()
    sys.exit("launch.py: unknown service %s" % service)


if __name__ == "__main__":
    sys.exit(main())
