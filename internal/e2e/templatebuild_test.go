package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/templatebuild"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// buildContext is a tar of files (name → content).
func buildContext(t *testing.T, files map[string]string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

// releaseBuildStep lets the build step waiting for /tmp/go (its command
// holding token) go on, once it runs: the engine's exec in its container.
// It runs beside the build, so it answers its error rather than failing t.
func releaseBuildStep(ctx context.Context, cli *client.Client, token string) error {
	return testenv.Poll(testenv.Patience, func() error {
		cs, err := cli.ContainerList(ctx, container.ListOptions{})
		if err != nil {
			return err
		}
		for _, c := range cs {
			if !strings.Contains(c.Command, token) {
				continue
			}
			ex, err := cli.ContainerExecCreate(ctx, c.ID, container.ExecOptions{Cmd: []string{"touch", "/tmp/go"}})
			if err != nil {
				return err
			}
			return cli.ContainerExecStart(ctx, ex.ID, container.ExecStartOptions{})
		}
		return errors.New("no build step waits for its release yet")
	})
}

// removeOrgImages removes, when t ends (after its server and sandboxes
// are gone: it is registered first), the images built for the orgs it is
// given (a test that failed half-way may leave one).
func removeOrgImages(t *testing.T) (add func(env *servertest.Env, org string)) {
	t.Helper()
	cli := testenv.DockerClient(t)
	var orgs []string
	t.Cleanup(func() {
		ctx := context.Background()
		for _, o := range orgs {
			imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelOrg+"="+o))})
			if err != nil {
				t.Logf("list the test's built images: %v", err)
				return
			}
			for _, img := range imgs {
				if _, err := cli.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
					t.Logf("remove the test's built image %s: %v", img.ID, err)
				}
			}
		}
	})
	return func(env *servertest.Env, org string) {
		var o pc.Org
		env.Must(t, 200, "GET", "/api/v1/org/"+org, nil).Decode(t, &o)
		orgs = append(orgs, o.ID)
	}
}

var madeLine = regexp.MustCompile(`^ ---> ([0-9a-f]{12,64})$`)

// TestTemplateBuildOnDocker: on real Docker, a Dockerfile FROM the test
// image with a COPY and RUN steps builds, its progress streamed while it
// runs; its RUN steps have no network (the host's loopback listener is
// not reached); a runtime from the template sees what COPY and RUN left;
// the build is recorded; another org can neither name the image nor
// build from it; a second build points the template at its image;
// deleting the template removes the image nothing names and keeps the one
// a runtime does, which still starts.
func TestTemplateBuildOnDocker(t *testing.T) {
	cleanup := removeOrgImages(t)
	env, cli, _, _ := dockerEnv(t)
	cleanup(env, "acme")
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	token := uuid.NewString()
	dockerfile := fmt.Sprintf(`FROM %s
COPY hello.txt /opt/hello.txt
RUN echo built > /opt/run.txt && ls /sys/class/net > /opt/net.txt
RUN (cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes) > /opt/mem.txt && (cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) > /opt/cpu.txt
RUN if nc -w 2 127.0.0.1 %d </dev/null; then echo reached; else echo unreachable; fi > /opt/reached.txt
RUN echo waiting-%s; i=0; while [ ! -e /tmp/go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; [ -e /tmp/go ]
`, testenv.TestImage, port, token)
	var (
		mu     sync.Mutex
		events []pc.TemplateBuildEvent
	)
	released := make(chan error, 1)
	var building pc.TemplateBuild
	b, tpl, err := sdk.BuildTemplate(bounded(t), "acme", "dev", "web", "", buildContext(t, map[string]string{"Dockerfile": dockerfile, "hello.txt": "hello from the context\n"}),
		func(ev pc.TemplateBuildEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
			if ev.Event == pc.BuildEventStarted {
				building = *ev.Build
			}
			// Progress arrives while the build still runs: its last step
			// waits for the test, which lets it go only after this.
			if ev.Event == pc.BuildEventOutput && ev.Text == "waiting-"+token {
				var got pc.TemplateBuild
				env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/template-builds/"+building.ID, nil).Decode(t, &got)
				if got.State != "building" {
					t.Errorf("the build while its step waits: %+v", got)
				}
				go func() { released <- releaseBuildStep(t.Context(), cli, token) }()
			}
		})
	if err != nil {
		t.Fatalf("build: %v (events %+v)", err, events)
	}
	if rerr := <-released; rerr != nil {
		t.Fatalf("releasing the build's last step: %v", rerr)
	}
	if building.ID != b.ID || b.State != "succeeded" || b.Digest == "" || b.SizeBytes <= 0 || !strings.HasPrefix(b.Image, "paddock-org/") || tpl.Runtime.Image != b.Image {
		t.Fatalf("build %+v, template %+v", b, tpl)
	}
	checkBuildEvents(t, events, ln)

	p := checkBuiltRuntime(t, env, sdk, b)

	otherOrgRefused(t, env, sdk, b)

	rebuildAndDelete(t, env, sdk, b, tpl, p)
}

