package gitserver

import _ "embed"

// The lab's stand-in of stackhpc/slurm-openstack-tools is an installable
// Python project at every tag, as the real one is: `pip install
// git+<url>@v3.0` builds it from the checkout (PEP 517, with an in-tree
// backend that needs nothing from the index, see standin/lab_build.py),
// resolves its dependencies from the lab's index and installs the
// console script /opt/slurm-tools/bin/slurm-openstack-rebuild.

var (
	//go:embed standin/lab_build.py
	labBuildPy string
	//go:embed standin/reboot.py
	rebootPy string
)

// standinFiles are the files a repository holds at each tag besides its
// README and VERSION, by path.
func standinFiles(path string) map[string]string {
	if path != "stackhpc/slurm-openstack-tools" {
		return nil
	}
	return map[string]string{
		"pyproject.toml":                    "[build-system]\nrequires = []\nbuild-backend = \"lab_build\"\nbackend-path = [\".\"]\n",
		"lab_build.py":                      labBuildPy,
		"slurm_openstack_tools/__init__.py": "",
		"slurm_openstack_tools/reboot.py":   rebootPy,
	}
}
