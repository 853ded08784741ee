// Package faultinject is the test world's one fault injector, shared by
// the cloud double (testworld/lab/cloud) and both Pulp doubles
// (testworld/pulpfake, testworld/sitepulp): one rule type, one matching
// and counting engine, and an http.Handler wrapper. Each double only says
// how an injected status looks in its own error shape (Options.Answer) and
// which resource kinds it consumes itself (Options.Kinds, Injector.Take).
package faultinject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Request fault kinds; a double may add resource kinds of its own.
const (
	// KindHTTP (or "") answers instead of acting: after Latency, Hang
	// holds the request until the client goes away, Status answers it in
	// the double's error shape; Latency alone only slows it down.
	KindHTTP = "http"
	// KindLoseAnswer lets the request act (the handler runs to the end:
	// the server, volume or upload exists), then loses its answer: the
	// connection is closed without a response (Status 0), or the answer
	// is replaced by Status (a 502/503/504 from a proxy in between).
	KindLoseAnswer = "lose_answer"
)

// Rule is one injected fault. Zero fields match or change nothing.
type Rule struct {
	Kind string // KindHTTP (also ""), KindLoseAnswer or a resource kind of the double

	// Which requests: Service is the double's name for the part of its
	// API (the cloud's "compute", "image", ...; "" = any), Method an HTTP
	// method, Path a regexp searched in and PathPrefix a prefix of the
	// path the double matches (the cloud: the URL path; the Pulp doubles:
	// the path below /pulp/content/ or /pulp/api/v3/). Body is a regexp
	// searched in the request body (e.g. "createImage" among a server's
	// actions); the handler still reads the whole body. Name is a regexp
	// on a resource's name for resource kinds.
	Service    string
	Method     string
	Path       string
	PathPrefix string
	Body       string
	Name       string

	// How often: from the Nth matching request on (0 and 1: the first),
	// at most Times times (0 = unlimited), each time with probability
	// Rate (0 or >= 1: always).
	Nth   int
	Times int
	Rate  float64

	// What: see the kinds. RetryAfter goes out as the Retry-After header
	// with an injected status; Message replaces the status's standard
	// text in the answer; Delay is for resource kinds.
	Latency    time.Duration
	Hang       bool
	Status     int
	RetryAfter string
	Message    string
	Delay      time.Duration
}

// LoseAnswer is the rule a test arms to lose the answer of the nth
// request (1 = the first) with method to the path matching the regexp
// path: the request acts, then its connection closes without an answer.
// Set Status on the result to answer 502/503/504 instead of closing.
func LoseAnswer(method, path string, nth int) Rule {
	return Rule{Kind: KindLoseAnswer, Method: method, Path: path, Nth: nth, Times: 1}
}

// ruleJSON is Rule's wire form: snake_case names, durations as Go
// duration strings (integer nanoseconds accepted), Retry-After as a
// string or a number.
type ruleJSON struct {
	Kind       string       `json:"kind,omitempty"`
	Service    string       `json:"service,omitempty"`
	Method     string       `json:"method,omitempty"`
	Path       string       `json:"path,omitempty"`
	PathPrefix string       `json:"path_prefix,omitempty"`
	Body       string       `json:"body,omitempty"`
	Name       string       `json:"name,omitempty"`
	Nth        int          `json:"nth,omitempty"`
	Times      int          `json:"times,omitempty"`
	Rate       float64      `json:"rate,omitempty"`
	Latency    jsonDuration `json:"latency,omitempty"`
	Hang       bool         `json:"hang,omitempty"`
	Status     int          `json:"status,omitempty"`
	RetryAfter retryAfter   `json:"retry_after,omitempty"`
	Message    string       `json:"message,omitempty"`
	Delay      jsonDuration `json:"delay,omitempty"`
}

// MarshalJSON encodes durations as strings such as "50ms".
func (f Rule) MarshalJSON() ([]byte, error) {
	return json.Marshal(ruleJSON{
		Kind: f.Kind, Service: f.Service, Method: f.Method, Path: f.Path, PathPrefix: f.PathPrefix,
		Body: f.Body, Name: f.Name, Nth: f.Nth, Times: f.Times, Rate: f.Rate, Latency: jsonDuration(f.Latency),
		Hang: f.Hang, Status: f.Status, RetryAfter: retryAfter(f.RetryAfter), Message: f.Message,
		Delay: jsonDuration(f.Delay),
	})
}

// UnmarshalJSON rejects unknown fields: a misspelt one would silently
// disable the fault.
func (f *Rule) UnmarshalJSON(b []byte) error {
	var j ruleJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*f = Rule{
		Kind: j.Kind, Service: j.Service, Method: j.Method, Path: j.Path, PathPrefix: j.PathPrefix,
		Body: j.Body, Name: j.Name, Nth: j.Nth, Times: j.Times, Rate: j.Rate, Latency: time.Duration(j.Latency),
		Hang: j.Hang, Status: j.Status, RetryAfter: string(j.RetryAfter), Message: j.Message,
		Delay: time.Duration(j.Delay),
	}
	return nil
}

// jsonDuration is a time.Duration that travels as "1.5s" in JSON.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = jsonDuration(v)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("faultinject: duration must be a string like \"50ms\" or integer nanoseconds, got %s", b)
	}
	*d = jsonDuration(n)
	return nil
}

// retryAfter is a Retry-After value: a string ("1", an HTTP date) or a
// number of seconds in JSON.
type retryAfter string

func (r *retryAfter) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*r = retryAfter(s)
		return err
	}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("faultinject: retry_after must be seconds or a string, got %s", b)
	}
	*r = ""
	if n > 0 { // the cloud's number form: 0 meant no header
		*r = retryAfter(strconv.Itoa(n))
	}
	return nil
}
