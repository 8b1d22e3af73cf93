package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
)

// newLiveCommands are the job commands that change a running job in
// place: upgrade (with a canary), promote and rollback of a canary,
// rescale, and versions, its version history.
func newLiveCommands(c *client) []*cobra.Command {
	var (
		module, specFile, canary string
		probation                runtime.Probation
		wait                     bool
	)
	upgrade := &cobra.Command{
		Use:   "upgrade ID --module M [--spec FILE] [--canary FIRST-LAST]",
		Short: "Switch a running job to a new module (or spec of the same graph) at a checkpoint's barrier, keeping its state and id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := runtime.UpgradeRequest{Module: module, Probation: probation}
			if cmd.Flags().Changed("canary") {
				req.Canary = &runtime.CanaryRequest{KeyGroups: canary}
			}
			if specFile != "" {
				data, err := readSpec(cmd.InOrStdin(), specFile)
				if err != nil {
					return err
				}
				req.Spec = string(data)
			}
			return c.switchVersion(cmd, args[0], "/upgrade", req, wait)
		},
	}
	upgrade.Flags().StringVar(&module, "module", "", "the new module: an id, a name or name@version")
	upgrade.Flags().StringVar(&specFile, "spec", "", "a new job spec of the same graph shape (FILE, or - for standard input)")
	upgrade.Flags().Int64Var(&probation.Records, "probation-records", 0, "records the new version's UDF operators must process before it commits (default 100)")
	upgrade.Flags().StringVar(&probation.Time, "probation-time", "", "or the time after which it commits (default 30s)")
	upgrade.Flags().BoolVar(&wait, "wait", true, "wait until the new version is committed, rolled back or refused")
	upgrade.Flags().StringVar(&canary, "canary", "", "run the new version on these key groups only (FIRST-LAST, whole subtasks of the keyed operators) until promote or rollback")

	var (
		promoteProbation runtime.Probation
		waitPromote      bool
	)
	promote := &cobra.Command{
		Use:   "promote ID",
		Short: "Run a job's canary version on every key group, switched to at a checkpoint's barrier",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.switchVersion(cmd, args[0], "/promote", runtime.PromoteRequest{Probation: promoteProbation}, waitPromote)
		},
	}
	promote.Flags().Int64Var(&promoteProbation.Records, "probation-records", 0, "records the promoted version's UDF operators must process before it commits (default 100)")
	promote.Flags().StringVar(&promoteProbation.Time, "probation-time", "", "or the time after which it commits (default 30s)")
	promote.Flags().BoolVar(&waitPromote, "wait", true, "wait until the promotion is committed or rolled back")

	var waitRollback bool
	rollback := &cobra.Command{
		Use:   "rollback ID",
		Short: "Return every key group of a job running a canary to the job's own version, at a checkpoint's barrier",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.switchVersion(cmd, args[0], "/rollback", struct{}{}, waitRollback)
		},
	}
	rollback.Flags().BoolVar(&waitRollback, "wait", true, "wait until the job runs its own version again")

	var (
		parallelism int
		operators   []string
		waitRescale bool
	)
	rescale := &cobra.Command{
		Use:   "rescale ID --parallelism N [--operator ID=N ...]",
		Short: "Change a running job's parallelism in place at a checkpoint's barrier, keeping its state and id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := runtime.RescaleRequest{Parallelism: parallelism}
			for _, o := range operators {
				id, n, ok := strings.Cut(o, "=")
				p, err := strconv.Atoi(n)
				if !ok || id == "" || err != nil {
					return fmt.Errorf("--operator %q: want ID=N", o)
				}
				if req.Operators == nil {
					req.Operators = map[string]int{}
				}
				req.Operators[id] = p
			}
			return c.switchVersion(cmd, args[0], "/rescale", req, waitRescale)
		},
	}
	rescale.Flags().IntVar(&parallelism, "parallelism", 0, "the job's new default parallelism")
	rescale.Flags().StringArrayVar(&operators, "operator", nil, "ID=N: the new parallelism of one source, operator or sink (repeatable)")
	rescale.Flags().BoolVar(&waitRescale, "wait", true, "wait until the new parallelism is committed or rolled back")

	versions := &cobra.Command{
		Use:   "versions ID",
		Short: "A job's versions: each upgrade, canary, promotion, rescale and rollback, the checkpoint it took over at and how it went",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var j runtime.JobInfo
			if _, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0]), "", nil, &j); err != nil {
				return err
			}
			if c.format == "json" {
				out, err := json.Marshal(j.Versions)
				if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), string(out))
				}
				return err
			}
			rows := make([][]string, len(j.Versions))
			for i, v := range j.Versions {
				rows[i] = []string{strconv.Itoa(v.Version), v.Change, v.Outcome, moduleList(v.Modules) + canaryList(v.Canary), parallelismList(v.Parallelism),
					strconv.FormatInt(v.FromCheckpoint, 10), stamp(v.Started), v.Reason}
			}
			c.rows(cmd.OutOrStdout(), []string{"VERSION", "CHANGE", "OUTCOME", "MODULES", "PARALLELISM", "FROM", "STARTED", "REASON"}, rows)
			return nil
		},
	}
	return []*cobra.Command{upgrade, promote, rollback, rescale, versions}
}

