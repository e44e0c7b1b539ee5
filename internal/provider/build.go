package provider

import (
	"context"
	"io"
)

// ImageBuilder is implemented by providers that build images on their own
// engine from a Dockerfile and a build context, from base images already
// there (never pulled). A build's RUN steps have no network and run
// within the given limits.
type ImageBuilder interface {
	// BuildImage builds spec's context into an image tagged spec.Tag,
	// calling progress with each line of its output as it comes. A build
	// that fails removes what it made (the tag and every intermediate
	// image) and answers the step's error.
	BuildImage(ctx context.Context, spec BuildSpec, progress func(BuildLine)) (BuiltImage, error)
	// RemoveImage removes the image ref made by BuildImage; one a
	// container still uses is ErrConflict, a missing one ErrNotFound.
	RemoveImage(ctx context.Context, ref string) error
}

// BuildSpec is one image build.
type BuildSpec struct {
	// Context is a tar of the build context; Dockerfile is its path in it.
	Context    io.Reader
	Dockerfile string
	Tag        string
	// Labels go on the image (with the provider's own).
	Labels map[string]string
	// CPUMillis and MemoryMB bound each RUN step.
	CPUMillis int64
	MemoryMB  int64
}

// BuildLine is one line of a build's progress: the start of step Step of
// Steps (Text is its instruction), or a line of a step's output (Step 0).
type BuildLine struct {
	Step  int    `json:"step,omitempty"`
	Steps int    `json:"steps,omitempty"`
	Text  string `json:"text"`
}

// BuiltImage is what a build made.
type BuiltImage struct {
	// ID is the image's id (its config digest, sha256:…).
	ID        string
	SizeBytes int64
}
