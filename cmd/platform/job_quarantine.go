package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

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
		Short: "List a job's parked keys: operator, subtask, key (as text, quoted when it is not UTF-8, and in base64url), failures, first error, parked and kept records",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var l struct{ Keys []runtime.QuarantinedKey }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/jobs/"+url.PathEscape(args[0])+"/quarantine", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Keys))
			for i, k := range l.Keys {
				rows[i] = []string{k.Operator, strconv.Itoa(k.Subtask), keyText(keyBytes(k)), k.KeyBase64, strconv.Itoa(k.Failures),
					strconv.FormatInt(k.Parked, 10), strconv.Itoa(k.Kept), strconv.FormatInt(k.Overflow, 10), k.FirstError}
			}
			c.rows(cmd.OutOrStdout(), []string{"OPERATOR", "SUBTASK", "KEY", "BASE64URL", "FAILURES", "PARKED", "KEPT", "OVERFLOW", "FIRST ERROR"}, rows)
			return nil
		},
	}
	var inBase64 bool
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
			if inBase64 {
				path += "?key_encoding=base64url"
			}
			raw, err := c.api.call(cmd.Context(), http.MethodPost, path, "", nil, &r)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			for _, k := range r.Released {
				fmt.Fprintf(cmd.OutOrStdout(), "key %q of %s[%d] released: %d records replayed\n", keyBytes(k), k.Operator, k.Subtask, k.Kept)
			}
			return nil
		},
	}
	release.Flags().BoolVar(&inBase64, "base64", false, "KEY is in base64url, as the list's BASE64URL column gives it: for a key that is not UTF-8 text")
	cmd.AddCommand(list, release)
	return cmd
}

// keyText is a parked key as the list shows it: as it is when it is
// UTF-8 text, else quoted with Go escapes (its BASE64URL addresses it).
func keyText(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	return strconv.Quote(key)
}

// keyBytes is a parked key's bytes: its base64url decoded, since JSON
// cannot carry a key that is not UTF-8 in its text.
func keyBytes(k runtime.QuarantinedKey) string {
	raw, err := base64.RawURLEncoding.DecodeString(k.KeyBase64)
	if err != nil {
		return k.Key
	}
	return string(raw)
}
