package containers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
)

// registryGuard is the innermost transport of a registry's client, below
// go-containerregistry's auth, so it sees each request as sent,
// credentials included. It holds them to the plugin's one rule
// (internal/fetch): plain http to the registry only when the template
// marked it insecure (go-containerregistry also tries it for private and
// loopback addresses); a credential only to the registry's origin or the
// token service its challenge names, that one over https or on the
// registry's origin (fetch.MaySendCredentials: go-containerregistry would
// send it over plain http to another origin of an insecure registry);
// anywhere else (a blob redirected to storage) without them.
type registryGuard struct {
	next     http.RoundTripper
	host     string // host[:port] as the requests name it
	insecure bool
	hasCreds bool

	mu     sync.Mutex
	realms map[string]bool // origins the registry named as its token service
}

// realmError is a token service the credentials may not go to.
type realmError struct{ realm, registry string }

func (e *realmError) Error() string {
	return fmt.Sprintf("the registry's token service %s is plain http on another origin than %s: its credentials were not sent", e.realm, e.registry)
}

var reChallengeParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// credentialHeaders are the headers that carry a credential, as
// fetch.SameOriginCredentials drops them.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"}

func (g *registryGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == g.host && req.URL.Scheme == "http" && !g.insecure {
		return nil, fmt.Errorf("plain http to %s refused: container_registries does not mark it insecure", g.host)
	}
	if req.URL.Host != g.host && !g.isRealm(req.URL) {
		req = req.Clone(req.Context())
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil || req.URL.Host != g.host || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if err := g.noteChallenges(req.URL, resp.Header.Values("WWW-Authenticate")); err != nil {
		_ = resp.Body.Close() // refused before the body matters
		return nil, err
	}
	return resp, nil
}

// noteChallenges records the token services the registry's Bearer
// challenges name, refusing one the credentials may not go to.
func (g *registryGuard) noteChallenges(reg *url.URL, challenges []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range challenges {
		if !strings.HasPrefix(strings.ToLower(ch), "bearer ") {
			continue
		}
		for _, m := range reChallengeParam.FindAllStringSubmatch(ch, -1) {
			if strings.ToLower(m[1]) != "realm" {
				continue
			}
			realm, err := url.Parse(m[2])
			if err != nil || realm.Host == "" {
				return fmt.Errorf("the registry's auth challenge has no usable realm: %q", ch)
			}
			home := &url.URL{Scheme: reg.Scheme, Host: reg.Host}
			if g.hasCreds && !fetch.MaySendCredentials(realm, home) {
				return &realmError{realm: realm.Host, registry: home.String()}
			}
			if g.realms == nil {
				g.realms = map[string]bool{}
			}
			g.realms[realm.Scheme+"://"+realm.Host] = true
		}
	}
	return nil
}

// isRealm says whether u is on a token service the registry named.
func (g *registryGuard) isRealm(u *url.URL) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.realms[u.Scheme+"://"+u.Host]
}