// checkBuiltRuntime starts a runtime from template web (build b's) and
// checks what the build left in its image and that b is listed.
func checkBuiltRuntime(t *testing.T, env *servertest.Env, sdk *pc.Client, b pc.TemplateBuild) pc.Project {
	t.Helper()
	// A runtime from the template sees what the build left.
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "built", Template: "web", Start: true,
		Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64}}).Decode(t, &p)
	if p.StartError != nil {
		t.Fatalf("start: %+v", p.StartError)
	}
	out, err := sdk.Exec(bounded(t), "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"cat", "/opt/hello.txt", "/opt/run.txt", "/opt/net.txt", "/opt/reached.txt"}})
	if err != nil || out.Exit == nil || out.Exit.Code != 0 {
		t.Fatalf("exec: %+v, %v", out, err)
	}
	if got := string(out.Stdout); got != "hello from the context\nbuilt\nlo\nunreachable\n" {
		t.Fatalf("the built image holds %q", got)
	}
	// The RUN steps ran within the build's limits (the defaults: 2 GiB,
	// 2 cores, or the host's if fewer).
	limits, err := sdk.Exec(bounded(t), "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"cat", "/opt/mem.txt", "/opt/cpu.txt"}})
	if err != nil || limits.Exit == nil || limits.Exit.Code != 0 {
		t.Fatalf("exec: %+v, %v", limits, err)
	}
	mem, cpu, _ := strings.Cut(strings.TrimSpace(string(limits.Stdout)), "\n")
	if mem != "2147483648" || !strings.HasPrefix(cpu, strconv.Itoa(min(2, goruntime.NumCPU())*100_000)) {
		t.Fatalf("a RUN step's limits: memory %q, cpu %q", mem, cpu)
	}
	list, err := sdk.ListTemplateBuilds(bounded(t), "acme", "dev", "web", pc.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].ID != b.ID || !strings.Contains(list.Items[0].LogTail, "Step 5/") {
		t.Fatalf("builds: %+v, %v", list, err)
	}
	return p
}

// checkBuildEvents checks that every step of the build was told and that
// no RUN step reached ln, a listener on the host's loopback.
func checkBuildEvents(t *testing.T, events []pc.TemplateBuildEvent, ln net.Listener) {
	t.Helper()
	// Every step is told (the engine adds one per label it puts on).
	steps, total := 0, 0
	for _, ev := range events {
		if ev.Event == pc.BuildEventStep {
			steps, total = steps+1, ev.Steps
		}
	}
	if steps < 5 || steps != total {
		t.Fatalf("%d step events of %d, want every one, at least 5: %+v", steps, total, events)
	}
	if err := ln.(*net.TCPListener).SetDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Fatal("a RUN step reached the host's loopback")
	}
}

// rebuildAndDelete builds template web again (after build b made tpl,
// which project p runs), then deletes the template and the project.
func rebuildAndDelete(t *testing.T, env *servertest.Env, sdk *pc.Client, b pc.TemplateBuild, tpl pc.Template, p pc.Project) {
	t.Helper()
	cli := testenv.DockerClient(t)
	// A build of the template again points it at the new image.
	b2, tpl2, err := sdk.BuildTemplate(bounded(t), "acme", "dev", "web", "", buildContext(t, map[string]string{"Dockerfile": "FROM " + testenv.TestImage + "\nRUN echo v2 > /v2.txt\n"}), nil)
	if err != nil || tpl2.ID != tpl.ID || tpl2.Runtime.Image != b2.Image || b2.Image == b.Image {
		t.Fatalf("a second build: %+v, %+v, %v", b2, tpl2, err)
	}

	// Deleting the template removes the images its builds made that
	// nothing names (the second), and keeps the one a runtime names.
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/templates/web", nil)
	if _, err := cli.ImageInspect(t.Context(), b2.Image); !cerrdefs.IsNotFound(err) {
		t.Fatalf("the deleted template's unused image: %v", err)
	}
	env.Must(t, 400, "POST", "/api/v1/org/acme/ws/dev/templates", pc.CreateTemplateRequest{Name: "again", Runtime: &pc.RuntimeConfig{Image: b2.Image}})
	if _, err := cli.ImageInspect(t.Context(), b.Image); err != nil {
		t.Fatalf("the image a runtime names: %v", err)
	}
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/reset", nil)
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/built", nil)
}

