package openstack

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

func TestMain(m *testing.M) {
	// The double's transitions take ~100-200 ms; poll them quickly.
	pollInitial, pollMax = 10*time.Millisecond, 100*time.Millisecond
	adoptDelay = 20 * time.Millisecond
	os.Exit(m.Run())
}

// memHV is an in-memory cloud.Hypervisor: disks are sizes, machines are
// power states.
type memHV struct {
	mu    sync.Mutex
	n     int
	disks map[string]int64
	vms   map[string]*memVM
}

func newMemHV() *memHV { return &memHV{disks: map[string]int64{}, vms: map[string]*memVM{}} }

func (h *memHV) CloneDisk(src string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := int64(1 << 30)
	if src != "" {
		s, ok := h.disks[src]
		if !ok {
			return "", fmt.Errorf("memhv: no disk %s", src)
		}
		size = s
	}
	h.n++
	id := fmt.Sprintf("disk%d", h.n)
	h.disks[id] = size
	return id, nil
}

func (h *memHV) DeleteDisk(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.disks, id)
	return nil
}

func (h *memHV) DiskSize(id string) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.disks[id]
	if !ok {
		return 0, fmt.Errorf("memhv: no disk %s", id)
	}
	return s, nil
}

func (h *memHV) Boot(spec cloud.MachineSpec, onPower func(cloud.PowerState)) (cloud.Machine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vm := &memVM{hv: h, id: spec.ID, fips: map[string]bool{}}
	h.vms[spec.ID] = vm
	return vm, nil
}

func (h *memHV) machines() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.vms)
}

type memVM struct {
	hv    *memHV
	id    string
	mu    sync.Mutex
	power cloud.PowerState
	fips  map[string]bool
}

func (m *memVM) setPower(p cloud.PowerState) {
	m.mu.Lock()
	m.power = p
	m.mu.Unlock()
}
func (m *memVM) Stop(context.Context) error         { m.setPower(cloud.PowerShutdown); return nil }
func (m *memVM) Start(context.Context) error        { m.setPower(cloud.PowerRunning); return nil }
func (m *memVM) Reboot(context.Context, bool) error { m.setPower(cloud.PowerRunning); return nil }
func (m *memVM) HardReset() error                   { m.setPower(cloud.PowerRunning); return nil }
func (m *memVM) ConsoleLog() string                 { return "memhv console\n" }
func (m *memVM) PowerState() cloud.PowerState       { m.mu.Lock(); defer m.mu.Unlock(); return m.power }
func (m *memVM) AddFloatingIP(ip string) error {
	m.mu.Lock()
	m.fips[ip] = true
	m.mu.Unlock()
	return nil
}
func (m *memVM) RemoveFloatingIP(ip string) error {
	m.mu.Lock()
	delete(m.fips, ip)
	m.mu.Unlock()
	return nil
}
func (m *memVM) Destroy() error {
	m.hv.mu.Lock()
	delete(m.hv.vms, m.id)
	m.hv.mu.Unlock()
	return nil
}

// lab is a started cloud double with a flavor and a base image that has
// properties a snapshot inherits.
type lab struct {
	c         *cloud.Cloud
	hv        *memHV
	imageID   string
	imageName string
}

