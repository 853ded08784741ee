package faultinject

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures an Injector.
type Options struct {
	// Kinds are the resource kinds the double consumes with Take, next to
	// KindHTTP and KindLoseAnswer.
	Kinds []string
	// Answer writes an injected status in the double's error shape; msg
	// is the rule's Message ("" for the standard text). Retry-After is
	// already set.
	Answer func(w http.ResponseWriter, r *http.Request, service string, status int, msg string)
	// Done, when closed (the double is closing), releases held requests.
	Done <-chan struct{}
	// Logf receives one line per injected answer; nil discards.
	Logf func(format string, args ...any)
}

// Injector holds the rules of one double. All methods are safe for
// concurrent use; its lock is a leaf, so a double may call Take with its
// own locks held.
type Injector struct {
	o     Options
	kinds map[string]bool
	mu    sync.Mutex
	rules []*state
}

// state is a rule with its compiled patterns and counters.
type state struct {
	Rule
	path, name, body *regexp.Regexp
	seen, hits       int
}

// New returns an injector without rules.
func New(o Options) *Injector {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	in := &Injector{o: o, kinds: map[string]bool{"": true, KindHTTP: true, KindLoseAnswer: true}}
	for _, k := range o.Kinds {
		in.kinds[k] = true
	}
	return in
}

// Set replaces the rules (counters start afresh). An invalid rule (an
// unknown kind, a bad regexp) is an error and the previous rules stay.
func (in *Injector) Set(rules ...Rule) error {
	states := make([]*state, len(rules))
	for i, f := range rules {
		if !in.kinds[f.Kind] {
			return fmt.Errorf("fault %d: unknown kind %q", i, f.Kind)
		}
		st := &state{Rule: f}
		var err error
		if f.Path != "" {
			if st.path, err = regexp.Compile(f.Path); err != nil {
				return fmt.Errorf("fault %d: path: %v", i, err)
			}
		}
		if f.Name != "" {
			if st.name, err = regexp.Compile(f.Name); err != nil {
				return fmt.Errorf("fault %d: name: %v", i, err)
			}
		}
		if f.Body != "" {
			if st.body, err = regexp.Compile(f.Body); err != nil {
				return fmt.Errorf("fault %d: body: %v", i, err)
			}
		}
		states[i] = st
	}
	in.mu.Lock()
	in.rules = states
	in.mu.Unlock()
	return nil
}

// Rules returns a copy of the rules, as set.
func (in *Injector) Rules() []Rule {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]Rule, len(in.rules))
	for i, f := range in.rules {
		out[i] = f.Rule
	}
	return out
}

// Hits returns, for each rule in order, how often it applied: answers
// injected or lost, requests slowed, resources failed. A test waits on it
// to know a request arrived, or shows that a probabilistic fault fired.
func (in *Injector) Hits() []int {
	in.mu.Lock()
	defer in.mu.Unlock()
	hits := make([]int, len(in.rules))
	for i, f := range in.rules {
		hits[i] = f.hits
	}
	return hits
}

// fires counts a matching request and reports whether the rule applies
// to it (Nth, Times, Rate). Call with mu held.
func (f *state) fires() bool {
	f.seen++
	if f.seen < f.Nth || (f.Times > 0 && f.hits >= f.Times) {
		return false
	}
	if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
		return false
	}
	f.hits++
	return true
}

// Take consumes and returns the first rule of a resource kind whose Name
// matches name, or nil.
func (in *Injector) Take(kind, name string) *Rule {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, f := range in.rules {
		if f.Kind != kind || (f.name != nil && !f.name.MatchString(name)) {
			continue
		}
		if f.fires() {
			r := f.Rule
			return &r
		}
	}
	return nil
}

// matches says whether a request rule applies to the request, body
// aside.
func (f *state) matches(service, method, path string) bool {
	if f.Kind != "" && f.Kind != KindHTTP && f.Kind != KindLoseAnswer {
		return false
	}
	return (f.Service == "" || f.Service == service) && (f.Method == "" || strings.EqualFold(f.Method, method)) &&
		strings.HasPrefix(path, f.PathPrefix) && (f.path == nil || f.path.MatchString(path))
}

