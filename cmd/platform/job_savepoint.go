package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime"
)

// newSavepointCommands are the job commands over checkpoints and
// savepoints: savepoint, stop, savepoints and checkpoints.
func newSavepointCommands(c *client) []*cobra.Command {
	var wait bool
	savepoint := &cobra.Command{
		Use:   "savepoint ID",
		Short: "Take a savepoint of a running job (it goes on running)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sp, err := c.takeSavepoint(cmd, args[0], "/savepoints", wait)
			if err != nil || !wait || c.format != "table" {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "savepoint %s %s\n", sp.ID, sp.Status)
			return nil
		},
	}
	savepoint.Flags().BoolVar(&wait, "wait", true, "wait until the savepoint completes")
	var waitStop bool
	stop := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a job with a savepoint: it ends FINISHED once its sinks commit what the savepoint covers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sp, err := c.takeSavepoint(cmd, args[0], "/stop", waitStop)
			if err != nil || !waitStop {
				return err
			}
			ctx, cancel := interruptible(cmd)
			defer cancel()
			j, err := c.api.waitJob(ctx, args[0])
			if err != nil || c.format != "table" {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s %s with savepoint %s\n", j.ID, j.State, sp.ID)
			return nil
		},
	}
	stop.Flags().BoolVar(&waitStop, "wait", true, "wait until the savepoint completes and the job ends")
	list := &cobra.Command{
		Use:   "savepoints ID",
		Short: "List a job's savepoints",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var l struct{ Savepoints []runtime.SavepointInfo }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/savepoints", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Savepoints))
			for i, sp := range l.Savepoints {
				rows[i] = []string{sp.ID, string(sp.Status), stamp(sp.Triggered), strconv.FormatInt(sp.Size, 10), sp.Failure}
			}
			c.rows(cmd.OutOrStdout(), []string{"ID", "STATUS", "TRIGGERED", "SIZE", "FAILURE"}, rows)
			return nil
		},
	}
	checkpoints := &cobra.Command{
		Use:   "checkpoints ID",
		Short: "A job's checkpoint history: the last 100 checkpoints and its savepoints",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var l struct{ Checkpoints []checkpoint.Stats }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/checkpoints", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Checkpoints))
			for i, s := range l.Checkpoints {
				rows[i] = []string{strconv.FormatInt(s.ID, 10), string(s.Kind), string(s.Status), stamp(s.Triggered),
					s.Duration.Round(100 * time.Microsecond).String(), strconv.FormatInt(s.Size, 10), s.Alignment.Round(100 * time.Microsecond).String(), s.Failure}
			}
			c.rows(cmd.OutOrStdout(), []string{"ID", "KIND", "STATUS", "TRIGGERED", "DURATION", "SIZE", "ALIGNMENT", "FAILURE"}, rows)
			return nil
		},
	}
	return []*cobra.Command{savepoint, stop, list, checkpoints}
}

// takeSavepoint posts to the job's route (/savepoints or /stop) and, with
// wait, polls the job's savepoints until that one completes; a failed
// savepoint is an error. For -o json and -o id it prints the savepoint.
func (c *client) takeSavepoint(cmd *cobra.Command, job, route string, wait bool) (runtime.SavepointInfo, error) {
	var sp runtime.SavepointInfo
	raw, err := c.api.call(cmd.Context(), http.MethodPost, "/v1/jobs/"+url.PathEscape(job)+route, "", nil, &sp)
	if err != nil {
		return sp, err
	}
	if wait {
		ctx, cancel := interruptible(cmd)
		defer cancel()
		if sp, err = c.awaitSavepoint(ctx, job, sp.ID); err != nil {
			return sp, err
		}
		if sp.Status == checkpoint.StatusFailed {
			return sp, fmt.Errorf("savepoint %s FAILED: %s", sp.ID, sp.Failure)
		}
		if raw, err = json.Marshal(sp); err != nil {
			return sp, err
		}
	}
	switch c.format {
	case "json":
		c.printed(cmd.OutOrStdout(), raw)
	case "id":
		fmt.Fprintln(cmd.OutOrStdout(), sp.ID)
	}
	return sp, nil
}

// awaitSavepoint polls a job's savepoints until id is no longer in
// progress.
func (c *client) awaitSavepoint(ctx context.Context, job, id string) (runtime.SavepointInfo, error) {
	for {
		var l struct{ Savepoints []runtime.SavepointInfo }
		if _, err := c.api.call(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(job)+"/savepoints", "", nil, &l); err != nil {
			return runtime.SavepointInfo{}, err
		}
		for _, sp := range l.Savepoints {
			if sp.ID == id && sp.Status != checkpoint.StatusInProgress {
				return sp, nil
			}
		}
		select {
		case <-ctx.Done():
			return runtime.SavepointInfo{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
