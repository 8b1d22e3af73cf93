package runtime

import "testing"

// The version history keeps the newest maxVersions versions, numbered on.
func TestVersionHistoryIsBounded(t *testing.T) {
	tests := []struct {
		switches  int
		wantLen   int
		wantFirst int
		wantNext  int
	}{
		{0, 0, 0, 1},
		{1, 1, 1, 2},
		{maxVersions, maxVersions, 1, maxVersions + 1},
		{maxVersions + 7, maxVersions, 8, maxVersions + 8},
	}
	for _, tc := range tests {
		var versions []VersionInfo
		for range tc.switches {
			versions = appendVersion(versions, VersionInfo{Version: nextVersion(versions)})
		}
		if len(versions) != tc.wantLen || nextVersion(versions) != tc.wantNext || len(versions) > 0 && versions[0].Version != tc.wantFirst {
			t.Errorf("%d switches: %d versions from %v, next %d; want %d from %d, next %d",
				tc.switches, len(versions), versions[:min(1, len(versions))], nextVersion(versions), tc.wantLen, tc.wantFirst, tc.wantNext)
		}
	}
}
