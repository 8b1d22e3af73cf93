package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"wasmstream.io/platform/runtime/exec"
)

// RescaleRequest changes a running job's parallelism in place: the job's
// default, each listed vertex's own, or both.
type RescaleRequest struct {
	// Parallelism is the job's new default parallelism; 0 keeps it.
	Parallelism int `json:"parallelism,omitempty"`
	// Operators sets the parallelism of sources, operators and sinks by
	// id.
	Operators map[string]int `json:"operators,omitempty"`
}

// RescaleJob changes a running job's parallelism in place through an
// aligned checkpoint: the job stops at the checkpoint's barrier, its sinks
// commit, and the same job, with the same id and modules, restores it at
// the new parallelism (keyed state and timers move with their key groups).
// A job that fails to restore goes back to the old parallelism from the
// same checkpoint.
func (m *Manager) RescaleJob(ctx context.Context, id string, req RescaleRequest) (SwitchInfo, error) {
	old, ok := m.job(id)
	if !ok {
		return SwitchInfo{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	data, err := rescaledSpec(old.spec, req)
	if err != nil {
		return SwitchInfo{}, listProblems(err, nil)
	}
	return m.switchVersion(ctx, old, data, old.refs, change{kind: changeRescale})
}

// rescaledSpec is data with the parallelism req sets: the spec as YAML
// (JSON if it was JSON), every other field kept.
func rescaledSpec(data []byte, req RescaleRequest) ([]byte, error) {
	if req.Parallelism < 0 || req.Parallelism == 0 && len(req.Operators) == 0 {
		return nil, fmt.Errorf("%w: parallelism: give a parallelism of 1 or more, for the job or its operators", ErrInvalidJob)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: the job's spec does not read as a mapping", ErrInvalidJob)
	}
	root := doc.Content[0]
	if req.Parallelism > 0 {
		setInt(root, "parallelism", req.Parallelism)
	}
	ids := make([]string, 0, len(req.Operators))
	for id := range req.Operators {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := req.Operators[id]
		if p < 1 {
			return nil, fmt.Errorf("%w: operators.%s: parallelism %d, want 1 or more", ErrInvalidJob, id, p)
		}
		item := findVertex(root, id)
		if item == nil {
			return nil, fmt.Errorf("%w: operators.%s: the job has no source, operator or sink %q", ErrInvalidJob, id, id)
		}
		setInt(item, "parallelism", p)
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var v any
		if err := doc.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidJob, err)
		}
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%w: the job's spec does not write back as JSON: %w", ErrInvalidJob, err)
		}
		return out, nil
	}
	return yaml.Marshal(&doc)
}

// findVertex finds the item with this id in the spec's sources, operators
// or sinks.
func findVertex(root *yaml.Node, id string) *yaml.Node {
	for _, list := range []string{"sources", "operators", "sinks"} {
		seq := mapValue(root, list)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range seq.Content {
			if v := mapValue(item, "id"); item.Kind == yaml.MappingNode && v != nil && v.Value == id {
				return item
			}
		}
	}
	return nil
}

// mapValue is the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// setInt sets key of mapping n to v, adding the key when it is missing.
func setInt(n *yaml.Node, key string, v int) {
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
	if old := mapValue(n, key); old != nil {
		*old = *value
		return
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value)
}

// fromCheckpointPrefix marks a restore source given as from_checkpoint,
// which may be any retained checkpoint, not only a savepoint.
const fromCheckpointPrefix = "checkpoint:"

// FromCheckpoint is what SubmitJobFromSavepoint and ValidateJob take to
// start a job from ref, a retained checkpoint or a savepoint
// ("<job>-<id>", as GET /v1/jobs/{id}/checkpoints lists them).
func FromCheckpoint(ref string) string { return fromCheckpointPrefix + ref }

// restoreSource reads from: the reference, the query field it came from,
// and whether a checkpoint (not only a savepoint) may be restored.
func restoreSource(from string) (ref, field string, anyKind bool) {
	if ref, ok := strings.CutPrefix(from, fromCheckpointPrefix); ok {
		return ref, "from_checkpoint", true
	}
	return from, "from_savepoint", false
}

// checkLineage refuses a checkpoint that does not count in its job's
// checkpoint lineage (cluster mode): one a worker wrote after it had lost
// the job, whose epochs the job's owner may have committed differently.
// The lineage is known for the jobs this worker runs; the store keeps
// only completed checkpoints of the others.
func (m *Manager) checkLineage(ref *exec.SavepointRef) error {
	j, ok := m.job(ref.Job)
	if !ok || j.x.Checkpoints == nil || j.x.Checkpoints.Lineage == nil {
		return nil
	}
	if !j.x.Checkpoints.Lineage.Counts(ref.ID) {
		return fmt.Errorf("checkpoint %s does not count in job %s's checkpoint lineage (a worker wrote it after it had lost the job)", ref, ref.Job)
	}
	return nil
}
