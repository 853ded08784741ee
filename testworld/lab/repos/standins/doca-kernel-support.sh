#!/bin/sh
# Lab stand-in for DOCA's doca-kernel-support from @PKG@-@EVR@. The real
# tool compiles DOCA's kernel modules against the running kernel's
# kernel-devel and leaves a repository RPM of them in /tmp/DOCA.*; this
# one checks that kernel-devel is there and builds, with the VM's own
# rpmbuild, a small real doca-kernel-repo RPM that provides what
# doca-ofed needs. The lab's VMs run their host's kernel: where no
# kernel-devel matches it, the newest installed kernel-devel stands for
# the running kernel (as the provisioner's transaction takes it).
set -eu
kernel=$(uname -r)
if [ ! -d "/usr/src/kernels/$kernel" ]; then
  kernel=$(rpm -q --last kernel-devel 2>/dev/null | head -n1 | cut -d' ' -f1)
  kernel=${kernel#kernel-devel-}
  kernel=${kernel%.noarch}.x86_64
fi
if [ ! -d "/usr/src/kernels/$kernel" ]; then
  echo "doca-kernel-support: no kernel-devel for the running kernel $(uname -r): install kernel-devel-$(uname -r)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/DOCA.XXXXXXXX)
release=1.$(printf '%s' "${kernel%.x86_64}" | tr - _)
cat > "$dir/doca-kernel-repo.spec" <<SPEC
Name: doca-kernel-repo
Version: @VERSION@
Release: $release
Summary: DOCA kernel packages for $kernel (lab stand-in)
License: MIT
BuildArch: noarch
Provides: doca-kernel-support = @VERSION@
Provides: kmod-mlnx-ofa_kernel = @VERSION@
%description
Lab stand-in for the DOCA kernel repository doca-kernel-support builds for $kernel.
%install
mkdir -p %{buildroot}/usr/share/doca-kernel-repo
echo "built for $kernel" > %{buildroot}/usr/share/doca-kernel-repo/$kernel
%files
/usr/share/doca-kernel-repo/$kernel
SPEC
echo "doca-kernel-support: building the DOCA kernel packages for $kernel (lab stand-in)"
HOME=$dir rpmbuild --quiet -bb --define "_topdir $dir/build" "$dir/doca-kernel-repo.spec"
mv "$dir"/build/RPMS/noarch/doca-kernel-repo-*.rpm "$dir/"
rm -rf "$dir/build" "$dir/doca-kernel-repo.spec"
ls "$dir"/doca-kernel-repo-*.rpm
