package dialect

import (
	"encoding/json"
	"fmt"

	"github.com/paddockhq/paddock/internal/store"
)

// Template names a workspace's templates.
const Template Resource = "template"

// CheckTemplate validates a new template and encodes its config, the same
// JSON document as a runtime's.
func CheckTemplate(t store.Template) (config string, err error) {
	if err := Required(Template, "id", t.ID, "org id", t.OrgID, "workspace id", t.WorkspaceID, "name", t.Name); err != nil {
		return "", err
	}
	b, err := json.Marshal(t.Config)
	if err != nil {
		return "", fmt.Errorf("encode template config: %w", err)
	}
	return string(b), nil
}

// TemplateConfig decodes a stored template's config.
func TemplateConfig(stored string) (store.RuntimeConfig, error) {
	var c store.RuntimeConfig
	if err := json.Unmarshal([]byte(stored), &c); err != nil {
		return c, fmt.Errorf("decode template config: %w", err)
	}
	return c, nil
}
