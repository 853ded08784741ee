package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// effects is what one build did on the cloud, normalised: a key per
// effect ("server.create.metadata.k", "floatingip.associate", ...) with
// its values (several when the call was made several times), so that the
// official builder's and ours can be compared key by key.
type effects map[string][]string

func (e effects) add(k, v string) { e[k] = append(e[k], v) }

// value is the key's values, sorted and joined; "(none)" when absent.
func (e effects) value(k string) string {
	v, ok := e[k]
	if !ok {
		return "(none)"
	}
	v = slices.Clone(v)
	sort.Strings(v)
	return strings.Join(v, " | ")
}

// String lists the effects, one key a line, sorted.
func (e effects) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(e)) {
		fmt.Fprintf(&b, "%s = %s\n", k, e.value(k))
	}
	return b.String()
}

// normaliser replaces what must differ between two builds of one template
// (ids, the unique image name, the generated keypair name) by
// placeholders, and names what the lab seeded (networks, the base image,
// the share project).
type normaliser struct {
	imageName string
	known     map[string]string // id -> placeholder
	subnets   map[string]*net.IPNet
}

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b`)

func (n *normaliser) str(s string) string {
	if p, ok := n.known[s]; ok {
		return p
	}
	if n.imageName != "" {
		s = strings.ReplaceAll(s, n.imageName, "<image_name>")
	}
	return uuidRe.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := n.known[id]; ok {
			return p
		}
		return "<id>"
	})
}

// network names the lab network holding ip.
func (n *normaliser) network(ip string) string {
	for name, sn := range n.subnets {
		if a := net.ParseIP(ip); a != nil && sn.Contains(a) {
			return name
		}
	}
	return n.str(ip)
}

// flatten adds v under prefix: maps by key, lists by index, scalars as
// JSON text with strings normalised.
func (n *normaliser) flatten(e effects, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			e.add(prefix, "{}")
		}
		for k, w := range x {
			n.flatten(e, prefix+"."+k, w)
		}
	case []any:
		if len(x) == 0 {
			e.add(prefix, "[]")
		}
		for i, w := range x {
			n.flatten(e, fmt.Sprintf("%s[%d]", prefix, i), w)
		}
	case string:
		e.add(prefix, n.str(x))
	default:
		b, _ := json.Marshal(x)
		e.add(prefix, string(b))
	}
}

// buildEffects reads the calls of one build (reqs, in order) into effects.
func (n *normaliser) buildEffects(reqs []cloud.Request) effects {
	e := effects{}
	// the keypair a build made is named by placeholder everywhere
	for _, r := range reqs {
		if r.Service == cloud.SvcCompute && r.Method == "POST" && strings.HasSuffix(r.Path, "/os-keypairs") && r.Status < 300 {
			var b struct{ Keypair struct{ Name string } }
			if json.Unmarshal(r.Body, &b) == nil {
				n.known[b.Keypair.Name] = "<temporary keypair>"
			}
		}
	}
	for _, r := range reqs {
		n.request(e, r)
	}
	return e
}

// request adds one call's effects.
func (n *normaliser) request(e effects, r cloud.Request) {
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	segs := strings.Split(strings.Trim(r.Path, "/"), "/")
	last := segs[len(segs)-1]
	key := ""
	switch {
	case r.Service == cloud.SvcIdentity || r.Service == cloud.SvcImage:
		return // tokens; the image is compared by its end state
	case r.Method == "DELETE" && (r.Status == 404 || r.Status == 405):
		return // deleting what is gone (or nothing) changes nothing
	case r.Method == "DELETE":
		key = resourceKind(segs) + ".delete"
		e.add(key, n.str(last))
	case r.Method == "POST" && last == "action":
		for action, args := range body {
			key = resourceKind(segs) + ".action." + action
			n.flatten(e, key, withDefaults(action, args))
		}
	case r.Service == cloud.SvcNetwork && strings.HasPrefix(last, "floatingips") || r.Service == cloud.SvcNetwork && len(segs) > 1 && segs[len(segs)-2] == "floatingips":
		key = n.floatingIP(e, r, body)
	case r.Service == cloud.SvcCompute && last == "servers":
		key = "server.create"
		n.server(e, body["server"])
	case r.Service == cloud.SvcCompute && last == "os-keypairs":
		key = "keypair.create"
		n.keypair(e, body["keypair"])
	default:
		key = resourceKind(segs) + "." + map[string]string{"POST": "create", "PUT": "update", "PATCH": "update"}[r.Method]
		for _, v := range body {
			n.flatten(e, key, v)
		}
	}
	if r.Status >= 400 {
		e.add(key+".failed", fmt.Sprint(r.Status))
	}
}

// resourceKind names the resource a path is about: "server", "volume",
// "keypair", "port", ...
func resourceKind(segs []string) string {
	for i := len(segs) - 1; i >= 0; i-- {
		switch s := segs[i]; s {
		case "servers", "volumes", "os-keypairs", "ports", "floatingips", "security-groups", "os-volume_attachments":
			return strings.TrimPrefix(strings.TrimSuffix(s, "s"), "os-")
		}
	}
	return strings.Join(segs, "/")
}

// server adds a server create's body: user_data decoded, networks by name.
func (n *normaliser) server(e effects, v any) {
	s, _ := v.(map[string]any)
	for k, w := range s {
		switch k {
		case "config_drive", "user_data":
			if w == false || w == "" {
				continue // Nova's defaults, sent or not
			}
		}
		switch k {
		case "user_data":
			d, err := base64.StdEncoding.DecodeString(fmt.Sprint(w))
			if err != nil {
				d = []byte("(not base64) " + fmt.Sprint(w))
			}
			e.add("server.create.user_data", string(d))
		case "networks":
			nets, _ := w.([]any)
			for i, nic := range nets {
				m, _ := nic.(map[string]any)
				if _, ok := m["port"]; ok {
					m["port"] = "(a port)"
				}
				n.flatten(e, fmt.Sprintf("server.create.networks[%d]", i), m)
			}
			if s, ok := w.(string); ok { // "auto", "none"
				e.add("server.create.networks", s)
			}
		default:
			n.flatten(e, "server.create."+k, w)
		}
	}
}

// floatingIP adds a floating IP's create or update: its network, and the
// network of the address it was attached to.
func (n *normaliser) floatingIP(e effects, r cloud.Request, body map[string]any) string {
	key := "floatingip." + map[string]string{"POST": "create", "PUT": "update"}[r.Method]
	var ans struct {
		FloatingIP struct {
			FloatingNetworkID string  `json:"floating_network_id"`
			FixedIPAddress    *string `json:"fixed_ip_address"`
		} `json:"floatingip"`
	}
	_ = json.Unmarshal(r.Answer, &ans)
	req, _ := body["floatingip"].(map[string]any)
	if r.Method == "POST" {
		e.add(key+".network", n.str(fmt.Sprint(req["floating_network_id"])))
	}
	// Made on the port, or made and then attached: the same effect. A
	// detach before the server goes is none: deleting the server's port
	// detaches the address anyway.
	if port, ok := req["port_id"]; ok && port != nil && r.Status < 300 && ans.FloatingIP.FixedIPAddress != nil {
		e.add("floatingip.port_on", n.network(*ans.FloatingIP.FixedIPAddress))
	}
	return key
}

// imageEffects adds the image's end state as Glance shows it, what varies
// between any two images left out.
func (n *normaliser) imageEffects(e effects, img map[string]any, members []map[string]any) {
	for k, v := range img {
		if volatileImageKeys[k] || strings.HasPrefix(k, "os_hash") || strings.HasPrefix(k, "os_glance") {
			continue
		}
		n.flatten(e, "image."+k, v)
	}
	for _, m := range members {
		e.add("image.members."+n.str(fmt.Sprint(m["member_id"])), fmt.Sprint(m["status"]))
	}
}

// volatileImageKeys differ between any two images.
var volatileImageKeys = map[string]bool{
	"id": true, "created_at": true, "updated_at": true, "checksum": true, "size": true, "virtual_size": true,
	"file": true, "self": true, "schema": true, "direct_url": true, "locations": true, "stores": true,
}

// keypair adds a keypair create: its name and the type of the public key
// the client made (the key itself is random).
func (n *normaliser) keypair(e effects, v any) {
	k, _ := v.(map[string]any)
	e.add("keypair.create.name", n.str(fmt.Sprint(k["name"])))
	if pub, ok := k["public_key"].(string); ok {
		typ, _, _ := strings.Cut(pub, " ")
		e.add("keypair.create.public_key", typ)
	} else {
		e.add("keypair.create.public_key", "(made by Nova)")
	}
	if typ, ok := k["type"]; ok {
		e.add("keypair.create.type", fmt.Sprint(typ))
	}
}

// withDefaults fills in what Cinder assumes for an upload's formats when
// the call leaves them out.
func withDefaults(action string, args any) any {
	m, ok := args.(map[string]any)
	if action != "os-volume_upload_image" || !ok {
		return args
	}
	for k, def := range map[string]string{"disk_format": "raw", "container_format": "bare"} {
		if _, set := m[k]; !set {
			m[k] = def
		}
	}
	return m
}

// withoutImage keeps only image.status in a and b when either build left
// no image: what the other image holds is then no difference of its own.
func withoutImage(a, b effects) {
	if a.value("image.status") != "(no image)" && b.value("image.status") != "(no image)" {
		return
	}
	for _, e := range []effects{a, b} {
		for k := range e {
			if strings.HasPrefix(k, "image.") && k != "image.status" {
				delete(e, k)
			}
		}
	}
}
