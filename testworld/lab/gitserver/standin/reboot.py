"""Lab stand-in for slurm_openstack_tools.reboot: prints its version."""
import importlib.metadata


def main():
    print("slurm-openstack-rebuild (lab stand-in) %s" % importlib.metadata.version("slurm-openstack-tools"))
    return 0
