package readmecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// How a command is checked.
const (
	run      = "run"      // run twice in a row in a fresh clone
	quick    = "quick"    // a quicker form (check.alt) runs twice; the command itself statically
	static   = "static"   // checked against the source only (check.why says why it is not run)
	install  = "install"  // the install block, through a module proxy made from the clone
	start    = "start"    // the quick start: its go run twice, its test command by .ci/run
	template = "template" // a pattern with placeholders, not a command (check.why)
)

// A check says how the test checks one README command: how in CI (the
// default mode of TestReadmeRunsTwice) and in the full mode
// (GOZARR_README_RUN=all), which runs every command whose prerequisites
// this machine has.
type check struct {
	how string
	why string // for static and template: why CI does not run it
	// alt is, for quick, the command CI runs instead; in the full mode it is
	// the scaled form of a long command (both run twice).
	alt string
	// long: as written the command takes more than 2 minutes, so the full
	// mode runs alt twice and the command itself once, after every other
	// command, the shortest first by mins (minutes as written, as the
	// README or a run says; a quiet machine's).
	long bool
	mins int
	// needs names what the full mode needs to run it (keys of needs); when
	// one is missing the command is skipped, saying which and why.
	needs []string
	// never says why even the full mode does not run it (a placeholder of
	// the user's).
	never string
	// module: a `go get` of the repository's module in this directory,
	// which the full mode runs in the install block's module (run_test.go's
	// goGetSub).
	module string
}

// Reasons shared by several commands.
const (
	whyBench  = "a benchmark or measurement: its figures are the README's, not a pass/fail, and it takes minutes"
	whyChroot = "needs the reference chroot with zarr-python (../shared/tools/zarr-python), which CI does not have"
	whyCI     = "CI runs it in its own step of .ci/run"
	whyS3     = "needs the S3 server that .ci/run starts (versitygw)"
)

