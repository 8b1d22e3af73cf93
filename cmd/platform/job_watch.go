package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
)

func newJobWatchCommand(c *client) *cobra.Command {
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Redraw a job's vertices (counts, rates, watermarks, backpressure) until it ends or Ctrl-C",
		Long: "watch polls the job and its backpressure and redraws one line per vertex: parallelism,\n" +
			"records in and out with their rates per second since the previous poll, the watermark,\n" +
			"and the backpressure level (OK, LOW, HIGH) with the worst subtask's ratio; then the\n" +
			"bottleneck, when there is one. It stops when the job ends or on Ctrl-C. On a terminal it\n" +
			"redraws in place; otherwise it writes one table per poll, separated by blank lines.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := interruptible(cmd)
			defer cancel()
			out := cmd.OutOrStdout()
			redraw := isTerminal(out)
			var prev *watchSample
			for {
				cur, err := c.sample(ctx, args[0])
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					return err
				}
				var frame bytes.Buffer
				if redraw {
					frame.WriteString("\x1b[H\x1b[2J")
				} else if prev != nil {
					frame.WriteByte('\n')
				}
				renderWatch(&frame, cur, prev)
				if _, err := out.Write(frame.Bytes()); err != nil || cur.job.State.Terminal() {
					return err
				}
				prev = &cur
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(every):
				}
			}
		},
	}
	cmd.Flags().DurationVar(&every, "interval", time.Second, "time between polls")
	return cmd
}

// watchSample is one poll of a job.
type watchSample struct {
	at  time.Time
	job runtime.JobInfo
	bp  runtime.BackpressureInfo
}

func (c *client) sample(ctx context.Context, id string) (watchSample, error) {
	s := watchSample{at: time.Now()}
	path := "/v1/jobs/" + url.PathEscape(id)
	if _, err := c.api.call(ctx, http.MethodGet, path, "", nil, &s.job); err != nil {
		return s, err
	}
	_, err := c.api.call(ctx, http.MethodGet, path+"/backpressure", "", nil, &s.bp)
	if s.job.State.Terminal() {
		// A job that ended before this process started has no samples.
		err = nil
	}
	return s, err
}

// renderWatch writes the job's line, its vertices with their rates since
// prev (when there is one) and the bottleneck.
func renderWatch(w io.Writer, cur watchSample, prev *watchSample) {
	fmt.Fprintf(w, "job %s (%s) %s", cur.job.ID, cur.job.Name, cur.job.State)
	if cur.job.Restarts > 0 {
		fmt.Fprintf(w, ", %d restarts", cur.job.Restarts)
	}
	fmt.Fprintln(w)
	if cur.job.Failure != "" {
		fmt.Fprintln(w, "failure:", cur.job.Failure)
	}
	levels := map[string]string{}
	for _, v := range cur.bp.Vertices {
		if v.Level != "" {
			levels[v.ID] = fmt.Sprintf("%s %.2f", v.Level, v.Ratio)
		}
	}
	before := map[string]runtime.VertexInfo{}
	var elapsed float64
	if prev != nil {
		elapsed = cur.at.Sub(prev.at).Seconds()
		for _, v := range prev.job.Vertices {
			before[v.ID] = v
		}
	}
	rate := func(id string, now int64, then func(runtime.VertexInfo) int64) string {
		p, ok := before[id]
		if !ok || elapsed <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(now-then(p))/elapsed, 'f', 0, 64)
	}
	rows := make([][]string, len(cur.job.Vertices))
	for i, v := range cur.job.Vertices {
		level := levels[v.ID]
		if level == "" {
			level = "-"
		}
		rows[i] = []string{v.ID, strconv.Itoa(v.Parallelism),
			strconv.FormatInt(v.RecordsIn, 10), rate(v.ID, v.RecordsIn, func(p runtime.VertexInfo) int64 { return p.RecordsIn }),
			strconv.FormatInt(v.RecordsOut, 10), rate(v.ID, v.RecordsOut, func(p runtime.VertexInfo) int64 { return p.RecordsOut }),
			watermarkText(v.Watermark), level}
	}
	table(w, []string{"VERTEX", "PARALLELISM", "IN", "IN/S", "OUT", "OUT/S", "WATERMARK", "BACKPRESSURE"}, rows)
	if b := cur.bp.Bottleneck; b != nil {
		fmt.Fprintf(w, "bottleneck: %s (task %s): %s\n", b.Vertex, b.Task, b.Reason)
	}
}

// isTerminal reports whether w is a terminal, where watch redraws in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
