//go:generate packer-sdc mapstructure-to-hcl2 -type SystemdUnit,Sysctl,ModprobeBlacklist,ConfigFile
//go:generate packer-sdc struct-markdown

// Package system is the system settings: six content kinds
// (systemd_units, sysctl, modprobe_blacklist, tmpfiles, limits,
// kernel_args) that write drop-in files (root 0644, only when they
// differ) and set unit states and kernel arguments. They share one
// shell, system.sh, and the provisioner installs them in one step, one
// script on the VM, in that order.
package system

// SystemdUnit is a systemd unit file and/or drop-ins written under
// /etc/systemd/system, then `daemon-reload`, and the unit left enabled,
// disabled or masked. Never started: the image carries configuration,
// not running services.
type SystemdUnit struct {
	// Unit name with its suffix, e.g. mysql.service.
	Name string `mapstructure:"name" required:"true"`
	// Unit file written to /etc/systemd/system/<name>. Empty: the unit
	// comes from a package (or only drop-ins are written).
	Content string `mapstructure:"content"`
	// Drop-ins by file name without .conf, written to
	// /etc/systemd/system/<name>.d/<key>.conf.
	DropIns map[string]string `mapstructure:"drop_ins"`
	// enabled, disabled or masked. Default disabled.
	State string `mapstructure:"state"`
}

// Sysctl is a drop-in in /etc/sysctl.d, applied at boot.
type Sysctl struct {
	// File name without .conf, e.g. 90-opensearch.
	Name string `mapstructure:"name" required:"true"`
	// Keys and values, e.g. { "vm.max_map_count" = "262144" }, written
	// sorted as `key = value`.
	Settings map[string]string `mapstructure:"settings" required:"true"`
}

// ModprobeBlacklist keeps kernel modules from loading: each module gets
// `install <module> /bin/false` in /etc/modprobe.d/<name>.conf.
type ModprobeBlacklist struct {
	// File name without .conf, e.g. appliance.
	Name string `mapstructure:"name" required:"true"`
	// Module names, e.g. ["esp4", "rxrpc"].
	Modules []string `mapstructure:"modules" required:"true"`
}

// ConfigFile is a drop-in file with literal content (tmpfiles.d, limits.d).
type ConfigFile struct {
	// File name without .conf.
	Name string `mapstructure:"name" required:"true"`
	// File content.
	Content string `mapstructure:"content" required:"true"`
}

// UnitState is the state the unit is left in: State, disabled when
// empty.
func (u SystemdUnit) UnitState() string {
	if u.State == "" {
		return "disabled"
	}
	return u.State
}
