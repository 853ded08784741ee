package vm

import _ "embed" // the guest and boot scripts are files, checked by shellcheck

// bootScript boots a VM: it runs on the host in the VM's network
// namespace, builds the VM's root in new namespaces and execs systemd.
//
//go:embed guest/boot.sh
var bootScript string

// setupScript mounts a disk like bootScript (without the network) and runs a
// command in the chroot: $1 VM userland, $2 disk dir, $3... command.
//
//go:embed guest/setup.sh
var setupScript string

// ansibleInitScript stands in for stackhpc/ansible-init.
//
//go:embed guest/ansible-init.py
var ansibleInitScript string

// updateCATrustScript stands in for Rocky's update-ca-trust (roles such as
// the appliance's cacerts run it).
//
//go:embed guest/update-ca-trust.sh
var updateCATrustScript string

// sshdConfig is the lab's sshd_config.d drop-in.
//
//go:embed guest/sshd_config
var sshdConfig string

// cloudConfig is the image's cloud-init configuration.
//
//go:embed guest/cloud.cfg
var cloudConfig string

// sshdDropIn orders sshd after cloud-init.
//
//go:embed guest/ssh.service.conf
var sshdDropIn string

// ansibleInitUnit runs ansible-init once per boot after the network is up.
//
//go:embed guest/ansible-init.service
var ansibleInitUnit string

// dhcpNetwork is eth0's systemd-networkd configuration in an image whose
// network has a DHCP server (BaseImageOptions.DHCP).
//
//go:embed guest/20-eth0.network
var dhcpNetwork string

// dhclientConf makes cloud-init's ephemeral DHCP in its local stage give up
// at once: the lab network has no DHCP server (the hypervisor configures
// eth0), so the OpenStack data source is found in the network stage.
//
//go:embed guest/dhclient.conf
var dhclientConf string
