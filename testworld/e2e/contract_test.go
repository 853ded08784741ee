package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// contractRow is one row of docs/appliance-contract.md checked from
// outside the booted image: a command run as the login user and what it
// must print.
type contractRow struct {
	row, cmd, want string
}

// checkApplianceContract boots the fat image TestApplianceExample built
// from example/ with inventory_groups = "fatimage,compute_init" (a CI
// build's: compute_init is empty for other sites) and the checked-in
// appliance layout, and checks each contract row that applies and that
// the plugin does (docs/appliance-contract.md), from outside.
func checkApplianceContract(t *testing.T, name, imageID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-contract", imageID)
	defer stop()
	roles := filepath.Join("..", "appliance", "ansible", "roles")
	gateway, err := os.ReadFile(filepath.Join(roles, "gateway", "files", "gateway-init.yml"))
	if err != nil {
		t.Fatal(err)
	}
	computeInit, err := os.ReadFile(filepath.Join(roles, "compute_init", "files", "compute-init.yml"))
	if err != nil {
		t.Fatal(err)
	}
	chrony, err := os.ReadFile(filepath.Join(roles, "mrlesmithjr.chrony", "tasks", "main.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// what compute_init and gateway leave in /etc/ansible-init/playbooks
	playbooks := []string{"./05-gateway-init.yml", "./10-compute-init.yml", "./files", "./files/NetworkManager-dns-none.conf", "./filter_plugins",
		"./library", "./roles", "./tasks", "./tasks/tuned.yml", "./templates", "./templates/ceph.conf.j2", "./templates/ceph.keyring.j2", "./templates/resolv.conf.j2"}
	for _, r := range []string{"basic_users", "cacerts", "sssd", "sshd", "stackhpc.nfs", "mrlesmithjr.chrony", "lustre", "nhc", "eessi", "mounts", "journald"} {
		playbooks = append(playbooks, "./roles/"+r)
	}
	sort.Strings(playbooks)
	rows := []contractRow{
		{"kernel_modules: /etc/modprobe.d/appliance.conf (6 modules)", "grep -c '^install \\(esp4\\|esp6\\|rxrpc\\|ip6_tunnel\\|act_pedit\\|openvswitch\\) /bin/false$' /etc/modprobe.d/appliance.conf", "6"},
		{"journald: Storage=persistent", "sudo cat /etc/systemd/journald.conf.d/ansible-slurm-appliance.conf | grep -v '^#'; sudo stat -c '%a' /etc/systemd/journald.conf.d /etc/systemd/journald.conf.d/ansible-slurm-appliance.conf",
			"[Journal]\nStorage=persistent\n770\n660"},
		{"journald: /var/log/journal", "stat -c '%a %U:%G' /var/log/journal", "2755 root:systemd-journal"},
		{"raid: rd.auto=1, no grub backup", "grep -c '^GRUB_CMDLINE_LINUX=.* rd.auto=1\"$' /etc/default/grub; ls -a /etc/default | grep -c '^grub.*~$' || true", "1\n0"},
		{"podman: limits", "cat /etc/security/limits.d/custom.conf", "* soft memlock unlimited\n* hard memlock unlimited\n* soft nofile 65536\n* hard nofile 65536"},
		{"podman: sysctl kernel.keys", "grep '^kernel' /etc/sysctl.d/90-podman.conf", "kernel.keys.maxbytes = 25000000\nkernel.keys.maxkeys = 50000"},
		{"podman: containers.conf cgroupfs", "grep -v '^#' /etc/containers/containers.conf.d/50-cgroupfs.conf", "[engine]\ncgroup_manager = \"cgroupfs\""},
		{"podman: tmpfiles", "grep -c '^R! /tmp/\\(containers-user\\|podman-run\\|storage-run\\)-\\*$' /etc/tmpfiles.d/podman-local.conf", "3"},
		{"fail2ban: jail.local, enabled", "grep -A1 '^\\[sshd\\]' /etc/fail2ban/jail.local; systemctl is-enabled fail2ban.service", "[sshd]\nenabled = true\nenabled"},
		{"firewalld: public ACCEPT, disabled", "grep -c '<zone target=\"ACCEPT\">' /etc/firewalld/zones/public.xml; systemctl is-enabled firewalld.service || true", "1\ndisabled"},
		{"tuned, sssd: disabled", "systemctl is-enabled tuned.service sssd.service || true", "disabled\ndisabled"},
		// prometheus' and grafana's groups made on their own, their
		// users' primary group useradd -N's (users, 100), as the
		// appliance's user module makes them
		{"users with fixed IDs", "for u in slurm podman prometheus grafana ansible-init; do echo $u $(id -u $u) $(id -g $u) $(getent passwd $u | cut -d: -f6); done; " +
			"getent passwd slurm prometheus grafana ansible-init | cut -d: -f7; getent group prometheus grafana | cut -d: -f1,3",
			"slurm 202 202 /etc/slurm\npodman 1001 1001 /var/lib/podman\nprometheus 981 100 /var/lib/prometheus\ngrafana 984 100 /usr/share/grafana\nansible-init 301 301 /var/lib/ansible-init\n" +
				"/sbin/nologin\n/usr/sbin/nologin\n/sbin/nologin\n/sbin/nologin\nprometheus:976\ngrafana:979"},
		{"ansible_init: venv at the pins", "/usr/lib/ansible-init/bin/python -c 'import ansible, jmespath, requests, netaddr; print(ansible.__version__, jmespath.__version__, requests.__version__, netaddr.__version__)'",
			"8.7.0 1.0.1 2.32.3 1.3.0"},
		{"ansible_init: runner, config dirs, unit enabled", "head -n1 /usr/bin/ansible-init; stat -c %a /usr/bin/ansible-init; ls -d /etc/ansible-init/vars /etc/ansible-init/playbooks /etc/ansible-init/includes /etc/ansible-init/inventory; " +
			"grep -c '^\\(home = /var/lib/ansible-init\\|local_tmp = /var/tmp/ansible-init\\|inventory = /etc/ansible-init/inventory\\)$' /etc/ansible-init/ansible.cfg; systemctl is-enabled ansible-init.service; test ! -e /var/lib/ansible-init.done && echo no sentinel",
			"#!/usr/lib/ansible-init/bin/python\n755\n/etc/ansible-init/includes\n/etc/ansible-init/inventory\n/etc/ansible-init/playbooks\n/etc/ansible-init/vars\n3\nenabled\nno sentinel"},
		{"gateway: 05-gateway-init.yml from the site's checkout", "cat /etc/ansible-init/playbooks/05-gateway-init.yml", strings.TrimSpace(string(gateway))},
		{"compute_init: 10-compute-init.yml from the site's checkout", "cat /etc/ansible-init/playbooks/10-compute-init.yml", strings.TrimSpace(string(computeInit))},
		{"compute_init: injected roles, tasks, templates, files", "cd /etc/ansible-init/playbooks && find . -mindepth 1 -maxdepth 2 | LC_ALL=C sort", strings.Join(playbooks, "\n")},
		{"compute_init: a role's tasks", "cat /etc/ansible-init/playbooks/roles/mrlesmithjr.chrony/tasks/main.yml", strings.TrimSpace(string(chrony))},
		{"slurm_exporter: the RPM by URL", "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' prometheus-slurm-exporter",
			"prometheus-slurm-exporter-0.22-1.el8"},
		{"openondemand: apps at their pins", "for a in rstudio codeserver; do sudo git -c safe.directory='*' -C /var/www/ood/apps/sys/$a rev-parse HEAD; done",
			theLab.Git.Commit("stackhpc/ood-stackhpc-rstudio", "2025.08.1") + "\n" + theLab.Git.Commit("stackhpc/bc_osc_codeserver", "2025.09.1")},
	}
	rows = append(rows, servicesContractRows(t)...)
	rows = append(rows, oodContractRows(t)...)
	rows = append(rows, systemContractRows()...)
	for _, r := range rows {
		if got := c.Run(t, r.cmd); got != r.want {
			t.Errorf("contract row %q:\n%s\nprints\n%s\nwant\n%s", r.row, r.cmd, got, r.want)
		}
	}
	// image.json keeps every key the appliance writes
	var info map[string]any
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
		t.Fatal(err)
	}
	checkServicesImageJSON(t, info)
	for _, k := range []string{"branch", "build", "commit", "cuda", "doca", "kernel", "ofed", "os", "slurm-ohpc"} {
		if v, ok := info[k].(string); !ok || v == "" {
			t.Errorf("image.json %s = %v", k, info[k])
		}
	}
	if info["cuda"] != "-" || info["doca"] != "-" || !strings.HasPrefix(info["build"].(string), name) {
		t.Errorf("image.json cuda %v doca %v build %v", info["cuda"], info["doca"], info["build"])
	}
	checkBuiltinKeys(t, c, info)
}
