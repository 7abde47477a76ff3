package panto

import "testing"

// A batch doubles while native calls fill it, up to maxBatch, and halves, down to
// minBatch, while they come back at most a quarter full; in between it keeps its size.
func TestBatchFollowsWhatTheCallsReturn(t *testing.T) {
	s := &streamCore{}
	s.resizeBatch(minBatch)
	var sizes []int
	for range 6 {
		s.adaptBatch(len(s.evs)) // full
		sizes = append(sizes, len(s.evs))
	}
	s.adaptBatch(len(s.evs) / 2) // half full
	sizes = append(sizes, len(s.evs))
	for range 6 {
		s.adaptBatch(1)
		sizes = append(sizes, len(s.evs))
	}
	want := []int{8, 16, 32, 64, 64, 64, 64, 32, 16, 8, 4, 4, 4}
	if len(sizes) != len(want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("sizes %v, want %v", sizes, want)
		}
	}
	if minBatch != 4 || maxBatch != 64 {
		t.Fatalf("minBatch %d, maxBatch %d: update want", minBatch, maxBatch)
	}
}
