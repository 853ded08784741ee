package lab

import (
	"context"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

// hypervisor lets the cloud double drive the VM manager: the two packages
// declare the same shapes so neither imports the other.
type hypervisor struct{ m *vm.Manager }

func (h hypervisor) CloneDisk(src string) (string, error) { return h.m.CloneDisk(src) }
func (h hypervisor) DeleteDisk(id string) error           { return h.m.DeleteDisk(id) }
func (h hypervisor) DiskSize(id string) (int64, error)    { return h.m.DiskSize(id) }

// ExportDisk and UnpackDisk: Glance keeps real image files and servers boot from them.
func (h hypervisor) ExportDisk(id, format, path string) (int64, error) {
	return h.m.ExportDisk(id, format, path)
}

func (h hypervisor) Boot(spec cloud.MachineSpec, onPower func(cloud.PowerState)) (cloud.Machine, error) {
	m, err := h.m.Boot(vm.MachineSpec{
		ID: spec.ID, Name: spec.Name, Hostname: spec.Hostname, Disk: spec.Disk, FixedIP: spec.FixedIP, SSHDelay: spec.SSHDelay,
		Firewall: vmFirewall(spec.Firewall),
	}, func(p vm.PowerState) { onPower(powerState(p)) })
	if err != nil {
		return nil, err
	}
	return machine{m}, nil
}

type machine struct{ *vm.Machine }

func (m machine) PowerState() cloud.PowerState { return powerState(m.Machine.PowerState()) }

func (m machine) Stop(ctx context.Context) error { return m.Machine.Stop(ctx) }

// SetFirewall: the VMs' ports enforce their security groups on the host.
func (m machine) SetFirewall(fw *cloud.Firewall) error { return m.Machine.SetFirewall(vmFirewall(fw)) }

func vmFirewall(fw *cloud.Firewall) *vm.Firewall {
	if fw == nil {
		return nil
	}
	conv := func(rs []cloud.FirewallRule) []vm.FirewallRule {
		var out []vm.FirewallRule
		for _, r := range rs {
			out = append(out, vm.FirewallRule(r))
		}
		return out
	}
	return &vm.Firewall{Ingress: conv(fw.Ingress), Egress: conv(fw.Egress)}
}

func powerState(p vm.PowerState) cloud.PowerState {
	switch p {
	case vm.PowerRunning:
		return cloud.PowerRunning
	case vm.PowerShutdown:
		return cloud.PowerShutdown
	default:
		return cloud.PowerCrashed
	}
}

func (h hypervisor) UnpackDisk(path, format, key string) (string, error) {
	return h.m.UnpackDisk(path, format, key)
}
