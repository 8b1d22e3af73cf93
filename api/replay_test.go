package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"wasmstream.io/platform/runtime/replay"
)

// replays answers a replay with one input event and then the error err
// (none when nil).
type replays struct {
	scripted
	err error
}

func (r replays) ReplayKey(_ context.Context, _ string, _ replay.Request, report func(replay.Event) error) error {
	if errors.Is(r.err, replay.ErrUnknownCheckpoint) || errors.Is(r.err, replay.ErrNotKeyed) {
		return r.err
	}
	if err := report(replay.Event{Event: replay.EventInput, Seq: 4, Key: replay.Bytes("k")}); err != nil {
		return err
	}
	if r.err != nil {
		return r.err
	}
	return report(replay.Event{Event: replay.EventEnd, Records: 1})
}

// A replay streams its events as JSON lines; a failure before the first
// is a problem with the replay's message, one after it a last "failed"
// line.
func TestReplayRoute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		body   string
		status int
		want   string
	}{
		{"events", nil, `{"checkpoint": 3, "key": "k"}`, 200,
			`{"event":"input","seq":4,"key":"k"}` + "\n" + `{"event":"end","records":1}` + "\n"},
		{"failed after the first event", errors.New("boom"), `{"checkpoint": 3, "key": "k"}`, 200,
			`{"event":"input","seq":4,"key":"k"}` + "\n" + `{"event":"failed","error":"boom"}` + "\n"},
		{"unknown checkpoint", fmt.Errorf("%w 3: job j has checkpoints 7", replay.ErrUnknownCheckpoint), `{"checkpoint": 3, "key": "k"}`, 404,
			"unknown checkpoint 3: job j has checkpoints 7"},
		{"not keyed", fmt.Errorf("%w: operator \"m\" is a map operator", replay.ErrNotKeyed), `{"checkpoint": 3, "key": "k"}`, 400,
			`operator \"m\" is a map operator`},
		{"unknown field", nil, `{"checkpoint": 3, "kee": "k"}`, 400, `replay request: json: unknown field \"kee\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{Modules: scripted{}, Jobs: replays{err: tc.err}, Checkpoints: scripted{}, Logger: testLogger(t)})
			rec := request{method: "POST", target: "/v1/jobs/ok/replay", body: tc.body, header: map[string]string{"Content-Type": "application/json"}}.do(h)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 200 {
				if ct := rec.Header().Get("Content-Type"); ct != "application/x-ndjson" || rec.Body.String() != tc.want {
					t.Fatalf("%s answer\n%s\nwant\n%s", ct, rec.Body, tc.want)
				}
				return
			}
			var p struct{ Detail string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("problem %s, want %q (%v)", rec.Body, tc.want, err)
			}
		})
	}
}
