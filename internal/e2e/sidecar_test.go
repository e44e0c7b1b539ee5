package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestComputerUse runs a runtime with capabilities_json ["computer_use"]:
// it gets the computer-use image, SIDECAR_CAPABILITIES, a virtual display,
// a browser and the MCP server, whose screenshot tool takes a real
// screenshot of the display, showing the page the browser was sent to.
func TestComputerUse(t *testing.T) {
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.DockerProvider(t, instance),
		Instance: instance,
		Image:    testenv.TestImage,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})

	// Refused: an unknown value, a value that is not a JSON array, and an
	// image the sidecar does not run on.
	for _, tc := range []struct{ json, image, code string }{
		{`["teleport"]`, "", "unknown_sidecar_capability"},
		{`computer_use`, "", "invalid_capabilities_json"},
		{`["computer_use"]`, "paddock/debian:bookworm", "sidecar_image_conflict"},
	} {
		res := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
			Name: "bad", Runtime: &pc.RuntimeConfig{CapabilitiesJSON: tc.json, Image: tc.image},
		})
		if res.Status != 400 || res.Code() != tc.code {
			t.Fatalf("capabilities_json %s: %d %s, want 400 %s", tc.json, res.Status, res.Body, tc.code)
		}
	}

	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name:    "cu",
		Runtime: &pc.RuntimeConfig{CapabilitiesJSON: `["computer_use"]`, MemoryMB: 2048, PidsLimit: 2048, CPUMillis: 2000},
	}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	var rt pc.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Config.Image != testenv.ComputerUseImage || rt.Config.CapabilitiesJSON != `["computer_use"]` {
		t.Fatalf("config: %+v", rt.Config)
	}
	var caps pc.Capabilities
	env.Must(t, 200, "GET", "/api/capabilities", nil).Decode(t, &caps)
	var offered bool
	for _, sc := range caps.SidecarCapabilities {
		offered = offered || (sc.Name == "computer_use" && sc.Available && sc.Image == testenv.ComputerUseImage)
	}
	if !offered || len(caps.Harnesses) != 5 {
		t.Fatalf("discovery: %+v %+v", caps.SidecarCapabilities, caps.Harnesses)
	}

	env.Must(t, 200, "POST", rtPath+"/start", nil)
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	run := func(argv ...string) (string, int) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		res, err := sdk.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: argv})
		if err != nil {
			t.Fatalf("exec %q: %v", argv, err)
		}
		return string(res.Stdout) + string(res.Stderr), res.Exit.Code
	}
	if out, _ := run("printenv", "SIDECAR_CAPABILITIES"); strings.TrimSpace(out) != `["computer_use"]` {
		t.Fatalf("SIDECAR_CAPABILITIES=%q", out)
	}

	call := func(tool, args string) map[string]any {
		t.Helper()
		argv := []string{"/.paddock/bin/paddock-shim", "computer-use", "call", tool}
		if args != "" {
			argv = append(argv, args)
		}
		out, code := run(argv...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tool, code, out)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s answered %q: %v", tool, out, err)
		}
		return res
	}
	// The services start in the background: wait for the MCP server and
	// the browser to take a page.
	page := `{"url":"data:text/html,<body style='margin:0;background:%23ff00ff'></body>"}`
	testenv.Eventually(t, func() error {
		if out, code := run("/.paddock/bin/paddock-shim", "computer-use", "call", "open_url", page); code != 0 {
			return fmt.Errorf("the computer-use MCP server never opened a page: %s", out)
		}
		return nil
	})
	var shot image.Image
	testenv.WaitFor(t, "a magenta screenshot", func() bool {
		shot = pngOf(t, call("screenshot", ""))
		return magentaShare(shot) > 0.5
	})
	if b := shot.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Fatalf("screenshot is %v", b)
	}
	call("mouse_move", `{"x":321,"y":123}`)
	pos := call("cursor_position", "")
	if text := textOf(pos); !strings.Contains(text, "321") || !strings.Contains(text, "123") {
		t.Fatalf("cursor position: %v", pos)
	}
	// The harnesses see the computer-use MCP server in their config.
	if out, _ := run("cat", "/workspace/.paddock/capabilities/mcp.json"); !strings.Contains(out, "computer-use") || !strings.Contains(out, "8931") {
		t.Fatalf("mcp.json: %s", out)
	}
}

// pngOf decodes the PNG an MCP tool result carries.
func pngOf(t *testing.T, res map[string]any) image.Image {
	t.Helper()
	content, _ := res["content"].([]any)
	for _, c := range content {
		m, _ := c.(map[string]any)
		if m["type"] != "image" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(m["data"].(string))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	t.Fatalf("no image in %v", res)
	return nil
}

func textOf(res map[string]any) string {
	var out []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, _ := c.(map[string]any); m["type"] == "text" {
			out = append(out, m["text"].(string))
		}
	}
	return strings.Join(out, "\n")
}

// magentaShare is the share of sampled pixels that are #ff00ff.
func magentaShare(img image.Image) float64 {
	b := img.Bounds()
	var n, hit int
	for y := b.Min.Y; y < b.Max.Y; y += 10 {
		for x := b.Min.X; x < b.Max.X; x += 10 {
			r, g, bl, _ := img.At(x, y).RGBA()
			n++
			if r>>8 > 240 && g>>8 < 20 && bl>>8 > 240 {
				hit++
			}
		}
	}
	return float64(hit) / float64(n)
}
