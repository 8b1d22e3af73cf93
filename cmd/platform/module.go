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
	var name string
	push := &cobra.Command{
		Use:   "push FILE.wasm",
		Short: "Upload a module; print its id (its content hash), its version with --name, and its functions",
		Long: "push uploads a module, whose id is its content hash. With --name N it is also the next\n" +
			"version of the name N (N@1, N@2, ...), which job specs may name instead of the id:\n" +
			"module: N (the latest version at submission) or module: N@2.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			path := "/v1/modules"
			if cmd.Flags().Changed("name") {
				path += "?" + url.Values{"name": {name}}.Encode()
			}
			var m runtime.ModuleInfo
			raw, err := c.api.call(cmd.Context(), http.MethodPost, path, "application/wasm", wasm, &m)
			if err != nil {
				return err
			}
			c.printModule(cmd.OutOrStdout(), raw, m)
			return nil
		},
	}
	push.Flags().StringVar(&name, "name", "", "make the module the next version of this name ([a-z0-9][a-z0-9_-]{0,62})")
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
				rows[i] = []string{m.ID, strings.Join(m.Names, ","), strconv.Itoa(m.Size), functionList(m), strings.Join(m.UsedBy, ",")}
			}
			c.rows(cmd.OutOrStdout(), []string{"ID", "NAMES", "SIZE", "FUNCTIONS", "USED BY"}, rows)
			return nil
		},
	}
	get := &cobra.Command{
		Use:   "get ID|NAME|NAME@VERSION",
		Short: "Describe a module: names, size, functions, states, the jobs using it",
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
		Use:   "rm ID|NAME@VERSION",
		Short: "Delete a module no job uses, with the names' versions naming it",
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
		fields(w, "id", m.ID, "version", m.Version, "names", strings.Join(m.Names, ", "), "size", strconv.Itoa(m.Size), "uploaded", stamp(m.Uploaded),
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
