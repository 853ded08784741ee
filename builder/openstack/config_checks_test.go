package openstack

import (
	"strings"
	"testing"
)

// Values no cloud can use are refused at Prepare, naming the field and
// the cause; what the official builder accepts and a cloud can use passes.
func TestPrepareRefusesUnusableInputs(t *testing.T) {
	bad := []struct {
		name string
		kv   []any
		want string
	}{
		{"ssh_timeout negative", []any{"ssh_timeout", "-5m"}, "ssh_timeout: must be > 0, got -5m0s"},
		{"winrm_timeout negative", []any{"communicator", "winrm", "winrm_username", "u", "winrm_password", "winrm-pw-3c9e", "winrm_timeout", "-1s"},
			"winrm_timeout: must be > 0, got -1s"},
		{"file URL", []any{"source_image", nil, "external_source_image_url", "file:///etc/passwd"},
			`external_source_image_url: "file:///etc/passwd" must be an http:// or https:// URL: Glance's web-download imports only those`},
		{"URL without host", []any{"source_image", nil, "external_source_image_url", "http:///x.qcow2"},
			`external_source_image_url: "http:///x.qcow2" must be an http:// or https:// URL`},
		{"floating_ip junk", []any{"floating_ip", "my ip"}, `floating_ip: "my ip" is neither an IP address nor a floating IP ID (a UUID)`},
		{"networks name", []any{"networks", []string{"8b0a3c9e-6f0d-4a55-9d0e-2c2b1e7b7f10", "lab-net"}},
			`networks[1]: "lab-net" is not an ID (a UUID): Nova takes IDs here, not names`},
		{"ports junk", []any{"ports", []string{"port one"}}, `ports[0]: "port one" is not an ID (a UUID)`},
		{"image_members junk", []any{"image_visibility", "shared", "image_members", []string{"my project"}},
			`image_members[0]: "my project" is not a project ID (letters, digits, - and _, at most 64)`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			clearOSEnv(t)
			_, _, err := prepare(t, with(baseRaw(), tc.kv...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	good := []struct {
		name string
		kv   []any
		warn string
	}{
		{"floating_ip address", []any{"floating_ip", "192.0.2.10"}, ""},
		{"floating_ip IPv6", []any{"floating_ip", "2001:db8::10"}, ""},
		{"floating_ip ID", []any{"floating_ip", "8b0a3c9e-6f0d-4a55-9d0e-2c2b1e7b7f10"}, ""},
		{"network ID without dashes", []any{"networks", []string{"8B0A3C9E6F0D4A559D0E2C2B1E7B7F10"}}, ""},
		{"https URL", []any{"source_image", nil, "external_source_image_url", "https://example.org/rocky.qcow2"}, ""},
		{"Keystone project ID", []any{"image_visibility", "shared", "image_members", []string{"2f6e2a7c6c1b4e0f9d0e6a1b2c3d4e5f"}}, ""},
		{"numeric tenant ID", []any{"image_visibility", "shared", "image_members", []string{"123456"}},
			`image_members[0]: "123456" does not look like a Keystone project ID (32 hex digits); Glance takes project IDs, not names`},
		{"ssh_timeout zero is the default", []any{"ssh_timeout", "0s"}, ""},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			clearOSEnv(t)
			_, warns, err := prepare(t, with(baseRaw(), tc.kv...))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(warns, "\n")
			if (tc.warn == "") != !strings.Contains(got, "image_members") || (tc.warn != "" && !strings.Contains(got, tc.warn)) {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
		})
	}
}
