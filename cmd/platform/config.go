package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// config is the platform's configuration: flags > PLATFORM_* env > file >
// defaults, with the keys of the design.
type config struct {
	HTTPAddr  string
	DataDir   string
	NATSURL   string
	NATSPort  int
	Token     string
	LogFormat string
	LogLevel  string
	// CheckpointStore is where checkpoints go: dir (data_dir/checkpoints)
	// or jetstream (an object store bucket).
	CheckpointStore string
}

// bindConfig declares the configuration flags on cmd and returns a loader that
// resolves them with viper once the command runs.
func bindConfig(cmd *cobra.Command) func() (config, error) {
	v := viper.New()
	f := cmd.Flags()
	f.String("config", "", "configuration file (YAML, JSON or TOML)")
	f.String("http.addr", "127.0.0.1:8080", "HTTP API listen address")
	f.String("data_dir", "./data", "data directory (modules, JetStream store, compilation cache)")
	f.String("nats.url", "", "NATS server URL; empty runs the embedded server")
	f.Int("nats.port", 4222, "client port of the embedded NATS server (-1: any free port)")
	f.String("api.token", "", "bearer token required by every /v1 call; empty disables auth")
	f.String("log.format", "text", "log format: text or json")
	f.String("log.level", "info", "log level: debug, info, warn or error")
	f.String("checkpoint.store", "dir", "where checkpoints and savepoints go: dir (data_dir/checkpoints) or jetstream (object store bucket PLATFORM_CHECKPOINTS)")
	return func() (config, error) {
		v.SetEnvPrefix("PLATFORM")
		v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
		v.AutomaticEnv()
		for _, key := range []string{"http.addr", "data_dir", "nats.url", "nats.port", "api.token", "log.format", "log.level", "checkpoint.store"} {
			if err := v.BindPFlag(key, f.Lookup(key)); err != nil {
				return config{}, err
			}
		}
		if file, _ := f.GetString("config"); file != "" {
			v.SetConfigFile(file)
			if err := v.ReadInConfig(); err != nil {
				return config{}, fmt.Errorf("config file %s: %w", file, err)
			}
		}
		c := config{
			HTTPAddr:  v.GetString("http.addr"),
			DataDir:   v.GetString("data_dir"),
			NATSURL:   v.GetString("nats.url"),
			NATSPort:  v.GetInt("nats.port"),
			Token:     v.GetString("api.token"),
			LogFormat: v.GetString("log.format"),
			LogLevel:  v.GetString("log.level"),

			CheckpointStore: v.GetString("checkpoint.store"),
		}
		if c.CheckpointStore != "dir" && c.CheckpointStore != "jetstream" {
			return config{}, fmt.Errorf("checkpoint.store: %q is not dir or jetstream", c.CheckpointStore)
		}
		if c.LogFormat != "text" && c.LogFormat != "json" {
			return config{}, fmt.Errorf("log.format: %q is not text or json", c.LogFormat)
		}
		return c, nil
	}
}

// logger builds the platform's slog logger.
func (c config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
