package testworld_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function in shipped code may be, counted
// from `func` to its closing brace: longer ones do not read at once.
const maxFuncLines = 80

// generatedRe is Go's marker of generated files (go help generate).
var generatedRe = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// TestShippedFunctionsShort parses every Go file the plugin binary links
// from this module (the closure `go list -deps .` names, without tests)
// and fails naming each function, method or function literal assigned at
// package level that is over maxFuncLines lines. Generated files are
// skipped: their length is packer-sdc's, not ours.
func TestShippedFunctionsShort(t *testing.T) {
	out := listPlugin(t, "ImportPath,Dir,GoFiles,CgoFiles")

	fset := token.NewFileSet()
	files := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath, Dir   string
			GoFiles, CgoFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		if p.ImportPath != module && !strings.HasPrefix(p.ImportPath, module+"/") {
			continue
		}
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".hcl2spec.go") {
				continue
			}
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatalf("parsing %s: %v", path, err)
			}
			if generated(f) {
				continue
			}
			files++
			rel := strings.TrimPrefix(p.ImportPath+"/"+name, module+"/")
			for _, long := range longFuncs(fset, f) {
				t.Errorf("%s: %s is %d lines, over %d: split it into named parts", rel, long.name, long.lines, maxFuncLines)
			}
		}
	}
	// The plugin has dozens of files; a handful means the listing went wrong.
	if files < 20 {
		t.Fatalf("checked only %d files of the plugin: the listing is not the plugin's", files)
	}
}

// generated reports whether f carries Go's generated-code marker before
// its package clause.
func generated(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if generatedRe.MatchString(c.Text) {
				return true
			}
		}
	}
	return false
}

type longFunc struct {
	name  string
	lines int
}

// longFuncs lists f's functions over maxFuncLines lines: declared ones,
// and function literals in package-level declarations (a table of steps
// holds its code there). Literals inside a function count with it.
func longFuncs(fset *token.FileSet, f *ast.File) []longFunc {
	var out []longFunc
	check := func(name string, n ast.Node) {
		lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
		if lines > maxFuncLines {
			out = append(out, longFunc{name, lines})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			check(funcName(d), d)
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					check("function literal at line "+strconv.Itoa(fset.Position(lit.Pos()).Line), lit)
					return false
				}
				return true
			})
		}
	}
	return out
}

// funcName is Name for functions and Recv.Name for methods.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ := d.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}
