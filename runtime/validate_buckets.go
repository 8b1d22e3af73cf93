package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/plan"
)

// checkBuckets refuses a job whose KV or object store buckets do not exist
// (the platform creates none, as it creates no streams), and a KV, core
// NATS or object store connector without a NATS connection. It lists every
// such problem.
func (m *Manager) checkBuckets(ctx context.Context, p *plan.Plan) error {
	js := m.cfg.JetStream
	var problems []string
	fail := func(path, format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	kv := func(path, bucket string) {
		if js == nil {
			fail(path, "no NATS connection")
			return
		}
		if _, err := js.Stream(ctx, connector.KVStream(bucket)); err != nil {
			fail(path+".bucket", "%s", missingBucket("KV", bucket, connector.KVStream(bucket), err))
		}
	}
	for i, s := range p.Job.Sources {
		switch {
		case s.KV != nil:
			kv(fmt.Sprintf("sources[%d].kv", i), s.KV.Bucket)
		case s.NATS != nil && js == nil:
			fail(fmt.Sprintf("sources[%d].nats", i), "no NATS connection")
		}
	}
	for i, s := range p.Job.Sinks {
		switch {
		case s.KV != nil:
			kv(fmt.Sprintf("sinks[%d].kv", i), s.KV.Bucket)
		case s.NATS != nil && js == nil:
			fail(fmt.Sprintf("sinks[%d].nats", i), "no NATS connection")
		case s.ObjectStore != nil && js == nil:
			fail(fmt.Sprintf("sinks[%d].object_store", i), "no NATS connection")
		case s.ObjectStore != nil:
			b := s.ObjectStore.Bucket
			if _, err := js.Stream(ctx, connector.ObjectStream(b)); err != nil {
				fail(fmt.Sprintf("sinks[%d].object_store.bucket", i), "%s", missingBucket("object store", b, connector.ObjectStream(b), err))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidJob, strings.Join(problems, "; "))
}

// missingBucket says why a bucket of kind whose stream is stream cannot be
// used: for one that does not exist, how to create it.
func missingBucket(kind, bucket, stream string, err error) string {
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Sprintf("%s bucket %q (stream %s): %v", kind, bucket, stream, err)
	}
	cmd := "kv add"
	if kind != "KV" {
		cmd = "object add"
	}
	return fmt.Sprintf("no %s bucket %q (stream %s); create it first, for example with the NATS command line tool: nats %s %s",
		kind, bucket, stream, cmd, shellWord(bucket))
}
