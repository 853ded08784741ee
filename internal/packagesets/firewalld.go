package packagesets

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// firewalldPublic is the OS's public zone (Rocky's, as the built-in file
// writes it): its services.
var firewalldPublic = []string{"ssh", "dhcpv6-client", "cockpit"}

// rePort is an ansible.posix.firewalld port: a port or range, a protocol.
var rePort = regexp.MustCompile(`^([0-9]+(?:-[0-9]+)?)/(tcp|udp|sctp|dccp)$`)

// zone is the public zone as the rules leave it.
type zone struct {
	target                  string
	sources, services, port []string
}

// firewalldZone is the public zone's file as firewalld keeps it once the
// firewalld role applied the site's firewalld_configs (each rule the
// arguments of ansible.posix.firewalld) to the OS's zone: a permanent
// rule's target, service, port and source, enabled or disabled; a rule
// that is not permanent leaves nothing in the image. A rule for another
// zone, or with another argument, is refused naming it.
func firewalldZone(v any) (string, error) {
	rules, err := mappings(v)
	if err != nil {
		return "", err
	}
	z := zone{services: slices.Clone(firewalldPublic)}
	for i, m := range rules {
		if err := z.apply(m); err != nil {
			return "", fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return z.xml(), nil
}

// apply is one rule's effect on the zone.
func (z *zone) apply(m map[string]any) error {
	for k := range m {
		if !slices.Contains([]string{"zone", "state", "permanent", "immediate", "offline", "target", "service", "port", "source"}, k) {
			return fmt.Errorf("%s is not written natively (only zone, state, permanent, immediate, offline, target, service, port and source)", k)
		}
	}
	if zn, ok := m["zone"]; ok && zn != "public" {
		return fmt.Errorf("zone %v: only the public zone is written natively", zn)
	}
	on := map[any]bool{"enabled": true, "disabled": false}
	enable, ok := on[m["state"]]
	if !ok {
		return fmt.Errorf("state %v: only enabled or disabled", m["state"])
	}
	if p, _ := m["permanent"].(bool); !p {
		return nil // runtime only: gone when the VM stops
	}
	did := false
	for _, f := range []struct {
		key  string
		list *[]string
	}{{"source", &z.sources}, {"service", &z.services}, {"port", &z.port}} {
		x, ok := m[f.key].(string)
		if _, defined := m[f.key]; defined && (!ok || x == "") {
			return fmt.Errorf("%s %v is not a string", f.key, m[f.key])
		}
		if !ok {
			continue
		}
		if f.key == "port" && !rePort.MatchString(x) {
			return fmt.Errorf("port %q: not <port>[-<port>]/<protocol>", x)
		}
		did = true
		*f.list = slices.DeleteFunc(*f.list, func(y string) bool { return y == x })
		if enable {
			*f.list = append(*f.list, x)
		}
	}
	if t, ok := m["target"].(string); ok {
		did, z.target = true, map[bool]string{true: t}[enable]
	}
	if !did {
		return fmt.Errorf("none of target, service, port or source")
	}
	return nil
}

// xml is the zone's file as firewalld's writer orders and quotes it
// (services, ports, then sources; a port's port before its protocol)
// once ansible.posix.firewalld changed it offline: without `<forward/>`,
// which its settings (firewalld's older tuple form) do not carry, and
// without the OS zone's description, which firewalld copies and the
// plugin leaves out (docs/appliance-contract.md).
func (z zone) xml() string {
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return strings.ReplaceAll(b.String(), `"`, "&quot;")
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- The public zone with the appliance's firewalld_configs applied, as\n     firewalld keeps it (packer-plugin-fatimage). -->\n")
	if z.target != "" && z.target != "default" {
		fmt.Fprintf(&b, "<zone target=\"%s\">\n", esc(z.target))
	} else {
		b.WriteString("<zone>\n")
	}
	b.WriteString("  <short>Public</short>\n")
	for _, s := range z.services {
		fmt.Fprintf(&b, "  <service name=\"%s\"/>\n", esc(s))
	}
	for _, p := range z.port {
		m := rePort.FindStringSubmatch(p)
		fmt.Fprintf(&b, "  <port port=\"%s\" protocol=\"%s\"/>\n", m[1], m[2])
	}
	for _, s := range z.sources {
		fmt.Fprintf(&b, "  <source address=\"%s\"/>\n", esc(s))
	}
	b.WriteString("</zone>\n")
	return b.String()
}
