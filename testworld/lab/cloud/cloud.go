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
	"time"
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

// User is a Keystone user with its (single) project.
type User struct {
	Name, Password, Project, Domain string
	AppCredentials                  []AppCredential
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
}

type project struct{ ID, Name, DomainID string }

type userRec struct {
	ID string
	User
	project *project
}

// Cloud is the OpenStack API double.
type Cloud struct {
	o        Options
	mu       sync.Mutex
	ln       net.Listener
	srv      *http.Server
	url      string
	done     chan struct{}
	wg       sync.WaitGroup
	bgMu     sync.Mutex // guards bgClosed and wg.Add (independent of mu)
	bgClosed bool

	domainID string
	users    []*userRec
	projects map[string]*project // by id
	tokens   map[string]*token

	flavors   []*Flavor
	images    map[string]*image
	servers   map[string]*server
	keypairs  map[string]*keypair // by user id + "/" + name
	volumes   map[string]*volume
	networks  map[string]*network
	subnets   map[string]*subnet
	ports     map[string]*port
	fips      map[string]*floatingIP
	secgroups map[string]*secgroup
	volTypes  []volType
	labNet    *network
	publicNet *network
	faults    []*faultState
	calls     map[string]int
	states    stateLog // state changes and first observations, for benchmarks
	closed    bool
	started   bool
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
	c := &Cloud{
		o: o, done: make(chan struct{}), domainID: "default",
		projects: map[string]*project{}, tokens: map[string]*token{},
		images: map[string]*image{}, servers: map[string]*server{}, keypairs: map[string]*keypair{},
		volumes: map[string]*volume{}, networks: map[string]*network{}, subnets: map[string]*subnet{},
		ports: map[string]*port{}, fips: map[string]*floatingIP{}, secgroups: map[string]*secgroup{},
		calls: map[string]int{},
	}
	byName := map[string]*project{}
	for _, u := range o.Users {
		if u.Name == "" {
			return nil, errors.New("cloud: user without name")
		}
		if u.Domain == "" {
			u.Domain = "Default"
		}
		if u.Project == "" {
			u.Project = u.Name
		}
		p := byName[u.Domain+"/"+u.Project]
		if p == nil {
			p = &project{ID: newHexID(), Name: u.Project, DomainID: domainID(u.Domain)}
			byName[u.Domain+"/"+u.Project] = p
			c.projects[p.ID] = p
		}
		c.users = append(c.users, &userRec{ID: newHexID(), User: u, project: p})
	}
	if err := c.initNetwork(); err != nil {
		return nil, err
	}
	c.volTypes = []volType{{ID: newUUID(), Name: "lvmdriver-1"}, {ID: newUUID(), Name: "__DEFAULT__"}}
	return c, nil
}

// Start listens on Options.Addr and serves in the background.
func (c *Cloud) Start() error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("cloud: already started")
	}
	c.started = true
	c.mu.Unlock()
	ln, err := net.Listen("tcp", c.o.Addr)
	if err != nil {
		return err
	}
	c.ln = ln
	c.url = "http://" + ln.Addr().String()
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 30 * time.Second}
	go c.srv.Serve(ln)
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
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
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
	c.mu.Lock()
	var ms []Machine
	for _, s := range c.servers {
		if s.machine != nil {
			ms = append(ms, s.machine)
			s.machine = nil
		}
	}
	c.mu.Unlock()
	for _, m := range ms {
		m.Destroy()
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
func (c *Cloud) AddFlavor(f Flavor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.ID == "" {
		f.ID = newUUID()
	}
	for i, g := range c.flavors {
		if g.ID == f.ID {
			c.flavors[i] = &f
			return
		}
	}
	c.flavors = append(c.flavors, &f)
}

// Calls returns API calls counted by service.
func (c *Cloud) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		m[k] = v
	}
	return m
}

// MetadataFor returns metadata for the server owning fixedIP, or nil.
func (c *Cloud) MetadataFor(fixedIP string) *Metadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.servers {
		if s.deleted {
			continue
		}
		for _, pid := range s.Ports {
			p := c.ports[pid]
			if p == nil || len(p.FixedIPs) == 0 || p.FixedIPs[0].IP != fixedIP {
				continue
			}
			md := &Metadata{UUID: s.ID, Name: s.Name, Hostname: hostname(s.Name), Meta: map[string]string{}, PublicKeys: map[string]string{}, ConfigDrive: s.ConfigDrive}
			for k, v := range s.Meta {
				md.Meta[k] = v
			}
			if s.KeyName != "" {
				if kp := c.keypairs[s.UserID+"/"+s.KeyName]; kp != nil {
					md.PublicKeys[kp.Name] = kp.PublicKey
				}
			}
			if s.UserData != nil {
				md.UserData = append([]byte(nil), s.UserData...)
			}
			return md
		}
	}
	return nil
}

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

// match matches a path split in segments against a pattern where "*"
// matches any one segment; it returns the wildcard values.
func match(segs []string, pattern string) ([]string, bool) {
	ps := strings.Split(pattern, "/")
	if pattern == "" {
		ps = nil
	}
	if len(ps) != len(segs) {
		return nil, false
	}
	var out []string
	for i, p := range ps {
		if p == "*" {
			out = append(out, segs[i])
		} else if p != segs[i] {
			return nil, false
		}
	}
	return out, true
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
