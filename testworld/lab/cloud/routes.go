package cloud

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// caller is what a service's handlers need besides the request: the
// caller's token and, for Nova, the microversion.
type caller struct {
	t  *token
	mv microversion
}

type callKey struct{}

// headAlias is HEAD while the mux matches: see router.serve.
const headAlias = "HEAD-NOT-GET"

// routeFunc handles one method pattern of a service.
type routeFunc func(w http.ResponseWriter, r *http.Request, c *caller)

// router is a service's table of Go 1.22 method patterns ("GET
// /image/v2/images/{id}"). Requests reach it after the service's own
// version documents and authentication; a path no pattern names, or a
// method no pattern takes, goes to the patterns without a method the
// service registers (its 404 or 405 in its own shape), never to
// ServeMux's plain-text answers.
type router struct{ mux *http.ServeMux }

func newRouter() *router { return &router{mux: http.NewServeMux()} }

func (rt *router) handle(pattern string, h routeFunc) {
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == headAlias {
			r.Method = http.MethodHead // r is serve's copy
		}
		h(w, r, r.Context().Value(callKey{}).(*caller))
	})
}

// serve routes r by path, the clean form of the request's path (no empty
// segments; for Nova without the legacy project segment). Messages that
// quote the path use reqPath, the path the client sent.
func (rt *router) serve(w http.ResponseWriter, r *http.Request, path string, c *caller) {
	r2 := r.WithContext(context.WithValue(r.Context(), callKey{}, c))
	u := *r.URL
	u.Path, u.RawPath = path, ""
	r2.URL = &u
	if r2.Method == http.MethodHead {
		// ServeMux lets HEAD match GET patterns; the OpenStack routers
		// the double follows do not, so HEAD meets the fallbacks.
		r2.Method = headAlias
	}
	rt.mux.ServeHTTP(w, r2)
}

// cleanPath is "/" and segs joined by "/".
func cleanPath(segs []string) string { return "/" + strings.Join(segs, "/") }

// reqPath is the path the client sent (the router rewrites r.URL.Path).
func reqPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "" {
		return u.Path
	}
	return r.URL.Path
}
