//go:generate packer-sdc mapstructure-to-hcl2 -type GitCheckout
//go:generate packer-sdc struct-markdown

// Package git is the `git_checkouts` content kind: repositories checked
// out at a pinned tag or commit, fetched and checked before any package
// work (by the VM, or from a bundle of the build host's mirror) and put
// in place after it. Its VM side is git.sh.
package git

// GitCheckout is a git repository checked out at a pinned tag or commit.
// The fetch and the check of the pin happen before any package work; the
// checkout (with its .git, origin set to repo) is put in place after.
type GitCheckout struct {
	// Repository URL (http or https), e.g.
	// https://github.com/stackhpc/slurm-openstack-tools.git.
	Repo string `mapstructure:"repo" required:"true"`
	// Tag to check out, e.g. v3.0.
	Tag string `mapstructure:"tag"`
	// Commit (40 hex digits) to check out; with `tag`, the commit the tag
	// must point at (the build fails if it does not).
	Commit string `mapstructure:"commit"`
	// Branch to check out. Not reproducible: the build warns and records
	// the commit it got.
	Branch string `mapstructure:"branch"`
	// Absolute directory of the checkout; replaced when not already a
	// clean checkout of the commit.
	Destination string `mapstructure:"destination" required:"true"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
}
