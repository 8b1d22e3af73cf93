package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
)

func newJobSampleCommand(c *client) *cobra.Command {
	var sink string
	var n int
	cmd := &cobra.Command{
		Use:   "sample ID [--sink S] [-n 20]",
		Short: "Print the last records a sink of a job wrote, one \"key value\" a line",
		Long: "sample prints the last records a sink of job ID wrote (GET /v1/jobs/{id}/sample): for a\n" +
			"print sink those its subtasks keep in memory, for a JetStream sink the last messages of its\n" +
			"subject, read from the stream. They are ordered by timestamp, then key. --sink may be left\n" +
			"out when the job has one print sink, or one sink.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			if sink != "" {
				q.Set("sink", sink)
			}
			q.Set("n", strconv.Itoa(n))
			var s runtime.Sample
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/sample?"+q.Encode(), "", nil, &s)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			for _, r := range s.Records {
				if c.format == "id" {
					fmt.Fprintln(cmd.OutOrStdout(), r.Key)
					continue
				}
				fmt.Fprintln(cmd.OutOrStdout(), r.Key, r.Value)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sink, "sink", "", "the sink's id")
	cmd.Flags().IntVarP(&n, "count", "n", 20, "how many records (at most 1000)")
	return cmd
}

func newJobWaitCommand(c *client) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Wait until a job ends and print its state; fails unless it FINISHED",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := interruptible(cmd)
			defer cancel()
			if timeout > 0 {
				var stop context.CancelFunc
				ctx, stop = context.WithTimeout(ctx, timeout)
				defer stop()
			}
			j, err := c.api.waitJob(ctx, args[0])
			if err != nil {
				return fmt.Errorf("job %s: %w", args[0], err)
			}
			if c.format == "id" {
				fmt.Fprintln(cmd.OutOrStdout(), j.ID)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s %s\n", j.ID, j.State)
			}
			if j.State != runtime.StateFinished {
				return fmt.Errorf("job %s ended %s: %s", j.ID, j.State, j.Failure)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: wait until it ends or Ctrl-C)")
	return cmd
}
