package e2e

import (
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
)

func volumeFilter(key, value string) volume.ListOptions {
	return volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", key+"="+value))}
}
