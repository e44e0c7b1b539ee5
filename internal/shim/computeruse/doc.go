// Package computeruse is the sandbox's computer-use sidecar, run as
// `paddock-shim computer-use …` inside sandboxes of the computer-use
// image (paddock/computer-use:bookworm):
//
//   - serve starts a virtual display (Xvfb) and Chromium on it, keeps
//     both running (the browser is restarted when it dies; the server
//     stops when the display does), and serves an MCP server whose tools
//     take screenshots and drive the mouse and keyboard — over MCP's
//     Streamable HTTP transport (POST /mcp, JSON responses) or, with
//     --stdio, over newline-delimited JSON-RPC on stdin and stdout;
//   - call is a small MCP client: initialize, then one tools/call, and
//     the result printed as JSON.
//
// The display is driven with the image's X tools: xdotool for input, xwd
// for screenshots (its XWD dump is decoded here and encoded as PNG). The
// Driver interface stands between the MCP tools and those commands, so
// the protocol is tested without a display.
//
// Like the rest of the shim it uses only the standard library and is
// built static.
package computeruse
