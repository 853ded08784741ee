package fatimage

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/packer-plugin-sdk/hcl2helper"
	"github.com/zclconf/go-cty/cty"

	"github.com/stackhpc/packer-plugin-fatimage/datasource/ark"
)

// `repos = data.fatimage-ark.x.repos` decodes: the data source's output
// value, as Packer builds it, is a valid `repos` attribute.
func TestReposFromArkDatasourceOutput(t *testing.T) {
	clearArkEnv(t)
	out := &ark.DatasourceOutput{Repos: []ark.Repo{
		{Name: "appstream", RepoFile: "rocky", RepoName: "appstream", BaseURL: "https://ark/pulp/content/rocky/9.6/AppStream/x86_64/os/20251106T211545", Path: "rocky/9.6/AppStream/x86_64/os", Timestamp: "20251106T211545", GPGCheck: true},
		{Name: "grafana", RepoFile: "grafana", RepoName: "grafana", BaseURL: "https://ark/pulp/content/grafana/oss/rpm/20251106T211545", Path: "grafana/oss/rpm", Timestamp: "20251106T211545", OSVersion: "9.6", GPGCheck: false,
			Warning: "passing over snapshot 20251201T000000: 403 Forbidden"},
	}, Timestamps: map[string]string{"appstream": "20251106T211545"}}
	var d ark.Datasource
	val := hcl2helper.HCL2ValueFromConfig(out, d.OutputSpec())
	ectx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"data": cty.ObjectVal(map[string]cty.Value{"fatimage-ark": cty.ObjectVal(map[string]cty.Value{"x": val})}),
	}}
	f, diags := hclparse.NewParser().ParseHCL([]byte("repos = data.fatimage-ark.x.repos\ngroups = [\"openhpc\"]\n"), "t.pkr.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var p Provisioner
	cfg, diags := hcldec.Decode(f.Body, p.ConfigSpec(), ectx)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if err := p.Prepare(cfg); err != nil {
		t.Fatal(err)
	}
	r := p.plan.repos
	if len(r) != 2 || r[0].RepoName != "appstream" || !r[0].GPGCheck || r[1].GPGCheck || r[1].Timestamp != "20251106T211545" || !*r[1].Enabled ||
		r[1].Warning != "passing over snapshot 20251201T000000: 403 Forbidden" || r[0].Warning != "" || len(r[1].Options) != 0 || r[1].OSVersion != "9.6" {
		t.Fatalf("repos %+v", r)
	}
	files := renderRepoFiles(r, "", "", false)
	if len(files) != 2 || files[1].Name != "grafana.repo" || strings.Contains(files[1].Content, "passing over") || strings.Contains(files[1].Content, "os_version") {
		t.Fatalf("files %+v", files)
	}
}
