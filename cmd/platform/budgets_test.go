package main

import (
	"os"
	"path/filepath"
	"testing"

	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/exec"
)

// TestConfigBudgets reads every budgets.* key from a file, the environment
// and flags, in that order of precedence, and refuses values that cannot
// work, naming the key.
func TestConfigBudgets(t *testing.T) {
	d, err := loadConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	wantDefaults := exec.Budgets{
		KeyedState: exec.DefaultKeyedStateBudget, WindowContents: exec.DefaultWindowContentsBudget,
		InFlight: exec.DefaultInFlightBudget, SinkStaging: exec.DefaultSinkStagingBudget,
		ExchangeBufferSize: exchange.DefaultBufferSize, ExchangeExclusive: exchange.DefaultExclusivePerChannel,
		ExchangeFloating: exchange.DefaultFloatingPerGate,
	}
	if d.Budgets != wantDefaults || d.MemoryBudget != 0 {
		t.Errorf("defaults %+v and host.memory_budget %d, want %+v and 0", d.Budgets, d.MemoryBudget, wantDefaults)
	}
	file := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(file, []byte(`
budgets:
  keyed_state: 1000
  window_contents: 2000
  in_flight: 3000
  sink_staging: 4000
  exchange_buffer_size: 8192
  exchange_exclusive_buffers: 3
  exchange_floating_buffers: 5
host:
  memory_budget: 5000000
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PLATFORM_BUDGETS_IN_FLIGHT", "3333")
	c, err := loadConfig(t, "--config", file, "--budgets.sink_staging", "4444")
	if err != nil {
		t.Fatal(err)
	}
	want := exec.Budgets{KeyedState: 1000, WindowContents: 2000, InFlight: 3333, SinkStaging: 4444,
		ExchangeBufferSize: 8192, ExchangeExclusive: 3, ExchangeFloating: 5}
	if c.Budgets != want {
		t.Errorf("budgets %+v, want %+v", c.Budgets, want)
	}
	if c.MemoryBudget != 5000000 {
		t.Errorf("host.memory_budget %d, want 5000000", c.MemoryBudget)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--budgets.window_contents", "-1"}, "budgets.window_contents: must not be negative, got -1"},
		{[]string{"--budgets.exchange_buffer_size", "100"}, "budgets.exchange_buffer_size: must be at least 1024 bytes, got 100"},
		{[]string{"--host.memory_budget", "-1"}, "host.memory_budget: must not be negative, got -1"},
	} {
		if _, err := loadConfig(t, tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
