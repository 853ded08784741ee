package repos

import (
	_ "embed"
	"os"
	"path"
	"sort"
	"strings"
)

// Stand-in content for the system rows of the image contract (issue #15):
// files that builds edit or run, and weak dependencies that show which
// packages a build installs with install_weak_deps off.

// tunedFiles: the hpc-compute profile, whose [sysctl] vm.min_free_kbytes
// the appliance's tuned role edits in place.
var tunedFiles = map[string]string{
	"/usr/lib/tuned/hpc-compute/tuned.conf": `#
# tuned configuration (lab stand-in of the hpc-compute profile)
#

[main]
summary=Optimize for HPC compute workloads
include=latency-performance

[vm]
transparent_hugepages=always

[disk]
readahead=>4096

[sysctl]
# keep free memory for the network stacks
vm.min_free_kbytes = 135168
kernel.numa_balancing = 0
`,
}

//go:embed standins/cvmfs_config.sh
var cvmfsConfigStandIn string

// cvmfsFiles: cvmfs_config, whose `setup` the eessi group runs, the
// autofs map its setup points autofs at, and the client's default
// configuration in /etc/cvmfs, where the real package keeps it (the
// appliance's eessi role writes /etc/cvmfs/default.local next to it and
// does not create the directory).
var cvmfsFiles = map[string]string{
	"/usr/bin/cvmfs_config":   cvmfsConfigStandIn,
	"/etc/auto.cvmfs":         "#!/bin/sh\n# lab stand-in of the cvmfs autofs map: no repositories to mount\nexit 0\n",
	"/etc/cvmfs/default.conf": "# lab stand-in of the cvmfs client's defaults; site settings go in default.local\nCVMFS_CACHE_BASE=/var/lib/cvmfs\nCVMFS_QUOTA_LIMIT=4000\n",
}

// The weak-dependency probes: slurm-ohpc recommends a package that a
// build installing the Slurm set without weak dependencies (as the
// appliance's openhpc role does) must not install, while
// lab-weakdep-probe, a lab-only package a test installs next to it at
// dnf's default, recommends one that must be installed. No package of
// the appliance's groups other than slurm-ohpc recommends anything, so
// the benchmarks' Ansible runs (weak dependencies off throughout) and
// the plugin's end in the same package set.
var (
	slurmRecommends = []string{"lab-recommended-by-slurm"}
	probeRecommends = []string{"lab-recommended-by-probe"}
)

// extraFiles are a package's Files as staged files, in path order;
// executables are the ones under a bin directory (or the autofs map).
func extraFiles(files map[string]string) []stagedFile {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []stagedFile
	for _, p := range paths {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path.Dir(p), "/bin") || strings.HasSuffix(path.Dir(p), "/sbin") || p == "/etc/auto.cvmfs" {
			mode = 0o755
		}
		out = append(out, stagedFile{Path: p, Data: files[p], Mode: mode})
	}
	return out
}
