package vm

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The metadata service listens on <gateway>:<random port>. In every VM's
// network namespace an iptables nat OUTPUT rule DNATs 169.254.169.254:80 to
// it, so each manager has its own service and nothing global is shared. The
// VM is identified by the source (fixed) IP of the request.

const metadataIP = "169.254.169.254"

// vendorData2 is Nova's vendor_data2.json without vendor data configured:
// its default provider, StaticJSON, under "static" (TestContract).
const vendorData2 = `{"static": {}}`

func (m *Manager) startMetadata() error {
	if m.opts.NetworkMetadata {
		return nil
	}
	l, err := net.Listen("tcp4", net.JoinHostPort(m.gw.String(), "0"))
	if err != nil {
		return fmt.Errorf("vm: metadata listener: %w", err)
	}
	m.mdListener = l
	m.mdAddr = l.Addr().String()
	m.mdServer = &http.Server{Handler: MetadataHandler(m.metadataOf), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.mdServer.Serve(l) }()
	return nil
}

// MetadataAddr is the host:port the metadata service listens on (on the gateway).
func (m *Manager) MetadataAddr() string { return m.mdAddr }

func (m *Manager) metadataOf(fixedIP string) *Metadata {
	if m.opts.Metadata == nil {
		return nil
	}
	return m.opts.Metadata(fixedIP)
}

// MetadataHandler answers as the metadata service does, for the VM whose
// fixed IP a request comes from (lookup's nil: 404): the manager's
// service, and the contract tests reading the double's metadata as a
// guest would.
func MetadataHandler(lookup func(fixedIP string) *Metadata) http.Handler {
	return metadataHandler(lookup)
}

type metadataHandler func(fixedIP string) *Metadata

func (h metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	var md *Metadata
	if err == nil {
		md = h(host)
	}
	serveMetadata(w, r, md, host)
}

// MetaDataJSON renders the OpenStack meta_data.json document.
func MetaDataJSON(md *Metadata) []byte {
	meta := md.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	pk := md.PublicKeys
	if pk == nil {
		pk = map[string]string{}
	}
	type key struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Data string `json:"data"`
	}
	keys := []key{}
	for _, n := range sortedKeys(pk) {
		keys = append(keys, key{Name: n, Type: "ssh", Data: pk[n]})
	}
	project := md.ProjectID
	if project == "" {
		project = "fatlab"
	}
	doc := map[string]any{
		"uuid":              md.UUID,
		"name":              md.Name,
		"hostname":          md.Hostname,
		"meta":              meta,
		"public_keys":       pk,
		"keys":              keys,
		"launch_index":      0,
		"availability_zone": "nova",
		"project_id":        project,
		"devices":           []any{},
	}
	b, _ := json.Marshal(doc)
	return b
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func serveMetadata(w http.ResponseWriter, r *http.Request, md *Metadata, ip string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if md == nil {
		http.NotFound(w, r)
		return
	}
	p := r.URL.Path
	text := func(s string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, s)
	}
	// /openstack/<version>/... : every version answers like latest.
	if rest, ok := strings.CutPrefix(p, "/openstack"); ok {
		if rest == "" || rest == "/" {
			text("2012-08-10\n2013-04-04\n2013-10-17\n2015-10-15\n2016-06-30\n2016-10-06\n2017-02-22\n2018-08-27\n2020-10-14\nlatest")
			return
		}
		parts := strings.SplitN(strings.TrimPrefix(rest, "/"), "/", 2)
		file := ""
		if len(parts) == 2 {
			file = parts[1]
		}
		switch file {
		case "":
			idx := "meta_data.json\nnetwork_data.json\nvendor_data.json\nvendor_data2.json"
			if md.UserData != nil {
				idx += "\nuser_data"
			}
			text(idx)
		case "meta_data.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write(MetaDataJSON(md))
		case "user_data":
			if md.UserData == nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(md.UserData)
		case "network_data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"links": [], "networks": [], "services": []}`)
		case "vendor_data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{}`)
		case "vendor_data2.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, vendorData2)
		default:
			http.NotFound(w, r)
		}
		return
	}
	// Minimal EC2 API under /latest/ (and any dated version).
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2)
	if len(parts) < 2 {
		if p == "/" {
			text("latest")
			return
		}
		http.NotFound(w, r)
		return
	}
	sub := parts[1]
	pkNames := sortedKeys(md.PublicKeys)
	switch {
	case sub == "" || sub == "/":
		s := "meta-data/"
		if md.UserData != nil {
			s += "\nuser-data"
		}
		text(s)
	case sub == "user-data":
		if md.UserData == nil {
			http.NotFound(w, r)
			return
		}
		w.Write(md.UserData)
	case sub == "meta-data" || sub == "meta-data/":
		text("ami-id\nami-launch-index\nhostname\ninstance-id\nlocal-hostname\nlocal-ipv4\nplacement/\npublic-keys/")
	case sub == "meta-data/ami-launch-index":
		text("0")
	case sub == "meta-data/ami-id":
		text("ami-00000001")
	case sub == "meta-data/hostname", sub == "meta-data/local-hostname":
		text(md.Hostname)
	case sub == "meta-data/instance-id":
		text(md.UUID)
	case sub == "meta-data/local-ipv4":
		text(ip)
	case sub == "meta-data/placement" || sub == "meta-data/placement/":
		text("availability-zone")
	case sub == "meta-data/placement/availability-zone":
		text("nova")
	case sub == "meta-data/public-keys" || sub == "meta-data/public-keys/":
		var lines []string
		for i, n := range pkNames {
			lines = append(lines, fmt.Sprintf("%d=%s", i, n))
		}
		text(strings.Join(lines, "\n"))
	case strings.HasPrefix(sub, "meta-data/public-keys/"):
		rest := strings.TrimPrefix(sub, "meta-data/public-keys/")
		var i int
		var tail string
		if n, _ := fmt.Sscanf(rest, "%d", &i); n != 1 || i < 0 || i >= len(pkNames) {
			http.NotFound(w, r)
			return
		}
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			tail = rest[j+1:]
		}
		switch tail {
		case "":
			text("openssh-key")
		case "openssh-key":
			text(md.PublicKeys[pkNames[i]])
		default:
			http.NotFound(w, r)
		}
	default:
		http.NotFound(w, r)
	}
}
