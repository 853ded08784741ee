package cloud

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// fakeHV is an in-memory Hypervisor for tests.
type fakeHV struct {
	mu       sync.Mutex
	n        int
	disks    map[string]int64
	machines map[string]*fakeMachine
	specs    []MachineSpec
}

func newFakeHV() *fakeHV {
	return &fakeHV{disks: map[string]int64{}, machines: map[string]*fakeMachine{}}
}

func (h *fakeHV) CloneDisk(src string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := int64(1 << 20)
	if src != "" {
		s, ok := h.disks[src]
		if !ok {
			return "", fmt.Errorf("no disk %q", src)
		}
		size = s
	}
	h.n++
	id := fmt.Sprintf("disk-%d", h.n)
	h.disks[id] = size
	return id, nil
}

func (h *fakeHV) DeleteDisk(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.disks[id]; !ok {
		return fmt.Errorf("no disk %q", id)
	}
	delete(h.disks, id)
	return nil
}

func (h *fakeHV) DiskSize(id string) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.disks[id]
	if !ok {
		return 0, fmt.Errorf("no disk %q", id)
	}
	return s, nil
}

func (h *fakeHV) Boot(spec MachineSpec, onPower func(PowerState)) (Machine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.disks[spec.Disk]; !ok {
		return nil, fmt.Errorf("boot: no disk %q", spec.Disk)
	}
	m := &fakeMachine{hv: h, spec: spec, onPower: onPower, fips: map[string]bool{}}
	h.machines[spec.ID] = m
	h.specs = append(h.specs, spec)
	return m, nil
}

func (h *fakeHV) machine(id string) *fakeMachine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.machines[id]
}

func (h *fakeHV) diskCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.disks)
}

func (h *fakeHV) machineCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.machines)
}

func (h *fakeHV) spec(id string) (MachineSpec, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.specs {
		if s.ID == id {
			return s, true
		}
	}
	return MachineSpec{}, false
}

type fakeMachine struct {
	hv      *fakeHV
	spec    MachineSpec
	onPower func(PowerState)
	mu      sync.Mutex
	state   PowerState
	resets  int
	reboots int
	fips    map[string]bool
	fw      *Firewall
	fwSets  int
}

func (m *fakeMachine) SetFirewall(fw *Firewall) error {
	m.mu.Lock()
	m.fw = fw
	m.fwSets++
	m.mu.Unlock()
	return nil
}

// firewall is the machine's filter now: at boot, or set since.
func (m *fakeMachine) firewall() *Firewall {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fwSets == 0 {
		return m.spec.Firewall
	}
	return m.fw
}

func (m *fakeMachine) set(s PowerState)                { m.mu.Lock(); m.state = s; m.mu.Unlock() }
func (m *fakeMachine) Stop(ctx context.Context) error  { m.set(PowerShutdown); return nil }
func (m *fakeMachine) Start(ctx context.Context) error { m.set(PowerRunning); return nil }
func (m *fakeMachine) Reboot(ctx context.Context, hard bool) error {
	m.mu.Lock()
	m.reboots++
	m.state = PowerRunning
	m.mu.Unlock()
	return nil
}
func (m *fakeMachine) HardReset() error {
	m.mu.Lock()
	m.resets++
	m.mu.Unlock()
	return nil
}
func (m *fakeMachine) Destroy() error {
	m.hv.mu.Lock()
	delete(m.hv.machines, m.spec.ID)
	m.hv.mu.Unlock()
	return nil
}
func (m *fakeMachine) PowerState() PowerState { m.mu.Lock(); defer m.mu.Unlock(); return m.state }
func (m *fakeMachine) AddFloatingIP(ip string) error {
	m.mu.Lock()
	m.fips[ip] = true
	m.mu.Unlock()
	return nil
}
func (m *fakeMachine) RemoveFloatingIP(ip string) error {
	m.mu.Lock()
	delete(m.fips, ip)
	m.mu.Unlock()
	return nil
}
func (m *fakeMachine) hasFIP(ip string) bool { m.mu.Lock(); defer m.mu.Unlock(); return m.fips[ip] }
func (m *fakeMachine) ConsoleLog() string {
	return "boot line 1\nboot line 2\n" + m.spec.Hostname + " login:\n"
}
func (m *fakeMachine) guestPowerOff() { m.set(PowerShutdown); m.onPower(PowerShutdown) }

