package gctune

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupRoot is where Linux mounts the cgroup tree.
const CgroupRoot = "/sys/fs/cgroup"

// cgroup v1 reports "no limit" as a huge page-aligned number; anything from
// here up is treated as unlimited.
const noLimitV1 = 1 << 62

// ContainerLimit reads the memory limit of the cgroup the process runs in
// (cgroup v2 memory.max, else v1 memory.limit_in_bytes) under root (normally
// "/sys/fs/cgroup"). ok is false when there is none or it cannot be read.
func ContainerLimit(root string) (limit int64, ok bool) {
	for _, p := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noLimitV1 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
