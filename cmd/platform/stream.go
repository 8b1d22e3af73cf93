package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"wasmstream.io/platform/connector"
)

// natsFlag declares --nats and the credential flags on flags of cmd
// (persistent for a group) and returns a connector to it.
func natsFlag(cmd *cobra.Command, persistent bool) func(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	f := cmd.Flags()
	if persistent {
		f = cmd.PersistentFlags()
	}
	def := "nats://127.0.0.1:4222"
	if env := os.Getenv("PLATFORM_NATS_URL"); env != "" {
		def = env
	}
	url := f.String("nats", def, "NATS server URL (env PLATFORM_NATS_URL; platform serve's embedded server listens on 127.0.0.1:4222)")
	nkey := f.String("nats-nkey", "", "nkey seed file: the embedded server of a platform with api.token wants data_dir/"+natsUserKeyFile)
	var auth connector.ClientAuth
	f.StringVar(&auth.Creds, "nats-creds", "", "NATS credentials file")
	f.StringVar(&auth.User, "nats-user", "", "NATS user")
	f.StringVar(&auth.Password, "nats-password", "", "password of --nats-user")
	f.StringVar(&auth.TLSCA, "nats-tls-ca", "", "PEM file of the CAs to check the NATS server's certificate against")
	f.StringVar(&auth.TLSCert, "nats-tls-cert", "", "PEM client certificate")
	f.StringVar(&auth.TLSKey, "nats-tls-key", "", "PEM private key of --nats-tls-cert")
	return func(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
		a := auth
		if *nkey != "" {
			seed, err := os.ReadFile(*nkey)
			if err != nil {
				return nil, nil, fmt.Errorf("--nats-nkey: %w", err)
			}
			a.NkeySeed = bytes.TrimSpace(seed)
		}
		opts, err := a.Options()
		if err != nil {
			return nil, nil, err
		}
		nc, js, err := connector.Connect(ctx, *url, "platform-cli", opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot reach NATS at %s (set --nats): %w", *url, errors.Unwrap(err))
		}
		return nc, js, nil
	}
}

func newStreamCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "stream", Short: "Create and list JetStream streams (the platform never creates user streams)"}
	connect := natsFlag(cmd, true)
	var (
		subjects []string
		replicas int
	)
	add := &cobra.Command{
		Use:   "add NAME --subjects S[,S...]",
		Short: "Create a file-backed stream NAME capturing the subjects (or update its subjects)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nc, js, err := connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := connector.EnsureReplicatedStream(cmd.Context(), js, args[0], replicas, subjects...); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stream %s: subjects %s\n", args[0], strings.Join(subjects, ", "))
			return nil
		},
	}
	add.Flags().StringSliceVar(&subjects, "subjects", nil, "subjects the stream captures (repeat or separate with commas; wildcards * and >)")
	add.Flags().IntVar(&replicas, "replicas", 1, "copies of the stream on a NATS cluster (3 on three nodes)")
	_ = add.MarkFlagRequired("subjects")
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the streams with their subjects, messages and bytes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, js, err := connect(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			lister := js.ListStreams(cmd.Context())
			var rows [][]string
			for info := range lister.Info() {
				rows = append(rows, []string{info.Config.Name, strings.Join(info.Config.Subjects, ","),
					strconv.FormatUint(info.State.Msgs, 10), strconv.FormatUint(info.State.Bytes, 10)})
			}
			if err := lister.Err(); err != nil {
				return err
			}
			table(cmd.OutOrStdout(), []string{"NAME", "SUBJECTS", "MESSAGES", "BYTES"}, rows)
			return nil
		},
	}
	cmd.AddCommand(add, ls)
	return cmd
}

func newPubCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pub SUBJECT DATA",
		Short: "Publish DATA to SUBJECT: to its stream with an acknowledgement when one captures it",
		Args:  cobra.ExactArgs(2),
	}
	connect := natsFlag(cmd, false)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		nc, js, err := connect(cmd.Context())
		if err != nil {
			return err
		}
		defer nc.Close()
		subject, data := args[0], []byte(args[1])
		if _, err := js.StreamNameBySubject(cmd.Context(), subject); errors.Is(err, jetstream.ErrStreamNotFound) {
			if err := nc.Publish(subject, data); err != nil {
				return err
			}
			if err := nc.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published to %s (no stream captures it)\n", subject)
			return nil
		} else if err != nil {
			return fmt.Errorf("subject %s: %w", subject, err)
		}
		ack, err := js.Publish(cmd.Context(), subject, data)
		if err != nil {
			return fmt.Errorf("publish to %s: %w", subject, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "published to %s: stream %s, sequence %d\n", subject, ack.Stream, ack.Sequence)
		return nil
	}
	return cmd
}

func newSubCommand() *cobra.Command {
	var all bool
	var count int
	cmd := &cobra.Command{
		Use:   "sub SUBJECT",
		Short: "Print the messages on SUBJECT, one payload a line, until Ctrl-C (or --count)",
		Long: "sub subscribes to SUBJECT (wildcards allowed) and prints each message's payload on a line\n" +
			"as it arrives. With --all it first prints every message the stream capturing SUBJECT\n" +
			"holds, from the start, then the new ones: what a job's sink already wrote.",
		Args: cobra.ExactArgs(1),
	}
	connect := natsFlag(cmd, false)
	cmd.Flags().BoolVar(&all, "all", false, "read the stream that captures SUBJECT from its first message")
	cmd.Flags().IntVar(&count, "count", 0, "stop after this many messages (0: until Ctrl-C)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, cancel := interruptible(cmd)
		defer cancel()
		nc, js, err := connect(ctx)
		if err != nil {
			return err
		}
		defer nc.Close()
		// reading stops before the connection closes.
		ctx, stopReading := context.WithCancel(ctx)
		defer stopReading()
		msgs := make(chan []byte)
		if all {
			err = follow(ctx, js, args[0], msgs)
		} else {
			_, err = nc.Subscribe(args[0], func(m *nats.Msg) {
				select {
				case msgs <- m.Data:
				case <-ctx.Done():
				}
			})
			if err == nil {
				err = nc.Flush()
			}
		}
		if err != nil {
			return err
		}
		for n := 0; count == 0 || n < count; n++ {
			select {
			case <-ctx.Done():
				return nil
			case data := <-msgs:
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", data)
			}
		}
		return nil
	}
	return cmd
}

// follow sends the payloads of the messages on subject that its stream
// holds, from the first, and then the new ones, until ctx is done.
func follow(ctx context.Context, js jetstream.JetStream, subject string, msgs chan<- []byte) error {
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return fmt.Errorf("--all: no stream captures %s: %w", subject, err)
	}
	cons, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil {
			fetch, cancel := context.WithTimeout(ctx, time.Second)
			batch, err := cons.Fetch(256, jetstream.FetchContext(fetch))
			if err != nil {
				<-fetch.Done()
				cancel()
				continue
			}
			for m := range batch.Messages() {
				select {
				case msgs <- m.Data():
				case <-ctx.Done():
				}
			}
			cancel()
		}
	}()
	return nil
}
