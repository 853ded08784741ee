package e2e

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// The behaviour suite's parts that need no lab: its rows are the table's,
// its check fails both ways, and its normaliser sees through what must
// differ but not through what matters.

// Every row the suite names is a row of the docs' table, and every case
// it names is one of its cases.
func TestBehaviourRowsAndCases(t *testing.T) {
	rows := differenceRows(t)
	for _, d := range documentedDifferences {
		if !rows[d.row] {
			t.Errorf("%s names row %q, which the table does not have", d.key, d.row)
		}
		for _, c := range d.cases {
			if !slices.ContainsFunc(behaviourCases, func(bc behaviourCase) bool { return bc.name == c }) {
				t.Errorf("%s names case %q, which the suite does not have", d.key, c)
			}
		}
	}
}

// A difference nothing documents, and a documented one that did not
// occur, are both reported; a "*" covers keys and values.
func TestBehaviourUnexplained(t *testing.T) {
	docs := []documentedDifference{
		{"r", "build", "fails", "ok", []string{"a"}},
		{"r", "server.*", "(none)", "*", []string{"a", "b"}},
	}
	found := map[string][]difference{
		"a": {{"build", "fails", "ok"}, {"server.create.name", "(none)", "x"}},
		"b": {{"server.action.os-stop", "(none)", "null"}, {"image.status", "active", "(no image)"}},
	}
	undoc, gone := unexplained(docs, found)
	if len(undoc) != 1 || !strings.HasPrefix(undoc[0], "b: image.status") || len(gone) != 0 {
		t.Errorf("undocumented %q, gone %q", undoc, gone)
	}
	found["a"] = found["a"][1:]
	if _, gone = unexplained(docs, found); len(gone) != 1 || !strings.HasPrefix(gone[0], "a: build") {
		t.Errorf("gone %q, want a's build", gone)
	}
}

// Two builds that attach their floating IP differently (on create, or by
// an update), delete a server twice (the second a 404), send Nova's
// defaults or not, and make keypairs with other random keys have the same
// effects; a different network does not.
func TestBehaviourNormaliser(t *testing.T) {
	req := func(svc, method, path string, status int, body, answer string) cloud.Request {
		return cloud.Request{Service: svc, Method: method, Path: path, Status: status, Body: []byte(body), Answer: []byte(answer)}
	}
	const fipAns = `{"floatingip": {"fixed_ip_address": "10.213.0.5"}}`
	a := []cloud.Request{
		req(cloud.SvcCompute, "POST", "/compute/v2.1/os-keypairs", 200, `{"keypair": {"name": "packer_1111", "public_key": "ssh-rsa AAAA1"}}`, ""),
		req(cloud.SvcCompute, "POST", "/compute/v2.1/servers", 202, `{"server": {"name": "img-a", "key_name": "packer_1111", "config_drive": false, "user_data": ""}}`, ""),
		req(cloud.SvcNetwork, "POST", "/networking/v2.0/floatingips", 201, `{"floatingip": {"floating_network_id": "pub"}}`, `{"floatingip": {}}`),
		req(cloud.SvcNetwork, "PUT", "/networking/v2.0/floatingips/f1", 200, `{"floatingip": {"port_id": "p1"}}`, fipAns),
		req(cloud.SvcCompute, "DELETE", "/compute/v2.1/servers/11111111-1111-1111-1111-111111111111", 204, "", ""),
		req(cloud.SvcCompute, "DELETE", "/compute/v2.1/servers/11111111-1111-1111-1111-111111111111", 404, "", ""),
	}
	b := []cloud.Request{
		req(cloud.SvcCompute, "POST", "/compute/v2.1/os-keypairs", 200, `{"keypair": {"name": "packer_2222", "public_key": "ssh-rsa AAAA2 comment"}}`, ""),
		req(cloud.SvcCompute, "POST", "/compute/v2.1/servers", 202, `{"server": {"name": "img-b", "key_name": "packer_2222"}}`, ""),
		req(cloud.SvcNetwork, "POST", "/networking/v2.0/floatingips", 201, `{"floatingip": {"floating_network_id": "pub", "port_id": "p2"}}`, fipAns),
		req(cloud.SvcNetwork, "PUT", "/networking/v2.0/floatingips/f2", 200, `{"floatingip": {"port_id": null}}`, `{"floatingip": {"fixed_ip_address": null}}`),
		req(cloud.SvcCompute, "DELETE", "/compute/v2.1/servers/22222222-2222-2222-2222-222222222222", 204, "", ""),
	}
	subnets := map[string]string{"lab-net": "10.213.0.0/16"}
	ea, eb := testNormaliser("img-a", subnets).buildEffects(a), testNormaliser("img-b", subnets).buildEffects(b)
	if d := compareEffects(ea, eb); len(d) != 0 {
		t.Errorf("differences %v between builds with the same effects:\n%s\n%s", d, ea, eb)
	}
	if ea.value("floatingip.port_on") != "lab-net" || ea.value("server.create.key_name") != "<temporary keypair>" {
		t.Errorf("effects:\n%s", ea)
	}
	var body map[string]any
	_ = json.Unmarshal(b[1].Body, &body)
	body["server"].(map[string]any)["networks"] = []any{map[string]any{"uuid": "other"}}
	b[1].Body, _ = json.Marshal(body)
	if d := compareEffects(ea, testNormaliser("img-b", subnets).buildEffects(b)); len(d) != 1 || d[0].key != "server.create.networks[0].uuid" {
		t.Errorf("differences %v, want the network only", d)
	}
}

func testNormaliser(imageName string, subnets map[string]string) *normaliser {
	n := &normaliser{imageName: imageName, known: map[string]string{}, subnets: map[string]*net.IPNet{}}
	for name, cidr := range subnets {
		_, n.subnets[name], _ = net.ParseCIDR(cidr)
	}
	return n
}
