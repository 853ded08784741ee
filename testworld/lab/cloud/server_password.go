package cloud

import (
	"fmt"
	"net/http"
)

// Nova keeps the password a guest posts to the metadata service in four
// 255-character chunks of system metadata, so it refuses anything longer.
const maxServerPassword = 4 * 255

// serverPassword answers GET and DELETE /servers/{id}/os-server-password
// as Nova does: GET returns the (encrypted, opaque) password the guest
// posted, "" until then; DELETE clears it (204). nv.mu held.
func (nv *nova) serverPassword(w http.ResponseWriter, r *http.Request, s *server) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"password": nv.passwords[s.ID]})
	case http.MethodDelete:
		delete(nv.passwords, s.ID)
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, SvcCompute)
	}
}

// PostPassword is the guest's side (cloudbase-init on Windows posting to
// the metadata service's /openstack/latest/password): it stores the
// password the guest encrypted with its keypair's public key. Like Nova's
// metadata service it refuses a second password (409) and one over 1020
// characters; the cloud never sees the plaintext.
func (c *Cloud) PostPassword(serverID, encrypted string) error {
	nv := c.compute
	nv.mu.Lock()
	defer nv.mu.Unlock()
	s := nv.servers[serverID]
	if s == nil || s.deleted {
		return fmt.Errorf("cloud: no server %s", serverID)
	}
	if len(encrypted) > maxServerPassword {
		return fmt.Errorf("cloud: 400 Request is too large")
	}
	if nv.passwords[serverID] != "" {
		return fmt.Errorf("cloud: 409 Password already set")
	}
	if nv.passwords == nil {
		nv.passwords = map[string]string{}
	}
	nv.passwords[serverID] = encrypted
	return nil
}
