# shellcheck shell=sh
# The cleanup steps, one function each: cleanup_<name with _ for ->.
# skip_cleanup_steps names them; the provisioner's cleanupSteps table
# says which run last (after them SSH logins may fail).

# cleanup_step NAME runs one step.
cleanup_step() {
  echo "cleanup: $1"
  "cleanup_$(printf '%s' "$1" | tr - _)"
}

# what dnf clean all removes, without starting dnf: the metadata and
# package caches (a cachedir dnf.conf sets included). FATIMAGE_SYSROOT is
# empty on the VM (tests set it).
cleanup_dnf_clean() {
  r=${FATIMAGE_SYSROOT:-}
  d=$(sed -n 's/^[[:space:]]*cachedir[[:space:]]*=[[:space:]]*//p' "$r/etc/dnf/dnf.conf" 2>/dev/null | tail -n1)
  for c in /var/cache/dnf ${d:+"$d"}; do
    if [ -d "$r$c" ]; then find "$r$c" -mindepth 1 -delete; fi
  done
}

cleanup_resolv_conf() {
  if [ -L /etc/resolv.conf ]; then echo 'resolv.conf is managed; kept'; else rm -f /etc/resolv.conf; fi
}

cleanup_nm_cloud_init() {
  rm -f /etc/NetworkManager/conf.d/99-cloud-init.conf
}

# sshd answers before cloud-init's last stages end: cleaning while they
# still run would let them write their state and logs back into the image.
# Only a cloud-init that is running is waited for (bounded): after a clean
# (a second provisioner run) it does not run again until the next boot.
cleanup_cloud_init() {
  command -v cloud-init >/dev/null 2>&1 || return 0
  case "$(cloud-init status 2>/dev/null)" in
    *running*)
      if ! timeout 600 cloud-init status --wait >/dev/null 2>&1; then
        echo "WARNING: cloud-init did not finish cleanly on the build VM ($(cloud-init status 2>/dev/null | tr '\n' ' '))"
      fi
      ;;
  esac
  cloud-init clean --logs --seed
}

# journald is stopped first so it cannot write the files back
cleanup_journal() {
  systemctl stop systemd-journald.socket systemd-journald-dev-log.socket systemd-journald-audit.socket systemd-journald.service >/dev/null 2>&1 || true
  rm -rf /var/log/journal/*
}

cleanup_machine_id() {
  : > /etc/machine-id
  rm -f /var/lib/dbus/machine-id
}

cleanup_munge_key() {
  rm -f /etc/munge/munge.key
}

cleanup_slurm_conf() {
  rm -f /etc/slurm/slurm.conf
}

cleanup_slurm_logs() {
  rm -rf /var/log/slurm*
}

cleanup_tmp() {
  find /tmp -mindepth 1 -maxdepth 1 ! -path "$FATIMAGE_WORKDIR" -exec rm -rf {} +
}

cleanup_ssh_host_keys() {
  rm -f /etc/ssh/ssh_host_*
}

cleanup_login_ssh_keys() {
  h=$(getent passwd "$FATIMAGE_LOGIN_USER" | cut -d: -f6)
  if [ -n "$h" ] && [ "$h" != / ]; then rm -rf "$h/.ssh"; fi
}

# The files the appliance deletes because vulnerability scanners flag
# them (lock files of test apps and demos, bundled esbuild binaries), in
# any Open OnDemand version directory (the appliance names its pinned
# version's). FATIMAGE_SYSROOT is empty on the VM (tests set it).
cleanup_scanner_files() {
  r=${FATIMAGE_SYSROOT:-}
  gems=$r/opt/ood/ondemand/root/usr/share/gems/3.3/ondemand
  chrony=$r/etc/ansible-init/playbooks/roles/mrlesmithjr.chrony
  for f in "$gems"/*/gems/bootstrap_form-2.7.0/test/dummy/Gemfile.lock \
    "$gems"/*/gems/bootstrap_form-5.0.0/demo/yarn.lock \
    "$r/var/www/ood/apps/sys/dashboard/node_modules/data-confirm-modal/Gemfile.lock" \
    "$chrony/poetry.lock" "$chrony/requirements.txt" "$chrony/requirements-dev.txt" \
    "$r/usr/lib/ansible-init/lib/python3.9/site-packages/ansible_collections/netbox/netbox/poetry.lock" \
    "$r/var/www/ood/apps/sys/dashboard/node_modules/@esbuild/linux-x64/bin/esbuild" \
    "$r/usr/lib/rstudio-server/bin/quarto/bin/tools/x86_64/esbuild"; do
    if [ -e "$f" ] || [ -L "$f" ]; then
      rm -f "$f"
      echo "removed ${f#"$r"}"
    fi
  done
}

# /usr/bin/rclone becomes a stub on every build, whether rclone was there
# or not, as the appliance leaves it: scanners flag rclone's bundled Go
# libraries, and a user calling it learns why it is gone.
cleanup_rclone_stub() {
  r=${FATIMAGE_SYSROOT:-}
  rm -f "$r/usr/bin/rclone"
  mkdir -p "$r/usr/bin"
  cat >"$r/usr/bin/rclone" <<'FATIMAGE_EOF'
#!/bin/sh
echo "rclone was removed from this image by its build (packer-plugin-fatimage cleanup, as the Slurm appliance does): install it yourself if you need it" >&2
exit 1
FATIMAGE_EOF
  chown 0:0 "$r/usr/bin/rclone" 2>/dev/null || [ -n "$r" ]
  chmod 0555 "$r/usr/bin/rclone"
}
