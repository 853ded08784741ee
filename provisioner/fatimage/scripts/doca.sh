# shellcheck shell=sh
# The DOCA kernel support of the appliance's doca role, around the one
# dnf process that installs the DOCA profile (step_doca.go).

# doca_kernel_support runs DOCA's doca-kernel-support, which builds DOCA's
# kernel packages for the running kernel (its kernel-devel came with the
# transaction) and leaves a repository RPM in /tmp/DOCA.*; that RPM is
# installed with rpm, unsigned as the appliance installs it, so its
# repository is there when dnf installs the profile.
doca_kernel_support() {
  tool=/opt/mellanox/doca/tools/doca-kernel-support
  if [ ! -x "$tool" ]; then
    fatimage_cause "doca: $tool is missing (doca-extra should have installed it)"
    return 1
  fi
  rm -rf /tmp/DOCA.*
  fatimage_run "$tool" || {
    fatimage_cause "doca: $tool failed"
    return 1
  }
  set -- /tmp/DOCA.*/doca-kernel-repo-*.rpm
  if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    fatimage_cause "doca: doca-kernel-support left no single /tmp/DOCA.*/doca-kernel-repo-*.rpm (found: $*)"
    return 1
  fi
  fatimage_run rpm -Uvh --replacepkgs --nosignature "$1"
}

# doca_finish removes doca-kernel-support's build directory and rebuilds
# the initramfs with the new kernel modules.
doca_finish() {
  rm -rf /tmp/DOCA.*
  fatimage_run dracut -f
}
