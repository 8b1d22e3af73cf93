package replay

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Kinds of Event.
const (
	// EventRestored: the key's state (a state's value) or a timer at the
	// checkpoint.
	EventRestored = "restored"
	// EventInput: a record of the key reached the operator.
	EventInput = "input"
	// EventOutput: the operator emitted a record.
	EventOutput = "output"
	// EventState: the function changed the key's state.
	EventState = "state"
	// EventTimer: the function registered or deleted a timer, or a timer
	// fired.
	EventTimer = "timer"
	// EventError: the function failed a record or timer (on_udf_error
	// would have applied); the replay goes on.
	EventError = "error"
	// EventDiff: how an output of the recorded module compares with the
	// other module's (Request.Module).
	EventDiff = "diff"
	// EventEnd: the replay ended; the last event.
	EventEnd = "end"
	// EventFailed: the replay failed after it began (the HTTP API's last
	// line then); Error says why.
	EventFailed = "failed"
)

// Verdicts of a diff event.
const (
	Same      = "same"
	Changed   = "changed"
	OnlyInOld = "only_in_old"
	OnlyInNew = "only_in_new"
)

// Versions name the two operators of a replay with another module.
const (
	VersionOld = "old"
	VersionNew = "new"
)

// Event is one line of a replay's report. Which fields are set depends on
// Event (its kind); the JSON leaves the others out.
type Event struct {
	Event string `json:"event"`
	// Version is "old" or "new" when the replay runs two modules.
	Version string `json:"version,omitempty"`
	// Seq is the stream sequence of an input.
	Seq uint64 `json:"seq,omitempty"`
	// Answers says what an output, state change, timer change or error
	// answers: "record <seq>", "timer <domain> <ts>" or "watermark <wm>".
	Answers string `json:"answers,omitempty"`
	// Op is what a state event did (set, clear, append, put, remove) or a
	// timer event (register, delete, fire, or pending for a restored one).
	Op     string `json:"op,omitempty"`
	State  string `json:"state,omitempty"`
	MapKey Bytes  `json:"map_key,omitempty"`
	Domain string `json:"domain,omitempty"`
	// Key, Value, Timestamp and Headers are a record's (input, output),
	// a state's value or a timer's time.
	Key       Bytes    `json:"key,omitempty"`
	Value     Bytes    `json:"value,omitempty"`
	Timestamp *int64   `json:"ts,omitempty"`
	Headers   []Header `json:"headers,omitempty"`
	// Watermark is the operator's watermark when an input reached it.
	Watermark *int64 `json:"watermark,omitempty"`
	Error     string `json:"error,omitempty"`
	// Verdict, Old and New are a diff's.
	Verdict string `json:"verdict,omitempty"`
	Old     *Event `json:"old,omitempty"`
	New     *Event `json:"new,omitempty"`
	// Records, Outputs, LastSeq and Reason are the end's: the key's
	// records replayed, the outputs (of the recorded module), the last
	// stream sequence read and why the replay stopped.
	Records int    `json:"records,omitempty"`
	Outputs int    `json:"outputs,omitempty"`
	LastSeq uint64 `json:"last_seq,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Reasons a replay ends.
const (
	ReasonEnd     = "end of stream"
	ReasonUntil   = "until"
	ReasonRecords = "records"
)

// Header is a record header of an output.
type Header struct {
	Name  string `json:"name"`
	Value Bytes  `json:"value"`
}

// Bytes are a key, value or state in JSON: a string when it is valid
// UTF-8, otherwise {"base64": "..."}, so that no byte is lost.
type Bytes []byte

func (b Bytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(string(b))
	}
	return json.Marshal(struct {
		Base64 string `json:"base64"`
	}{base64.StdEncoding.EncodeToString(b)})
}

func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = Bytes(s)
		return nil
	}
	var enc struct {
		Base64 *string `json:"base64"`
	}
	if err := json.Unmarshal(data, &enc); err != nil || enc.Base64 == nil {
		return errors.New(`bytes: want a string or {"base64": "..."}`)
	}
	raw, err := base64.StdEncoding.DecodeString(*enc.Base64)
	if err != nil {
		return fmt.Errorf("bytes: base64: %w", err)
	}
	*b = raw
	return nil
}
