package e2e

import "strings"

// systemContractRows are the contract rows of the system part of issue
// #15 (line edits, eessi, slurm-tools, weak dependencies, cleanup,
// slurm_app drop-ins), checked from outside the booted fat image.
func systemContractRows() []contractRow {
	var dropIns, dropInsWant []string
	for _, u := range []string{"opensearch", "grafana-server", "slurmdbd", "slurmctld", "prometheus"} {
		d := "/etc/systemd/system/" + u + ".service.d"
		dropIns = append(dropIns, "echo "+u+" $(stat -c %a "+d+" "+d+"/slurm_app.conf) $(grep -c '^#' "+d+"/slurm_app.conf) $(wc -l < "+d+"/slurm_app.conf)")
		dropInsWant = append(dropInsWant, u+" 755 644 1 1")
	}
	return []contractRow{
		{"tuned: hpc-compute vm.min_free_kbytes=>135168 in [sysctl]", "sed -n '/^\\[sysctl\\]/,/^\\[/p' /usr/lib/tuned/hpc-compute/tuned.conf | grep min_free_kbytes; grep -c min_free_kbytes /usr/lib/tuned/hpc-compute/tuned.conf",
			"vm.min_free_kbytes=>135168\n1"},
		{"cluster: /etc root:root 0755, /etc/profile without the hostnamectl line", "stat -c '%U:%G %a' /etc; grep -c '^HOSTNAME=$(/usr/bin/hostnamectl --transient' /etc/profile || true; grep -c '^HOSTNAME=$(/usr/bin/hostname ' /etc/profile",
			"root:root 755\n0\n1"},
		{"systemd: slurm_app.conf drop-ins (a comment only, dirs 0755)", strings.Join(dropIns, "; "), strings.Join(dropInsWant, "\n")},
		{"eessi: cvmfs, cvmfs_config setup, default.local without a proxy", "rpm -q --qf '%{NAME}\\n' cvmfs cvmfs-config-default cvmfs-config-eessi; cat /etc/cvmfs/default.local; stat -c %a /etc/cvmfs/default.local; " +
			"cat /etc/auto.master.d/cvmfs.autofs; grep -c '^user_allow_other$' /etc/fuse.conf; grep -c PROXY /etc/cvmfs/default.local || true",
			"cvmfs\ncvmfs-config-default\ncvmfs-config-eessi\nCVMFS_CLIENT_PROFILE=single\nCVMFS_QUOTA_LIMIT=10000\n644\n/cvmfs /etc/auto.cvmfs\n1\n0"},
		{"rebuild/slurm_stats: /opt/slurm-tools with slurm-openstack-tools@v3.0, pinned dependencies", "stat -c '%U:%G %a' /opt/slurm-tools; /opt/slurm-tools/bin/slurm-openstack-rebuild; " +
			"/opt/slurm-tools/bin/python -c 'import importlib.metadata as m; print(*(m.version(n) for n in (\"pbr\", \"openstacksdk\", \"ClusterShell\")))'; " +
			"python3 -c 'import json; print(json.load(open(\"/var/lib/image/image.json\"))[\"content\"][\"python_git\"][\"/opt/slurm-tools slurm-openstack-tools\"][\"commit\"])'",
			"root:root 755\nslurm-openstack-rebuild (lab stand-in) 3.0\n6.1.1 4.1.0 1.9.3\n" + theLab.Git.Commit("stackhpc/slurm-openstack-tools", "v3.0")},
		{"openhpc: the Slurm set without weak dependencies", "rpm -q --qf '%{NAME}\\n' slurm-ohpc; rpm -q lab-recommended-by-slurm || true",
			"slurm-ohpc\npackage lab-recommended-by-slurm is not installed"},
		{"cleanup: rclone stub root:root 0555, notice on stderr, exit 1", "stat -c '%U:%G %a' /usr/bin/rclone; /usr/bin/rclone version 2>/dev/null; echo \"exit $?\"; /usr/bin/rclone 2>&1 | grep -c 'rclone was removed'",
			"root:root 555\nexit 1\n1"},
	}
}
