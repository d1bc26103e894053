package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultBuildLeavesOutAWS: the default build of zarrcat links no AWS
// SDK package (a newcomer's first build compiles about 260 packages, not
// 370), -tags s3 brings it back, and the default binary answers an s3://
// target with one line naming the build that opens it (exit 1).
func TestDefaultBuildLeavesOutAWS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds zarrcat")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	deps := func(tags ...string) (n, aws int) {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", tags, err)
		}
		for _, l := range strings.Fields(string(out)) {
			n++
			if strings.HasPrefix(l, "github.com/aws/") {
				aws++
			}
		}
		return n, aws
	}
	n, aws := deps()
	ns3, awss3 := deps("-tags", "s3")
	t.Logf("packages: %d default, %d with -tags s3 (%d AWS)", n, ns3, awss3)
	if aws != 0 {
		t.Errorf("the default build links %d AWS SDK packages", aws)
	}
	if awss3 < 50 || ns3 <= n {
		t.Errorf("-tags s3 links %d AWS packages (%d in all, %d without): S3 support is missing", awss3, ns3, n)
	}
	bin := filepath.Join(t.TempDir(), "zarrcat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "info", "s3://bucket/x.zarr")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("info s3://...: %v, want exit status 1", err)
	}
	want := "zarrcat: s3://bucket/x.zarr: this zarrcat was built without S3 support (the default build leaves the AWS SDK out); for s3:// targets: " + s3Install + "\n"
	if stdout.Len() != 0 || stderr.String() != want {
		t.Errorf("info s3://...: stdout %q, stderr %q; want stderr %q", stdout.String(), stderr.String(), want)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "no s3://: go install -tags s3 ") {
		t.Errorf("version: %q, %v; want it to say how to get s3://", out, err)
	}
}

// TestS3NoCredentialsOneLine (trial F27): zarrcat -tags s3 with no
// credentials, against an instance metadata service that refuses IMDSv2
// tokens (the SDK then logged "WARN falling back to IMDSv1" on stderr
// before zarrcat's error): stderr is zarrcat's one error line.
func TestS3NoCredentialsOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds zarrcat -tags s3")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusNotFound) // IMDS token, credentials and S3 alike
	}))
	defer srv.Close()
	bin := filepath.Join(t.TempDir(), "zarrcat")
	if out, err := exec.Command("go", "build", "-tags", "s3", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags s3: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "info", "s3://nosuchbucket-gozarr/x.zarr")
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + srv.URL, "AWS_ENDPOINT_URL_S3=" + srv.URL, "AWS_REGION=us-east-1"}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("info s3://...: %v, want exit status 1", err)
	}
	if lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "zarrcat: ") || strings.Contains(stderr.String(), "WARN") {
		t.Errorf("stderr has %d lines, want zarrcat's one error line:\n%s", len(lines), stderr.String())
	}
}
