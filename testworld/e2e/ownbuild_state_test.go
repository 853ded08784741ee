package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// ownBuildFiles are the files and directories the appliance's own build
// writes or removes (fatimage.yml's plays for the build host, its hooks,
// cleanup.yml), compared by content (files) or entries (directories).
var ownBuildFiles = []string{
	"/etc/modprobe.d/appliance.conf", "/etc/fatimage-site-hook", "/etc/gitconfig", "/etc/pip.conf",
	"/usr/bin/rclone", "/etc/resolv.conf", "/etc/NetworkManager/conf.d/99-cloud-init.conf",
	"/etc/pki/rpm-gpg", "/etc/yum.repos.d", "/opt/slurm-tools/bin", "/var/lib/image",
	"/etc/cvmfs/default.local", "/etc/containers/registries.conf.d",
	"/usr/local/bin/node_exporter", "/usr/local/bin/prometheus", "/usr/local/bin/promtool",
	"/usr/local/bin/alertmanager", "/usr/local/bin/amtool",
	"/etc/pki/ca-trust/source/anchors", "/etc/grafana/provisioning/dashboards/ansible.yml",
	"/var/lib/grafana/plugins", "/var/lib/grafana/dashboards", "/var/lib/grafana/dashboards/13427.json",
	"/var/lib/grafana/dashboards/4323.json", "/var/lib/grafana/dashboards/openhpc-slurm.json",
	"/var/lib/grafana/dashboards/slurm-jobs.json",
	"/var/www/ood/apps/sys", "/var/www/ood/apps/sys/jupyter", "/var/www/ood/apps/sys/rstudio",
	"/etc/ansible-init/playbooks", "/etc/ansible-init/playbooks/roles", "/etc/ansible-init/playbooks/templates",
	"/etc/ansible-init/playbooks/10-compute-init.yml", "/opt/ohpc/pub/modulefiles",
	// login's: firewalld's zone (ansible.posix.firewalld's, offline), fail2ban's jail, hpctests' HPL source
	"/etc/firewalld/zones", "/etc/firewalld/zones/public.xml", "/etc/fail2ban/jail.local", "/opt/hpl", "/opt/hpl/hpl-2.3.tar.gz",
	// selinux's config, raid's kernel command line, gateway's ansible-init playbook
	"/etc/selinux/config", "/etc/default/grub", "/boot/grub2/grub.cfg", "/boot/loader/entries",
	"/etc/ansible-init/playbooks/05-gateway-init.yml",
}

// ownBuildUnits are the units whose account and command line are
// compared (the unit files' other lines are each build's own words).
var ownBuildUnits = []string{"node_exporter.service", "filebeat.service"}

// ownBuildUnitScript prints one line per argument: its User=, Group= and
// ExecStart= lines, or "absent".
const ownBuildUnitScript = `for u in "$@"; do
  f=$(systemctl show -P FragmentPath "$u")
  if [ -n "$f" ] && [ -f "$f" ]; then printf '%s %s\n' "$u" "$(grep -E '^(User|Group|ExecStart)=' "$f" | tr '\n' ' ')"
  else printf '%s absent\n' "$u"; fi
done`

// ownBuildFileScript prints one line per argument: its sha256 (a file),
// its entries (a directory) or "absent".
const ownBuildFileScript = `for f in "$@"; do
  if [ -d "$f" ]; then printf '%s dir: %s\n' "$f" "$(ls -A "$f" | tr '\n' ' ')"
  elif [ -f "$f" ]; then printf '%s %s\n' "$f" "$(sha256sum < "$f" | cut -c1-16)"
  else printf '%s absent\n' "$f"; fi
done`

// ownState is what a booted image shows from outside, by key ("package
// NAME", "user NAME", "group NAME", "unit NAME", "file PATH", "unit-exec
// NAME") to value.
type ownState map[string]string

// bootEndState boots image id and reads its end state over SSH.
func bootEndState(t *testing.T, id, name string) ownState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, name, id)
	defer stop()
	st := ownState{}
	add := func(kind, out string, key func(string) (string, string)) {
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			k, v := key(l)
			if prev, ok := st[kind+" "+k]; ok {
				v = prev + " " + v // several versions of one name (gpg-pubkey, kernel)
			}
			st[kind+" "+k] = v
		}
	}
	split := func(sep string) func(string) (string, string) {
		return func(l string) (string, string) { k, v, _ := strings.Cut(l, sep); return k, v }
	}
	add("package", c.Run(t, "rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\\n' | sort"), split(" "))
	add("user", c.Run(t, "getent passwd | cut -d: -f1,3,4,6,7"), split(":"))
	add("group", c.Run(t, "getent group | cut -d: -f1,3"), split(":"))
	add("unit", c.Run(t, "systemctl list-unit-files --state=enabled --no-legend --no-pager | awk '{print $1}'"), func(l string) (string, string) { return l, "enabled" })
	files := c.Run(t, "sudo -n sh -c "+labtest.ShQuote(ownBuildFileScript)+" sh "+strings.Join(ownBuildFiles, " "))
	add("file", files, split(" "))
	add("unit-exec", c.Run(t, "sh -c "+labtest.ShQuote(ownBuildUnitScript)+" sh "+strings.Join(ownBuildUnits, " ")), split(" "))
	return st
}

// diff is every key whose value differs (or that one side lacks), with
// both sides' values ("-" for missing).
func (a ownState) diff(b ownState) map[string][2]string {
	out := map[string][2]string{}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out[k] = [2]string{v, or(w, ok)}
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			out[k] = [2]string{"-", w}
		}
	}
	return out
}

func or(v string, ok bool) string {
	if !ok {
		return "-"
	}
	return v
}

// ownBuildRow is a row of the table under ownBuildSection: its first cell
// is a key in backticks.
var ownBuildRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

const ownBuildSection = "## Differences from the appliance's own build"

// ownBuildAllowList reads the keys of docs/appliance-contract.md's table
// of differences from the appliance's own build, with their reasons.
func ownBuildAllowList(t *testing.T) map[string]string {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "appliance-contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n"+ownBuildSection+"\n")
	if !ok {
		t.Fatalf("docs/appliance-contract.md has no section %q", ownBuildSection)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	out := map[string]string{}
	for _, l := range strings.Split(sec, "\n") {
		if m := ownBuildRow.FindStringSubmatch(l); m != nil {
			out[m[1]] = l
		}
	}
	return out
}
