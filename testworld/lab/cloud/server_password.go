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
// posted, "" until then; DELETE clears it (204). c.mu held.
func (c *Cloud) serverPassword(w http.ResponseWriter, r *http.Request, s *server) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, obj{"password": c.passwords[s.ID]})
	case http.MethodDelete:
		delete(c.passwords, s.ID)
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
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.servers[serverID]
	if s == nil || s.deleted {
		return fmt.Errorf("cloud: no server %s", serverID)
	}
	if len(encrypted) > maxServerPassword {
		return fmt.Errorf("cloud: 400 Request is too large")
	}
	if c.passwords[serverID] != "" {
		return fmt.Errorf("cloud: 409 Password already set")
	}
	if c.passwords == nil {
		c.passwords = map[string]string{}
	}
	c.passwords[serverID] = encrypted
	return nil
}
