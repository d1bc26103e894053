// Package readmecheck holds the test that every command in the
// repository's README files works as written (issue 27: "every command in
// it runs twice in a row from a fresh clone").
//
// The test (readme_test.go) extracts every fenced shell block, every
// indented command block and every inline command (a code span starting
// with go, cd, a variable assignment, ../shared/tools/..., or zarrcat with
// a path argument) from README.md and the READMEs below it, and looks each
// one up in its table of how it is checked:
//
//   - run: run with bash twice in a row in a fresh clone of the current
//     commit, expecting exit 0 both times, the same output (temporary
//     paths and timings masked) and a clean git status after;
//   - quick: too long for CI, so a quicker form with the flags the command
//     offers runs twice instead, and the command itself is checked
//     statically;
//   - static: too long, or needing what CI lacks (the reference chroot, C
//     libraries, a Beam runner): its directories, packages, flags, build
//     tags and test or benchmark patterns are checked against the source;
//   - the install block, through a module proxy made from the clone;
//   - the quick start's test command, which .ci/run runs twice (the second
//     time from the test cache).
//
// That is the CI mode (GOZARR_README_RUN=1, .ci/run's last step). The full
// mode (GOZARR_README_RUN=all, full_test.go; hours) runs every command the
// machine has the prerequisites for, the static ones too, twice in a row;
// a long benchmark (over 2 minutes as written) twice in a scaled form and
// once as written; and logs every command it does not run with the reason
// (a missing prerequisite and how to get it, a pattern, the user's own
// locations).
//
// A command missing from the table fails the test, so a README edit that
// adds one must say how it is checked. Go snippets are checked by
// snippets_test.go.
package readmecheck
