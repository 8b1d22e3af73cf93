package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
)

// newJobQuarantineCommand is `platform job quarantine list|release`: the
// poison keys a job parked under on_udf_error: quarantine.
func newJobQuarantineCommand(c *client) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "List and release the keys a job parked under on_udf_error: quarantine",
	}
	list := &cobra.Command{
		Use:   "list ID",
		Short: "List a job's parked keys: operator, subtask, key, failures, first error, parked and kept records",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var l struct{ Keys []runtime.QuarantinedKey }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/quarantine", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Keys))
			for i, k := range l.Keys {
				rows[i] = []string{k.Operator, strconv.Itoa(k.Subtask), k.Key, strconv.Itoa(k.Failures),
					strconv.FormatInt(k.Parked, 10), strconv.Itoa(k.Kept), strconv.FormatInt(k.Overflow, 10), k.FirstError}
			}
			c.rows(cmd.OutOrStdout(), []string{"OPERATOR", "SUBTASK", "KEY", "FAILURES", "PARKED", "KEPT", "OVERFLOW", "FIRST ERROR"}, rows)
			return nil
		},
	}
	release := &cobra.Command{
		Use:   "release ID KEY",
		Short: "Release a parked key: its kept records are replayed through the operator, in order",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r struct {
				Key      string
				Released []runtime.QuarantinedKey
			}
			path := "/v1/jobs/" + url.PathEscape(args[0]) + "/quarantine/" + url.PathEscape(args[1]) + "/release"
			raw, err := c.api.call(cmd.Context(), http.MethodPost, path, "", nil, &r)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			for _, k := range r.Released {
				fmt.Fprintf(cmd.OutOrStdout(), "key %q of %s[%d] released: %d records replayed\n", k.Key, k.Operator, k.Subtask, k.Kept)
			}
			return nil
		},
	}
	cmd.AddCommand(list, release)
	return cmd
}
