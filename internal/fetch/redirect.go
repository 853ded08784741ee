package fetch

import (
	"errors"
	"net/http"
	"net/url"
)

// credentialHeaders are the headers that carry a credential.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"}

// SameOriginCredentials is the CheckRedirect of every client of the
// plugin that sends credentials (the host fetch path, the Pulp client): it
// follows up to 10 redirects but never carries a credential to another
// origin (scheme, host and port) than the first
// request's: not to a subdomain or another port, which Go's own rule
// allows, nor from https to http. A registry's blob redirected to a
// storage service gets there without the registry's password or token.
func SameOriginCredentials(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// MaySendCredentials says whether a credential meant for the server at
// home may go to target, a URL that server named (a registry's token
// realm): over https, or to home's own origin (a plain-http server the
// template configured), never to another origin over plain http nor from
// https down to http.
func MaySendCredentials(target, home *url.URL) bool {
	return target.Scheme == "https" || origin(target) == origin(home)
}

// origin is u's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

// redacted is raw without a password, for messages.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
}
