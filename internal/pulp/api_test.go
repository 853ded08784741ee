package pulp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/sitepulp"
)

func testAPI(t *testing.T) (*API, *sitepulp.Server) {
	t.Helper()
	s := sitepulp.StartT(t, sitepulp.Options{Username: "admin", Password: "Api-Test-Pw-5"})
	a, err := NewAPI(s.URL(), ClientOptions{Username: "admin", Password: "Api-Test-Pw-5", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return a, s
}

// Lists follow every page (the double's pages hold 100, like Pulp's).
func TestAPIListFollowsPages(t *testing.T) {
	a, _ := testAPI(t)
	ctx := context.Background()
	for i := range 130 {
		if _, err := a.CreateRepository(ctx, Repository{Name: fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := list[Repository](ctx, a, repositoriesRef, nil)
	if err != nil || len(all) != 130 {
		t.Fatalf("%d repositories, %v", len(all), err)
	}
	r, err := a.RepositoryByName(ctx, "r129")
	if err != nil || r == nil || r.Name != "r129" {
		t.Fatalf("by name: %+v %v", r, err)
	}
}

// Pulp's field errors and bad logins come back as readable APIErrors.
func TestAPIErrors(t *testing.T) {
	a, s := testAPI(t)
	ctx := context.Background()
	_, err := a.CreateRemote(ctx, Remote{Name: "x", URL: "not a url", Policy: "sometimes"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest ||
		ae.Detail != `policy: "sometimes" is not a valid choice.; url: Enter a valid URL.` {
		t.Fatalf("validation error: %v", err)
	}
	bad, _ := NewAPI(s.URL(), ClientOptions{Username: "admin", Password: "wrong"})
	if _, err := bad.Status(ctx); !errors.As(err, &ae) || ae.StatusCode != 401 || !strings.Contains(err.Error(), "Invalid username/password.") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad login: %v", err)
	}
}

// A caller that gives up on a task cancels it on the server.
func TestAPIWaitCancelsTaskWhenCallerGivesUp(t *testing.T) {
	a, s := testAPI(t)
	s.SetHangTasks(true)
	ctx, cancel := context.WithCancel(context.Background())
	repo, err := a.CreateRepository(ctx, Repository{Name: "r"})
	if err != nil {
		t.Fatal(err)
	}
	task, err := a.Publish(ctx, repo.LatestVersionHref)
	if err != nil {
		t.Fatal(err)
	}
	a.Poll.Progress = func(string) {}
	polled := make(chan struct{})
	go func() {
		// Cancel once the task is seen running (or after 10s regardless,
		// which the state check below then reports).
		for end := time.Now().Add(10 * time.Second); s.Tasks()[0].State != "running" && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		close(polled)
	}()
	_, err = a.Wait(ctx, task)
	<-polled
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled the task") {
		t.Fatalf("wait: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Tasks()[0].State != "canceled" {
		if time.Now().After(deadline) {
			t.Fatalf("task left %s", s.Tasks()[0].State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Running progress reports become one line; finished ones are left out.
func TestProgressText(t *testing.T) {
	total := 40
	var task Task
	if err := json.Unmarshal([]byte(`{"progress_reports": [
		{"message": "Downloading Metadata Files", "code": "sync.downloading.metadata", "state": "completed", "total": 1, "done": 1},
		{"message": "Downloading Artifacts", "code": "sync.downloading.artifacts", "state": "running", "total": 40, "done": 12},
		{"message": "Associating Content", "code": "associating.content", "state": "running", "total": null, "done": 3}]}`), &task); err != nil {
		t.Fatal(err)
	}
	if got := progressText(&task); got != fmt.Sprintf("Downloading Artifacts 12/%d, Associating Content 3", total) {
		t.Fatalf("progress %q", got)
	}
}
