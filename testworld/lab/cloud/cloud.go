// Package cloud is an in-process OpenStack API double (Keystone v3, Nova
// v2.1, Glance v2, Neutron v2.0, Cinder v3) served over HTTP on loopback so
// that gophercloud v2 and the official openstack CLI can drive a local lab.
// VMs and disks come from a Hypervisor.
package cloud

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/faultinject"
)

// Options configures a Cloud.
type Options struct {
	Addr                          string // default "127.0.0.1:0"
	Hypervisor                    Hypervisor
	Region                        string // default "RegionOne"
	Users                         []User
	TokenTTL                      time.Duration // default 1h
	Timing                        Timing
	FixedCIDR, FixedGateway       string // internal network "lab-net"; default 10.213.0.0/16, 10.213.0.1
	FloatingCIDR, FloatingGateway string // external network "public"; default 172.24.4.0/24, 172.24.4.1
	Logf                          func(format string, args ...any)
	// Control adds endpoints /_control/<name> for things the cloud does
	// not own (the lab's network switches), next to faults and status.
	Control map[string]http.Handler
}

// User is a Keystone user with its default project. Roles are the roles
// it has on that project and on OtherProjects (project names in
// ProjectDomain), default member and reader; a user with "admin" passes every
// policy check, as a cloud admin does.
type User struct {
	Name, Password, Project, Domain string
	// ProjectDomain holds Project and OtherProjects; default Domain.
	ProjectDomain  string
	Roles          []string
	OtherProjects  []string
	AppCredentials []AppCredential
}

// AppCredential is a Keystone application credential of a User.
type AppCredential struct{ ID, Name, Secret string }

// Timing says how long asynchronous transitions take. Zero fields get defaults.
type Timing struct {
	ServerBuild  time.Duration // BUILD -> ACTIVE (before Hypervisor.Boot); default 200ms
	ServerAction time.Duration // stop/start/reboot task duration; default 100ms
	ServerDelete time.Duration // DELETE -> gone; default 100ms
	ImageSave    time.Duration // snapshot/upload: queued -> saving -> active; default 200ms
	VolumeCreate time.Duration // creating -> available; default 200ms
	VolumeDelete time.Duration // deleting -> gone; default 100ms
	VolumeUpload time.Duration // uploading -> available; default 200ms
	// Cinder snapshot and backup: creating -> available; default 200ms
	SnapshotCreate, BackupCreate time.Duration

	// The rest is off (zero) unless set, as in the realistic profile.
	GuestBoot    time.Duration // a booted machine's sshd answers after this (MachineSpec.SSHDelay)
	TransferRate int64         // bytes/s added for the data a snapshot, upload or volume copies
	Jitter       float64       // each duration varies by up to ±Jitter (0.3 = ±30%)
	ListLag      time.Duration // a new server, image, volume or floating IP shows in lists after up to this
}

func (t *Timing) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.ServerBuild, 200*time.Millisecond)
	def(&t.ServerAction, 100*time.Millisecond)
	def(&t.ServerDelete, 100*time.Millisecond)
	def(&t.ImageSave, 200*time.Millisecond)
	def(&t.VolumeCreate, 200*time.Millisecond)
	def(&t.VolumeDelete, 100*time.Millisecond)
	def(&t.VolumeUpload, 200*time.Millisecond)
	def(&t.SnapshotCreate, 200*time.Millisecond)
	def(&t.BackupCreate, 200*time.Millisecond)
}

// Flavor is a Nova flavor. RAM is in MiB, Disk in GiB.
type Flavor struct {
	ID, Name         string
	VCPUs, RAM, Disk int
}

// ImageSeed preloads a Glance image. Disk is a Hypervisor disk id (may be
// empty for an image without data). Owner defaults to the first user's
// project; Visibility to "public".
type ImageSeed struct {
	ID, Name                    string
	Disk                        string
	DiskFormat, ContainerFormat string // default qcow2 / bare
	Visibility                  string
	Owner                       string // project name or id
	MinDisk, MinRAM             int
	Protected                   bool
	Tags                        []string
	Properties                  map[string]string
	Data                        []byte // optional image data served by GET .../file
	// CreatedAt backdates created_at and updated_at (default now), so a
	// test can seed images of distinct ages without waiting for the clock
	// (Glance reports them to the second).
	CreatedAt time.Time
}

type project struct{ ID, Name, DomainID string }

type userRec struct {
	ID string
	User
	project *project   // default project
	others  []*project // OtherProjects
}

// Cloud is the OpenStack API double: one HTTP front end over five
// services, each a type with its own state and lock (see doc.go for the
// lock order). Cloud itself holds only what every service shares: the
// options, the listener, background work, faults, call counts and the
// state log.
type Cloud struct {
	o        Options
	ln       net.Listener
	srv      *http.Server
	url      string
	done     chan struct{}
	wg       sync.WaitGroup
	bgMu     sync.Mutex // guards bgClosed and wg.Add
	bgClosed bool

	lifeMu  sync.Mutex // guards started and closed
	started bool
	closed  bool

	identity *keystone
	compute  *nova
	image    *glance
	network  *neutron
	volume   *cinder

	faults *faultinject.Injector   // its lock is a leaf: taken with any service lock held
	apis   map[string]http.Handler // by service: the service behind the faults

	callMu sync.Mutex
	calls  map[string]int

	jitter jitterDraws

	states  stateLog // state changes and first observations, for benchmarks
	journal journal  // the calls that changed something, for the behaviour suite

	inflight atomic.Int64 // API requests being served, see InFlight
}

