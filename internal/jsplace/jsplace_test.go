package jsplace

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no peers", &jetstream.APIError{Code: 400, ErrorCode: 10005, Description: "no suitable peers for placement"}, true},
		{"unavailable, wrapped", fmt.Errorf("bucket X: %w", &jetstream.APIError{Code: 503, ErrorCode: 10008}), true},
		{"stream name in use", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamNameInUse}, false},
		{"not an API error", errors.New("nats: timeout"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Transient(tt.err); got != tt.want {
				t.Fatalf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	noPeers := &jetstream.APIError{Code: 400, ErrorCode: 10005}
	final := errors.New("bad config")
	tests := []struct {
		name      string
		errs      []error // one per call; the call after the last succeeds
		wantCalls int
		wantErr   error
	}{
		{"at once", nil, 1, nil},
		{"after two placements fail", []error{noPeers, noPeers}, 3, nil},
		{"a lasting error stops", []error{noPeers, final}, 2, final},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			v, err := Create(context.Background(), func(context.Context) (int, error) {
				calls++
				if calls <= len(tt.errs) {
					return 0, tt.errs[calls-1]
				}
				return 7, nil
			})
			if calls != tt.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tt.wantCalls)
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && v != 7) {
				t.Fatalf("got %d, %v; want error %v", v, err, tt.wantErr)
			}
		})
	}
}

func TestCreateEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Create(ctx, func(context.Context) (int, error) {
		calls++
		cancel()
		return 0, &jetstream.APIError{Code: 503, ErrorCode: 10008}
	})
	if !errors.Is(err, context.Canceled) || !Transient(err) || calls != 1 {
		t.Fatalf("%d calls, error %v: want one call and the cancellation with the placement error", calls, err)
	}
}
