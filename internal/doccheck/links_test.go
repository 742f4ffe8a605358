package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// TestLinksResolve checks every relative link of README.md and docs/ (lab
// notes included): the file or folder exists, and a #anchor names a heading
// of the Markdown file it points to, as GitHub spells heading anchors.
func TestLinksResolve(t *testing.T) {
	root := moduleRoot(t)
	files := append(guideFiles(t, root), notesFiles(t, root)...)
	checked := 0
	for _, rel := range files {
		problems, n, err := brokenLinks(root, rel)
		require.NoError(t, err)
		checked += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	require.Positive(t, checked, "no relative link found: the extraction is broken")
}

// TestBrokenLinksReported pins the link check on testdata/links.md, whose
// good links resolve and whose bad ones are each reported at their line.
func TestBrokenLinksReported(t *testing.T) {
	root := moduleRoot(t)
	problems, n, err := brokenLinks(root, "internal/doccheck/testdata/links.md")
	require.NoError(t, err)
	require.Equal(t, 9, n, "links checked (code spans and blocks, and absolute URLs, skipped)")
	require.Equal(t, []string{
		"internal/doccheck/testdata/links.md:15: missing.md: no such file",
		"internal/doccheck/testdata/links.md:16: forms.md#no-such-heading: no such heading",
		"internal/doccheck/testdata/links.md:17: #nowhere: no such heading",
	}, problems)
}

// TestAnchor pins GitHub's heading anchors: lower case, punctuation and
// symbols dropped, spaces turned into hyphens, duplicates numbered.
func TestAnchor(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ heading, want string }{
		{"Paired floor comparison and `AddHashes` (2026-11-30, second pass)", "paired-floor-comparison-and-addhashes-2026-11-30-second-pass"},
		{"Against axiomhq/hyperloglog (bench/peers)", "against-axiomhqhyperloglog-benchpeers"},
		{"S = 20, n ≥ 50, m = 10^7", "s--20-n--50-m--107"},
		{"λ against s", "λ-against-s"},
		{"[Results](results.md) by *kind*", "results-by-kind"},
		{"Results", "results"},
		{"Results", "results-1"},
	} {
		require.Equal(t, c.want, anchor(c.heading, seen), c.heading)
	}
}

// notesFiles lists the Markdown files of docs/notes/, relative to root.
func notesFiles(t *testing.T, root string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "docs", "notes", "*.md"))
	require.NoError(t, err)
	var files []string
	for _, m := range matches {
		rel, err := filepath.Rel(root, m)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	mdLinkRE   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// brokenLinks returns a message for each relative link of the Markdown file
// rel that does not resolve, and how many relative links it checked.
func brokenLinks(root, rel string) ([]string, int, error) {
	lines, err := proseLines(root, rel)
	if err != nil {
		return nil, 0, err
	}
	var problems []string
	checked := 0
	for n, line := range lines {
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, "code"), -1) {
			target := m[1]
			if u, err := url.Parse(target); err == nil && u.Scheme != "" {
				continue // an absolute URL
			}
			checked++
			if msg := resolve(root, rel, target); msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", rel, n+1, target, msg))
			}
		}
	}
	return problems, checked, nil
}

// resolve returns why target, a link in the Markdown file rel, does not
// resolve, or "".
func resolve(root, rel, target string) string {
	file, frag, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return err.Error()
	}
	dest := rel
	if file != "" {
		dest = path.Join(path.Dir(rel), file)
		if strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return "no such file"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	anchors, err := headingAnchors(root, dest)
	if err != nil {
		return err.Error()
	}
	if !anchors[frag] {
		return "no such heading"
	}
	return ""
}

// headingAnchors returns the anchors of the headings of the Markdown file
// rel.
func headingAnchors(root, rel string) (map[string]bool, error) {
	lines, err := proseLines(root, rel)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range lines {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			anchors[anchor(m[1], seen)] = true
		}
	}
	return anchors, nil
}

// proseLines returns the lines of the Markdown file rel with the lines of
// fenced code blocks blanked, so that neither links nor headings are read
// from code.
func proseLines(root, rel string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case fence == "" && fenceMarker(trimmed) != "":
			fence = fenceMarker(trimmed)
			lines[i] = ""
		case fence != "":
			if closesFence(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines, nil
}

// anchor returns GitHub's anchor for a heading: the heading's text (links
// reduced to their text, code spans to their content) in lower case,
// keeping letters, marks, digits, hyphens and underscores, with spaces
// turned into hyphens; the n-th repeat of an anchor gets "-n" appended.
func anchor(heading string, seen map[string]int) string {
	text := mdLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	a := b.String()
	n := seen[a]
	seen[a] = n + 1
	if n > 0 {
		a = fmt.Sprintf("%s-%d", a, n)
	}
	return a
}
