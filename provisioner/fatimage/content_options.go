//go:generate packer-sdc struct-markdown

package fatimage

import (
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
)

// ContentOptions are the options whose items the built-in groups bring
// too (a group's `content` is written with these names): the plan holds
// them merged (groupcontent.go). Adding a content kind is a field here,
// its package and its line in the step table (docs/development.md).
type ContentOptions struct {
	// GPG keys to write and import.
	GPGKeys []keys.GPGKey `mapstructure:"gpg_keys"`
	// Files and directories to copy into the image.
	Files []files.File `mapstructure:"files"`
	// Git repositories checked out at a pinned tag or commit (see Git
	// checkouts below).
	GitCheckouts []git.GitCheckout `mapstructure:"git_checkouts"`
	// Files and tar archives fetched by URL and checked against their
	// sha256 (see Downloads below).
	Downloads []downloads.Download `mapstructure:"downloads"`
	// RPM packages fetched by URL, checked (sha256, signature) before any
	// package work and installed in the same dnf transaction as the
	// repositories' packages (see RPMs by URL below).
	RPMURLs []rpms.RPMURL `mapstructure:"rpm_urls"`
	// Python virtual environments (or system interpreters) with pinned
	// requirements installed by pip (see Python environments below).
	PythonEnvs []python.PythonEnv `mapstructure:"python_envs"`
	// Container images pulled into a user's podman storage, each by a
	// digest checked before any package work (see Containers below).
	Containers []containers.Container `mapstructure:"containers"`
	// Grafana dashboards placed for Grafana's file provider, with their
	// datasource placeholders replaced (see Grafana dashboards below);
	// added to those of `groups`.
	GrafanaDashboards []dashboards.GrafanaDashboard `mapstructure:"grafana_dashboards"`
	// systemd units and drop-ins, left enabled, disabled or masked, never
	// started (see System settings below).
	SystemdUnits []system.SystemdUnit `mapstructure:"systemd_units"`
	// sysctl drop-ins in /etc/sysctl.d.
	Sysctls []system.Sysctl `mapstructure:"sysctl"`
	// Kernel modules kept from loading, in /etc/modprobe.d.
	ModprobeBlacklists []system.ModprobeBlacklist `mapstructure:"modprobe_blacklist"`
	// tmpfiles.d drop-ins in /etc/tmpfiles.d.
	Tmpfiles []system.ConfigFile `mapstructure:"tmpfiles"`
	// PAM limits drop-ins in /etc/security/limits.d.
	Limits []system.ConfigFile `mapstructure:"limits"`
	// Kernel command-line arguments, e.g. ["rd.auto=1"], set on every boot
	// entry with grubby and in GRUB_CMDLINE_LINUX, grub.cfg regenerated.
	KernelArgs []string `mapstructure:"kernel_args"`
	// Lines of files already in the image changed in place, like
	// Ansible's lineinfile (see Line edits below).
	LineEdits []lines.LineEdit `mapstructure:"line_edits"`
}