// checks names every command of the READMEs by its key (the first command
// line of a block, the whole of an inline one) and says how it is checked.
// A README command missing here fails TestReadmeCommandsKnown.
var checks = map[string]check{
	// README.md: install, quick start, zarrcat.
	"go get github.com/gozarr/gozarr@latest":                                             {how: install},
	"go run ./cmd/zarrcat get testdata/refdata/v3_shard_end_edges.zarr '0:4, 0:6'":       {how: start},
	"go build ./cmd/zarrcat":                                                             {how: run},
	"go build -tags s3 ./cmd/zarrcat":                                                    {how: run},
	"go install -tags s3 …":                                                              {how: template, why: "the install block's third line, abbreviated"},
	"GOZARR_README_RUN=all go test -run RunsTwice -timeout 6h -v ./internal/readmecheck": {how: static, why: "this check in its full mode (hours)", never: "this check itself: run inside itself it would recurse"},
	"go test ./zarr":                    {how: static, why: "one package of the test command, which .ci/run runs (twice) under -race"},
	"go build -o zarrcat ./cmd/zarrcat": {how: run},
	"GOMODCACHE=$(mktemp -d) GOCACHE=$(mktemp -d) /usr/bin/time go run ./cmd/zarrcat get …": {how: template, why: "how the first build was measured: the quick start's command with empty caches (minutes, and downloads)"},

	// Go API sections.
	"go run ./bench/vlenbench": {how: static, why: whyBench},
	"go test -run 'Narrow|Object|Ragged|Bitround' ./dtype ./zarr ./cmd/zarrcat": {how: run},
	"go test ./pipeline -run '^$' -bench GatherHugeGrid -benchmem":              {how: quick, alt: "go test ./pipeline -run '^$' -bench GatherHugeGrid -benchmem -benchtime 1x"},
	"go run ./bench/gatherbench -reps 15 -small":                                {how: static, why: whyBench + "; zarr-python's side needs the reference chroot", needs: []string{"chroot"}},
	"go test ./pipeline -run '^$' -bench SortPoints":                            {how: quick, alt: "go test ./pipeline -run '^$' -bench SortPoints -benchtime 1x"},
	"go test -fuzz=FuzzXxx ./pkg":                                               {how: template, why: "FuzzXxx and ./pkg stand for any fuzz target and its package"},
	"go run ./bench":                                                            {how: static, why: whyBench + " (1 GiB, 35 min)", long: true, mins: 35, alt: "go run ./bench -quick -reps 1 -rounds 1"},

	// Stores.
	"zarrcat log --ref dev testdata/icechunk/spec2":                                                           {how: run},
	"zarrcat branches testdata/icechunk/spec1":                                                                {how: run},
	"go run ./bench/icechunkbench -side 16384 -refs 1000 -commit 0":                                           {how: static, why: whyBench},
	"zarrcat tree hdf5/testdata/cf.nc":                                                                        {how: run},
	"zarrcat get hdf5/testdata/cf.nc/temp \"0, :, 0:4\"":                                                      {how: run},
	"zarrcat virtualize -o /tmp/cf.json hdf5/testdata/cf.nc":                                                  {how: run},
	"zarrcat tree testdata/virtual/filters.json":                                                              {how: run},
	"zarrcat get testdata/virtual/filters.json/zlib_shuffle \"0:2, 0:5\"":                                     {how: run},
	"(cd store/kerchunk/parquet && go build -o \"$(go env GOPATH)/bin/\" ./cmd/refs2parq)":                    {how: run},
	"zarrcat virtualize -o /tmp/cf.parq hdf5/testdata/cf.nc":                                                  {how: run},
	"zarrcat --allow hdf5/testdata get /tmp/cf.parq/temp \"0, 0, :\"":                                         {how: run},
	"../shared/tools/zarr-python bench/kerchunkbench/make_bench.py gen /tmp/kbench1g 1024":                    {how: static, why: whyChroot, needs: []string{"chroot"}},
	"go run ./bench/kerchunkbench -dir /tmp/kbench1g -rounds 2":                                               {how: static, why: whyBench + "; its 594 MiB file is made in the reference chroot", needs: []string{"chroot"}},
	"cd hdf5 && go test -run X -bench Virtualize -benchtime 5x":                                               {how: static, why: whyBench},
	"go get github.com/gozarr/gozarr/store/gcs":                                                               {how: static, why: "a module of its own (store/gcs/go.mod), published with the repository; the install check covers the core module", module: "store/gcs"},
	"(cd store/gcs && go test ./...)":                                                                         {how: static, why: whyCI + " (the cloud store modules, against fake-gcs-server)", needs: []string{"gcs"}},
	"go test -run X -bench RectilinearRead/all -benchtime 300x -count 2 ./zarr":                               {how: static, why: whyBench},
	"taskset -c 0 go run -tags cinflate ./bench/cinflate":                                                     {how: static, why: whyBench + "; needs zlib1g-dev and libdeflate-dev", needs: []string{"cinflate"}},
	"go get github.com/gozarr/gozarr/codecs/zstdc":                                                            {how: static, why: "a module of its own (codecs/zstdc/go.mod, cgo), published with the repository", module: "codecs/zstdc"},
	"(cd codecs/zstdc && go test -bench . -cpu 1)":                                                            {how: static, why: whyBench + "; its tests run in .ci/run's zstdc step"},
	"(cd codecs/zstdc && go test . -run '^$' -bench 'Decode/.*/(256|1024)KiB|ReadAll' -benchtime 30x -cpu 1)": {how: static, why: whyBench},
	"go run -tags cblosc ./bench/cblosc -check":                                                               {how: static, why: "needs libblosc-dev (cgo), which CI does not install", needs: []string{"blosc"}},
	"go build -tags cblosc -o /tmp/cblosc ./bench/cblosc && /tmp/cblosc -bench -rounds 5 -d 200ms":            {how: static, why: whyBench + "; needs libblosc-dev", needs: []string{"blosc"}},
	"/tmp/cblosc -place -place-rounds 100":                                                                    {how: static, why: whyBench + "; needs libblosc-dev", needs: []string{"blosc"}},
	"PCOREF=/tmp/pcoref/target/release/pcoref go test ./codecs/pcodec":                                        {how: static, why: "needs the Rust pco built by codecs/pcodec/testdata/pcoref/build.sh (cargo)", needs: []string{"pcoref"}},
	"go test -run X -bench DecodeF64 -benchtime 20x -count 3 -cpu 1 ./codecs/pcodec":                          {how: static, why: whyBench},
	"GOZARR_ZFP_CASES=2000 go test -run Differential ./codecs/zfp":                                            {how: static, why: "needs zfpy in the reference chroot", needs: []string{"zfpy"}},
	"go test -run X -bench VsZfpy -cpu 1 -benchtime 25x ./codecs/zfp":                                         {how: static, why: whyBench + "; needs zfpy in the reference chroot", needs: []string{"zfpy"}},

	// Beam.
	"zarrbeam -src s3://... -dst s3://... -shards 4096,4096 -chunks 1024,1024 --runner=dataflow --project=PROJECT --region=us-central1 --staging_location=gs://BUCKET/staging --max_num_workers=16": {how: template, why: "needs a Dataflow project"},
	"cd zarrbeam && go run ./cmd/zarrbeam -src s3://bucket/in.zarr -dst /data/out.zarr -chunks 1024,1024 -shards 4096,4096 -max-mem 256MiB [-consolidate]":                                          {how: static, why: "s3://bucket and /data stand for the user's locations (its flags are checked)", never: "s3://bucket and /data stand for the user's locations, and [-consolidate] for an optional flag"},
	"cd zarrbeam && go test ./...": {how: static, why: whyCI + " (the zarrbeam module, on prism)"},
	"eval \"$(bash .ci/s3server.sh start)\"; cd zarrbeam && go run ./cmd/zarrbeambench -workers 1,2,4": {how: static, why: whyBench + "; " + whyS3, needs: []string{"s3"}},

	// Caches, loader, performance.
	"go run ./bench/cachebench":                     {how: static, why: whyBench, long: true, mins: 20, alt: "go run ./bench/cachebench -small -arrays 4"},
	"go run ./bench/cachebench -mb 100":             {how: static, why: whyBench, long: true, mins: 20, alt: "go run ./bench/cachebench -small -arrays 4"},
	"go run ./bench/cachebench -small -s3":          {how: static, why: whyBench + "; " + whyS3, needs: []string{"s3"}},
	"go test ./cache -run '^$' -bench DiskTierVsS3": {how: static, why: whyBench},
	"go run ./bench/loaderbench -reads 32":          {how: static, why: whyBench, long: true, mins: 10, alt: "go run ./bench/loaderbench -reads 32 -size 64MiB -reps 1"},
	"eval \"$(bash .ci/s3server.sh start)\"":        {how: static, why: "starts the S3 server (versitygw) as .ci/run does", needs: []string{"s3"}},
	"go run ./examples/loader":                      {how: run},
	"go run ./bench -size 8192 -peers -reps 5":      {how: static, why: whyBench + " (12.5 min)", long: true, mins: 13, alt: "go run ./bench -quick -peers -reps 1 -rounds 1", needs: []string{"npm"}},
	"go run ./bench -size 8192 -layouts none,none-sharded,zstd-sharded,blosc-sharded -workloads read-all": {how: static, why: whyBench},
	"go run ./bench -peers": {how: static, why: whyBench + " (35 min)", long: true, mins: 35, alt: "go run ./bench -quick -peers -reps 1 -rounds 1", needs: []string{"npm"}},
	"go test ./pipeline -run '^$' -bench '^BenchmarkSmallRead$/^point' -benchtime 5000x -benchmem":                       {how: static, why: whyBench},
	"go test ./pipeline -run '^$' -bench '^BenchmarkTileCopy$|^BenchmarkSmallRead$/^tile64' -benchtime 20000x -benchmem": {how: static, why: whyBench},
	"go test ./pipeline -run '^$' -bench ParallelPointReads -benchtime 5x":                                               {how: static, why: whyBench},
	"go run ./bench/zarrsbench":                                                    {how: static, why: whyBench + " (writes 2.6 GiB per writer; zarr-python's side needs the reference chroot)", long: true, mins: 30, alt: "go run ./bench/zarrsbench -small -reps 1", needs: []string{"chroot"}},
	"go test ./bench/zarrsbench":                                                   {how: run},
	"go run ./bench/zarrsbench -reps 3 -profile /tmp/zarrsbench/prof":              {how: static, why: whyBench, long: true, mins: 30, alt: "go run ./bench/zarrsbench -small -reps 1 -profile /tmp/zarrsbench/prof", needs: []string{"chroot"}},
	"go test ./nd -run '^$' -bench CopyShortRuns":                                  {how: static, why: whyBench},
	"go run ./bench -quick -reps 3 -workloads read-all -layouts zstd-sharded":      {how: static, why: whyBench},
	"go run ./bench/zarrcatbench -skip-cp -skip-s3 -rounds 7":                      {how: static, why: whyBench + " (a 1 GiB array)", long: true, mins: 10, alt: "go run ./bench/zarrcatbench -skip-cp -skip-s3 -rounds 1 -size 2048 -shard 1024 -inner 256"},
	"go run ./bench/s3bench":                                                       {how: static, why: whyBench},
	"go test ./zarr -run Conformance -v":                                           {how: run},
	"go test ./cmd/zarrcat":                                                        {how: static, why: "one package of the test command, which .ci/run runs (twice) under -race"},
	"GOZARR_WRITE_DIR=/tmp/gzout go test ./zarr -run TestWriteForPeers":            {how: run},
	"../shared/tools/zarr-python testdata/interop/check_zarr_python.py /tmp/gzout": {how: static, why: whyChroot, needs: []string{"chroot"}},
	"../shared/tools/zarr-python testdata/selections/make_selections.py":           {how: static, why: whyChroot, needs: []string{"chroot"}},
}

