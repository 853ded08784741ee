#!/usr/bin/env bash
# Installs the Debian packages the project's tests, lab and demo need, when
# they are missing, then the SBOM tests' validator (scripts/sbom-validator.sh,
# from npm) unless --no-sbom-validator (make demo runs no SBOM test). Safe
# to run repeatedly; quick when all are present.
set -euo pipefail
validator="$(dirname "$0")/sbom-validator.sh"
if [ "${1:-}" = --no-sbom-validator ]; then validator=true; fi
packages=(
  git make ca-certificates curl zip unzip           # build, release archives
  rpm createrepo-c dnf python3-dnf dnf-plugins-core # the lab's RPM repositories and the VMs' dnf
  gnupg                                             # signing the lab repositories
  openssh-server openssh-client sudo                # sshd for the SSH tests on the host, ssh into the lab VMs
  iproute2 iptables procps                          # the lab's network namespaces and bridge
  mmdebstrap                                        # the lab VMs' own Debian userland
  python3-openstackclient                           # the official CLI, checked against the cloud double
  e2fsprogs qemu-utils                              # the lab's Glance: disk images (mkfs.ext4 -d, qemu-img convert)
  ansible-core python3-requests python3-bs4         # make bench: the playbook and the Python listing comparison
  ansible                                           # make bench: the collections (ansible.posix's profile_tasks times each task)
  python3-venv python3-pip                          # the lab VMs' venvs and pip; the plugin's host-side pip download
  docker-registry                                   # the lab's OCI registry (the distribution registry)
  shellcheck                                        # make shellcheck: every *.sh, the provisioner's VM scripts included; go test ./testworld/lab/vm
  nodejs                                            # internal/sbom: the independent CycloneDX validator (scripts/sbom-validator.sh)
  tinyproxy                                         # the lab's forward proxy for builds behind a site proxy (testworld/lab/proxy.go)
  rsync                                             # the appliance's own build (TestApplianceOwnBuild): compute_init's synchronize runs rsync on the host
  genisoimage                                       # config drives: Nova's genisoimage on the real tier, isoinfo reading them into a VM (testworld/lab/vm)
)
command -v go >/dev/null 2>&1 || { echo "deps: Go is required (expected at /usr/local/go/bin)" >&2; exit 1; }
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exec "$validator"
fi
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing ${missing[*]}; install them with apt-get as root" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
"$validator"
