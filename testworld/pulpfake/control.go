package pulpfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// maxControlBody bounds control request bodies; Files may carry small repos.
const maxControlBody = 64 << 20

// LatencyBody is the JSON body of PUT/GET /_control/latency.
type LatencyBody struct {
	Latency string `json:"latency"` // Go duration, e.g. "50ms"
}

// FormatBody is the JSON body of PUT/GET /_control/format.
type FormatBody struct {
	Format string `json:"format"` // "3.115", "3.22" or "legacy"
}

// newControlHandler builds the /_control/ API. It bypasses latency, faults
// and the request log so tests can always steer the server.
func (s *Server) newControlHandler() http.Handler {
	mux := http.NewServeMux()

	mux.HandleFunc("GET /_control/requests", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Requests())
	})
	mux.HandleFunc("DELETE /_control/requests", func(w http.ResponseWriter, r *http.Request) {
		s.ResetRequests()
		writeJSON(w, http.StatusOK, []Request{})
	})

	mux.HandleFunc("GET /_control/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	})
	mux.HandleFunc("PUT /_control/faults", func(w http.ResponseWriter, r *http.Request) {
		var faults []Fault
		if !readJSON(w, r, &faults) {
			return
		}
		if err := s.faults.Set(faults...); err != nil {
			writeJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, s.Faults())
	})

	mux.HandleFunc("GET /_control/latency", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, LatencyBody{Latency: s.Latency().String()})
	})
	mux.HandleFunc("PUT /_control/latency", func(w http.ResponseWriter, r *http.Request) {
		var body LatencyBody
		if !readJSON(w, r, &body) {
			return
		}
		d, err := time.ParseDuration(body.Latency)
		if err != nil || d < 0 {
			writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("invalid latency %q", body.Latency))
			return
		}
		s.SetLatency(d)
		writeJSON(w, http.StatusOK, LatencyBody{Latency: d.String()})
	})

	mux.HandleFunc("GET /_control/format", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, FormatBody{Format: s.Format().String()})
	})
	mux.HandleFunc("PUT /_control/format", func(w http.ResponseWriter, r *http.Request) {
		var body FormatBody
		if !readJSON(w, r, &body) {
			return
		}
		f, err := ParseFormat(body.Format)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		s.SetFormat(f)
		writeJSON(w, http.StatusOK, FormatBody{Format: f.String()})
	})

	mux.HandleFunc("GET /_control/distributions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Distributions())
	})
	mux.HandleFunc("POST /_control/distributions", func(w http.ResponseWriter, r *http.Request) {
		var d Distribution
		if !readJSON(w, r, &d) {
			return
		}
		if err := ValidateBasePath(d.BasePath); err != nil {
			writeJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		s.AddDistribution(d)
		writeJSON(w, http.StatusCreated, d)
	})
	mux.HandleFunc("DELETE /_control/distributions", func(w http.ResponseWriter, r *http.Request) {
		bp := r.URL.Query().Get("base_path")
		if bp == "" {
			writeJSONError(w, http.StatusBadRequest, "base_path query parameter required")
			return
		}
		if !s.RemoveDistribution(bp) {
			writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no distribution %q", bp))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"removed": bp})
	})

	mux.HandleFunc("/_control/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "unknown control endpoint")
	})
	return mux
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxControlBody))
	dec.DisallowUnknownFields() // catch typos in field names early
	if err := dec.Decode(v); err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
