package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime"
)

const demoSpec = `name: wordcount-demo
parallelism: 2
sources:
  - id: lines
    jetstream: {stream: DEMO_TEXT, subjects: ["demo.text"], bounded: true}
    parallelism: 1
operators:
  - id: split
    input: lines
    flat_map: {module: %q, function: split}
sinks:
  - id: words
    input: split
    jetstream: {subject: demo.words}
`

func newDemoCommand() *cobra.Command {
	var lines int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build the wordcount UDF, run a word-count job on an embedded platform and print the counts",
		Long: "demo starts a platform with an embedded NATS server in a temporary directory, builds\n" +
			"udfs/wordcount with the Go toolchain (run it from the repository root), uploads it over\n" +
			"HTTP, publishes generated text to a JetStream stream, runs a bounded job that splits the\n" +
			"lines into words, and prints the most frequent words read back from the sink stream.",
		Args: cobra.NoArgs,
	}
	cmd.Flags().IntVar(&lines, "lines", 20000, "lines of generated text")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runDemo(cmd.Context(), cmd.OutOrStdout(), lines)
	}
	return cmd
}

func runDemo(ctx context.Context, out io.Writer, lines int) error {
	dir, err := os.MkdirTemp("", "platform-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(out, "building udfs/wordcount (GOOS=wasip1 GOARCH=wasm) ...")
	wasm, err := buildGoUDF(ctx, "udfs/wordcount", dir)
	if err != nil {
		return err
	}
	cfg := config{HTTPAddr: "127.0.0.1:0", DataDir: dir, NATSPort: -1, LogFormat: "text", LogLevel: "warn"}
	log, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	s, err := startServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.stop(context.Background())
	api := &apiClient{base: "http://" + s.addr()}
	fmt.Fprintf(out, "platform up: API %s, embedded NATS %s\n", api.base, s.embedded.ClientURL())

	var mod runtime.ModuleInfo
	if _, err := api.call(ctx, http.MethodPost, "/v1/modules", "application/wasm", wasm, &mod); err != nil {
		return fmt.Errorf("upload module: %w", err)
	}
	fmt.Fprintf(out, "uploaded module %s (%d bytes)\n", mod.ID, mod.Size)

	js, err := jetstream.New(s.nc)
	if err != nil {
		return err
	}
	if err := publishDemoText(ctx, js, lines); err != nil {
		return err
	}
	if err := connector.EnsureStream(ctx, js, "DEMO_WORDS", "demo.words"); err != nil {
		return err
	}
	fmt.Fprintf(out, "published %d lines to stream DEMO_TEXT\n", lines)

	start := time.Now()
	var job runtime.JobInfo
	if _, err := api.call(ctx, http.MethodPost, "/v1/jobs", "application/yaml", []byte(fmt.Sprintf(demoSpec, mod.ID)), &job); err != nil {
		return fmt.Errorf("submit job: %w", err)
	}
	if job, err = api.waitJob(ctx, job.ID); err != nil {
		return err
	}
	elapsed := time.Since(start)
	if job.State != runtime.StateFinished {
		return fmt.Errorf("job %s ended %s: %s", job.ID, job.State, job.Failure)
	}
	for _, v := range job.Vertices {
		fmt.Fprintf(out, "  %-6s %-9s parallelism %d  in %8d  out %8d\n", v.ID, v.Kind, v.Parallelism, v.RecordsIn, v.RecordsOut)
	}
	counts, total, err := countWords(ctx, js)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "job %s FINISHED in %s: %d words, %d distinct\n", job.ID, elapsed.Round(time.Millisecond), total, len(counts))
	printTop(out, counts, 10)
	return nil
}

// buildGoUDF builds a Go SDK UDF with the wasip1 reactor build mode.
func buildGoUDF(ctx context.Context, pkgDir, outDir string) ([]byte, error) {
	if _, err := os.Stat(filepath.Join(pkgDir, "main.go")); err != nil {
		return nil, fmt.Errorf("%s not found: run the demo from the repository root", pkgDir)
	}
	outFile := filepath.Join(outDir, filepath.Base(pkgDir)+".wasm")
	build := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", outFile, "./"+pkgDir)
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", pkgDir, err, msg)
	}
	return os.ReadFile(outFile)
}

func publishDemoText(ctx context.Context, js jetstream.JetStream, lines int) error {
	if err := connector.EnsureStream(ctx, js, "DEMO_TEXT", "demo.text"); err != nil {
		return err
	}
	gen, err := connector.NewGenerator(connector.GeneratorConfig{Kind: "text", Count: int64(lines), Parallelism: 1})
	if err != nil {
		return err
	}
	defer gen.Close()
	var batch abi.Batch
	for {
		batch.Reset()
		err := gen.Fetch(ctx, &batch, 1024, time.Second)
		for i := range batch.Records {
			if _, perr := js.PublishAsync("demo.text", batch.Records[i].Value); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func countWords(ctx context.Context, js jetstream.JetStream) (map[string]int, int, error) {
	st, err := js.Stream(ctx, "DEMO_WORDS")
	if err != nil {
		return nil, 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, 0, err
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{}
	total := 0
	for uint64(total) < info.State.Msgs {
		batch, err := cons.Fetch(1024, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, 0, err
		}
		for msg := range batch.Messages() {
			counts[string(msg.Data())]++
			total++
		}
		if err := batch.Error(); err != nil {
			return nil, 0, err
		}
	}
	return counts, total, nil
}

func printTop(out io.Writer, counts map[string]int, n int) {
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	for i, w := range words {
		if i == n {
			break
		}
		fmt.Fprintf(out, "  %-12s %d\n", w, counts[w])
	}
}
