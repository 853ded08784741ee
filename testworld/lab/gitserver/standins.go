package gitserver

import (
	"embed"
	"io/fs"
)

// The lab's stand-in of stackhpc/slurm-openstack-tools is an installable
// Python project at every tag, as the real one is: `pip install
// git+<url>@v3.0` builds it from the checkout (PEP 517, with an in-tree
// backend that needs nothing from the index, see standin/lab_build.py),
// resolves its dependencies from the lab's index and installs the
// console script /opt/slurm-tools/bin/slurm-openstack-rebuild.

// The stand-in of lustre/lustre-release (standin/lustre) is a client
// tree that the appliance's lustre role really builds: `sh ./autogen.sh`
// makes configure, `./configure <lustre_configure_opts>` finds the
// running kernel's kernel-devel, and `make rpms` builds
// kmod-lustre-client and lustre-client with rpmbuild, leaving them at the
// top of the tree where the role's find looks.

var (
	//go:embed standin/lustre
	lustreTree embed.FS
	//go:embed standin/lab_build.py
	labBuildPy string
	//go:embed standin/reboot.py
	rebootPy string
)

// standinFiles are the files a repository holds at each tag besides its
// README and VERSION, by path.
func standinFiles(path string) map[string]string {
	switch path {
	case "lustre/lustre-release":
		return treeFiles(lustreTree, "standin/lustre")
	case "stackhpc/slurm-openstack-tools":
		return map[string]string{
			"pyproject.toml":                    "[build-system]\nrequires = []\nbuild-backend = \"lab_build\"\nbackend-path = [\".\"]\n",
			"lab_build.py":                      labBuildPy,
			"slurm_openstack_tools/__init__.py": "",
			"slurm_openstack_tools/reboot.py":   rebootPy,
		}
	}
	return nil
}

// treeFiles is every file under root in tree, by its path below root.
func treeFiles(tree embed.FS, root string) map[string]string {
	files := map[string]string{}
	err := fs.WalkDir(tree, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := tree.ReadFile(p)
		files[p[len(root)+1:]] = string(data)
		return err
	})
	if err != nil {
		panic(err) // the embedded tree is read at build time: it cannot fail
	}
	return files
}
