package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"wasmstream.io/platform/runtime/replay"
)

// Replays replays one key of a job from a checkpoint. The Jobs of Config
// may implement it; without it POST /v1/jobs/{id}/replay answers 404.
type Replays interface {
	ReplayKey(ctx context.Context, job string, req replay.Request, report func(replay.Event) error) error
}

// replayKey answers POST /v1/jobs/{id}/replay: the replay's events as JSON
// lines, streamed as they come. A request the replay cannot serve is a
// problem; a failure after the first event is a last line with event
// "failed".
func (s *server) replayKey(w http.ResponseWriter, r *http.Request) {
	replays, ok := s.jobs.(Replays)
	if !ok {
		writeProblem(w, notFound.problem("this platform does not replay keys"))
		return
	}
	if !mediaTypeOK(w, r, "", "application/json") {
		return
	}
	body, ok := readBody(w, r, s.maxSpec, "replay request")
	if !ok {
		return
	}
	var req replay.Request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeProblem(w, invalidRequest.problem("replay request: "+err.Error()))
		return
	}
	started := false
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	err := replays.ReplayKey(r.Context(), r.PathValue("id"), req, func(e replay.Event) error {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
		if err := enc.Encode(e); err != nil {
			return err
		}
		if flusher != nil && (e.Event == replay.EventEnd || e.Event == replay.EventOutput) {
			flusher.Flush()
		}
		return nil
	})
	switch {
	case err == nil:
	case started:
		_ = enc.Encode(replay.Event{Event: replay.EventFailed, Error: err.Error()})
	case errors.Is(err, replay.ErrUnknownCheckpoint):
		writeProblem(w, notFound.problem(err.Error()))
	case errors.Is(err, replay.ErrBadRequest), errors.Is(err, replay.ErrNotKeyed), errors.Is(err, replay.ErrKeyNotInCheckpoint),
		errors.Is(err, replay.ErrUnsupported), errors.Is(err, replay.ErrSourceGone):
		writeProblem(w, invalidRequest.problem(err.Error()))
	default:
		s.fail(w, r, err)
	}
}