// switchVersion posts an upgrade or rescale and, with wait, polls the job
// until the new version leaves its probation: committed, rolled back, or
// never switched to (an error for the last two).
func (c *client) switchVersion(cmd *cobra.Command, job, route string, req any, wait bool) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var sw runtime.SwitchInfo
	raw, err := c.api.call(cmd.Context(), http.MethodPost, "/v1/jobs/"+url.PathEscape(job)+route, "application/json", body, &sw)
	if err != nil {
		return err
	}
	if !wait {
		if !c.printed(cmd.OutOrStdout(), raw) {
			fmt.Fprintf(cmd.OutOrStdout(), "job %s switching to version %d at checkpoint %d\n", sw.Job, sw.Version, sw.FromCheckpoint)
		}
		return nil
	}
	ctx, cancel := interruptible(cmd)
	defer cancel()
	v, err := c.api.awaitVersion(ctx, job, sw.Version)
	if err != nil {
		return err
	}
	if c.format == "json" {
		out, err := json.Marshal(v)
		if err == nil {
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
		}
		return err
	}
	if v.Outcome != runtime.VersionRunning && v.Outcome != runtime.VersionReplaced {
		return fmt.Errorf("job %s version %d %s: %s", job, v.Version, v.Outcome, v.Reason)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "job %s runs version %d (from checkpoint %d)\n", job, v.Version, v.FromCheckpoint)
	return nil
}

// awaitVersion polls the job until its version n has an outcome other
// than probation; a job that ended without it is an error.
func (a *apiClient) awaitVersion(ctx context.Context, job string, n int) (runtime.VersionInfo, error) {
	for {
		var j runtime.JobInfo
		if _, err := a.call(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(job), "", nil, &j); err != nil {
			return runtime.VersionInfo{}, err
		}
		if len(j.Versions) >= n && j.Versions[n-1].Outcome != runtime.VersionProbation {
			return j.Versions[n-1], nil
		}
		if j.State.Terminal() {
			return runtime.VersionInfo{}, fmt.Errorf("job %s %s before version %d took over: %s", job, j.State, n, j.Failure)
		}
		select {
		case <-ctx.Done():
			return runtime.VersionInfo{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// moduleList names a version's modules: their name@version, else ids.
func moduleList(mods []runtime.JobModule) string {
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.ID
		if m.Version != "" {
			names[i] = m.Version
		}
	}
	return strings.Join(names, ",")
}

// canaryList is what a version's MODULES cell adds for its canary:
// "+canary[FIRST-LAST]:" and the canary's modules; "" for none.
func canaryList(cv *runtime.CanaryVersion) string {
	if cv == nil {
		return ""
	}
	return "+canary[" + cv.KeyGroups + "]:" + moduleList(cv.Modules)
}

// parallelismList is a version's parallelism as id=n pairs, sorted.
func parallelismList(p map[string]int) string {
	pairs := make([]string, 0, len(p))
	for id, n := range p {
		pairs = append(pairs, id+"="+strconv.Itoa(n))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}
