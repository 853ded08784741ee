# shellcheck shell=sh
# eessi (run_after_packages): the appliance's eessi role runs
# `cvmfs_config setup` once the cvmfs packages are in: autofs takes
# /cvmfs, FUSE lets users see the mounts, the cache directory exists.
# Its `reload` (when setup changed something) is left out: nothing is
# mounted on a build VM, so there is no client to reload.
cvmfs_config setup