// TestReadmeCommandsKnown: every command of the READMEs has a check, and
// passes the static check (directories, packages, flags, tags, test
// patterns). It runs nothing and is cheap, so it runs under -short too.
func TestReadmeCommandsKnown(t *testing.T) {
	root := repoRoot(t)
	units, _ := allUnits(t, root)
	seen := map[string]bool{}
	bins := map[string]string{}
	for _, u := range units {
		seen[u.key] = true
		c, ok := checks[u.key]
		if !ok {
			t.Errorf("%s:%d: a command the README check does not know; add it to internal/readmecheck's checks table with how it is checked:\n%s", u.file, u.line, u.key)
			continue
		}
		if (c.how == static || c.how == template) && c.why == "" {
			t.Errorf("%s:%d: %s says no reason: %s", u.file, u.line, c.how, u.key)
		}
		if c.long && c.alt == "" {
			t.Errorf("%s:%d: long (over 2 minutes as written) but no scaled form (alt) for the full mode to run twice: %s", u.file, u.line, u.key)
		}
		if c.how == quick && c.alt == "" {
			t.Errorf("%s:%d: quick but no quicker form (alt): %s", u.file, u.line, u.key)
		}
		if c.never != "" && (c.how == run || c.how == quick || c.long || len(c.needs) > 0) {
			t.Errorf("%s:%d: never run in the full mode (%s), yet marked %s: %s", u.file, u.line, c.never, c.how, u.key)
		}
		if c.module != "" && (!exists(filepath.Join(root, c.module, "go.mod")) || !strings.Contains(u.text, "github.com/gozarr/gozarr/"+c.module)) {
			t.Errorf("%s:%d: module %s: no go.mod there, or the command does not get it: %s", u.file, u.line, c.module, u.key)
		}
		for _, n := range c.needs {
			if needs[n] == nil {
				t.Errorf("%s:%d: needs %q, which the full mode's needs table does not know: %s", u.file, u.line, n, u.key)
			}
		}
		if c.how == template {
			continue
		}
		for _, p := range staticCheck(root, u.text, bins) {
			t.Errorf("%s:%d: %s\n\t(command: %s)", u.file, u.line, p, u.key)
		}
		if c.alt != "" {
			for _, p := range staticCheck(root, c.alt, bins) {
				t.Errorf("%s:%d: the quick form: %s\n\t(command: %s)", u.file, u.line, p, c.alt)
			}
		}
	}
	for k := range checks {
		if !seen[k] {
			t.Logf("checks table: %q is no longer in a README", k)
		}
	}
}

