//go:build realcloud

package realcloud

// The guest's view of the metadata service, as cloud-init reads it at
// 169.254.169.254: on the tier a real guest fetches it through Neutron's
// metadata proxy from Nova, on the double the lab VMs' metadata service
// answers for the server's fixed address.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"golang.org/x/crypto/ssh"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

func init() {
	contractChecks = append(contractChecks, struct {
		name  string
		check func(*testing.T, target)
	}{"nova/guest-metadata", checkGuestMetadata})
}

// metadataReader reads path below http://169.254.169.254/openstack/latest/
// as the server's guest does; signer is the server's keypair's key.
type metadataReader func(t *testing.T, s *servers.Server, signer ssh.Signer, path string) string

// realMetadata reads it on the real guest over SSH at its fixed address,
// once sshd takes the key cloud-init found in the metadata.
func realMetadata(t *testing.T, s *servers.Server, signer ssh.Signer, path string) string {
	t.Helper()
	guestKeys[s.ID] = signer
	cmd := "curl -sSf http://169.254.169.254/openstack/latest/" + path
	var lastErr error
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		out, err := guestRunAt(t, fixedAddress(s), s.ID, cmd)
		if err == nil {
			return out
		}
		lastErr = err
	}
	t.Fatalf("no SSH on server %s: %v", s.ID, lastErr)
	return ""
}

// doubleMetadata reads it from the lab VMs' metadata service for the
// double's server, as a lab VM at the server's fixed address would.
func doubleMetadata(c *cloud.Cloud) metadataReader {
	h := vm.MetadataHandler(func(ip string) *vm.Metadata { return lab.VMMetadata(c.MetadataFor(ip)) })
	return func(t *testing.T, s *servers.Server, _ ssh.Signer, path string) string {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "http://169.254.169.254/openstack/latest/"+path, nil)
		r.RemoteAddr = fixedAddress(s) + ":40000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		b, _ := io.ReadAll(w.Result().Body)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, b)
		}
		return string(b)
	}
}

// checkGuestMetadata boots a server as the builder does (server metadata
// with ansible_init_disable, an imported ed25519 keypair, user_data) and
// wants the guest to read them back: meta_data.json's uuid, name, meta,
// public_keys, keys and project_id, the user_data bytes, and vendor data
// as Nova gives it without any configured.
func checkGuestMetadata(t *testing.T, tg target) {
	ctx := context.Background()
	cc := tg.client(t, openstack.NewComputeV2)
	kpName := uniqueName("contract-md")
	signer, authorized := importGuestKey(t, cc, kpName)
	meta := map[string]string{"ansible_init_disable": "true", "packer_build_id": "contract-md"}
	userData := "#cloud-config\nbootcmd:\n  - [sh, -c, 'echo contract user_data']\n"
	opts := servers.CreateOpts{Name: uniqueName("contract-md"), FlavorRef: "1", Metadata: meta, UserData: []byte(userData),
		ImageRef: findImage(t, tg.client(t, openstack.NewImageV2), tg.guestImage).ID, SecurityGroups: tg.sshGroups,
		Networks: []servers.Network{{UUID: networkNamed(t, tg.client(t, openstack.NewNetworkV2), tg.tenant)}}}
	s := tg.create(t, opts, kpName)
	waitFor(t, "the new server", serverStatus(cc, s.ID), func(st string) bool { return st == "ACTIVE" || st == "ERROR" })
	s, err := servers.Get(ctx, cc, s.ID).Extract()
	if err != nil || s.Status != "ACTIVE" {
		t.Fatalf("server %s: %+v %v", opts.Name, s, err)
	}
	var doc struct {
		UUID, Name string
		ProjectID  string `json:"project_id"`
		Meta       map[string]string
		PublicKeys map[string]string `json:"public_keys"`
		Keys       []struct{ Name, Type, Data string }
	}
	body := tg.metadata(t, s, signer, "meta_data.json")
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("meta_data.json: %v\n%s", err, body)
	}
	if doc.UUID != s.ID || doc.Name != opts.Name || doc.ProjectID != tg.project || len(doc.Meta) != len(meta) ||
		doc.Meta["ansible_init_disable"] != "true" || doc.Meta["packer_build_id"] != "contract-md" {
		t.Errorf("meta_data.json: uuid, name, project_id and meta, want %s, %s, %s, %v:\n%s", s.ID, opts.Name, tg.project, meta, body)
	}
	if len(doc.PublicKeys) != 1 || strings.TrimSpace(doc.PublicKeys[kpName]) != authorized || len(doc.Keys) != 1 ||
		doc.Keys[0].Name != kpName || doc.Keys[0].Type != "ssh" || strings.TrimSpace(doc.Keys[0].Data) != authorized {
		t.Errorf("meta_data.json: public_keys and keys, want %s's key:\n%s", kpName, body)
	}
	if got := tg.metadata(t, s, signer, "user_data"); got != userData {
		t.Errorf("user_data: %q, want %q", got, userData)
	}
	index := tg.metadata(t, s, signer, "")
	for _, f := range []string{"meta_data.json", "user_data", "vendor_data.json", "vendor_data2.json", "network_data.json"} {
		if !strings.Contains(index, f) {
			t.Errorf("the index lacks %s:\n%s", f, index)
		}
	}
	// no vendor data configured: vendor_data2.json holds Nova's default
	// provider's (StaticJSON) empty answer
	for f, want := range map[string]string{"vendor_data.json": `{}`, "vendor_data2.json": `{"static":{}}`} {
		got := tg.metadata(t, s, signer, f)
		var v any
		if json.Unmarshal([]byte(got), &v) != nil {
			t.Errorf("%s: %q is not JSON", f, got)
		} else if b, _ := json.Marshal(v); string(b) != want {
			t.Errorf("%s: %s, want %s", f, got, want)
		}
	}
}
