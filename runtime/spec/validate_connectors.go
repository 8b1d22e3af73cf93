package spec

import (
	"strings"
)

// connectorSource checks a source's kv and nats blocks.
func (v *validator) connectorSource(p string, s *Source) {
	if kv := s.KV; kv != nil {
		v.bucket(p+".kv.bucket", kv.Bucket)
		if msg := kvKeysProblem(kv.Keys); msg != "" {
			v.fail(p+".kv.keys", "%s", msg)
		}
	}
	if n := s.NATS; n != nil {
		if msg := subjectProblem(n.Subject, true); msg != "" {
			v.fail(p+".nats.subject", "%s", msg)
		}
		if n.Queue != "" && (hasSpaceOrControl(n.Queue) || strings.ContainsAny(n.Queue, "*>")) {
			v.fail(p+".nats.queue", "a queue group name has no spaces, '*' or '>', got %q", n.Queue)
		}
		v.atMostOnce(p+".nats", "source", n.AllowAtMostOnce)
	}
}

// connectorSink checks a sink's kv, nats and object_store blocks.
func (v *validator) connectorSink(p string, s *Sink) {
	if kv := s.KV; kv != nil {
		v.bucket(p+".kv.bucket", kv.Bucket)
		if kv.MaxInFlight < 1 {
			v.fail(p+".kv.max_in_flight", "must be at least 1, got %d", kv.MaxInFlight)
		}
		if s.Partition != "" {
			v.fail(p+".partition", "a kv sink's input is always partitioned by the record key, so that each key has one writer; remove partition")
		}
	}
	if n := s.NATS; n != nil {
		if msg := subjectProblem(n.Subject, false); msg != "" {
			v.fail(p+".nats.subject", "%s", msg)
		}
		v.atMostOnce(p+".nats", "sink", n.AllowAtMostOnce)
	}
	if o := s.ObjectStore; o != nil {
		v.bucket(p+".object_store.bucket", o.Bucket)
		if msg := objectPrefixProblem(o.Prefix); msg != "" {
			v.fail(p+".object_store.prefix", "%s", msg)
		}
		v.oneOf(p+".object_store.format", o.Format, objectFormats...)
		if o.RollBytes < 0 {
			v.fail(p+".object_store.roll_bytes", "must not be negative, got %d", o.RollBytes)
		}
		v.notNegative(p+".object_store.roll_interval", o.RollInterval)
		if v.job.Checkpoint == nil {
			v.fail(p+".object_store", "needs checkpoint: objects are written when a checkpoint completes")
		}
	}
}

// atMostOnce refuses a core NATS source or sink in an exactly_once job,
// unless allowed.
func (v *validator) atMostOnce(path, what string, allowed bool) {
	c := v.job.Checkpoint
	if allowed || c == nil || c.Mode != "exactly_once" {
		return
	}
	v.fail(path, "core NATS is at most once: a %s on it loses the messages in flight at a failure and replays nothing, "+
		"which an exactly_once job does not allow; set allow_at_most_once: true to accept that, or use jetstream", what)
}

// bucket checks a KV or object store bucket name.
func (v *validator) bucket(path, name string) {
	switch {
	case name == "":
		v.fail(path, "required")
	case !isBucketName(name):
		v.fail(path, "want letters, digits, '-' and '_', got %q", name)
	}
}

// isBucketName reports whether s can name a KV or object store bucket.
func isBucketName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// kvKeysProblem says what is wrong with a filter over KV keys, or "": its
// tokens are keys (letters, digits, - / _ =) or '*', and '>' last.
func kvKeysProblem(keys string) string {
	if keys == "" {
		return "required"
	}
	tokens := strings.Split(keys, ".")
	for i, t := range tokens {
		switch {
		case t == "*":
		case t == ">" && i == len(tokens)-1:
		case t == ">":
			return "'>' must be the last token"
		case t == "":
			return "a key filter has no empty tokens"
		case strings.Trim(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_=") != "":
			return "a key filter's tokens hold letters, digits, '-', '/', '_' and '=', or are '*' or a last '>'"
		}
	}
	return ""
}

// objectPrefixProblem says what is wrong with an object name prefix, or "".
func objectPrefixProblem(prefix string) string {
	switch {
	case prefix == "":
		return ""
	case hasSpaceOrControl(prefix):
		return "an object name prefix has no spaces"
	case strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") || strings.Contains(prefix, "//"):
		return "an object name prefix neither starts nor ends with '/' and has no empty part"
	}
	return ""
}
