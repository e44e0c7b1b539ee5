package testenv

// The sidecar capabilities' images, built by scripts/build-images.sh
// computer-use and all-harness (TestImage and DefaultImage are in
// testenv.go).
const (
	// ComputerUseImage is the default image plus a virtual display,
	// Chromium, xdotool and xwd: what `paddock-shim computer-use serve`
	// drives.
	ComputerUseImage = "paddock/computer-use:bookworm"
	// AllHarnessImage is the computer-use image plus every harness CLI,
	// at the versions its dev.paddock.harnesses label lists.
	AllHarnessImage = "paddock/all-harness:bookworm"
)
