// Package browser holds the web console's end-to-end tests: a real
// `paddock serve` on the real Docker engine, driven by Debian's Chromium
// headless through the DevTools protocol (chromedp). Each test opens its
// own browser context (cookies of its own) in one Chromium per test
// binary, which the package starts and stops by its process id.
//
// The tests need the built console (./scripts/build-console.sh) and
// /usr/bin/chromium. Without either they skip, saying what is missing —
// unless PADDOCK_REQUIRE_CONSOLE is set, as scripts/test.sh and CI do,
// where they fail. With PADDOCK_CONSOLE_SCREENSHOTS=1 the page tour
// writes screenshots of the main pages to docs/console/.
//
// The pages are found as a screen reader finds them: by their labels and
// accessible names (an input labelled "API key", a button named
// "Start p1", a table labelled "Runtimes"), and by the data attributes
// the console keeps for tests (data-runtime, data-status, data-name).
// The package has no non-test code.
package browser
