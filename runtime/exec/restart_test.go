package exec

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// failure is one failed run of a strategy test: when the run started and
// when it failed, in seconds from the test's epoch.
type failure struct{ started, failed float64 }

func TestRestartStrategies(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }
	// runs fails each run one second after it started, each run starting
	// when the previous one's delay ended (approximated by gap seconds).
	runs := func(n int, gap float64) []failure {
		var out []failure
		for i := range n {
			s := float64(i) * gap
			out = append(out, failure{s, s + 1})
		}
		return out
	}
	sec := time.Second
	tests := []struct {
		name     string
		policy   RestartPolicy
		failures []failure
		random   float64
		want     []restartDecision
	}{
		{"none fails at once", RestartPolicy{strategy: restartNone}, runs(1, 10), 0, []restartDecision{{}}},
		{"fixed delay bounded over the job's life", RestartPolicy{strategy: restartFixedDelay, maxAttempts: 2, delay: sec},
			[]failure{{0, 1}, {2, 10_000}, {10_001, 20_000}},
			0, []restartDecision{{true, sec, 1}, {true, sec, 2}, {}}},
		{"fixed delay unbounded", RestartPolicy{strategy: restartFixedDelay, delay: 3 * sec}, runs(4, 10), 0,
			[]restartDecision{{true, 3 * sec, 1}, {true, 3 * sec, 2}, {true, 3 * sec, 3}, {true, 3 * sec, 4}}},
		{"exponential doubles up to max_delay, then gives up",
			RestartPolicy{strategy: RestartExponential, maxAttempts: 5, delay: sec, maxDelay: 5 * sec, multiplier: 2, resetAfter: time.Hour},
			runs(6, 10), 0,
			[]restartDecision{{true, sec, 1}, {true, 2 * sec, 2}, {true, 4 * sec, 3}, {true, 5 * sec, 4}, {true, 5 * sec, 5}, {}}},
		{"exponential with multiplier 1.5",
			RestartPolicy{strategy: RestartExponential, delay: 2 * sec, maxDelay: time.Minute, multiplier: 1.5},
			runs(3, 10), 0,
			[]restartDecision{{true, 2 * sec, 1}, {true, 3 * sec, 2}, {true, 4500 * time.Millisecond, 3}}},
		{"exponential resets after a stable run",
			RestartPolicy{strategy: RestartExponential, maxAttempts: 2, delay: sec, maxDelay: time.Minute, multiplier: 2, resetAfter: 100 * sec},
			// Two quick failures, then a run that holds 100s: the
			// attempts and the delay start again, so two more restarts.
			[]failure{{0, 1}, {2, 3}, {5, 105}, {106, 107}, {109, 110}},
			0, []restartDecision{{true, sec, 1}, {true, 2 * sec, 2}, {true, sec, 1}, {true, 2 * sec, 2}, {}}},
		{"exponential run just short of reset_after does not reset",
			RestartPolicy{strategy: RestartExponential, maxAttempts: 2, delay: sec, maxDelay: time.Minute, multiplier: 2, resetAfter: 100 * sec},
			[]failure{{0, 1}, {2, 3}, {5, 104.999}},
			0, []restartDecision{{true, sec, 1}, {true, 2 * sec, 2}, {}}},
		{"exponential without reset_after never resets",
			RestartPolicy{strategy: RestartExponential, maxAttempts: 1, delay: sec, maxDelay: time.Minute, multiplier: 2},
			[]failure{{0, 1}, {2, 100_000}},
			0, []restartDecision{{true, sec, 1}, {}}},
		{"jitter spreads the delay down",
			RestartPolicy{strategy: RestartExponential, delay: 10 * sec, maxDelay: time.Minute, multiplier: 2, jitter: 0.5},
			runs(2, 100), 0,
			[]restartDecision{{true, 5 * sec, 1}, {true, 10 * sec, 2}}},
		{"jitter spreads the delay up, within max_delay",
			RestartPolicy{strategy: RestartExponential, delay: 40 * sec, maxDelay: 50 * sec, multiplier: 2, jitter: 0.5},
			runs(2, 100), 0.75,
			[]restartDecision{{true, 50 * sec, 1}, {true, 50 * sec, 2}}},
		{"failure rate fails on one failure more than allowed in the interval",
			RestartPolicy{strategy: restartFailureRate, maxFailures: 3, interval: time.Minute, delay: sec},
			runs(4, 10), 0,
			[]restartDecision{{true, sec, 1}, {true, sec, 2}, {true, sec, 3}, {}}},
		{"failure rate: failures that left the interval do not count",
			RestartPolicy{strategy: restartFailureRate, maxFailures: 2, interval: time.Minute, delay: sec},
			// Failures at 1, 31, 61 (the one at 1 is out: 61-1 = 60s),
			// 91 (31 is out), then 92: 61, 91, 92 are three in a minute.
			[]failure{{0, 1}, {30, 31}, {60, 61}, {90, 91}, {91.5, 92}},
			0, []restartDecision{{true, sec, 1}, {true, sec, 2}, {true, sec, 3}, {true, sec, 4}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRestarts(tt.policy)
			r.random = func() float64 { return tt.random }
			var got []restartDecision
			for _, f := range tt.failures {
				got = append(got, r.failed(at(f.started), at(f.failed)))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decisions\ngot  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestFailureRateKeepsBoundedHistory: a strategy that restarts forever
// keeps no more failure times than it may count.
func TestFailureRateKeepsBoundedHistory(t *testing.T) {
	r := newRestarts(RestartPolicy{strategy: restartFailureRate, maxFailures: 3, interval: time.Second, delay: 0})
	now := time.Unix(0, 0)
	for i := range 1000 {
		now = now.Add(400 * time.Millisecond)
		if d := r.failed(now, now); !d.Restart {
			t.Fatalf("failure %d: no restart at 2.5 failures a second, 3 allowed", i)
		}
		if len(r.failures) > 3 {
			t.Fatalf("failure %d: %d failure times kept", i, len(r.failures))
		}
	}
}

func TestExceptionHistoryKeepsTheLast(t *testing.T) {
	tests := []struct{ added, kept, newest int }{{0, 0, -1}, {1, 1, 0}, {MaxExceptions, MaxExceptions, MaxExceptions - 1}, {MaxExceptions + 5, MaxExceptions, MaxExceptions + 4}, {3*MaxExceptions + 1, MaxExceptions, 3 * MaxExceptions}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.added), func(t *testing.T) {
			var h ExceptionHistory
			for i := range tt.added {
				h.add(newException(time.Unix(int64(i), 0), &TaskFailure{Task: "map", Subtask: i % 2, Err: fmt.Errorf("trap %d", i)}, ActionRestart, i+1, time.Second))
			}
			list := h.List()
			if len(list) != tt.kept {
				t.Fatalf("kept %d, want %d", len(list), tt.kept)
			}
			for k, x := range list {
				i := tt.newest - k
				want := Exception{Time: time.Unix(int64(i), 0).UTC(), Task: "map", Subtask: &[]int{i % 2}[0], Error: fmt.Sprintf("task map: trap %d", i), Action: ActionRestart, Attempt: i + 1, DelayMS: 1000}
				if !reflect.DeepEqual(x, want) {
					t.Fatalf("entry %d: got %+v, want %+v", k, x, want)
				}
			}
		})
	}
}

func TestExceptionWithoutTask(t *testing.T) {
	x := newException(time.Unix(5, 0), errors.New("restore: no checkpoint"), ActionFail, 0, 0)
	if x.Task != "" || x.Subtask != nil || x.Error != "restore: no checkpoint" || x.Action != ActionFail {
		t.Errorf("got %+v", x)
	}
}