// needsBody says whether a rule for the request looks into its body.
func (in *Injector) needsBody(service, method, path string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, f := range in.rules {
		if f.body != nil && f.matches(service, method, path) {
			return true
		}
	}
	return false
}

// pick returns the request rules that apply, in order: latency-only
// rules, then at most one that answers (Status, Hang or a lost answer);
// later rules neither apply nor count, so hits add up to the answers.
func (in *Injector) pick(service, method, path string, body []byte) []Rule {
	in.mu.Lock()
	defer in.mu.Unlock()
	var apply []Rule
	for _, f := range in.rules {
		if !f.matches(service, method, path) || (f.body != nil && !f.body.Match(body)) || !f.fires() {
			continue
		}
		apply = append(apply, f.Rule)
		if f.Status != 0 || f.Hang || f.Kind == KindLoseAnswer {
			break
		}
	}
	return apply
}

// peekBody reads r's body (outside the injector's lock) and puts it back
// for the handler.
func peekBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body) // a failed read matches less; the handler sees what was read
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// Wrap returns next behind the rules for service. Rules match the URL
// path with strip removed; requests outside strip pass untouched. A
// request the client gives up on, or the double closes, while held is
// dropped without an answer (net/http would otherwise send an empty 200).
func (in *Injector) Wrap(service, strip string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel, ok := strings.CutPrefix(r.URL.Path, strip)
		if !ok && r.URL.Path+"/" == strip {
			rel, ok = "", true
		}
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		var body []byte
		if in.needsBody(service, r.Method, rel) {
			body = peekBody(r)
		}
		for _, f := range in.pick(service, r.Method, rel, body) {
			if !in.wait(r.Context(), f.Latency) {
				panic(http.ErrAbortHandler)
			}
			switch {
			case f.Kind == KindLoseAnswer:
				in.lose(w, r, service, f, next)
				return
			case f.Hang:
				in.o.Logf("fault: hanging %s %s", r.Method, r.URL.Path)
				in.wait(r.Context(), time.Duration(1<<63-1))
				panic(http.ErrAbortHandler)
			case f.Status != 0:
				in.o.Logf("fault: %d for %s %s", f.Status, r.Method, r.URL.Path)
				in.answer(w, r, service, f)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (in *Injector) answer(w http.ResponseWriter, r *http.Request, service string, f Rule) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	in.o.Answer(w, r, service, f.Status, f.Message)
}

// lose runs next to the end with its answer held back, then drops the
// connection (Status 0) or answers Status instead.
func (in *Injector) lose(w http.ResponseWriter, r *http.Request, service string, f Rule, next http.Handler) {
	held := &heldAnswer{header: http.Header{}}
	next.ServeHTTP(held, r)
	if f.Status != 0 {
		in.o.Logf("fault: %s %s acted (%s), answer replaced by %d", r.Method, r.URL.Path, held.status(), f.Status)
		in.answer(w, r, service, f)
		return
	}
	in.o.Logf("fault: %s %s acted (%s), connection dropped", r.Method, r.URL.Path, held.status())
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // no hijacking (HTTP/2): net/http resets the stream
}

func (in *Injector) wait(ctx context.Context, d time.Duration) bool { return Sleep(ctx, in.o.Done, d) }

// Sleep waits d (not at all when d <= 0) and reports false when ctx ends
// (the client went away) or done closes (the double is closing) first.
func Sleep(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-done:
	}
	return false
}

// heldAnswer is the answer a handler wrote, kept from the client.
type heldAnswer struct {
	header http.Header
	code   int
}

func (h *heldAnswer) Header() http.Header { return h.header }

func (h *heldAnswer) WriteHeader(code int) {
	if h.code == 0 {
		h.code = code
	}
}

func (h *heldAnswer) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(b), nil
}

// Flush lets streaming handlers run; nothing reaches the client.
func (h *heldAnswer) Flush() {}

func (h *heldAnswer) status() string {
	if h.code == 0 {
		return "no answer"
	}
	return strconv.Itoa(h.code)
}
