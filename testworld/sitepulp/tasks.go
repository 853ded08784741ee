package sitepulp

import (
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// errCanceled ends a task that was cancelled.
var errCanceled = errors.New("canceled")

// spawn answers 202 with a new task and runs work in the background,
// waiting -> running -> completed/failed/canceled. With SetHangTasks(true)
// the task stays running until cancelled or the server closes.
func (s *Server) spawn(w http.ResponseWriter, name string, work func(*Task) error) {
	t := &Task{Href: APIPrefix + "tasks/" + newID() + "/", Created: now(), Name: name, State: "waiting",
		CreatedResources: []string{}, ProgressReports: []ProgressReport{}, cancel: make(chan struct{})}
	s.mu.Lock()
	s.tasks[t.Href] = t
	s.taskOrder = append(s.taskOrder, t.Href)
	hang := s.hangTasks
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.setState(t, "running", nil)
		var err error
		if hang {
			select {
			case <-t.cancel:
				err = errCanceled
			case <-s.stopping:
				err = errors.New("worker stopped")
			}
		} else {
			err = work(t)
		}
		switch {
		case errors.Is(err, errCanceled):
			s.setState(t, "canceled", nil)
		case err != nil:
			s.setState(t, "failed", &TaskError{Description: err.Error(), Traceback: "  (sitepulp double: no traceback)"})
		default:
			s.setState(t, "completed", nil)
		}
		s.opts.Logf("sitepulp: task %s %s: %s", name, t.Href, t.State)
	}()
	writeJSON(w, http.StatusAccepted, map[string]string{"task": t.Href})
}

func (s *Server) setState(t *Task, state string, e *TaskError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := now()
	switch state {
	case "running":
		t.StartedAt = &ts
	default:
		t.FinishedAt = &ts
	}
	t.State, t.Error = state, e
	for i := range t.ProgressReports {
		if t.ProgressReports[i].State == "running" {
			t.ProgressReports[i].State = state
		}
	}
}

// progress sets (adding if new) the task's report for code.
func (s *Server) progress(t *Task, code, message string, done, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range t.ProgressReports {
		if t.ProgressReports[i].Code == code {
			t.ProgressReports[i].Done = done
			if done == total {
				t.ProgressReports[i].State = "completed"
			}
			return
		}
	}
	t.ProgressReports = append(t.ProgressReports, ProgressReport{Message: message, Code: code, State: "running", Total: &total, Done: done})
}

