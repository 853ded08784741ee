package openstack

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"time"
)

// uuidLike is an OpenStack resource ID as Neutron and Nova accept it: a
// UUID, with or without dashes.
var uuidLike = regexp.MustCompile(`^(?i:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})$`)

// projectID is what Keystone can have as a project ID (64 characters at
// most, in IDs it or an identity backend makes); keystoneHex is the form
// Keystone itself makes.
var (
	projectID   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	keystoneHex = regexp.MustCompile(`^(?i:[0-9a-f]{32})$`)
)

// checkInputs refuses values no cloud can use, which the official builder
// passes on to fail mid-build (the differences table says so), and warns
// about odd ones it accepts. Each message names the field and the cause.
func (c *Config) checkInputs() (errs []error, warns []string) {
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"ssh_timeout", c.Comm.SSHTimeout}, {"winrm_timeout", c.Comm.WinRMTimeout}} {
		if t.d < 0 {
			errs = append(errs, fmt.Errorf("%s: must be > 0, got %s", t.name, t.d))
		}
	}
	if s := c.ExternalSourceImageURL; s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("external_source_image_url: %q must be an http:// or https:// URL: Glance's web-download imports only those", s))
		}
	}
	if f := c.FloatingIP; f != "" {
		if _, err := netip.ParseAddr(f); err != nil && !uuidLike.MatchString(f) {
			errs = append(errs, fmt.Errorf("floating_ip: %q is neither an IP address nor a floating IP ID (a UUID)", f))
		}
	}
	for _, l := range []struct {
		name string
		ids  []string
	}{{"networks", c.Networks}, {"ports", c.Ports}} {
		for i, id := range l.ids {
			if !uuidLike.MatchString(id) {
				errs = append(errs, fmt.Errorf("%s[%d]: %q is not an ID (a UUID): Nova takes IDs here, not names", l.name, i, id))
			}
		}
	}
	for i, m := range c.ImageMembers {
		switch {
		case !projectID.MatchString(m):
			errs = append(errs, fmt.Errorf("image_members[%d]: %q is not a project ID (letters, digits, - and _, at most 64)", i, m))
		case !keystoneHex.MatchString(m) && !uuidLike.MatchString(m):
			warns = append(warns, fmt.Sprintf("image_members[%d]: %q does not look like a Keystone project ID (32 hex digits); Glance takes project IDs, not names", i, m))
		}
	}
	return errs, warns
}
