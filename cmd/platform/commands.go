package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "platform",
		Short:         "A stream platform whose user functions are WebAssembly",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newDemoCommand(), newVersionCommand(), newUDFCommand(),
		newModuleCommand(), newJobCommand(), newStreamCommand(), newPubCommand(), newSubCommand(),
		newNexmarkCommand(), newBenchCommand(), newHealthCommand())
	return root
}

func newServeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run NATS (embedded unless nats.url is set), the HTTP API and a worker",
		Args:  cobra.NoArgs,
	}
	load := bindConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		log, err := cfg.logger(os.Stderr)
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		s, err := startServer(ctx, cfg, log)
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			log.Info("shutting down")
		case err = <-s.served:
			log.Error("http server stopped", "error", err)
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.stop(shutdown)
		return err
	}
	return cmd
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the platform's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			goVersion := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				goVersion = info.GoVersion
			}
			fmt.Fprintf(cmd.OutOrStdout(), "platform %s (%s)\n", version, goVersion)
		},
	}
}
