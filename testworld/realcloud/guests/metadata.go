package guests

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// metadataProxy forwards a guest's metadata request to Nova's metadata API
// as Neutron's metadata proxy does: the instance is named by the headers
// X-Instance-ID (signed with the shared secret) and X-Tenant-ID, the guest
// by X-Forwarded-For. A request from an address no guest has is refused.
func (h *Host) metadataProxy() http.Handler {
	target, err := url.Parse(h.opts.MetadataURL)
	if err != nil || h.opts.MetadataURL == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no metadata service configured", http.StatusServiceUnavailable)
		})
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, _, _ := net.SplitHostPort(r.RemoteAddr)
		g := h.byFixedIP(ip)
		if g == nil {
			http.NotFound(w, r)
			return
		}
		r.Header.Del("X-Forwarded-For") // set by the reverse proxy from RemoteAddr
		r.Header.Set("X-Instance-ID", g.spec.UUID)
		r.Header.Set("X-Tenant-ID", g.spec.ProjectID)
		r.Header.Set("X-Instance-ID-Signature", Sign(h.opts.Secret, g.spec.UUID))
		rp.ServeHTTP(w, r)
	})
}

// Sign is Nova's check of a proxied metadata request: HMAC-SHA256 of the
// instance id with metadata_proxy_shared_secret, in hex.
func Sign(secret, instanceID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(instanceID))
	return hex.EncodeToString(m.Sum(nil))
}

func (h *Host) byFixedIP(ip string) *guest {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.servers {
		if g.spec.FixedIP == ip {
			return g
		}
	}
	return nil
}
