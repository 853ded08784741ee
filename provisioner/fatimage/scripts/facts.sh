# shellcheck shell=sh
# Prints key=value facts for image.json, then the sorted package list
# after a marker line.
# shellcheck source=/dev/null # the VM's file, not ours
. /etc/os-release
echo "os=$PRETTY_NAME"
echo "os_id=$ID"
echo "os_version=$VERSION_ID"
echo "kernel=$(uname -r)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
rpm -qa | LC_ALL=C sort > "$FATIMAGE_WORKDIR/rpms"
echo "package_count=$(wc -l < "$FATIMAGE_WORKDIR/rpms")"
echo "package_digest=sha256:$(sha256sum < "$FATIMAGE_WORKDIR/rpms" | cut -d' ' -f1)"
echo "--packages--"
cat "$FATIMAGE_WORKDIR/rpms"
rm -f "$FATIMAGE_WORKDIR/rpms"
