package pulp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Mode is how a snapshot is chosen.
type Mode string

// The selection modes.
const (
	ModeLatest   Mode = "latest"    // the newest snapshot
	ModePinned   Mode = "pinned"    // a given snapshot, checked to exist
	ModeNotAfter Mode = "not_after" // the newest snapshot at or before a cut-off
)

// Modes lists every mode, for validation messages.
var Modes = []Mode{ModeLatest, ModePinned, ModeNotAfter}

// Query says which snapshot of one repository path to choose.
type Query struct {
	ContentURL string
	Path       string
	Mode       Mode
	// Pinned is the snapshot name for ModePinned.
	Pinned string
	// NotAfter is the cut-off for ModeNotAfter.
	NotAfter time.Time
	// Verify requires the chosen snapshot's repomd.xml to answer 200; when
	// choosing, snapshots answering 403 or 404 are passed over.
	Verify bool
}

// MaxCandidates bounds the snapshots tried when the newest are refused:
// each try sends the credentials, and a content guard that refuses the
// newest ten is not going to accept the eleventh by chance.
const MaxCandidates = 10

// Result is the chosen snapshot and what was passed over on the way.
type Result struct {
	Timestamp string
	// Warnings name each newer snapshot that was passed over, and why.
	Warnings []string
}

// ErrCredentialsRefused ends errors caused by refused credentials
// (errors.Is finds it), so a caller can say what several have in common.
var ErrCredentialsRefused = errors.New("the server refused these credentials: check username and password (or ARK_USERNAME and ARK_PASSWORD)")

// Resolve chooses a snapshot for q.
func (c *Client) Resolve(ctx context.Context, q Query) (Result, error) {
	res, err := c.resolve(ctx, q)
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden) {
		err = fmt.Errorf("%w; %w", err, ErrCredentialsRefused)
	}
	return res, err
}

func (c *Client) resolve(ctx context.Context, q Query) (Result, error) {
	if q.Mode == ModePinned {
		return c.resolvePinned(ctx, q)
	}
	names, err := c.Snapshots(ctx, q.ContentURL, q.Path)
	if err != nil {
		return Result{}, err
	}
	listURL := ListURL(q.ContentURL, q.Path)
	if len(names) == 0 {
		return Result{}, fmt.Errorf("GET %s: no snapshots listed", listURL)
	}
	candidates := names
	if q.Mode == ModeNotAfter {
		candidates = notAfter(names, q.NotAfter)
		if len(candidates) == 0 {
			return Result{}, fmt.Errorf("GET %s: no snapshot at or before %s (oldest is %s)", listURL, q.NotAfter.UTC().Format(TimestampLayout), names[0])
		}
	}
	newest := candidates[len(candidates)-1]
	if !q.Verify {
		return Result{Timestamp: newest}, nil
	}
	var res Result
	var rejected []string
	forbidden := 0
	tried := candidates[max(len(candidates)-MaxCandidates, 0):]
	for _, name := range slices.Backward(tried) {
		err := c.Check(ctx, q.ContentURL, q.Path, name)
		if err == nil {
			res.Timestamp = name
			return res, nil
		}
		var se *StatusError
		if !errors.As(err, &se) || (se.StatusCode != http.StatusForbidden && se.StatusCode != http.StatusNotFound) {
			return Result{}, err
		}
		rejected = append(rejected, fmt.Sprintf("%s answered %s", name, se.Status))
		if se.StatusCode == http.StatusForbidden {
			forbidden++
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("passing over snapshot %s: %s", name, err))
	}
	if len(tried) < len(candidates) {
		err = fmt.Errorf("GET %s: none of the %d newest snapshots is usable (%s); %d older ones were not tried, as at most %d are (the cap): choose one with mode = \"pinned\" or \"not_after\"",
			listURL, len(tried), strings.Join(rejected, ", "), len(candidates)-len(tried), MaxCandidates)
	} else {
		err = fmt.Errorf("GET %s: no usable snapshot (%s)", listURL, strings.Join(rejected, ", "))
	}
	if forbidden > 0 {
		err = fmt.Errorf("%w; %w", err, ErrCredentialsRefused)
	}
	return Result{}, err
}

func (c *Client) resolvePinned(ctx context.Context, q Query) (Result, error) {
	if q.Verify {
		if err := c.Check(ctx, q.ContentURL, q.Path, q.Pinned); err != nil {
			return Result{}, fmt.Errorf("pinned snapshot %s: %w", q.Pinned, err)
		}
		return Result{Timestamp: q.Pinned}, nil
	}
	// Without verification the listing is the proof; hidden distributions
	// are not listed, so verify=true is the way to pin one of those.
	names, err := c.Snapshots(ctx, q.ContentURL, q.Path)
	if err != nil {
		return Result{}, err
	}
	if !slices.Contains(names, q.Pinned) {
		return Result{}, fmt.Errorf("GET %s: pinned snapshot %s is not listed", ListURL(q.ContentURL, q.Path), q.Pinned)
	}
	return Result{Timestamp: q.Pinned}, nil
}

// notAfter keeps the names (oldest first) at or before cutoff.
func notAfter(names []string, cutoff time.Time) []string {
	var out []string
	for _, n := range names {
		if t, err := ParseTimestamp(n); err == nil && !t.After(cutoff) {
			out = append(out, n)
		}
	}
	return out
}
