# shellcheck shell=sh
# What the SBOM reads from the image (internal/sbom.ParseQuery reads it):
# tab-separated lines, one record each, tagged rpm / repo / user / venv.
tab=$(printf '\t')

# sbom_query prints every rpm in the rpm database, the repository dnf
# installed each from (when dnf knows it), the users, and the Python
# distributions of each venv directory given as an argument.
sbom_query() {
  rpm -qa --qf 'rpm\t%{NAME}\t%{EPOCHNUM}\t%{VERSION}\t%{RELEASE}\t%{ARCH}\t%{LICENSE}\t%{SUMMARY}\n'
  # -C and no repositories: from_repo comes from dnf's history database,
  # no metadata is needed (the build has disabled the repositories).
  dnf -q -C --disablerepo='*' repoquery --installed \
    --qf "repo$tab%{name}$tab%{epoch}$tab%{version}$tab%{release}$tab%{arch}$tab%{from_repo}" 2>/dev/null || true
  getent passwd | awk -F: -v OFS="$tab" '{ print "user", $1, $3, $4, $6, $7 }'
  for venv in "$@"; do
    [ -x "$venv/bin/python" ] || continue
    "$venv/bin/python" -c 'import importlib.metadata as m, sys
for d in m.distributions():
    sys.stdout.write("venv\t%s\t%s\t%s\n" % (sys.argv[1], d.metadata["Name"], d.version))' "$venv"
  done
}

# install_sbom installs the staged SBOM beside image.json, where Packer's
# hcp-sbom provisioner can read it.
install_sbom() {
  install -D -o root -g root -m 0644 "$FATIMAGE_WORKDIR/sbom.cdx.json" /var/lib/image/sbom.cdx.json
  rm -f "$FATIMAGE_WORKDIR/sbom.cdx.json"
}
