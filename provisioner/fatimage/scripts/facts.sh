# shellcheck shell=sh
# Prints key=value facts for image.json, then the sorted package list
# after a marker line.
# shellcheck source=/dev/null # the VM's file, not ours
. /etc/os-release
echo "os=$PRETTY_NAME"
echo "os_id=$ID"
echo "os_version=$VERSION_ID"
echo "kernel=$(uname -r)"
# The kernel the image boots: the newest installed kernel-core when the
# running kernel is an rpm's and a newer one waits for a reboot the build
# left to the first boot (the appliance reboots into it before its
# image.json, so its `kernel` names it); else the running one.
boot=$(uname -r)
if rpm -q "kernel-core-$boot" >/dev/null 2>&1; then
  newest=$(rpm -q --last kernel-core | head -n1 | cut -d' ' -f1)
  boot=${newest#kernel-core-}
fi
echo "kernel_boot=$boot"
# the appliance's `build` is the first label of the VM's nodename
echo "nodename=$(uname -n)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
# Versions (rpm VERSION only, as Ansible's package_facts reports them) of
# the packages the appliance's image.json names; empty when not installed.
for p in mlnx-ofa_kernel doca-ofed cuda-toolkit slurm-ohpc; do
  echo "pkgversion.$p=$(rpm -q --qf '%{VERSION}\n' "$p" 2>/dev/null | grep -v 'not installed' | head -n1 || true)"
done
rpm -qa | LC_ALL=C sort > "$FATIMAGE_WORKDIR/rpms"
echo "package_count=$(wc -l < "$FATIMAGE_WORKDIR/rpms")"
echo "package_digest=sha256:$(sha256sum < "$FATIMAGE_WORKDIR/rpms" | cut -d' ' -f1)"
echo "--packages--"
cat "$FATIMAGE_WORKDIR/rpms"
rm -f "$FATIMAGE_WORKDIR/rpms"
