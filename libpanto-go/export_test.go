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
