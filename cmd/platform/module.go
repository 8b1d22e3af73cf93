package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wasmstream.io/platform/runtime"
)

func newModuleCommand() *cobra.Command {
	cmd, c := clientGroup("module", "Push, list, describe and delete UDF modules on a platform")
	push := &cobra.Command{
		Use:   "push FILE.wasm",
		Short: "Upload a module; print its id (its content hash) and functions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			var m runtime.ModuleInfo
			raw, err := c.api.call(cmd.Context(), http.MethodPost, "/v1/modules", "application/wasm", wasm, &m)
			if err != nil {
				return err
			}
			c.printModule(cmd.OutOrStdout(), raw, m)
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the modules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var l struct{ Modules []runtime.ModuleInfo }
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/modules", "", nil, &l)
			if err != nil || c.printed(cmd.OutOrStdout(), raw) {
				return err
			}
			rows := make([][]string, len(l.Modules))
			for i, m := range l.Modules {
				rows[i] = []string{m.ID, strconv.Itoa(m.Size), functionList(m), strings.Join(m.UsedBy, ",")}
			}
			c.rows(cmd.OutOrStdout(), []string{"ID", "SIZE", "FUNCTIONS", "USED BY"}, rows)
			return nil
		},
	}
	get := &cobra.Command{
		Use:   "get ID",
		Short: "Describe a module: size, functions, states, the jobs using it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m runtime.ModuleInfo
			raw, err := c.api.call(cmd.Context(), http.MethodGet, "/v1/modules/"+url.PathEscape(args[0]), "", nil, &m)
			if err != nil {
				return err
			}
			c.printModule(cmd.OutOrStdout(), raw, m)
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a module no job uses",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := c.api.call(cmd.Context(), http.MethodDelete, "/v1/modules/"+url.PathEscape(args[0]), "", nil, nil); err != nil {
				return err
			}
			if c.format == "table" {
				fmt.Fprintf(cmd.OutOrStdout(), "deleted module %s\n", args[0])
			}
			return nil
		},
	}
	cmd.AddCommand(push, list, get, rm)
	return cmd
}

// rows prints a table, or only its first column for -o id.
func (c *client) rows(w io.Writer, header []string, rows [][]string) {
	if c.format == "id" {
		for _, r := range rows {
			fmt.Fprintln(w, r[0])
		}
		return
	}
	table(w, header, rows)
}

func (c *client) printModule(w io.Writer, raw []byte, m runtime.ModuleInfo) {
	switch {
	case c.printed(w, raw):
	case c.format == "id":
		fmt.Fprintln(w, m.ID)
	default:
		states := make([]string, len(m.States))
		for i, s := range m.States {
			states[i] = s.Name + " (" + s.Kind + ")"
		}
		fields(w, "id", m.ID, "size", strconv.Itoa(m.Size), "uploaded", stamp(m.Uploaded),
			"functions", functionList(m), "states", strings.Join(states, ", "), "used by", strings.Join(m.UsedBy, ", "))
	}
}

// functionList is "name (kind), ..." for a module's functions.
func functionList(m runtime.ModuleInfo) string {
	fns := make([]string, len(m.Functions))
	for i, f := range m.Functions {
		fns[i] = f.Name + " (" + string(f.Kind) + ")"
	}
	return strings.Join(fns, ", ")
}