func newLab(t *testing.T, mod func(*cloud.Options)) *lab {
	t.Helper()
	// Secrets a Prepare registers stay for the whole test process; a
	// one- or two-letter one would mask words in every later build's Ui.
	const words = "Uploading floating_ip_network adopting"
	if redact.String(words) != words {
		t.Fatalf("an earlier test registered a secret too short to be told apart: %q", redact.String(words))
	}
	hv := newMemHV()
	o := cloud.Options{Hypervisor: hv, Logf: func(f string, a ...any) { t.Logf("cloud: "+f, a...) }}
	if mod != nil {
		mod(&o)
	}
	c, err := cloud.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.AddFlavor(cloud.Flavor{ID: "f1", Name: "m1.small", VCPUs: 1, RAM: 1024, Disk: 10})
	disk, err := hv.CloneDisk("")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.AddImage(cloud.ImageSeed{
		Name: "Rocky-9-GenericCloud", Disk: disk, MinDisk: 2,
		Properties: map[string]string{"signature_verified": "True", "os_distro": "rocky", "hw_disk_bus": "scsi"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &lab{c: c, hv: hv, imageID: id, imageName: "Rocky-9-GenericCloud"}
}

// raw is a template for the lab: no communicator, so builds need no SSH.
func (l *lab) raw(kv ...any) map[string]any {
	r := map[string]any{
		"identity_endpoint": l.c.AuthURL(),
		"username":          "lab",
		"password":          "lab-password",
		"tenant_name":       "lab",
		"domain_name":       "Default",
		"image_name":        "fat-test",
		"source_image":      l.imageID,
		"flavor":            "m1.small",
		"communicator":      "none",
		"state_timeout":     "30s",
	}
	return with(r, kv...)
}

func (l *lab) config(t *testing.T, kv ...any) *Config {
	t.Helper()
	clearOSEnv(t)
	var c Config
	if _, err := c.Prepare(l.raw(kv...)); err != nil {
		t.Fatal(err)
	}
	return &c
}

// assertEmpty fails when the cloud still holds anything the build made.
func (l *lab) assertEmpty(t *testing.T) {
	t.Helper()
	st := l.c.Status()
	if st.Total() != 0 {
		t.Errorf("leftovers: %+v", st)
	}
	if n := l.hv.machines(); n != 0 {
		t.Errorf("%d machines still exist", n)
	}
}

// testUI records what a build says, and logs it.
type testUI struct {
	t    *testing.T
	mu   sync.Mutex
	errs []string
	says []string
}

func newTestUI(t *testing.T) *testUI { return &testUI{t: t} }

func (u *testUI) log(kind, m string) {
	u.t.Helper()
	u.t.Logf("ui %s: %s", kind, m)
}
func (u *testUI) Ask(string) (string, error)          { return "", nil }
func (u *testUI) Askf(string, ...any) (string, error) { return "", nil }
func (u *testUI) Say(m string) {
	u.mu.Lock()
	u.says = append(u.says, m)
	u.mu.Unlock()
	u.log("say", m)
}
func (u *testUI) Sayf(f string, a ...any) { u.Say(fmt.Sprintf(f, a...)) }
func (u *testUI) Message(m string)        { u.Say(m) }
func (u *testUI) Error(m string) {
	u.mu.Lock()
	u.errs = append(u.errs, m)
	u.mu.Unlock()
	u.log("error", m)
}
func (u *testUI) Errorf(f string, a ...any)                                         { u.Error(fmt.Sprintf(f, a...)) }
func (u *testUI) Machine(string, ...string)                                         {}
func (u *testUI) TrackProgress(_ string, _, _ int64, r io.ReadCloser) io.ReadCloser { return r }

func (u *testUI) errors() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.errs, "\n")
}

// newState is a state bag as Builder.Run makes it.
func newState(t *testing.T, c *Config) (multistep.StateBag, *testUI) {
	ui := newTestUI(t)
	state := new(multistep.BasicStateBag)
	state.Put("config", c)
	state.Put("ui", packersdk.Ui(ui))
	state.Put("hook", packersdk.Hook(&packersdk.MockHook{}))
	state.Put("resources", newTracker())
	return state, ui
}

// runSteps runs steps like the SDK's BasicRunner: in order until one
// halts, then every run step's Cleanup in reverse.
func runSteps(t *testing.T, ctx context.Context, state multistep.StateBag, steps ...multistep.Step) {
	t.Helper()
	r := &multistep.BasicRunner{Steps: steps}
	r.Run(ctx, state)
}

func stateErr(state multistep.StateBag) error {
	if e, ok := state.GetOk("error"); ok {
		return e.(error)
	}
	return nil
}
