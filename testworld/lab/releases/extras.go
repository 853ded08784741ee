package releases

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Beyond the monitoring tarballs the release server serves files by URL
// (the RPMs the appliance installs from release pages) and Grafana
// plugin zips at grafana.com's paths, so that a build can fetch each by
// the VM or through the host cache.

// GrafanaPlugin is a plugin served as grafana.com serves one.
type GrafanaPlugin struct {
	ID, Version string
}

// DefaultGrafanaPlugins is the appliance's plugin.
func DefaultGrafanaPlugins() []GrafanaPlugin {
	return []GrafanaPlugin{{ID: "grafana-opensearch-datasource", Version: "2.8.1"}}
}

// GrafanaPluginBase is the path under which the plugin API is served, as
// https://grafana.com/api/plugins.
const GrafanaPluginBase = "/api/plugins"

// Path is the plugin zip's download path (the query grafana-cli adds,
// ?os=linux&arch=amd64, is ignored).
func (g GrafanaPlugin) Path() string {
	return fmt.Sprintf("%s/%s/versions/%s/download", GrafanaPluginBase, g.ID, g.Version)
}

// addExtras adds o.Files and the Grafana plugins to the served files.
func (s *Server) addExtras(o Options) error {
	for p, data := range o.Files {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("releases: file path %q must start with /", p)
		}
		if _, dup := s.files[p]; dup {
			return fmt.Errorf("releases: %s is served twice", p)
		}
		s.files[p] = data
	}
	s.plugins = o.GrafanaPlugins
	if len(s.plugins) == 0 {
		s.plugins = DefaultGrafanaPlugins()
	}
	for _, g := range s.plugins {
		data, err := PluginZip(g)
		if err != nil {
			return err
		}
		s.files[g.Path()] = data
	}
	return s.addServiceFiles()
}

// FileURL is the URL of a served path.
func (s *Server) FileURL(p string) string { return s.URL() + p }

// SHA256 is the sha256 of the file served at path p ("" when none is).
func (s *Server) SHA256(p string) string {
	data, ok := s.files[p]
	if !ok {
		return ""
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// GrafanaPlugins are the served plugins.
func (s *Server) GrafanaPlugins() []GrafanaPlugin { return append([]GrafanaPlugin(nil), s.plugins...) }

// PluginZip builds g's zip deterministically, laid out as grafana.com's
// are: one top directory named after the plugin holding plugin.json, a
// backend executable and a logo.
func PluginZip(g GrafanaPlugin) ([]byte, error) {
	files := map[string]struct {
		data string
		mode uint32
	}{
		"plugin.json":         {fmt.Sprintf(`{"type":"datasource","name":"%s (lab stand-in)","id":"%s","backend":true,"executable":"gpx_lab","info":{"version":"%s","updated":"2025-06-01"}}`+"\n", g.ID, g.ID, g.Version), 0o644},
		"gpx_lab_linux_amd64": {"#!/bin/sh\necho '" + g.ID + " " + g.Version + " backend (lab stand-in)'\n", 0o755},
		"img/logo.svg":        {"<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n", 0o644},
		"README.md":           {"# " + g.ID + "\n\nLab stand-in of the Grafana plugin " + g.ID + " " + g.Version + ".\n", 0o644},
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, n := range names {
		h := &zip.FileHeader{Name: g.ID + "/" + n, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(files[n].mode))
		w, err := z.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(files[n].data)); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
