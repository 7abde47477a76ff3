package panto

import "reflect"

// BatchCapacity is how many events the stream's next native call may read: what a stream
// holds of native batch between two Next calls.
func BatchCapacity(s *Stream) int {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return len(s.st.evs)
}

// ResponseFormatOf is the response format Parse[T] asks for.
func ResponseFormatOf[T any]() (ResponseFormat, error) { return responseFormatOf(reflect.TypeFor[T]()) }

// StreamStepped tells whether the stream's reads step (panto_step_events) rather than block.
func StreamStepped(s *Stream) bool {
	s.st.agent.call.Lock()
	defer s.st.agent.call.Unlock()
	return s.st.mode == readStepped
}

// StreamWaits is how many waits between steps the stream has begun in the netpoller.
func StreamWaits(s *Stream) uint64 { return s.st.wait.waits.Load() }

// ReadByBlocking makes the stream read by the blocking call, as where the library refuses
// to step (not Linux on x86_64 or aarch64). Before its first Next.
func ReadByBlocking(s *Stream) {
	s.st.agent.call.Lock()
	defer s.st.agent.call.Unlock()
	s.st.mode = readBlocking
}
