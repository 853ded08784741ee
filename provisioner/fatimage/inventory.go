package fatimage

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/inventory"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// buildHost is the name Packer's Ansible provisioner gives the build VM
// in its inventory (its default host_alias); a groups file listing it in
// a host section puts the build in that group, as with Ansible.
const buildHost = "default"

// applianceGroups are group names of the Slurm appliance that carry no
// build-time content of ours (runtime-only, or not built in yet): a name
// in this list is never taken for a typo of a built-in group.
var applianceGroups = []string{
	"all", "ungrouped", "builder", "cluster", "login", "control", "compute", "openhpc", "fatimage",
	"kernel_modules", "pulp_site", "journald", "resolv_conf", "proxy", "etc_hosts", "chrony", "systemd",
	"selinux", "sshd", "cacerts", "squid", "dnf_repos", "tuned", "firewalld", "fail2ban", "podman",
	"update", "ofed", "ansible_init", "k3s", "k3s_server", "k3s_agent", "doca", "freeipa",
	"freeipa_client", "freeipa_server", "sssd", "opkssh", "nfs", "manila", "lustre", "raid",
	"basic_users", "eessi", "cuda", "vgpu", "k9s", "extra_packages", "compute_init", "gateway", "mysql",
	"rebuild", "slurm_stats", "openondemand", "openondemand_desktop", "openondemand_jupyter",
	"openondemand_rstudio", "openondemand_codeserver", "opensearch", "filebeat", "node_exporter",
	"slurm_exporter", "alertmanager", "hpctests", "prometheus", "grafana", "slurm_recompile", "mounts",
	"nhc", "block_devices", "persist_hostkeys", "zenith", "squid", "openhpc_tests", "topology",
}

// inventoryAliases maps appliance group names to the built-in set doing
// that group's build-time work under another name.
var inventoryAliases = map[string]string{
	"builder": "always", // fatimage.yml's unconditional builder tasks
}

