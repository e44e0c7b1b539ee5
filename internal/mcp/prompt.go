package mcp

import (
	"context"

	"github.com/paddockhq/paddock/pkg/client"
)

// PromptInput is one turn of a harness.
type PromptInput struct {
	Target
	Prompt         string `json:"prompt" jsonschema:"what to ask the agent"`
	Harness        string `json:"harness,omitempty" jsonschema:"claude-code, codex, opencode, gemini or kimi; default: the session's, or the server's"`
	SessionID      string `json:"session_id,omitempty" jsonschema:"continue this session (a previous answer's session_id); default: a new one"`
	Model          string `json:"model,omitempty" jsonschema:"the model the harness uses; default: the harness's"`
	TimeoutSeconds int64  `json:"timeout_seconds,omitempty" jsonschema:"stop the turn after this long; default: the server's (30 minutes)"`
}

// PromptOutput is a turn's answer.
type PromptOutput struct {
	SessionID string `json:"session_id" jsonschema:"the session: pass it as session_id to continue"`
	Harness   string `json:"harness"`
	Result    string `json:"result" jsonschema:"the agent's final answer"`
}

// prompt runs one turn (POST …/prompt). A turn that ran and failed is
// the tool's error, naming its session.
func (t *tools) prompt(ctx context.Context, in PromptInput) (PromptOutput, error) {
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return PromptOutput{}, err
	}
	res, err := t.c.Prompt(ctx, org, ws, id, client.PromptRequest{Prompt: in.Prompt, Harness: in.Harness,
		SessionID: in.SessionID, Model: in.Model, TimeoutSeconds: in.TimeoutSeconds})
	if err != nil {
		return PromptOutput{}, err
	}
	if res.Error != "" {
		return PromptOutput{}, errorf("turn_failed", "%s (session %s)", res.Error, res.Session.ID)
	}
	return PromptOutput{SessionID: res.Session.ID, Harness: res.Session.Harness, Result: res.Result}, nil
}
