package openstack

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/hashicorp/packer-plugin-sdk/multistep"
)

// commHost returns the address to connect to, in the official builder's
// order: ssh_host if set; an address on the ssh_interface network when
// that is set; the floating IP; the server's AccessIPv4; an address on any
// network. ssh_ip_version is honoured throughout. An IPv6 address is
// returned bare: the SDK brackets it when it joins host and port (the
// official builder's "[addr]" becomes "[[addr]]:22" there and never
// connects).
func commHost(c *Config) func(multistep.StateBag) (string, error) {
	return func(state multistep.StateBag) (string, error) {
		if h := c.Comm.Host(); h != "" {
			return h, nil
		}
		if ip := getString(state, "floating_ip"); ip != "" && c.SSHInterface == "" && ipVersionOK(ip, c.SSHIPVersion) {
			return ip, nil
		}
		cl := state.Get("clients").(*clients)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv, err := servers.Get(ctx, cl.compute, state.Get("server_id").(string)).Extract()
		if err != nil {
			return "", fmt.Errorf("getting the server's addresses: %w", err)
		}
		return serverAddress(srv, c.SSHInterface, c.SSHIPVersion)
	}
}

// serverAddress chooses among a server's own addresses: those on the
// ssh_interface network if set, else AccessIPv4 (what a provider such as
// RackConnect says to use), else any network's.
func serverAddress(srv *servers.Server, iface, ipVersion string) (string, error) {
	if iface == "" && srv.AccessIPv4 != "" && ipVersionOK(srv.AccessIPv4, ipVersion) {
		return srv.AccessIPv4, nil
	}
	return pickAddress(srv.Addresses, iface, ipVersion)
}

// pickAddress chooses among Nova's addresses (network name -> list of
// {addr, version, OS-EXT-IPS:type}). Floating addresses win over fixed
// ones; networks are tried in name order so the choice is stable.
func pickAddress(addresses map[string]any, iface, ipVersion string) (string, error) {
	nets := make([]string, 0, len(addresses))
	for n := range addresses {
		if iface == "" || n == iface {
			nets = append(nets, n)
		}
	}
	sort.Strings(nets)
	var fixed, floating string
	for _, n := range nets {
		list, _ := addresses[n].([]any)
		for _, raw := range list {
			a, _ := raw.(map[string]any)
			addr, _ := a["addr"].(string)
			if !ipVersionOK(addr, ipVersion) {
				continue
			}
			if a["OS-EXT-IPS:type"] == "floating" {
				if floating == "" {
					floating = addr
				}
			} else if fixed == "" {
				fixed = addr
			}
		}
	}
	if floating != "" {
		return floating, nil
	}
	if fixed != "" {
		return fixed, nil
	}
	return "", fmt.Errorf("the server has no IPv%s address on network %q yet", orAny(ipVersion), orAny(iface))
}

func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}

// ipVersionOK reports whether addr is an address of ssh_ip_version (any
// when empty).
func ipVersionOK(addr, version string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	return version == "" || (version == "4" && ip.Is4()) || (version == "6" && ip.Is6() && !ip.Is4In6())
}
