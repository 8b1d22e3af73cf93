package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime"
)

// TestClusterKillNineDuringProbation: two workers on three NATS nodes run
// a keyed exactly-once job; it is upgraded to another module, and the worker
// running it is killed (kill -9) while the new version is on probation. The
// other worker takes the job over on the version before, with the new one
// recorded as rolled back, and the output is exactly once: every key's
// first record once, every key's window counting every record.
func TestClusterKillNineDuringProbation(t *testing.T) {
	tc := newTestCluster(t, 2, time.Second)
	js, closeNATS := tc.connect()
	defer closeNATS()
	upgradeStreams(t, js, 3)
	w := tc.workers[0]
	mods := map[string]string{"v1": w.upload(wasmbuild.UDF(t, "dedup-wat")).ID, "v2": w.upload(wasmbuild.UDF(t, "dedup-c")).ID}
	in := func(int) string { return "in" }
	publishAll(t, js, keyedRecords(0, upgradeKeys/2, 10, 1000), in)
	job := w.submit(fmt.Sprintf(upgradeKillJob, mods["v1"]))
	waitStreamOutputs(t, tc.alive(), js, job, "FIRSTS", upgradeKeys/2)

	owner := tc.owner(job)
	req, err := json.Marshal(runtime.UpgradeRequest{Module: mods["v2"], Probation: runtime.Probation{Records: 1 << 40, Time: "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := owner.call(http.MethodPost, "/v1/jobs/"+job+"/upgrade", "application/json", req); status != http.StatusAccepted {
		t.Fatalf("upgrade: %d %s", status, body)
	}
	owner.waitVersions(job, runtime.VersionReplaced, runtime.VersionProbation)
	publishAll(t, js, keyedRecords(0, upgradeKeys, 10, 2000), in)
	owner.kill()

	next := tc.owner(job)
	if next == owner {
		t.Fatal("the killed worker still owns the job")
	}
	if _, err := js.Publish(context.Background(), "in", []byte(`{"user":"clock","ts":36000000}`)); err != nil {
		t.Fatal(err)
	}
	waitStreamOutputs(t, next, js, job, "FIRSTS", upgradeKeys+1)
	waitStreamOutputs(t, next, js, job, "WINDOWS", upgradeKeys)
	if status, body := next.call(http.MethodPost, "/v1/jobs/"+job+"/cancel", "", nil); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, body)
	}
	info := next.job(job)
	checkOneVersion(t, info, mods["v1"])
	var rolledBack bool
	for _, v := range info.Versions {
		rolledBack = rolledBack || v.Outcome == runtime.VersionRolledBack && v.Modules[0].ID == mods["v2"] && strings.Contains(v.Reason, "during its probation")
	}
	if !rolledBack {
		t.Fatalf("versions %+v: the new version is not rolled back for the stop during its probation", info.Versions)
	}
	checkUpgradeOutputs(t, js)
}