// sync makes a new repository version from the remote's repository:
// repodata/repomd.xml and every metadata file it lists are downloaded;
// the packages primary.xml lists are downloaded too with policy
// "immediate", and otherwise (on_demand, streamed) only recorded, to be
// fetched from the remote when the content app is first asked for them.
// Errors read like pulp's downloader's: aiohttp's "401,
// message='...', url='...'".
func (s *Server) sync(t *Task, repo *Repository, remote Remote) error {
	dir, err := os.MkdirTemp(s.dir, "version-")
	if err != nil {
		return err
	}
	fetch := func(rel string) error {
		select {
		case <-t.cancel:
			return errCanceled
		case <-s.stopping:
			return errors.New("worker stopped")
		default:
		}
		return download(remote, rel, dir)
	}

	s.progress(t, "sync.downloading.metadata", "Downloading Metadata Files", 0, 1)
	if err := fetch("repodata/repomd.xml"); err != nil {
		return err
	}
	base := strings.TrimSuffix(remote.URL, "/") + "/"
	meta, primary, err := readRepomd(filepath.Join(dir, "repodata", "repomd.xml"))
	if err != nil {
		return fmt.Errorf("parsing %srepodata/repomd.xml: %v", base, err)
	}
	s.progress(t, "sync.downloading.metadata", "Downloading Metadata Files", 1, 1)
	for _, rel := range meta {
		if err := fetch(rel); err != nil {
			return err
		}
	}
	var pkgs []string
	if primary != "" {
		if pkgs, err = readPrimary(filepath.Join(dir, filepath.FromSlash(primary))); err != nil {
			return fmt.Errorf("parsing %s%s: %v", base, primary, err)
		}
	}
	lazy := map[string]bool{}
	if remote.Policy == "immediate" {
		const code, msg = "sync.downloading.artifacts", "Downloading Artifacts"
		s.progress(t, code, msg, 0, len(pkgs))
		for i, rel := range pkgs {
			if err := fetch(rel); err != nil {
				return err
			}
			s.progress(t, code, msg, i+1, len(pkgs))
		}
	} else {
		for _, rel := range pkgs {
			lazy[rel] = true
		}
		s.progress(t, "sync.parsing.packages", "Parsed Packages", len(pkgs), len(pkgs))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	repo.versions++
	v := &version{href: repo.VersionsHref + strconv.Itoa(repo.versions) + "/", repo: repo.Href, number: repo.versions, dir: dir, lazy: lazy, remote: remote}
	s.versions[v.href] = v
	repo.LatestVersionHref = v.href
	t.CreatedResources = append(t.CreatedResources, v.href)
	return nil
}

// download fetches the remote's base URL + rel with its credentials into
// dir/rel, through a temporary file so concurrent fetches of one file
// never mix.
func download(remote Remote, rel, dir string) error {
	u := strings.TrimSuffix(remote.URL, "/") + "/" + rel
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if remote.Username != nil {
		req.SetBasicAuth(*remote.Username, remote.password)
	}
	resp, err := downloadClient.Do(req)
	if err != nil {
		return fmt.Errorf("Cannot connect to host %s [%v]", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d, message='%s', url='%s'", resp.StatusCode, http.StatusText(resp.StatusCode), u)
	}
	dst := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".download-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("downloading %s: %v", u, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

var downloadClient = &http.Client{Timeout: 5 * time.Minute}

// fetchOnDemand downloads a package an on_demand version has only
// recorded, before the content app serves the request for it, as Pulp's
// content app streams it from the remote on first request. A failed
// fetch is logged and leaves the request to answer 404.
func (s *Server) fetchOnDemand(urlPath string) {
	rel, ok := strings.CutPrefix(urlPath, "/pulp/content/")
	if !ok {
		return
	}
	s.mu.Lock()
	var ver *version
	sub := ""
	for _, d := range s.dists {
		if d.Publication == nil || !strings.HasPrefix(rel, d.BasePath+"/") {
			continue
		}
		ver = s.versions[s.pubs[*d.Publication].RepositoryVersion]
		sub = strings.TrimPrefix(rel, d.BasePath+"/")
	}
	if ver == nil || !ver.lazy[sub] {
		s.mu.Unlock()
		return
	}
	remote, dir := ver.remote, ver.dir
	s.mu.Unlock()
	if err := download(remote, sub, dir); err != nil {
		s.opts.Logf("sitepulp: on-demand fetch of %s: %v", sub, err)
		return
	}
	s.mu.Lock()
	delete(ver.lazy, sub)
	s.mu.Unlock()
}

// readRepomd lists repomd.xml's metadata files and names the primary one.
func readRepomd(file string) (all []string, primary string, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	var md struct {
		Data []struct {
			Type     string `xml:"type,attr"`
			Location struct {
				Href string `xml:"href,attr"`
			} `xml:"location"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(data, &md); err != nil {
		return nil, "", err
	}
	for _, d := range md.Data {
		rel, err := safeRel(d.Location.Href)
		if err != nil {
			return nil, "", err
		}
		all = append(all, rel)
		if d.Type == "primary" {
			primary = rel
		}
	}
	return all, primary, nil
}

// readPrimary lists the package locations of a primary.xml(.gz).
func readPrimary(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(file, ".gz"):
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = gz
	case strings.HasSuffix(file, ".xml"):
	default:
		return nil, fmt.Errorf("unsupported compression of %s (the double reads .xml and .xml.gz)", path.Base(file))
	}
	dec := xml.NewDecoder(r)
	var pkgs []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return pkgs, nil
		}
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "location" {
			for _, a := range se.Attr {
				if a.Name.Local == "href" {
					rel, err := safeRel(a.Value)
					if err != nil {
						return nil, err
					}
					pkgs = append(pkgs, rel)
				}
			}
		}
	}
}

// safeRel refuses locations that would escape the version directory.
func safeRel(href string) (string, error) {
	clean := path.Clean(href)
	if href == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("location %q is outside the repository", href)
	}
	return clean, nil
}
