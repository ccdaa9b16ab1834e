// Package sqllint holds the repository-wide check that SQL lives in .sql
// files: a statement in a Go string cannot be read, formatted or checked
// as SQL, and one assembled from pieces or formatted values is where
// injection and drift between variants creep in.
package sqllint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// statementStart matches text that opens like an SQL statement: a keyword
// in capitals followed by what such a statement continues with. Prose
// ("UPDATE failed") has no second part of that shape.
var statementStart = regexp.MustCompile(`^(?:` +
	`SELECT\s+\S|` +
	`INSERT\s+INTO\s|UPDATE\s+[a-z_]+\s+(?:[a-z]+\s+)?SET\s|DELETE\s+FROM\s|` +
	`WITH\s+(?:RECURSIVE\s+)?[a-z_]+\s+(?:AS|\()|` +
	`(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+|UNIQUE\s+)?(?:TABLE|INDEX|DATABASE|SCHEMA|FUNCTION|TRIGGER|VIEW|SEQUENCE|ROLE|TYPE|EXTENSION)\s|` +
	`TRUNCATE\s|COPY\s|LISTEN\s|NOTIFY\s|UNLISTEN\s|LOCK\s+TABLE\s|VACUUM\b|ANALYZE\s|SET\s+(?:LOCAL\s+)?[a-z_.]+\s*(?:=|TO)\s|` +
	`BEGIN\b|COMMIT\b|ROLLBACK\b)`)

// sqlFragment matches a piece of a statement: what a string holds when a
// statement is assembled from parts.
var sqlFragment = regexp.MustCompile(`\b(?:SELECT|FROM|WHERE|INSERT INTO|UPDATE|DELETE FROM|RETURNING|ON CONFLICT|ORDER BY|GROUP BY|JOIN|VALUES|LIMIT|CREATE TABLE|PARTITION OF|FOR VALUES)\b`)

func looksLikeStatement(s string) bool {
	return statementStart.MatchString(strings.TrimLeft(s, " \t\r\n("))
}

