package sitepulp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// call sends one API request as the test user and decodes the answer.
func call(t *testing.T, s *Server, method, ref string, body any, auth bool) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = strings.NewReader(string(data))
	}
	u := ref
	if !strings.HasPrefix(u, "http") {
		if !strings.HasPrefix(u, "/") {
			u = APIPrefix + u
		}
		u = s.URL() + u
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Content-Type", "application/json")
	if auth {
		req.SetBasicAuth("admin", "Site-Api-Pw-1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out) //nolint:errcheck // some answers are empty
	return resp.StatusCode, out
}

func waitTask(t *testing.T, s *Server, href string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, task := call(t, s, "GET", href, nil, true)
		switch task["state"] {
		case "completed", "failed", "canceled":
			return task
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s never finished", href)
	return nil
}

// TestSyncPublishDistribute walks the whole API the way the data source
// does, against an upstream that demands credentials, and reads a package
// back from the content app.
func TestSyncPublishDistribute(t *testing.T) {
	up := pulpfake.New(pulpfake.Options{})
	up.AddDistribution(pulpfake.Distribution{BasePath: "rocky/9/os/20250101T000000",
		Files: RepoFiles(map[string][]byte{"hello-1.rpm": []byte("rpm bytes")}),
		Guard: &pulpfake.Guard{Users: map[string]string{"ark": "Ark-Pw-7"}}})
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	s := StartT(t, Options{Username: "admin", Password: "Site-Api-Pw-1"})

	if code, out := call(t, s, "GET", "status/", nil, false); code != 401 || out["detail"] != "Authentication credentials were not provided." {
		t.Fatalf("unauthenticated status: %d %v", code, out)
	}
	code, remote := call(t, s, "POST", "remotes/rpm/rpm/", map[string]any{"name": "r", "url": up.ContentURL() + "/rocky/9/os/20250101T000000/", "username": "ark", "password": "Ark-Pw-7", "policy": "on_demand"}, true)
	if code != 201 || remote["password"] != nil || remote["pulp_href"] == nil {
		t.Fatalf("create remote: %d %v", code, remote)
	}
	if code, out := call(t, s, "POST", "remotes/rpm/rpm/", map[string]any{"name": "r", "url": "x", "policy": "fast"}, true); code != 400 ||
		fmt.Sprint(out["name"]) != "[This field must be unique.]" || out["url"] == nil || out["policy"] == nil {
		t.Fatalf("invalid remote: %d %v", code, out)
	}
	_, repo := call(t, s, "POST", "repositories/rpm/rpm/", map[string]any{"name": "repo"}, true)
	if !strings.HasSuffix(repo["latest_version_href"].(string), "/versions/0/") {
		t.Fatalf("new repository: %v", repo)
	}
	code, async := call(t, s, "POST", repo["pulp_href"].(string)+"sync/", map[string]any{"remote": remote["pulp_href"]}, true)
	if code != 202 {
		t.Fatalf("sync: %d %v", code, async)
	}
	task := waitTask(t, s, async["task"].(string))
	if task["state"] != "completed" {
		t.Fatalf("sync task: %v", task)
	}
	_, repo = call(t, s, "GET", repo["pulp_href"].(string), nil, true)
	ver := repo["latest_version_href"].(string)
	if !strings.HasSuffix(ver, "/versions/1/") {
		t.Fatalf("synced repository: %v", repo)
	}
	_, async = call(t, s, "POST", "publications/rpm/rpm/", map[string]any{"repository_version": ver}, true)
	task = waitTask(t, s, async["task"].(string))
	pub := task["created_resources"].([]any)[0].(string)
	_, async = call(t, s, "POST", "distributions/rpm/rpm/", map[string]any{"name": "d", "base_path": "rocky/9/os/20250101T000000", "publication": pub}, true)
	if task = waitTask(t, s, async["task"].(string)); task["state"] != "completed" {
		t.Fatalf("distribution task: %v", task)
	}
	if code, out := call(t, s, "POST", "distributions/rpm/rpm/", map[string]any{"name": "d2", "base_path": "rocky/9/os"}, true); code != 400 ||
		!strings.Contains(fmt.Sprint(out["base_path"]), "Overlaps with existing distribution 'd'") {
		t.Fatalf("overlapping distribution: %d %v", code, out)
	}
	resp, err := http.Get(s.ContentURL() + "/rocky/9/os/20250101T000000/Packages/hello-1.rpm")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "rpm bytes" {
		t.Fatalf("content: %d %q", resp.StatusCode, body)
	}
	if code, out := call(t, s, "GET", "distributions/rpm/rpm/?base_path=rocky/9/os/20250101T000000", nil, true); code != 200 || out["count"] != 1.0 {
		t.Fatalf("filtered list: %d %v", code, out)
	}
}

// TestSyncRefusedUpstream: a remote with wrong credentials fails its sync
// task with the downloader's error text.
func TestSyncRefusedUpstream(t *testing.T) {
	up := pulpfake.New(pulpfake.Options{})
	up.AddDistribution(pulpfake.Distribution{BasePath: "a/1", Files: RepoFiles(nil), Guard: &pulpfake.Guard{Users: map[string]string{"ark": "right"}}})
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	s := StartT(t, Options{Username: "admin", Password: "Site-Api-Pw-1"})
	_, remote := call(t, s, "POST", "remotes/rpm/rpm/", map[string]any{"name": "r", "url": up.ContentURL() + "/a/1/", "username": "ark", "password": "wrong"}, true)
	_, repo := call(t, s, "POST", "repositories/rpm/rpm/", map[string]any{"name": "repo", "remote": remote["pulp_href"]}, true)
	_, async := call(t, s, "POST", repo["pulp_href"].(string)+"sync/", map[string]any{}, true)
	task := waitTask(t, s, async["task"].(string))
	desc := fmt.Sprint(task["error"].(map[string]any)["description"])
	if task["state"] != "failed" || !strings.HasPrefix(desc, "403, message='Forbidden'") {
		t.Fatalf("task: %v", task)
	}
}

// TestHangAndCancel: a hung task stays running until PATCHed to canceled.
func TestHangAndCancel(t *testing.T) {
	s := StartT(t, Options{Username: "admin", Password: "Site-Api-Pw-1"})
	s.SetHangTasks(true)
	_, repo := call(t, s, "POST", "repositories/rpm/rpm/", map[string]any{"name": "repo"}, true)
	_, async := call(t, s, "POST", "publications/rpm/rpm/", map[string]any{"repository": repo["pulp_href"]}, true)
	href := async["task"].(string)
	if _, task := call(t, s, "GET", href, nil, true); task["state"] != "running" && task["state"] != "waiting" {
		t.Fatalf("hung task: %v", task)
	}
	if code, _ := call(t, s, "PATCH", href, map[string]any{"state": "canceled"}, true); code != 200 {
		t.Fatalf("cancel: %d", code)
	}
	if task := waitTask(t, s, href); task["state"] != "canceled" {
		t.Fatalf("cancelled task: %v", task)
	}
}

// TestPagination: next links are absolute and pages add up.
func TestPagination(t *testing.T) {
	s := StartT(t, Options{Username: "admin", Password: "Site-Api-Pw-1"})
	for i := range 5 {
		call(t, s, "POST", "repositories/rpm/rpm/", map[string]any{"name": fmt.Sprint("repo", i)}, true)
	}
	seen := 0
	next := "repositories/rpm/rpm/?limit=2"
	for next != "" {
		_, page := call(t, s, "GET", next, nil, true)
		seen += len(page["results"].([]any))
		next, _ = page["next"].(string)
		if next != "" && !strings.HasPrefix(next, "http://") {
			t.Fatalf("relative next link %q", next)
		}
	}
	if seen != 5 {
		t.Fatalf("saw %d repositories over the pages", seen)
	}
}
