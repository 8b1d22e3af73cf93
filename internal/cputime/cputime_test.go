package cputime

import "testing"

func TestProcessGrowsWithWork(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Skip("CPU time is not measured on this system")
	}
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x ^= i * 31
	}
	if after := Process(); after <= before {
		t.Fatalf("CPU time went from %d to %d over a busy loop (%d)", before, after, x)
	}
}

func TestPeakRSSHoldsWhatWasTouched(t *testing.T) {
	if PeakRSS() <= 0 {
		t.Skip("peak RSS is not measured on this system")
	}
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if got := PeakRSS(); got < int64(len(b)) {
		t.Fatalf("peak RSS %d after touching %d bytes", got, len(b))
	}
}
