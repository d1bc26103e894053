package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// shellWords splits a command line as a shell would for the examples:
// spaces separate words, single and double quotes group them.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestHelpExamples runs every example of zarrcat help COMMAND (cp before
// diff, whose example compares cp's copy), with testdata/ and /tmp/ mapped
// to the test's directories: each must succeed.
func TestHelpExamples(t *testing.T) {
	tmp := t.TempDir()
	for _, cmd := range []string{"info", "get", "ls", "tree", "stats", "cp", "diff", "log", "branches"} {
		var help bytes.Buffer
		if err := run(context.Background(), []string{"help", cmd}, &help, &help); err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(help.String(), "\\\n", " ")
		n := 0
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "zarrcat ") || strings.Contains(line, "[") {
				continue // the synopsis
			}
			line, _, _ = strings.Cut(line, " | ")
			line = strings.ReplaceAll(line, "testdata/", "../../testdata/")
			line = strings.ReplaceAll(line, "/tmp/", tmp+"/")
			args := shellWords(line)[1:]
			var out bytes.Buffer
			err := run(context.Background(), args, &out, &out)
			if cmd == "diff" && errors.Is(err, errDiffer) {
				err = nil // the example's arrays may differ; diff worked
			}
			if err != nil {
				t.Errorf("zarrcat help %s example %q: %v", cmd, line, err)
			}
			n++
		}
		if n == 0 {
			t.Errorf("zarrcat help %s has no example", cmd)
		}
	}
}
