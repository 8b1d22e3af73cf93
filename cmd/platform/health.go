package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCommand is `platform health`: a probe of a running platform's
// /healthz (or /readyz), for a container's health check, where there is no
// curl or wget.
func newHealthCommand() *cobra.Command {
	var server string
	var ready, insecure bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check that a platform answers on /healthz (--ready: /readyz); exit status 1 when not",
		Long: `Requests /healthz of the platform at --server (env PLATFORM_SERVER, default
http://127.0.0.1:8080), or /readyz with --ready, and exits 0 on a 200 answer, printing
"ok"; any other answer, or none within --timeout, exits 1 with the reason. The probes need
no token. --insecure skips the check of an HTTPS API's certificate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("server") {
				if env := os.Getenv("PLATFORM_SERVER"); env != "" {
					server = env
				}
			}
			path := "/healthz"
			if ready {
				path = "/readyz"
			}
			client := &http.Client{Timeout: timeout}
			if insecure {
				client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			}
			resp, err := client.Get(strings.TrimRight(server, "/") + path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "http://127.0.0.1:8080", "the platform's API (env PLATFORM_SERVER)")
	cmd.Flags().BoolVar(&ready, "ready", false, "check /readyz (ready for work) instead of /healthz (alive)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "do not verify an HTTPS API's certificate")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}
