package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// apiClient calls the platform's HTTP API.
type apiClient struct {
	base  string
	token string
	http  http.Client
}

// client is what the module and job commands share: the API client and how
// to print answers.
type client struct {
	api apiClient
	// format is table (for people), json (the API's answer) or id (only
	// the ids, for scripts).
	format string
}

// clientGroup makes a command group whose subcommands call the API: it
// declares --server, --token, --config and --output for all of them and
// resolves them (flags > PLATFORM_* env > file > defaults) before any runs.
func clientGroup(use, short string) (*cobra.Command, *client) {
	c := &client{}
	cmd := &cobra.Command{Use: use, Short: short}
	f := cmd.PersistentFlags()
	f.String("server", "http://127.0.0.1:8080", "the platform's API (env PLATFORM_SERVER, config key server)")
	f.String("token", "", "bearer token for the API (env PLATFORM_API_TOKEN, config key api.token)")
	f.String("config", "", "configuration file (YAML, JSON or TOML) with the keys server and api.token")
	f.StringVarP(&c.format, "output", "o", "table", "output: table, json (the API's answer) or id (only the ids)")
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		v := viper.New()
		v.SetEnvPrefix("PLATFORM")
		v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
		v.AutomaticEnv()
		if err := v.BindPFlag("server", f.Lookup("server")); err != nil {
			return err
		}
		if err := v.BindPFlag("api.token", f.Lookup("token")); err != nil {
			return err
		}
		if file, _ := f.GetString("config"); file != "" {
			v.SetConfigFile(file)
			if err := v.ReadInConfig(); err != nil {
				return fmt.Errorf("config file %s: %w", file, err)
			}
		}
		switch c.format {
		case "table", "json", "id":
		default:
			return fmt.Errorf("--output: %q is not table, json or id", c.format)
		}
		c.api.base = strings.TrimRight(v.GetString("server"), "/")
		c.api.token = v.GetString("api.token")
		return nil
	}
	return cmd, c
}

// apiError is an error answer of the API: its problem details when it sent
// them, else the status and body.
type apiError struct {
	Status   int    `json:"status"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	Problems []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
		Line    int    `json:"line"`
	} `json:"problems"`
}

// Error is "Title (status): detail", or the title followed by one line per
// listed problem.
func (e *apiError) Error() string {
	if len(e.Problems) == 0 {
		return fmt.Sprintf("%s (%d): %s", e.Title, e.Status, e.Detail)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d):", e.Title, e.Status)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		if p.Field != "" {
			b.WriteString(p.Field + ": ")
		}
		b.WriteString(p.Message)
		if p.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", p.Line)
		}
	}
	return b.String()
}

// call makes a request and returns the answer's body; an answer of 300 or
// more is an *apiError. When dst is not nil the body is decoded into it.
func (a *apiClient) call(ctx context.Context, method, path, contentType string, body []byte, dst any) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("--server %q: %w", a.base, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach the platform at %s (set --server or PLATFORM_SERVER): %w", a.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &apiError{}
		if json.Unmarshal(data, e) != nil || e.Title == "" {
			e = &apiError{Title: http.StatusText(resp.StatusCode), Detail: strings.TrimSpace(string(data))}
		}
		e.Status = resp.StatusCode
		return nil, e
	}
	if dst != nil {
		if err := json.Unmarshal(data, dst); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not what this client expects: %w", method, path, err)
		}
	}
	return data, nil
}

// printed writes the API's answer raw for -o json and returns true, so that
// the caller prints its own form otherwise.
func (c *client) printed(w io.Writer, raw []byte) bool {
	if c.format != "json" {
		return false
	}
	_, _ = w.Write(raw)
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		fmt.Fprintln(w)
	}
	return true
}

// table writes rows aligned in columns under a header, without trailing
// blanks where the last cells are empty.
func table(w io.Writer, header []string, rows [][]string) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
}

// fields writes name-value pairs aligned, leaving out empty values.
func fields(w io.Writer, pairs ...string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", pairs[i], pairs[i+1])
		}
	}
	_ = tw.Flush()
}

// stamp formats a time for tables: UTC to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// interruptible is the command's context, cancelled on Ctrl-C.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt)
}