// inventoryBuiltins resolves `inventory` and `inventory_groups` as
// Ansible would into the groups the build host is in, and returns the
// built-in sets among them (in the order of packagesets.Known) with the
// host's groups. Group names standing for several sets (fatimage,
// control, ...) are not expanded: with an inventory, the inventory says
// which feature groups the host is in.
func (c *Config) inventoryBuiltins(paths []string) (builtins, hostGroups []string, errs []error) {
	inv := inventory.New()
	for i, p := range paths {
		if err := inv.Load(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", inventoryField(c, i), err))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	direct := []string{"builder"}
	for _, g := range strings.Split(c.InventoryGroups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			direct = append(direct, g)
		}
	}
	hostGroups = inv.HostGroups(buildHost, direct...)
	builtins = builtinsOf(hostGroups)
	sets := builtinSetNames()
	// A typo is looked for where one goes unnoticed by Ansible: a name
	// given for the build, or a child named in a groups file that no
	// file gives a section of its own.
	suspects := direct[1:]
	for _, g := range inv.Groups() {
		if !inv.HasSection(g) {
			suspects = append(suspects, g)
		}
	}
	for _, g := range suspects {
		if slices.Contains(applianceGroups, g) || slices.Contains(sets, g) || inv.HasSection(g) {
			continue
		}
		if s := inventory.Suggest(g, packagesets.Known()); s != "" {
			field := "inventory_groups"
			if !slices.Contains(direct, g) {
				field = inventoryField(c, -1)
			}
			errs = append(errs, fmt.Errorf("%s: unknown group %q: did you mean %q?", field, g, s))
		}
	}
	return builtins, hostGroups, errs
}

// builtinsOf are the built-in sets among a host's groups, each once, in
// the order of the host's groups (aliases taken).
func builtinsOf(hostGroups []string) []string {
	var builtins []string
	sets := builtinSetNames()
	for _, g := range hostGroups {
		if a, ok := inventoryAliases[g]; ok {
			g = a
		}
		if slices.Contains(sets, g) && !slices.Contains(builtins, g) {
			builtins = append(builtins, g)
		}
	}
	return builtins
}

// checkoutInventories are the inventories of an appliance checkout every
// environment's inventory starts from, in the appliance's order.
var checkoutInventories = []string{"environments/common/inventory", "environments/site/inventory"}

// roleGroups are the names in `groups` standing for a node role of the
// appliance (control, login, compute): what the appliance installs for
// one is decided by its inventories' [x:children], not by a list of ours.
func roleGroups(names []string) []string {
	var out []string
	for _, g := range names {
		if packagesets.IsExpansion(g) && g != "fatimage" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// roleBuiltins resolves node roles named in `groups` without an
// inventory: with appliance_dir, as Ansible resolves the checkout's common
// and site inventories for a host in builder and `groups`; without one
// they are refused, as the built-in lists would give a thinner image than
// the appliance's.
func (c *Config) roleBuiltins(roles []string) (builtins, hostGroups []string, errs []error) {
	field := fmt.Sprintf("groups[%d]", slices.Index(c.Groups, roles[0]))
	switch {
	case c.ApplianceEnvironment != "":
		return nil, nil, []error{fmt.Errorf("%s: %q: with appliance_environment, name the build's groups in inventory_groups, as the appliance's build does", field, roles[0])}
	case c.ApplianceDir == "":
		return nil, nil, []error{fmt.Errorf("%s: %q alone is not the appliance's %s image, which its inventories' [x:children] decide; "+
			"set appliance_dir to resolve it from the checkout's common and site inventories, or use inventory mode "+
			"(inventory = [<common>, <site>, <environment> inventory] with inventory_groups = %q), or groups = [\"fatimage\"] for the appliance's fat image",
			field, roles[0], roles[0], strings.Join(roles, ","))}
	}
	inv := inventory.New()
	for _, dir := range checkoutInventories {
		if err := inv.Load(filepath.Join(c.ApplianceDir, filepath.FromSlash(dir))); err != nil {
			return nil, nil, []error{fmt.Errorf("appliance_dir: resolving %s through the checkout's inventories: %v", field, err)}
		}
	}
	hostGroups = inv.HostGroups(buildHost, append([]string{"builder"}, c.Groups...)...)
	return builtinsOf(hostGroups), hostGroups, nil
}

// builtinSetNames are the built-in groups with a set of their own.
func builtinSetNames() []string {
	var out []string
	for _, g := range packagesets.Known() {
		if !packagesets.IsExpansion(g) {
			out = append(out, g)
		}
	}
	return out
}

// suggestGroup is the "did you mean" for an unknown name in `groups`.
func suggestGroup(names []string) []error {
	var errs []error
	known := packagesets.Known()
	for i, g := range names {
		if slices.Contains(known, g) {
			continue
		}
		if s := inventory.Suggest(g, known); s != "" {
			errs = append(errs, fmt.Errorf("groups[%d]: unknown group %q: did you mean %q?", i, g, s))
		}
	}
	return errs
}

// inventoryPaths are the build's inventories: `inventory`, or those the
// site's environment names in its ansible.cfg (what
// packer/ansible-inventory.sh composes), read as files so `packer
// validate` knows the build host's groups without running Ansible.
func (c *Config) inventoryPaths(site *appliance.Site) ([]string, error) {
	if site == nil {
		return c.Inventory, nil
	}
	paths, err := site.InventorySources()
	if err != nil {
		return nil, fmt.Errorf("appliance_environment: %w", err)
	}
	return paths, nil
}

// inventoryField names the option an inventory error is about: entry i
// of `inventory`, or the site's environment (i < 0: no entry).
func inventoryField(c *Config, i int) string {
	switch {
	case c.ApplianceEnvironment != "":
		return "appliance_environment"
	case i < 0:
		return "inventory"
	}
	return fmt.Sprintf("inventory[%d]", i)
}
