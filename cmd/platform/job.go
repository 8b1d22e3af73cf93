package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
)

func newJobCommand() *cobra.Command {
	cmd, c := clientGroup("job", "Submit, inspect, watch, savepoint, stop and cancel jobs on a platform")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var l struct{ Jobs []runtime.JobInfo }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Jobs))
			for i, j := range l.Jobs {
				rows[i] = []string{j.ID, j.Name, string(j.State), stamp(j.Created)}
			}
			c.rows(cmd.OutOrStdout(), []string{"ID", "NAME", "STATE", "CREATED"}, rows)
			return nil
		},
	}
	get := &cobra.Command{
		Use:   "get ID",
		Short: "Show a job: state, checkpoints and its vertices' counts, backpressure and watermarks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.jobAction(cmd, http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0]), func(j runtime.JobInfo) {
				printJob(cmd.OutOrStdout(), j)
			})
		},
	}
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job (without a savepoint; see stop)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.jobAction(cmd, http.MethodPost, "/v1/jobs/"+url.PathEscape(args[0])+"/cancel", func(j runtime.JobInfo) {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s %s\n", j.ID, j.State)
			})
		},
	}
	spec := &cobra.Command{
		Use:   "spec ID",
		Short: "Print the spec the job was submitted with, as it was submitted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/spec", "", nil, nil)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(raw)
			return err
		},
	}
	var withSavepoints bool
	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a job that has ended, with its checkpoints (--savepoints: and its savepoints)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/v1/jobs/" + url.PathEscape(args[0])
			if withSavepoints {
				path += "?savepoints=true"
			}
			if _, err := c.api.call(cmd.Context(), http.MethodDelete, path, "", nil, nil); err != nil {
				return err
			}
			switch {
			case c.format == "id":
				fmt.Fprintln(cmd.OutOrStdout(), args[0])
			case c.format == "table" && withSavepoints:
				fmt.Fprintf(cmd.OutOrStdout(), "deleted job %s, its checkpoints and savepoints\n", args[0])
			case c.format == "table":
				fmt.Fprintf(cmd.OutOrStdout(), "deleted job %s and its checkpoints (savepoints kept)\n", args[0])
			}
			return nil
		},
	}
	rm.Flags().BoolVar(&withSavepoints, "savepoints", false, "delete the job's savepoints too")
	cmd.AddCommand(newJobSubmitCommand(c), list, get, spec, rm, cancel, newJobResumeCommand(c), newJobWatchCommand(c))
	cmd.AddCommand(newJobSampleCommand(c), newJobWaitCommand(c), newJobReplayCommand(c), newJobQuarantineCommand(c))
	cmd.AddCommand(newSavepointCommands(c)...)
	cmd.AddCommand(newLiveCommands(c)...) // job_upgrade.go
	return cmd
}

// jobAction calls a route that answers with a job and prints it: raw for
// -o json, its id for -o id, else with show.
func (c *client) jobAction(cmd *cobra.Command, method, path string, show func(runtime.JobInfo)) error {
	var j runtime.JobInfo
	raw, err := c.api.call(cmd.Context(), method, path, "", nil, &j)
	switch {
	case err != nil || c.printed(cmd.OutOrStdout(), raw):
	case c.format == "id":
		fmt.Fprintln(cmd.OutOrStdout(), j.ID)
	default:
		show(j)
	}
	return err
}

func newJobSubmitCommand(c *client) *cobra.Command {
	var from, fromCheckpoint string
	var allow, dryRun bool
	cmd := &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit a job spec (JSON or YAML; FILE - reads it from standard input)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := readSpec(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			if fromCheckpoint != "" {
				if from != "" {
					return fmt.Errorf("--from-checkpoint and --from-savepoint: give one")
				}
				from = runtime.FromCheckpoint(fromCheckpoint)
			}
			if dryRun {
				return c.dryRun(cmd, args[0], spec, from, allow)
			}
			return c.submit(cmd, args[0], spec, from, allow, "")
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "run every check of a submission and print what would run, without starting the job")
	cmd.Flags().StringVar(&from, "from-savepoint", "", "start from this savepoint (platform job savepoints ID lists them)")
	cmd.Flags().StringVar(&fromCheckpoint, "from-checkpoint", "", "start from this retained checkpoint or savepoint, JOB-N (platform job checkpoints JOB lists them)")
	cmd.Flags().BoolVar(&allow, "allow-non-restored-state", false, "with --from-savepoint: drop the state no operator of the job takes")
	return cmd
}

