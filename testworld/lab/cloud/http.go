package cloud

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Service names as used by faults and Calls.
const (
	SvcIdentity = "identity"
	SvcCompute  = "compute"
	SvcImage    = "image"
	SvcNetwork  = "network"
	SvcVolume   = "volume"
)

var prefixes = map[string]string{
	"identity": SvcIdentity, "compute": SvcCompute, "image": SvcImage,
	"networking": SvcNetwork, "volume": SvcVolume,
}

func (c *Cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := splitPath(r.URL.Path)
	if len(segs) == 0 {
		writeJSON(w, http.StatusOK, obj{"services": []string{"identity", "compute", "image", "networking", "volume"}})
		return
	}
	if segs[0] == "_control" {
		c.serveControl(w, r, segs[1:])
		return
	}
	svc, ok := prefixes[segs[0]]
	if !ok {
		http.NotFound(w, r)
		return
	}
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	c.countCall(svc)
	c.logf("cloud: %s %s", r.Method, r.URL.RequestURI())
	c.serveJournaled(svc, w, r, c.apis[svc])
}

// newAPIs puts each service behind the fault rules.
func (c *Cloud) newAPIs() map[string]http.Handler {
	apis := map[string]http.Handler{}
	for _, svc := range prefixes {
		apis[svc] = c.faults.Wrap(svc, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.serveService(svc, w, r)
		}))
	}
	return apis
}

func (c *Cloud) serveService(svc string, w http.ResponseWriter, r *http.Request) {
	rest := splitPath(r.URL.Path)[1:]
	if r.Method == http.MethodGet && c.states.recording() {
		rec := &bodyRecorder{ResponseWriter: w}
		defer c.states.observeResponse(svc, r, rec)
		w = rec
	}
	switch svc {
	case SvcIdentity:
		c.identity.serve(w, r, rest)
	case SvcCompute:
		c.compute.serve(w, r, rest)
	case SvcImage:
		c.image.serve(w, r, rest)
	case SvcNetwork:
		c.network.serve(w, r, rest)
	case SvcVolume:
		c.volume.serve(w, r, rest)
	}
}

// authenticate checks X-Auth-Token; on failure it writes 401 and returns nil.
func (c *Cloud) authenticate(w http.ResponseWriter, r *http.Request) *token {
	t := c.identity.validToken(r.Header.Get("X-Auth-Token"))
	if t == nil {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf("Keystone uri=%q", c.url+"/identity"))
		writeJSON(w, http.StatusUnauthorized, obj{"error": obj{
			"code": 401, "title": "Unauthorized",
			"message": "The request you have made requires authentication.",
		}})
		return nil
	}
	return t
}

var novaErrKeys = map[int]string{
	400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound",
	405: "badMethod", 406: "notAcceptable", 409: "conflictingRequest", 413: "overLimit",
	415: "badMediaType", 429: "overLimit", 500: "computeFault", 501: "notImplemented",
	503: "serviceUnavailable",
}

var neutronErrTypes = map[int]string{
	400: "BadRequest", 401: "NotAuthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
	429: "OverQuota", 500: "InternalServerError", 503: "ServiceUnavailable",
}

// fail writes an error in svc's native shape. For network errors, typ may
// name the Neutron exception (e.g. "NetworkNotFound").
func fail(w http.ResponseWriter, svc string, status int, typ, msg string) {
	switch svc {
	case SvcCompute, SvcVolume:
		k := novaErrKeys[status]
		if k == "" {
			k = "computeFault"
		}
		writeJSON(w, status, obj{k: obj{"code": status, "message": msg}})
	case SvcNetwork:
		if typ == "" {
			typ = neutronErrTypes[status]
		}
		writeJSON(w, status, obj{"NeutronError": obj{"type": typ, "message": msg, "detail": ""}})
	case SvcIdentity:
		writeJSON(w, status, obj{"error": obj{"code": status, "title": http.StatusText(status), "message": msg}})
	default: // Glance: webob plain text
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "%d %s\n\n%s\n\n   ", status, http.StatusText(status), msg)
	}
}

func queryInt(r *http.Request, k string, def int) int {
	if v := r.URL.Query().Get(k); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func methodNotAllowed(w http.ResponseWriter, svc string) {
	fail(w, svc, http.StatusMethodNotAllowed, "", "The method is not allowed for the requested URL.")
}

func notFoundPath(w http.ResponseWriter, r *http.Request, svc string) {
	fail(w, svc, http.StatusNotFound, "", "The resource could not be found: "+strings.TrimPrefix(reqPath(r), "/"))
}
