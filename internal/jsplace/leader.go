package jsplace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KV buckets and object stores allow direct gets, which any replica of the
// stream answers, so a read can come from a follower that has not yet
// applied a write its client saw acknowledged: a key or object just written
// reads as missing. LastMsgFromLeader reads through the stream's leader
// instead (the JetStream API's STREAM.MSG.GET), for the callers that must
// not take a stale "not found" for an answer.

// leaderTimeout bounds a read whose caller set no deadline.
const leaderTimeout = 5 * time.Second

// leaderGetRequest is the body of a STREAM.MSG.GET request for the last
// message of a subject.
type leaderGetRequest struct {
	LastBySubject string `json:"last_by_subj"`
}

// leaderGetResponse is its answer.
type leaderGetResponse struct {
	Message *struct {
		Subject  string    `json:"subject"`
		Sequence uint64    `json:"seq"`
		Header   []byte    `json:"hdrs"`
		Data     []byte    `json:"data"`
		Time     time.Time `json:"time"`
	} `json:"message"`
	Error *jetstream.APIError `json:"error"`
}

// LastMsgFromLeader returns the last message of subject in stream as the
// stream's leader has it; a subject without one is jetstream.ErrMsgNotFound.
// A ctx without a deadline gets leaderTimeout, as the JetStream client's
// own API calls get their default timeout.
func LastMsgFromLeader(ctx context.Context, js jetstream.JetStream, stream, subject string) (*jetstream.RawStreamMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderTimeout)
		defer cancel()
	}
	req, err := json.Marshal(leaderGetRequest{LastBySubject: subject})
	if err != nil {
		return nil, err
	}
	reply, err := js.Conn().RequestWithContext(ctx, jetstream.DefaultAPIPrefix+"STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, fmt.Errorf("stream %s: last message of %s from the leader: %w", stream, subject, err)
	}
	var resp leaderGetResponse
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("stream %s: last message of %s from the leader: %w", stream, subject, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, fmt.Errorf("stream %s: last message of %s from the leader: %w", stream, subject, resp.Error)
	case resp.Message == nil:
		return nil, fmt.Errorf("stream %s: last message of %s from the leader: %w", stream, subject, errors.New("empty answer"))
	}
	m := resp.Message
	msg := &jetstream.RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Data: m.Data, Time: m.Time}
	if len(m.Header) > 0 {
		if msg.Header, err = nats.DecodeHeadersMsg(m.Header); err != nil {
			return nil, fmt.Errorf("stream %s: last message of %s from the leader: headers: %w", stream, subject, err)
		}
	}
	return msg, nil
}