func newJobResumeCommand(c *client) *cobra.Command {
	var allow bool
	cmd := &cobra.Command{
		Use:   "resume ID FILE",
		Short: "Submit the spec in FILE as a new job from the latest completed savepoint of job ID",
		Long: "resume finds the latest completed savepoint of job ID (taken with savepoint or stop) and\n" +
			"submits FILE from it, as submit --from-savepoint does. FILE is the same spec (job spec ID\n" +
			"prints it) or a changed one (parallelism, new operators).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := readSpec(cmd.InOrStdin(), args[1])
			if err != nil {
				return err
			}
			var l struct{ Savepoints []runtime.SavepointInfo }
			if _, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/savepoints", "", nil, &l); err != nil {
				return err
			}
			var latest *runtime.SavepointInfo
			for i, sp := range l.Savepoints {
				if sp.Status == checkpoint.StatusCompleted && (latest == nil || sp.Triggered.After(latest.Triggered)) {
					latest = &l.Savepoints[i]
				}
			}
			if latest == nil {
				return fmt.Errorf("job %s has no completed savepoint: take one with platform job savepoint %s (or stop it)", args[0], args[0])
			}
			return c.submit(cmd, args[1], spec, latest.ID, allow, " from savepoint "+latest.ID)
		},
	}
	cmd.Flags().BoolVar(&allow, "allow-non-restored-state", false, "drop the state no operator of the new job takes")
	return cmd
}

// submitPath is the path of a submission, from a savepoint when from is
// set.
func submitPath(from string, allow bool) string {
	q := url.Values{}
	if ref, ok := strings.CutPrefix(from, runtime.FromCheckpoint("")); ok {
		q.Set("from_checkpoint", ref)
	} else if from != "" {
		q.Set("from_savepoint", from)
	}
	if from != "" {
		if allow {
			q.Set("allow_non_restored_state", "true")
		}
	}
	if len(q) == 0 {
		return "/v1/jobs"
	}
	return "/v1/jobs?" + q.Encode()
}

// dryRun checks a spec as a submission would (POST /v1/jobs?dry_run=true)
// and prints what would run and the warnings; -o id prints the job's name.
func (c *client) dryRun(cmd *cobra.Command, name string, spec []byte, from string, allow bool) error {
	path := submitPath(from, allow)
	if strings.Contains(path, "?") {
		path += "&dry_run=true"
	} else {
		path += "?dry_run=true"
	}
	var p runtime.JobPlan
	raw, err := c.api.call(cmd.Context(), http.MethodPost, path, specType(name, spec), spec, &p)
	switch {
	case err != nil || c.printed(cmd.OutOrStdout(), raw):
		return err
	case c.format == "id":
		fmt.Fprintln(cmd.OutOrStdout(), p.Name)
	default:
		fmt.Fprintf(cmd.OutOrStdout(), "job %s is valid: it would run %d tasks (not started)\n", p.Name, p.Tasks)
		rows := make([][]string, len(p.Vertices))
		for i, v := range p.Vertices {
			rows[i] = []string{v.ID, v.Kind, strconv.Itoa(v.Parallelism), v.Task}
		}
		table(cmd.OutOrStdout(), []string{"VERTEX", "KIND", "PARALLELISM", "TASK"}, rows)
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	return nil
}

// submit posts a spec, from a savepoint when from is set, and prints the
// new job, with suffix after its id and state, and its warnings.
func (c *client) submit(cmd *cobra.Command, name string, spec []byte, from string, allow bool, suffix string) error {
	path := submitPath(from, allow)
	var j runtime.JobInfo
	raw, err := c.api.call(cmd.Context(), http.MethodPost, path, specType(name, spec), spec, &j)
	switch {
	case err != nil || c.printed(cmd.OutOrStdout(), raw):
		return err
	case c.format == "id":
		fmt.Fprintln(cmd.OutOrStdout(), j.ID)
	default:
		fmt.Fprintf(cmd.OutOrStdout(), "submitted job %s (%s)%s\n", j.ID, j.State, suffix)
	}
	for _, w := range j.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	return nil
}

// readSpec reads a job spec from a file, or from in for "-".
func readSpec(in io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(in)
	}
	return os.ReadFile(name)
}

