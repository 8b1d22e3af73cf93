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
		Short: "Develop UDF modules: scaffold a project, write an SDK, run a function locally",
	}
	cmd.AddCommand(newUDFNewCommand(), newUDFSDKCommand(), newUDFTestCommand())
	return cmd
}

func newUDFNewCommand() *cobra.Command {
	var lang, dir, platform string
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Create a buildable UDF project NAME with a Makefile, a test, a job spec and a copy of the SDK",
		Long: `Creates the directory NAME (--dir) with a UDF module in the language of --lang: one map
function, shout; a Makefile whose default target builds NAME.wasm, whose test target runs
the language's tests and ` + "`platform udf test`" + ` over testdata/input.jsonl, and whose deploy target
uploads the module and submits job.yaml with it; and a copy of the language's SDK, from
the sources built into this binary, under third_party/, so that the project builds anywhere
without the platform's repository. With --platform, the project uses the SDK of that
platform repository where it is instead (for working on the SDKs).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = args[0]
			}
			p := udfdev.Project{Name: args[0], Lang: lang, Dir: dir, Platform: platform}
			if err := udfdev.Scaffold(p); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s (%s): make builds %s.wasm, make test runs it over testdata/input.jsonl, make deploy submits job.yaml\n",
				filepath.Clean(dir), lang, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "go", "language: "+strings.Join(udfdev.Languages, ", "))
	cmd.Flags().StringVar(&dir, "dir", "", "the project's directory (default: NAME)")
	cmd.Flags().StringVar(&platform, "platform", "", "a platform repository whose SDK the project uses where it is (default: a copy of the SDK in the project)")
	return cmd
}

func newUDFSDKCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "sdk LANG DIR",
		Short: "Write the SDK of LANG (" + strings.Join(udfdev.Languages, ", ") + ") built into this binary to DIR",
		Long: `Writes a copy of the SDK of LANG, from the sources built into this binary, to DIR: what
` + "`platform udf new`" + ` writes under third_party/, for refreshing it after an upgrade. Files of
the SDK are overwritten; other files in DIR are left alone. The Go SDK is the module
` + udfdev.GoSDKModule + `, the Rust SDK the crate platform-udf, the AssemblyScript SDK the
npm package platform-udf and the C SDK platform_udf.h and platform_udf.c.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := udfdev.WriteSDK(args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote the %s SDK %s to %s\n", args[0], udfdev.SDKVersion, filepath.Clean(args[1]))
			return nil
		},
	}
}

func newUDFTestCommand() *cobra.Command {
	var function, onTimer, input, stateBackend, broadcastFn string
	var sideOutputs []string
	var batch int
	var window time.Duration
	var verbose, processingTime bool
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
binary data (and appear in the output for bytes that are not UTF-8). A line
{"watermark": ms} moves the watermark there, firing the event-time timers and windows due,
and {"processing_time": ms} the processing time, firing the processing-time timers due and
expiring state past its TTL; neither may go back.

A process function gets each batch grouped by the records' keys, with its keyed state in
the --state backend and its timers; after its outputs come the state ({"state", "key",
"value"}; "values" for a list, "map_key" for each map entry) and the timers still registered
({"timer": "event" or "processing", "key", "timestamp"}). With --on-timer, the event-time
timers then fire in time order, as the final watermark of a bounded job fires them, and
each output of the on_timer function names its timer: {"timer": {"key", "timestamp"}, ...}.
Processing-time timers fire only at {"processing_time": ms} lines. With --side-outputs
(a process or window_process function), a record the function writes to one of those side
outputs is printed naming it, {"side_output": tag, "key", "value", "timestamp"}, after the
main outputs of its batch; a record written to any other tag fails its input, as in a job.
With --broadcast, the process function is the keyed side of a broadcast_process operator
and --broadcast its process_broadcast function: each line {"broadcast": {record}} is a
record of the broadcast input, given to process_broadcast in a call of its own at that
point of the input, and the broadcast states it writes are kept for the records after it
(which read them, read-only). Outputs and errors of a broadcast record name it by its
number among the broadcast lines, {"broadcast_input": n, ...}; the broadcast states are
printed last, {"broadcast_state", "map_key", "value"} per entry.

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
			recs, steps, err := udfdev.ReadInput(in)
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
			return udfdev.Run(cmd.Context(), wasm, recs, cmd.OutOrStdout(), udfdev.Options{Function: function, OnTimer: onTimer, Window: window, BatchSize: batch, State: stateBackend, Log: log, Steps: steps, ProcessingTime: processingTime,
				SideOutputs: sideOutputs, Broadcast: broadcastFn})
		},
	}
	cmd.Flags().StringVar(&function, "function", "", "the function to run (required)")
	cmd.Flags().StringVar(&onTimer, "on-timer", "", "for a process function: its on_timer function, which the event-time timers fire at the end of the input")
	cmd.Flags().DurationVar(&window, "window", 0, "for an aggregate, reduce or window_process function: the size of its tumbling windows")
	cmd.Flags().BoolVar(&processingTime, "processing-time", false, "with --window: processing-time windows, which {\"processing_time\": ms} lines fire")
	cmd.Flags().StringSliceVar(&sideOutputs, "side-outputs", nil, "for a process or window_process function: the side outputs it may write (an operator's side_outputs), comma-separated")
	cmd.Flags().StringVar(&broadcastFn, "broadcast", "", "for a process function: the process_broadcast function of its broadcast_process operator, which {\"broadcast\": record} lines feed")
	cmd.Flags().StringVar(&input, "input", "", "the records, a JSON Lines file (required)")
	cmd.Flags().IntVar(&batch, "batch", 1024, "the most records in one call")
	cmd.Flags().StringVar(&stateBackend, "state", state.BackendMemory, "for a process or window_process function: the state backend, memory or pebble (in a temporary directory)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the module's log lines at every level (default: warn and above)")
	_ = cmd.MarkFlagRequired("function")
	_ = cmd.MarkFlagRequired("input")
	return cmd
}