// TestNoSQLInGoStrings fails on a string literal in a non-test Go file that
// is an SQL statement, and on SQL built by concatenation or fmt.Sprintf.
func TestNoSQLInGoStrings(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, problem := range sqlInFile(file) {
			pos := fset.Position(problem.pos)
			t.Errorf("%s:%d: %s", rel, pos.Line, problem.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type problem struct {
	pos  token.Pos
	what string
}

func sqlInFile(file *ast.File) []problem {
	var found []problem
	reported := map[token.Pos]bool{}
	report := func(pos token.Pos, what string) {
		if !reported[pos] {
			reported[pos] = true
			found = append(found, problem{pos, what})
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, ok := stringValue(n); ok && looksLikeStatement(s) {
				report(n.Pos(), "SQL statement in a Go string: move it to a .sql file")
			}
		case *ast.BinaryExpr:
			if n.Op == token.ADD && isIdentifierStatement(n) {
				return false
			}
			if n.Op == token.ADD && concatenatesSQL(n) {
				report(n.Pos(), "SQL built by concatenation: write the whole statement in a .sql file")
				return false
			}
		case *ast.CallExpr:
			if isFormatCall(n) && len(n.Args) > 0 {
				if s, ok := stringValue(n.Args[0]); ok && (looksLikeStatement(s) || sqlFragment.MatchString(s)) {
					report(n.Pos(), "SQL built by fmt: bind values as parameters, quote identifiers with pgx.Identifier")
				}
			}
		}
		return true
	})
	return found
}

// concatenatesSQL reports whether a + chain has a string piece that is SQL.
func concatenatesSQL(e *ast.BinaryExpr) bool {
	for _, p := range concatenated(e) {
		if s, ok := stringValue(p); ok && (looksLikeStatement(s) || sqlFragment.MatchString(s)) {
			return true
		}
	}
	return false
}

// concatenated flattens a + chain into its pieces.
func concatenated(e *ast.BinaryExpr) []ast.Expr {
	var pieces []ast.Expr
	var flatten func(ast.Expr)
	flatten = func(x ast.Expr) {
		if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		pieces = append(pieces, x)
	}
	flatten(e)
	return pieces
}

// isIdentifierStatement reports whether a + chain is a statement that takes
// only identifiers, which no parameter can stand for (LISTEN, CREATE
// DATABASE): the exception to building SQL in Go, when every piece but
// the statement's own words is an identifier quoted by pgx.Identifier.
func isIdentifierStatement(e *ast.BinaryExpr) bool {
	var shape strings.Builder
	for _, p := range concatenated(e) {
		if isQuotedIdentifier(p) {
			shape.WriteString("%I")
			continue
		}
		s, ok := stringValue(p)
		if !ok {
			return false
		}
		shape.WriteString(s)
	}
	return identifierStatement.MatchString(shape.String())
}

// identifierStatement is the shape of a statement whose only operands are
// identifiers, each written %I where pgx.Identifier quotes it.
var identifierStatement = regexp.MustCompile(`^(?:` +
	`(?:LISTEN|UNLISTEN|DROP TABLE) %I|` +
	`CREATE DATABASE %I(?: TEMPLATE (?:%I|template0))?|` +
	`DROP DATABASE (?:IF EXISTS )?%I(?: WITH \(FORCE\))?|` +
	`ALTER DATABASE %I WITH IS_TEMPLATE (?:true|false)(?: ALLOW_CONNECTIONS (?:true|false))?` +
	`)$`)

// isQuotedIdentifier matches pgx.Identifier{...}.Sanitize().
func isQuotedIdentifier(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Sanitize" {
		return false
	}
	lit, ok := sel.X.(*ast.CompositeLit)
	if !ok {
		return false
	}
	typ, ok := lit.Type.(*ast.SelectorExpr)
	return ok && typ.Sel.Name == "Identifier"
}

func isFormatCall(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "fmt" && (sel.Sel.Name == "Sprintf" || sel.Sel.Name == "Fprintf" || sel.Sel.Name == "Appendf")
}

func stringValue(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestEverySQLFileIsEmbedded fails on a statement file no Go file of its
// package embeds: one left behind when the code that ran it went.
func TestEverySQLFileIsEmbedded(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "internal", "*", "sql", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	deeper, err := filepath.Glob(filepath.Join(root, "internal", "*", "*", "sql", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, deeper...)
	if len(files) == 0 {
		t.Fatal("no statement files found")
	}
	embedded := map[string]bool{}
	for _, f := range files {
		pkg := filepath.Dir(filepath.Dir(f))
		if _, done := embedded[pkg]; done {
			continue
		}
		sources, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range sources {
			text, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range embedDirective.FindAllStringSubmatch(string(text), -1) {
				embedded[filepath.Join(pkg, m[1])] = true
			}
		}
		embedded[pkg] = true
	}
	for _, f := range files {
		if !embedded[f] {
			rel, _ := filepath.Rel(root, f)
			t.Errorf("%s is embedded by no Go file of its package", filepath.ToSlash(rel))
		}
	}
}

var embedDirective = regexp.MustCompile(`(?m)^//go:embed (sql/\S+\.sql)$`)

// TestIdentifierStatements pins the exception for statements that take only
// identifiers: every operand quoted by pgx.Identifier, no other value.
func TestIdentifierStatements(t *testing.T) {
	for src, wantProblems := range map[string]int{
		`"LISTEN " + pgx.Identifier{ch}.Sanitize()`:                                                          0,
		`"DROP TABLE " + pgx.Identifier{name}.Sanitize()`:                                                    0,
		`"CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{t}.Sanitize()`: 0,
		`"CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE template0"`:                       0,
		`"DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"`:                     0,
		`"ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " WITH IS_TEMPLATE false"`:                    0,
		`"CREATE DATABASE " + name`:   1,
		`"DROP TABLE " + ident(name)`: 1,
		`"CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + template`:     1,
		`"ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " SET search_path = " + path`: 1,
		`"DROP TABLE " + pgx.Identifier{name}.Sanitize() + "; DELETE FROM t"`:                1,
		`"CREATE DATABASE "`: 1,
	} {
		file, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\nvar _ = "+src+"\n", 0)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := len(sqlInFile(file)); got != wantProblems {
			t.Errorf("%s: %d problems, want %d", src, got, wantProblems)
		}
	}
}