// specType is the spec's media type: by the file's extension, else JSON
// when it starts with "{", else YAML.
func specType(name string, spec []byte) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	}
	if bytes.HasPrefix(bytes.TrimSpace(spec), []byte("{")) {
		return "application/json"
	}
	return "application/yaml"
}

func printJob(w io.Writer, j runtime.JobInfo) {
	var ended, restarts, checkpoints, restored string
	if j.Ended != nil {
		ended = stamp(*j.Ended)
	}
	if j.Restarts > 0 {
		restarts = strconv.FormatInt(j.Restarts, 10)
	}
	if cp := j.Checkpoint; cp != nil {
		checkpoints = fmt.Sprintf("%s, %d completed, %d failed", cp.Mode, cp.Completed, cp.Failed)
		if cp.Latest != nil {
			checkpoints += fmt.Sprintf(", latest %d at %s", cp.Latest.ID, stamp(cp.Latest.Triggered))
		}
		if r := cp.Restored; r != nil {
			restored = fmt.Sprintf("%s %d of job %s", r.Kind, r.Checkpoint, r.Job)
		}
	}
	var named []string
	for _, m := range j.Modules {
		if m.Version != "" {
			named = append(named, m.Ref+" = "+m.Version+" ("+m.ID+")")
		}
	}
	fields(w, "id", j.ID, "name", j.Name, "state", string(j.State), "created", stamp(j.Created), "ended", ended,
		"failure", j.Failure, "restarts", restarts, "checkpoints", checkpoints, "restored from", restored, "modules", strings.Join(named, ", "))
	for _, warning := range j.Warnings {
		fmt.Fprintln(w, "warning:", warning)
	}
	if len(j.Vertices) == 0 {
		return
	}
	fmt.Fprintln(w)
	rows := make([][]string, len(j.Vertices))
	for i, v := range j.Vertices {
		rows[i] = []string{v.ID, v.Kind, strconv.Itoa(v.Parallelism), v.Task, strconv.FormatInt(v.RecordsIn, 10),
			strconv.FormatInt(v.RecordsOut, 10), strconv.FormatInt(v.UDFErrors, 10),
			strconv.FormatFloat(v.Backpressure, 'f', 2, 64), watermarkText(v.Watermark)}
	}
	table(w, []string{"VERTEX", "KIND", "PARALLELISM", "TASK", "IN", "OUT", "UDF ERRORS", "BACKPRESSURE", "WATERMARK"}, rows)
}

// watermarkText is a watermark as a UTC time to the millisecond, "-" before
// the first and "end" after the end of the input.
func watermarkText(w *int64) string {
	switch {
	case w == nil:
		return "-"
	case *w == math.MaxInt64:
		return "end"
	}
	return time.UnixMilli(*w).UTC().Format("2006-01-02T15:04:05.000Z")
}

// waitJob polls a job until it ends or ctx is done.
func (a *apiClient) waitJob(ctx context.Context, id string) (runtime.JobInfo, error) {
	for {
		var j runtime.JobInfo
		if _, err := a.call(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), "", nil, &j); err != nil || j.State.Terminal() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return runtime.JobInfo{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
