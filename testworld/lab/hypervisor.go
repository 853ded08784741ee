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
	}, func(p vm.PowerState) { onPower(powerState(p)) })
	if err != nil {
		return nil, err
	}
	return machine{m}, nil
}

type machine struct{ *vm.Machine }

func (m machine) PowerState() cloud.PowerState { return powerState(m.Machine.PowerState()) }

func (m machine) Stop(ctx context.Context) error { return m.Machine.Stop(ctx) }

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
