package cloud

import (
	"context"
	"io"
	"time"
)

// PowerState is the power state of a Machine as reported by the hypervisor.
type PowerState int

const (
	PowerRunning PowerState = iota
	PowerShutdown
	PowerCrashed
)

func (p PowerState) String() string {
	switch p {
	case PowerRunning:
		return "running"
	case PowerShutdown:
		return "shutdown"
	case PowerCrashed:
		return "crashed"
	}
	return "unknown"
}

// MachineSpec describes a VM to boot.
type MachineSpec struct {
	ID, Name, Hostname, Disk, FixedIP string
	SSHDelay                          time.Duration
	// Firewall is the port's filter (its security groups) from the
	// start, as Neutron's agent has it in place before Nova starts the
	// instance.
	Firewall *Firewall
}

// FirewallRule allows one flow through a port: Protocol "" (any), a name
// or a number; PortMin and PortMax the port range (0: any), or ICMP's
// type and code; Remote the peer's CIDR ("": any).
type FirewallRule struct {
	Protocol         string
	PortMin, PortMax int
	Remote           string
}

// Firewall is what a port lets through besides answers to allowed
// connections (IPv4: the lab's network carries no IPv6).
type Firewall struct {
	Ingress, Egress []FirewallRule
}

// FirewalledMachine may be implemented by a Machine whose hypervisor
// enforces security groups; SetFirewall replaces its port's filter.
type FirewalledMachine interface {
	SetFirewall(*Firewall) error
}

// Machine is a running (or stopped) VM provided by the Hypervisor.
type Machine interface {
	Stop(ctx context.Context) error
	Start(ctx context.Context) error
	Reboot(ctx context.Context, hard bool) error
	HardReset() error
	Destroy() error
	PowerState() PowerState
	AddFloatingIP(ip string) error
	RemoveFloatingIP(ip string) error
	ConsoleLog() string
}

// Hypervisor provides disks and machines to the cloud double.
type Hypervisor interface {
	CloneDisk(src string) (string, error) // "" = empty disk; returns a disk id
	DeleteDisk(id string) error
	DiskSize(id string) (int64, error)
	// Boot boots from spec.Disk in place; onPower is called on guest-initiated
	// poweroff/reboot.
	Boot(spec MachineSpec, onPower func(PowerState)) (Machine, error)
}

// Metadata is what the metadata service should serve for one VM.
type Metadata struct {
	UUID       string            `json:"uuid"`
	Name       string            `json:"name"`
	Hostname   string            `json:"hostname"`
	Meta       map[string]string `json:"meta"`
	PublicKeys map[string]string `json:"public_keys"`
	UserData   []byte            `json:"user_data,omitempty"`
	ProjectID  string            `json:"project_id"` // the server's project, as Nova's meta_data.json says
	// ConfigDrive: the server was created with config_drive = true, so the
	// VM also gets this metadata on a config drive.
	ConfigDrive bool `json:"config_drive,omitempty"`
}

// DiskImporter may be implemented by a Hypervisor to turn image data
// uploaded to Glance (PUT .../file, image import) into a bootable disk.
// Without it, uploaded data is kept in memory and served back by GET
// .../file, and servers booted from such images get an empty disk.
type DiskImporter interface {
	ImportDisk(r io.Reader, diskFormat string) (string, error)
}

// DiskExporter may be implemented by a Hypervisor to write a disk as an
// image file in a disk format (raw or qcow2), returning its virtual size.
// With it, Glance keeps a real file for every image made from a disk
// (snapshots, volume uploads, seeded images), serves it from GET .../file
// and reports its true size, virtual_size, checksum and os_hash_value.
type DiskExporter interface {
	ExportDisk(id, diskFormat, path string) (virtualSize int64, err error)
}
