package realcloud

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every template renders, each config names the tier's state, database
// and ports, and the files are private (they hold passwords).
func TestWriteConfigs(t *testing.T) {
	etc := t.TempDir()
	v := Values{Host: Host, State: "/state", DB: "mysql+pymysql://u:dbpw@127.0.0.1:29506", RPC: "rabbit://guest:guest@127.0.0.1:29507/",
		ServiceUser: ServiceUser, ServicePassword: "svc-pw-7f3a", MetadataSecret: "md-secret-91c2", Ports: DefaultPorts}
	if err := WriteConfigs(etc, v); err != nil {
		t.Fatal(err)
	}
	for _, dst := range configFiles {
		path := filepath.Join(etc, dst)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", dst, st.Mode().Perm())
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "<no value>") {
			t.Errorf("%s has an unfilled value:\n%s", dst, b)
		}
	}
	nova, _ := os.ReadFile(filepath.Join(etc, "nova.conf"))
	for _, want := range []string{"connection = mysql+pymysql://u:dbpw@127.0.0.1:29506/nova_api", "osapi_compute_listen_port = 29502",
		"send_service_user_token = true", "password = svc-pw-7f3a", "compute_driver = fatcloud_driver.GuestDriver", "max_attempts = 1", "token_cache_time = 10",
		"enabled_apis = osapi_compute,metadata", "metadata_listen_port = 29511", "metadata_proxy_shared_secret = md-secret-91c2", "sync_power_state_interval = 5", "vif_plugging_timeout = 120",
		"memcached_servers = 127.0.0.1:29510"} {
		if !strings.Contains(string(nova), want) {
			t.Errorf("nova.conf lacks %q", want)
		}
	}
	// The Linux bridge agent, on the host Nova binds ports to, makes the
	// guests' network's bridge (brq<network id>: its firewall's conntrack
	// zones go by that name) with the host's interface as its uplink.
	lb, _ := os.ReadFile(filepath.Join(etc, "linuxbridge_agent.ini"))
	for _, want := range []string{"host = realcloud", "physical_interface_mappings = guests:" + GuestInterface + "\n",
		"bridge_mappings = ext:" + ExternalBridge + "\n", "firewall_driver = iptables"} {
		if !strings.Contains(string(lb), want) {
			t.Errorf("linuxbridge_agent.ini lacks %q:\n%s", want, lb)
		}
	}
	// The L3 agent's router ports are plugged by the Linux bridge agent on
	// the same host; its routers carry 169.254.169.254 to the metadata
	// agent, which signs for Nova's metadata API.
	l3, _ := os.ReadFile(filepath.Join(etc, "l3_agent.ini"))
	for _, want := range []string{"host = realcloud", "interface_driver = linuxbridge", "enable_metadata_proxy = true"} {
		if !strings.Contains(string(l3), want) {
			t.Errorf("l3_agent.ini lacks %q:\n%s", want, l3)
		}
	}
	md, _ := os.ReadFile(filepath.Join(etc, "metadata_agent.ini"))
	for _, want := range []string{"nova_metadata_port = 29511", "metadata_proxy_shared_secret = md-secret-91c2"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("metadata_agent.ini lacks %q:\n%s", want, md)
		}
	}
	// Keystone's cache is shared by its processes: a per-process one would
	// keep a revoked token valid in the others.
	keystone, _ := os.ReadFile(filepath.Join(etc, "keystone.conf"))
	for _, want := range []string{"[cache]\nenabled = true\nbackend = dogpile.cache.pymemcache\nmemcache_servers = 127.0.0.1:29510"} {
		if !strings.Contains(string(keystone), want) {
			t.Errorf("keystone.conf lacks %q:\n%s", want, keystone)
		}
	}
	if err := WriteConfigs(t.TempDir(), Values{State: "/s", DB: "x", RPC: "y"}); err == nil || !strings.Contains(err.Error(), "service password") {
		t.Errorf("no service password: %v", err)
	}
}

func TestResourcesAdded(t *testing.T) {
	before := Resources{"servers": {"a name ACTIVE"}, "images": {"i1 base active"}}
	after := Resources{"servers": {"a name SHUTOFF", "b other BUILD"}, "images": {"i1 base active"}, "volumes": {"v1 vol available"}}
	got := after.Added(before)
	if len(got) != 2 || len(got["servers"]) != 1 || got["servers"][0] != "b other BUILD" || len(got["volumes"]) != 1 {
		t.Errorf("added %v", got)
	}
	if len(before.Added(before)) != 0 {
		t.Error("a resource list adds to itself")
	}
}
