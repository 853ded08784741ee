package openstack

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
)

// officialOption is a row of testdata/official-options.tsv.
type officialOption struct{ name, typ, def string }

func readOfficialOptions(t *testing.T) []officialOption {
	t.Helper()
	f, err := os.Open("testdata/official-options.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []officialOption
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != 3 {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, officialOption{p[0], p[1], p[2]})
	}
	if len(out) < 60 {
		t.Fatalf("only %d official options read", len(out))
	}
	return out
}

// specTypes flattens an HCL2 spec into option name -> type name, nested
// blocks as parent.child.
func specTypes(prefix string, spec map[string]hcldec.Spec, out map[string]string) {
	for name, s := range spec {
		full := prefix + name
		switch s := s.(type) {
		case *hcldec.AttrSpec:
			out[full] = ctyName(s.Type)
		case *hcldec.BlockSpec:
			out[full] = "block"
			if obj, ok := s.Nested.(hcldec.ObjectSpec); ok {
				specTypes(full+".", obj, out)
			}
		default:
			out[full] = fmt.Sprintf("%T", s)
		}
	}
}

func ctyName(t cty.Type) string {
	switch {
	case t == cty.String:
		return "string"
	case t == cty.Bool:
		return "bool"
	case t == cty.Number:
		return "number"
	case t.IsListType():
		return "list(" + ctyName(t.ElementType()) + ")"
	case t.IsMapType():
		return "map(" + ctyName(t.ElementType()) + ")"
	}
	return t.FriendlyName()
}

// fieldByTag finds the value of a mapstructure option in a struct,
// looking through squashed members.
func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	first, rest, nested := strings.Cut(name, ".")
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == ",squash" {
			if got, ok := fieldByTag(v.Field(i), name); ok {
				return got, true
			}
			continue
		}
		if strings.Split(tag, ",")[0] != first {
			continue
		}
		if nested {
			return fieldByTag(v.Field(i), rest)
		}
		return v.Field(i), true
	}
	return reflect.Value{}, false
}

// differingOptions are the options named in the first column of the
// table of differences in docs/builders/openstack.mdx.
func differingOptions(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../docs/builders/openstack.mdx")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Differences from the official builder")
	if !ok {
		t.Fatal("docs/builders/openstack.mdx has no section \"Differences from the official builder\"")
	}
	out := map[string]bool{}
	row := regexp.MustCompile(`(?m)^\| ([^|]+) \|`)
	name := regexp.MustCompile("`([a-z_.0-9]+)`")
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			out[n[1]] = true
		}
	}
	if len(out) < 5 {
		t.Fatalf("the table of differences names only %v", out)
	}
	return out
}

// Every option of the official builder is ours with the same type, and the
// same default unless the docs' table of differences explains it.
func TestOfficialOptions(t *testing.T) {
	official := readOfficialOptions(t)
	ours := map[string]string{}
	specTypes("", (&Builder{}).ConfigSpec(), ours)
	differs := differingOptions(t)

	clearOSEnv(t)
	raw := with(baseRaw(), "use_blockstorage_volume", true, "availability_zone", "az1", "image_name", "img")
	c, _, err := prepare(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	cv := reflect.ValueOf(c).Elem()
	given := map[string]bool{}
	for k := range raw {
		given[k] = true
	}
	for _, o := range official {
		typ, ok := ours[o.name]
		if !ok {
			t.Errorf("%s: an official option we do not accept", o.name)
			continue
		}
		if typ != o.typ {
			t.Errorf("%s: type %s, official %s", o.name, typ, o.typ)
		}
		if given[o.name] || o.def == "run" || o.typ == "block" {
			continue
		}
		v, ok := fieldByTag(cv, o.name)
		if !ok {
			t.Errorf("%s: no field", o.name)
			continue
		}
		same := false
		switch {
		case o.def == `""`:
			same = v.IsZero() || (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.Len() == 0
		case strings.HasPrefix(o.def, "="):
			w, _ := fieldByTag(cv, o.def[1:])
			same = reflect.DeepEqual(v.Interface(), w.Interface())
		case v.Kind() == reflect.Map:
			var kv []string
			for _, k := range v.MapKeys() {
				kv = append(kv, fmt.Sprintf("%v=%v", k, v.MapIndex(k)))
			}
			sort.Strings(kv)
			same = strings.Join(kv, ",") == o.def
		default:
			same = fmt.Sprint(v.Interface()) == o.def
		}
		if !same && !differs[o.name] {
			t.Errorf("%s: default %v, official %s, and the docs' table of differences does not explain it", o.name, v.Interface(), o.def)
		}
		if same && differs[o.name] {
			t.Logf("%s: same default as official; in the table for its meaning", o.name)
		}
	}
	// The table names real options only.
	for n := range differs {
		if _, ok := ours[n]; !ok && !strings.Contains(n, ".") {
			t.Errorf("the table of differences names %q, which is no option of ours", n)
		}
	}
}
