#!/bin/sh
# Lab stand-in for cvmfs_config (package cvmfs). `setup` does the part of
# the real command's setup that an image build leaves on the disk and a
# test can check: autofs takes /cvmfs (/etc/auto.master.d/cvmfs.autofs,
# with the map /etc/auto.cvmfs the real package ships), FUSE lets other
# users see mounts (user_allow_other in /etc/fuse.conf), and the mount
# point and cache directory exist. It mounts nothing: the lab has no
# CernVM-FS servers. `reload` has no running client to reload.
set -eu
case "${1:-}" in
setup)
	mkdir -p /etc/auto.master.d /cvmfs /var/lib/cvmfs
	echo '/cvmfs /etc/auto.cvmfs' >/etc/auto.master.d/cvmfs.autofs
	if [ ! -f /etc/fuse.conf ]; then : >/etc/fuse.conf; fi
	if ! grep -q '^user_allow_other' /etc/fuse.conf; then echo user_allow_other >>/etc/fuse.conf; fi
	echo 'cvmfs_config (lab stand-in): setup done'
	;;
reload) ;;
*)
	echo "cvmfs_config (lab stand-in): only setup and reload are implemented, not: $*" >&2
	exit 1
	;;
esac