// otherOrgRefused: another org names image (acme's) in vain: as a
// template's, a project's or a build's base; nor see acme's build.
func otherOrgRefused(t *testing.T, env *servertest.Env, sdk *pc.Client, b pc.TemplateBuild) {
	t.Helper()
	image := b.Image
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "rival"})
	env.Must(t, 201, "POST", "/api/v1/org/rival/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	wantCode(t, env.Do(t, "POST", "/api/v1/org/rival/ws/dev/templates", pc.CreateTemplateRequest{Name: "stolen", Runtime: &pc.RuntimeConfig{Image: image}}), 400, "image_not_allowed")
	wantCode(t, env.Do(t, "POST", "/api/v1/org/rival/ws/dev/projects", pc.CreateProjectRequest{Name: "stolen", Runtime: &pc.RuntimeConfig{Image: image}}), 400, "image_not_allowed")
	_, _, err := sdk.BuildTemplate(bounded(t), "rival", "dev", "stolen", "", buildContext(t, map[string]string{"Dockerfile": "FROM " + image + "\n"}), nil)
	if e := (*pc.Error)(nil); !errors.As(err, &e) || e.Code != "image_not_allowed" {
		t.Fatalf("a build from another org's image: %v", err)
	}
	wantCode(t, env.Do(t, "GET", "/api/v1/org/rival/ws/dev/template-builds/"+b.ID, nil), 404, "template_build_not_found")
}

// wantCode fails unless r is an error of status and code.
func wantCode(t *testing.T, r servertest.Response, status int, code string) {
	t.Helper()
	var e pc.Error
	r.Decode(t, &e)
	if r.Status != status || e.Code != code {
		t.Fatalf("answer %d %+v, want %d %s", r.Status, e, status, code)
	}
}