// TestReadmeQuickStartTestCommand: the quick start's test command is the
// one .ci/run runs, and .ci/run runs it a second time in a row and checks
// that the clone stays clean.
func TestReadmeQuickStartTestCommand(t *testing.T) {
	root := repoRoot(t)
	units, _ := allUnits(t, root)
	var qs string
	for _, u := range units {
		if checks[u.key].how == start {
			qs = u.text
		}
	}
	lines := strings.Split(strings.TrimSpace(qs), "\n")
	if len(lines) != 2 {
		t.Fatalf("the quick start has %d commands, want 2:\n%s", len(lines), qs)
	}
	testCmd := squeeze(lines[1])
	ci, err := os.ReadFile(root + "/.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, l := range strings.Split(string(ci), "\n") {
		if l := squeeze(l); l == testCmd || strings.HasPrefix(l, testCmd+" |") {
			n++
		}
	}
	if n < 2 {
		t.Errorf(".ci/run runs the quick start's test command %q %d times, want twice in a row", testCmd, n)
	}
	if !strings.Contains(string(ci), "git status --porcelain") {
		t.Errorf(".ci/run does not check git status after the test command")
	}
}

// TestReadmeOrder: README.md opens with the install lines (go get, go
// install …/cmd/zarrcat@latest), states what the first build costs, and
// reaches zarrcat and the Go API before any figure table or the
// Performance section; the LICENSE it names is there.
func TestReadmeOrder(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(root + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	find := func(pred func(string) bool) int {
		for i, l := range lines {
			if pred(l) {
				return i
			}
		}
		return len(lines)
	}
	heading := func(h string) int { return find(func(l string) bool { return l == h }) }
	firstSection := find(func(l string) bool { return strings.HasPrefix(l, "## ") })
	if firstSection == len(lines) || lines[firstSection] != "## Install" {
		t.Errorf("the first section is not ## Install")
	}
	units, _ := allUnits(t, root)
	if len(units) == 0 || units[0].kind != "block" ||
		!strings.Contains(units[0].text, "go get github.com/gozarr/gozarr@latest") ||
		!strings.Contains(units[0].text, "go install github.com/gozarr/gozarr/cmd/zarrcat@latest") {
		t.Errorf("the README's first command block is not the install lines:\n%+v", units[:min(1, len(units))])
	}
	table := find(func(l string) bool { return strings.HasPrefix(l, "|") })
	perf := heading("## Performance")
	for _, h := range []string{"## zarrcat", "## Go"} {
		if i := heading(h); i > table || i > perf {
			t.Errorf("%s (line %d) comes after the first table (line %d) or ## Performance (line %d)", h, i+1, table+1, perf+1)
		}
	}
	cost := regexp.MustCompile(`(?s)\*\*The first build is the slow part\*\*.{0,400}\b\d+ s\b`)
	if !cost.MatchString(string(b[:min(len(b), 8000)])) {
		t.Errorf("the README's opening does not state what the first build costs (\"**The first build is the slow part**: … N s\")")
	}
	if lic, err := os.ReadFile(root + "/LICENSE"); err != nil || !strings.HasPrefix(string(lic), "MIT License") || !strings.Contains(string(b), "MIT licensed (`LICENSE`)") {
		t.Errorf("LICENSE (MIT, named by the README's install section): %v", err)
	}
}
