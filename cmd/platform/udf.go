package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/internal/udfdev"
	"wasmstream.io/platform/state"
)

func newUDFCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "udf",
		Short: "Develop UDF modules: scaffold a project, run a function locally",
	}
	cmd.AddCommand(newUDFNewCommand(), newUDFTestCommand())
	return cmd
}

func newUDFNewCommand() *cobra.Command {
	var lang, dir, platform string
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Create a buildable UDF project NAME with a Makefile and a test",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = args[0]
			}
			if platform == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				if platform, err = udfdev.FindPlatform(wd); err != nil {
					return err
				}
			}
			p := udfdev.Project{Name: args[0], Lang: lang, Dir: dir, Platform: platform}
			if err := udfdev.Scaffold(p); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s (%s): make builds %s.wasm, make test runs it over testdata/input.jsonl\n",
				filepath.Clean(dir), lang, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "go", "language: "+strings.Join(udfdev.Languages, ", "))
	cmd.Flags().StringVar(&dir, "dir", "", "the project's directory (default: NAME)")
	cmd.Flags().StringVar(&platform, "platform", "", "the platform repository's root, whose SDKs the project uses (default: found above the current directory)")
	return cmd
}

func newUDFTestCommand() *cobra.Command {
	var function, onTimer, input, stateBackend string
	var batch int
	var window time.Duration
	var verbose bool
	cmd := &cobra.Command{
		Use:   "test MODULE.wasm",
		Short: "Run a function of a module over records from a JSON Lines file and print its outputs",
		Long: `Runs a function of a module locally, without a server, in the operator the platform
runs it in (records in batches of --batch, the end of the input as the final watermark,
processing time 0), and prints one JSON line per output: {"input": n, "key", "value",
"timestamp", "headers"} for a record, {"input": n, "error"} for a record the function
failed. Each input line is
a record: {"key", "value", "timestamp", "headers": [{"name", "value"}]}, all optional;
a value that is not a JSON string is its JSON text; key_base64 and value_base64 carry
binary data (and appear in the output for bytes that are not UTF-8).

A process function gets each batch grouped by the records' keys, with its keyed state in
the --state backend and its timers; after its outputs come the state ({"state", "key",
"value"}; "values" for a list, "map_key" for each map entry) and the timers still registered
({"timer": "event" or "processing", "key", "timestamp"}). With --on-timer, the event-time
timers then fire in time order, as the final watermark of a bounded job fires them, and
each output of the on_timer function names its timer: {"timer": {"key", "timestamp"}, ...}.
Processing-time timers do not fire.

An aggregate, reduce or window_process function runs over tumbling windows of --window
per key, aligned to the epoch, fired in order of their ends as a watermark passing them
would; each output names its window: {"window": {"start", "end"}, "key", "value",
"timestamp"}, or {"window", "key", "error"} for a window whose result failed, with the
record's "value" and "timestamp" for each record of a window whose add call failed; a
window_process function of a module that declares states gets per-window state in the
--state backend, written after its outputs, as it stands when the window's state is
cleared, with each entry's window.
A session_gap function answers {"input": n, "gap": ms} per record, then the sessions the
gaps make: {"window", "key", "records"}. A watermark function answers {"input": n,
"watermark": ms} for each watermark it emits after a record.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			in, err := os.Open(input)
			if err != nil {
				return err
			}
			defer in.Close()
			recs, err := udfdev.ReadRecords(in)
			if err != nil {
				return err
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelDebug
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			if stateBackend != state.BackendMemory && stateBackend != state.BackendPebble {
				return fmt.Errorf("--state %q: want %s or %s", stateBackend, state.BackendMemory, state.BackendPebble)
			}
			return udfdev.Run(cmd.Context(), wasm, recs, cmd.OutOrStdout(), udfdev.Options{Function: function, OnTimer: onTimer, Window: window, BatchSize: batch, State: stateBackend, Log: log})
		},
	}
	cmd.Flags().StringVar(&function, "function", "", "the function to run (required)")
	cmd.Flags().StringVar(&onTimer, "on-timer", "", "for a process function: its on_timer function, which the event-time timers fire at the end of the input")
	cmd.Flags().DurationVar(&window, "window", 0, "for an aggregate, reduce or window_process function: the size of its tumbling windows")
	cmd.Flags().StringVar(&input, "input", "", "the records, a JSON Lines file (required)")
	cmd.Flags().IntVar(&batch, "batch", 1024, "the most records in one call")
	cmd.Flags().StringVar(&stateBackend, "state", state.BackendMemory, "for a process or window_process function: the state backend, memory or pebble (in a temporary directory)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the module's log lines at every level (default: warn and above)")
	_ = cmd.MarkFlagRequired("function")
	_ = cmd.MarkFlagRequired("input")
	return cmd
}