// TestTemplateBuildRefusals: on real Docker, a base the engine lacks is
// refused before anything runs (and not pulled), as is one off the
// allow-list; a RUN that fails ends the stream with build_step_failed,
// the build recorded failed, and leaves neither its tag nor the images
// its steps made.
func TestTemplateBuildRefusals(t *testing.T) {
	cleanup := removeOrgImages(t)
	env, cli, _, _ := dockerEnv(t)
	cleanup(env, "acme")
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	build := func(dockerfile string, progress func(pc.TemplateBuildEvent)) (pc.TemplateBuild, error) {
		b, _, err := sdk.BuildTemplate(bounded(t), "acme", "dev", "bad", "", buildContext(t, map[string]string{"Dockerfile": dockerfile, "a.txt": "a"}), progress)
		return b, err
	}
	code := func(err error) string {
		var e *pc.Error
		if !errors.As(err, &e) {
			t.Fatalf("err %v, want an API error", err)
		}
		return e.Code
	}
	missing := "paddock/no-such-base-" + uuid.NewString()[:8] + ":1"
	if _, err := build("FROM "+missing+"\nRUN true\n", nil); code(err) != "base_image_not_found" || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing base: %v", err)
	}
	if _, err := cli.ImageInspect(t.Context(), missing); !cerrdefs.IsNotFound(err) {
		t.Fatalf("the missing base after the refusal: %v", err)
	}
	if _, err := build("FROM debian:bookworm\n", nil); code(err) != "image_not_allowed" {
		t.Fatalf("a base off the allow-list: %v", err)
	}
	if _, err := build("FROM "+testenv.TestImage+"\nADD https://example.com/x /x\n", nil); code(err) != "invalid_dockerfile" {
		t.Fatalf("ADD of a URL: %v", err)
	}
	if _, err := build("FROM "+testenv.TestImage+"\nCOPY --from=debian:bookworm /etc/hostname /x\n", nil); code(err) != "image_not_allowed" {
		t.Fatalf("COPY --from an image off the allow-list: %v", err)
	}

	base, err := cli.ImageInspect(t.Context(), testenv.TestImage)
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	b, err := build("FROM "+testenv.TestImage+"\nCOPY a.txt /a.txt\nRUN echo one > /one\nRUN echo about to fail; exit 3\n", func(ev pc.TemplateBuildEvent) {
		if m := madeLine.FindStringSubmatch(ev.Text); m != nil {
			made = append(made, m[1])
		}
	})
	if code(err) != "build_step_failed" || !strings.Contains(err.Error(), "step 4") || b.State != "failed" {
		t.Fatalf("a failing RUN: %+v, %v", b, err)
	}
	got, err := sdk.GetTemplateBuild(bounded(t), "acme", "dev", b.ID)
	if err != nil || got.State != "failed" || got.ErrorCode != "build_step_failed" || !strings.Contains(got.LogTail, "about to fail") {
		t.Fatalf("the failed build's record: %+v, %v", got, err)
	}
	if len(made) < 3 {
		t.Fatalf("the steps made %v", made)
	}
	for _, id := range made {
		insp, err := cli.ImageInspect(t.Context(), id)
		if err == nil && insp.ID != base.ID {
			t.Errorf("image %s of the failed build is still there", id)
		}
	}
	if _, err := cli.ImageInspect(t.Context(), b.Image); !cerrdefs.IsNotFound(err) {
		t.Fatalf("the failed build's tag: %v", err)
	}
	env.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/templates/bad", nil)
}

// TestTemplateBuildLimits: on real Docker, with the service's own limits
// made small, a context past its size is build_context_too_large before
// anything is recorded, and a build past its time is stopped as
// build_timeout, recorded failed, its step's container gone and no image
// left.
func TestTemplateBuildLimits(t *testing.T) {
	cleanup := removeOrgImages(t)
	env, cli, _, _ := dockerEnv(t)
	cleanup(env, "acme")
	reg := provider.NewRegistry()
	reg.Register(env.Provider)
	svc := templatebuild.New(templatebuild.Config{
		Store: env.Store, Runtimes: env.Runtimes, Providers: reg, MaxContextBytes: 16 << 10, Timeout: 2 * time.Second,
	})
	var ws pc.Workspace
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev", nil).Decode(t, &ws)
	w := store.Workspace{ID: ws.ID, OrgID: ws.OrgID, Name: ws.Name}

	big := buildContext(t, map[string]string{"Dockerfile": "FROM " + testenv.TestImage + "\n", "big": strings.Repeat("x", 32<<10)})
	if _, err := svc.Prepare(t.Context(), templatebuild.Request{Workspace: w, Template: "big", Context: big}); errCode(err) != "build_context_too_large" {
		t.Fatalf("a context past the limit: %v", err)
	}

	token := uuid.NewString()
	job, err := svc.Prepare(t.Context(), templatebuild.Request{Workspace: w, Template: "slow", Context: buildContext(t, map[string]string{
		"Dockerfile": "FROM " + testenv.TestImage + "\nRUN echo " + token + "; sleep 300\n",
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	res, err := svc.Run(t.Context(), job, func(store.TemplateBuild) {}, func(provider.BuildLine) {})
	if errCode(err) != "build_timeout" || res.Build.State != store.BuildFailed || res.Build.ErrorCode != "build_timeout" {
		t.Fatalf("a build past its time: %+v, %v", res.Build, err)
	}
	if _, err := cli.ImageInspect(t.Context(), res.Build.Image); !cerrdefs.IsNotFound(err) {
		t.Fatalf("the stopped build's tag: %v", err)
	}
	testenv.Eventually(t, func() error {
		cs, err := cli.ContainerList(t.Context(), container.ListOptions{All: true})
		if err != nil {
			return err
		}
		for _, c := range cs {
			if strings.Contains(c.Command, token) {
				return fmt.Errorf("the stopped build's step container %s is still there", c.ID[:12])
			}
		}
		return nil
	})
}

// errCode is err's public code.
func errCode(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code
	}
	return ""
}