// ---- test lab ----

type lab struct {
	t         *testing.T
	c         *Cloud
	hv        *fakeHV
	imageID   string
	baseDisks int
}

const (
	testFlavor    = "11111111-2222-3333-4444-555555555555"
	testImageName = "Rocky-9-GenericCloud-Base-9.6"
)

func fastTiming() Timing {
	return Timing{ServerBuild: 50 * time.Millisecond, ServerAction: 30 * time.Millisecond, ServerDelete: 30 * time.Millisecond,
		ImageSave: 50 * time.Millisecond, VolumeCreate: 50 * time.Millisecond, VolumeDelete: 30 * time.Millisecond, VolumeUpload: 50 * time.Millisecond}
}

func newLab(t *testing.T, mod func(*Options)) *lab {
	t.Helper()
	hv := newFakeHV()
	o := Options{Hypervisor: hv, Timing: fastTiming(), Logf: t.Logf,
		Users: []User{{Name: "lab", Password: "lab-password", Project: "lab", Domain: "Default",
			AppCredentials: []AppCredential{{ID: "appcred-id-1", Name: "ci", Secret: "s3cret"}}}}}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, c: c, hv: hv}
	t.Cleanup(func() { c.Close() })
	c.AddFlavor(Flavor{ID: testFlavor, Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20})
	c.AddFlavor(Flavor{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40})
	disk, _ := hv.CloneDisk("")
	hv.mu.Lock()
	hv.disks[disk] = 900 << 20
	hv.mu.Unlock()
	l.imageID, err = c.AddImage(ImageSeed{Name: testImageName, Disk: disk, MinDisk: 10,
		Properties: map[string]string{"os_distro": "rocky", "os_version": "9.6"}})
	if err != nil {
		t.Fatal(err)
	}
	l.baseDisks = hv.diskCount()
	return l
}

func (l *lab) provider(opts gophercloud.AuthOptions) *gophercloud.ProviderClient {
	l.t.Helper()
	opts.IdentityEndpoint = l.c.AuthURL()
	p, err := openstack.AuthenticatedClient(context.Background(), opts)
	if err != nil {
		l.t.Fatalf("auth: %v", err)
	}
	return p
}

func (l *lab) pwOpts() gophercloud.AuthOptions {
	return gophercloud.AuthOptions{Username: "lab", Password: "lab-password", DomainName: "Default", TenantName: "lab", AllowReauth: true}
}

type clients struct {
	compute, image, network, volume *gophercloud.ServiceClient
}

func (l *lab) clients() clients {
	l.t.Helper()
	p := l.provider(l.pwOpts())
	eo := gophercloud.EndpointOpts{Region: "RegionOne"}
	var cl clients
	var err error
	if cl.compute, err = openstack.NewComputeV2(p, eo); err != nil {
		l.t.Fatal(err)
	}
	if cl.image, err = openstack.NewImageV2(p, eo); err != nil {
		l.t.Fatal(err)
	}
	if cl.network, err = openstack.NewNetworkV2(p, eo); err != nil {
		l.t.Fatal(err)
	}
	if cl.volume, err = openstack.NewBlockStorageV3(p, eo); err != nil {
		l.t.Fatal(err)
	}
	return cl
}

// waitFor polls f every 20ms until it returns true or timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := f()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertClean waits until no live resources remain and the hypervisor
// holds only the seed disks and no machines.
func (l *lab) assertClean() {
	l.t.Helper()
	waitFor(l.t, 5*time.Second, "clean status", func() (bool, error) {
		st := l.c.Status()
		return st.Total() == 0 && l.hv.machineCount() == 0 && l.hv.diskCount() == l.baseDisks, nil
	})
}
