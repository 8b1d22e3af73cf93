package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/runtime/replay"
)

// maxReplayLine bounds one event line of a replay's answer.
const maxReplayLine = 16 << 20

func newJobReplayCommand(c *client) *cobra.Command {
	var (
		req    replay.Request
		key    string
		format string
	)
	cmd := &cobra.Command{
		Use:   "replay ID --checkpoint C --key K",
		Short: "Replay one key of a job from a checkpoint in a sandbox: its inputs, outputs, state changes and timers",
		Long: "replay re-runs key K of job ID from checkpoint C in a sandbox in the server: K's state and\n" +
			"timers at C, the source's records since C read again from its stream, the maps, filters and\n" +
			"key selection before the keyed operator, and the operator (process function or window) for\n" +
			"K alone, with the watermarks the job's strategy derives from those records. It prints every\n" +
			"input, output, state change and timer of K, one line each (--format json: the JSON lines).\n" +
			"With --module M (a module id, name, or a .wasm file, which is uploaded first) it runs M's\n" +
			"operator beside the recorded one and prints, per output, same, changed, only_in_old or\n" +
			"only_in_new. It stops at --until (a stream sequence), after --records records of K, or at\n" +
			"the stream's end when the replay began. Nothing it runs writes to a sink.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format: %q is not text or json", format)
			}
			req.Key = replay.Bytes(key)
			ctx, cancel := interruptible(cmd)
			defer cancel()
			if strings.HasSuffix(req.Module, ".wasm") {
				id, err := c.uploadFile(ctx, req.Module)
				if err != nil {
					return fmt.Errorf("--module: %w", err)
				}
				req.Module = id
			}
			body, err := json.Marshal(req)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			return c.api.stream(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(args[0])+"/replay", body, func(line []byte) error {
				var e replay.Event
				if err := json.Unmarshal(line, &e); err != nil {
					return fmt.Errorf("replay: the answer is not what this client expects: %w", err)
				}
				if format == "json" {
					if _, err := out.Write(append(line, '\n')); err != nil {
						return err
					}
				}
				if e.Event == replay.EventFailed {
					return fmt.Errorf("replay failed: %s", e.Error)
				}
				if format == "json" {
					return nil
				}
				_, err := io.WriteString(out, replayLine(&e)+"\n")
				return err
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&req.Checkpoint, "checkpoint", 0, "the checkpoint (or savepoint) id to start from (platform job checkpoints ID lists them)")
	f.StringVar(&key, "key", "", "the key to replay, as the job's key_by makes it")
	f.StringVar(&req.Module, "module", "", "another module (id, name, name@N, or a .wasm file) to run beside the recorded one and diff")
	f.StringVar(&req.Operator, "operator", "", "the keyed operator, when the job has several")
	f.Uint64Var(&req.Until, "until", 0, "stop after this stream sequence (0: the stream's end when the replay began)")
	f.IntVar(&req.Records, "records", 0, "stop after this many records of the key (0: no limit)")
	f.StringVar(&format, "format", "text", "text (one line per event) or json (the API's JSON lines)")
	_ = cmd.MarkFlagRequired("checkpoint")
	_ = cmd.MarkFlagRequired("key")
	return cmd
}

// uploadFile uploads a module file and returns its id.
func (c *client) uploadFile(ctx context.Context, path string) (string, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m runtime.ModuleInfo
	if _, err := c.api.call(ctx, http.MethodPost, "/v1/modules", "application/wasm", wasm, &m); err != nil {
		return "", err
	}
	return m.ID, nil
}

// stream makes a request whose answer is JSON lines and passes each line
// to each as it arrives; an answer of 300 or more is an *apiError.
func (a *apiClient) stream(ctx context.Context, method, path string, body []byte, each func([]byte) error) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("--server %q: %w", a.base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("cannot reach the platform at %s (set --server or PLATFORM_SERVER): %w", a.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxReplayLine))
		e := &apiError{}
		if json.Unmarshal(data, e) != nil || e.Title == "" {
			e = &apiError{Title: http.StatusText(resp.StatusCode), Detail: strings.TrimSpace(string(data))}
		}
		e.Status = resp.StatusCode
		return e
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxReplayLine)
	for sc.Scan() {
		if err := each(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// replayLine is an event as a line of text: its kind, its version when
// two modules run, what it answers, and its fields.
func replayLine(e *replay.Event) string {
	var b strings.Builder
	b.WriteString(e.Event)
	if e.Version != "" {
		b.WriteString(" [" + e.Version + "]")
	}
	if e.Answers != "" {
		b.WriteString(" <- " + e.Answers)
	}
	field := func(name, v string) { b.WriteString(" " + name + "=" + v) }
	if e.Seq > 0 {
		field("seq", strconv.FormatUint(e.Seq, 10))
	}
	if e.Verdict != "" {
		field("verdict", e.Verdict)
	}
	if e.Op != "" {
		field("op", e.Op)
	}
	if e.State != "" {
		field("state", e.State)
	}
	if e.Domain != "" {
		field("domain", e.Domain)
	}
	if e.MapKey != nil {
		field("map_key", shown(e.MapKey))
	}
	if e.Key != nil {
		field("key", shown(e.Key))
	}
	if e.Timestamp != nil {
		field("ts", strconv.FormatInt(*e.Timestamp, 10))
	}
	if e.Watermark != nil {
		field("watermark", strconv.FormatInt(*e.Watermark, 10))
	}
	if e.Value != nil {
		field("value", shown(e.Value))
	}
	for _, h := range e.Headers {
		field("header."+h.Name, shown(h.Value))
	}
	if e.Error != "" {
		field("error", strconv.Quote(e.Error))
	}
	if e.Old != nil {
		field("old", shown(e.Old.Value))
	}
	if e.New != nil {
		field("new", shown(e.New.Value))
	}
	if e.Event == replay.EventEnd {
		field("records", strconv.Itoa(e.Records))
		field("outputs", strconv.Itoa(e.Outputs))
		field("last_seq", strconv.FormatUint(e.LastSeq, 10))
		field("reason", strconv.Quote(e.Reason))
	}
	return b.String()
}

// shown is bytes as text: as they are when they are printable UTF-8 without
// spaces, quoted otherwise.
func shown(b []byte) string {
	s := string(b)
	if utf8.ValidString(s) && !strings.ContainsAny(s, " \t\r\n") && strconv.CanBackquote(s) {
		return s
	}
	return strconv.Quote(s)
}