// New validates o and builds a Cloud; call Start to serve.
func New(o Options) (*Cloud, error) {
	if o.Hypervisor == nil {
		return nil, errors.New("cloud: Options.Hypervisor is required")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Region == "" {
		o.Region = "RegionOne"
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = time.Hour
	}
	if len(o.Users) == 0 {
		o.Users = []User{{Name: "lab", Password: "lab-password", Project: "lab", Domain: "Default"}}
	}
	if o.FixedCIDR == "" {
		o.FixedCIDR, o.FixedGateway = "10.213.0.0/16", "10.213.0.1"
	}
	if o.FloatingCIDR == "" {
		o.FloatingCIDR, o.FloatingGateway = "172.24.4.0/24", "172.24.4.1"
	}
	o.Timing.defaults()
	c := &Cloud{o: o, done: make(chan struct{}), calls: map[string]int{}}
	c.faults = c.newFaults()
	c.apis = c.newAPIs()
	var err error
	if c.identity, err = newKeystone(c, o.Users); err != nil {
		return nil, err
	}
	c.compute = newNova(c)
	c.image = newGlance(c)
	if c.network, err = newNeutron(c, c.identity.projectIDs()); err != nil {
		return nil, err
	}
	c.volume = newCinder(c)
	return c, nil
}

// Start listens on Options.Addr and serves in the background.
func (c *Cloud) Start() error {
	c.lifeMu.Lock()
	if c.started {
		c.lifeMu.Unlock()
		return errors.New("cloud: already started")
	}
	c.started = true
	c.lifeMu.Unlock()
	ln, err := net.Listen("tcp", c.o.Addr)
	if err != nil {
		return err
	}
	c.ln = ln
	c.url = "http://" + ln.Addr().String()
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = c.srv.Serve(ln) }() // ends with ErrServerClosed at Close
	c.logf("cloud: serving on %s", c.url)
	return nil
}

// URL is the base URL, e.g. http://127.0.0.1:PORT.
func (c *Cloud) URL() string { return c.url }

// AuthURL is the Keystone v3 endpoint.
func (c *Cloud) AuthURL() string { return c.url + "/identity/v3" }

// Close stops serving and waits for background transitions. Machines still
// alive are destroyed.
func (c *Cloud) Close() error {
	c.lifeMu.Lock()
	if c.closed {
		c.lifeMu.Unlock()
		return nil
	}
	c.closed = true
	c.lifeMu.Unlock()
	c.bgMu.Lock()
	c.bgClosed = true
	close(c.done)
	c.bgMu.Unlock()
	var err error
	if c.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = c.srv.Shutdown(ctx)
		cancel()
		if err != nil {
			c.srv.Close()
		}
	}
	c.wg.Wait()
	defer c.image.removeFiles()
	for _, m := range c.compute.takeMachines() {
		if derr := m.Destroy(); derr != nil {
			c.logf("cloud: Close: destroying a machine: %v", derr)
		}
	}
	return err
}

func (c *Cloud) logf(format string, args ...any) {
	if c.o.Logf != nil {
		c.o.Logf(format, args...)
	}
}

// goAfter runs f after d in the background unless the cloud closes first.
func (c *Cloud) goAfter(d time.Duration, f func()) {
	c.bgMu.Lock()
	if c.bgClosed {
		c.bgMu.Unlock()
		return
	}
	c.wg.Add(1)
	c.bgMu.Unlock()
	go func() {
		defer c.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
			return
		}
		f()
	}()
}

// sleep waits d; false when the cloud closed meanwhile.
func (c *Cloud) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}

// AddFlavor preloads a flavor (replacing one with the same id).
func (c *Cloud) AddFlavor(f Flavor) { c.compute.addFlavor(f) }

// ProjectID is the id of the project named name ("" when none).
func (c *Cloud) ProjectID(name string) string { return c.identity.projectID(name) }

// countCall counts one API call to svc.
func (c *Cloud) countCall(svc string) {
	c.callMu.Lock()
	c.calls[svc]++
	c.callMu.Unlock()
}

// Calls returns API calls counted by service.
func (c *Cloud) Calls() map[string]int {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	m := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		m[k] = v
	}
	return m
}

// MetadataFor returns metadata for the server owning fixedIP, or nil.
func (c *Cloud) MetadataFor(fixedIP string) *Metadata { return c.compute.metadataFor(fixedIP) }

func hostname(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == '_' || r == ' ' || r == '.':
			b.WriteRune('-')
		}
	}
	h := strings.Trim(b.String(), "-")
	if len(h) > 63 {
		h = h[:63]
	}
	if h == "" {
		h = "server"
	}
	return h
}

// ---- ids, time and JSON helpers ----

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newHexID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func tsZ(t time.Time) string     { return t.UTC().Format("2006-01-02T15:04:05Z") }
func tsMicro(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000") }
func tsMicroZ(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

type obj = map[string]any

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		json.NewEncoder(w).Encode(v)
	}
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<20))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed request body: %v", err)
	}
	return nil
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
