// Package appliance reads a site's Slurm appliance checkout the way the
// appliance's own image build does, using the site's own Ansible, so that
// the plugin builds from the site's configuration rather than from a copy
// of one appliance commit.
//
// The appliance's build (packer/openstack.pkr.hcl) runs ansible-playbook
// with two inventories, the environment's one composed by
// packer/ansible-inventory.sh (ansible-inventory under the environment's
// ansible.cfg: common, site and environment inventories in that order) and
// Packer's generated one (the build VM, as host "default", in `builder` plus
// the build's inventory groups), `--limit builder`,
// packer/openhpc_extravars.yml as extra vars, and a direct SSH connection
// to the VM. Every entry point here runs ansible-playbook with that same
// composition (see [Site] and [Target]):
//
//   - [Site.Resolve] gathers the VM's facts and returns the values a list of
//     variables has for the build host, templated by Ansible itself, in the
//     scope of no role or of one named role (so the role's defaults are in
//     scope), plus the host's groups and which play host patterns and task
//     conditions hold for it. Jinja is never evaluated in Go.
//   - [Site.Steps] lists what ansible/fatimage.yml would run, play by play
//     and role by role, including the environment's hooks, read from the
//     YAML (ansible-playbook --list-tasks cannot be used: it loads every
//     role statically and fails on the first role the site lacks).
//   - [Site.Run] runs a playbook, a tagged subset or one role against the
//     VM, for what the plugin does not implement natively.
//
// Secrets (the SSH key, a become password) travel in a private extra-vars
// file, never on a command line.
package appliance
