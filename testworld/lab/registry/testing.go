package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// StartPair starts the registry twice on one storage, for a test: with
// basic auth for user and password, and open.
func StartPair(t testing.TB, user, pw string) (auth, open *Server) {
	t.Helper()
	needs.Tools(t, "docker-registry")
	dir := t.TempDir()
	auth, err := Start(Options{Dir: dir, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	open, err = Start(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { open.Close() })
	return auth, open
}

// BearerFront puts a Bearer token service in front of a registry, as
// Docker Hub has: 401 with a challenge, a token ("t0k") for the right
// basic credentials (any when user is ""), then the token on every
// request.
func BearerFront(t testing.TB, upstream, user, pw string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(upstream)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			if gu, gp, _ := r.BasicAuth(); user != "" && (gu != user || gp != pw) {
				http.Error(w, "bad credentials", http.StatusUnauthorized)
				return
			}
			if !strings.HasPrefix(r.URL.Query().Get("scope"), "repository:") || r.URL.Query().Get("service") != "lab" {
				http.Error(w, "bad scope", http.StatusBadRequest)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"token": "t0k"})
			return
		}
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="lab",scope="repository:x:pull"`, srv.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Header.Del("Authorization")
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
