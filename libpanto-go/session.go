package panto

/*
#include "panto.h"

// PANTO_SESSION_INFO_INIT and PANTO_ERROR_INIT as functions, so the binding follows the
// header's initialisers.
static PantoSessionInfo panto_go_session_info_init(void) {
    PantoSessionInfo i = PANTO_SESSION_INFO_INIT;
    return i;
}
static int panto_go_session_list_error(const PantoSessionList *list, PantoError *out) {
    PantoError e = PANTO_ERROR_INIT;
    int rc = panto_session_list_error(list, &e);
    *out = e;
    return rc;
}
*/
import "C"

import (
	"encoding/json"
	"time"
)

// SessionMode says what opening a session expects to find.
type SessionMode string

const (
	// SessionOpen resumes the session if it exists, else creates it (the default).
	SessionOpen SessionMode = "open"
	// SessionResume resumes the session; one that does not exist gives an error matching
	// ErrNoSuchSession (and fs.ErrNotExist).
	SessionResume SessionMode = "resume"
	// SessionCreate creates the session; one that exists gives an error matching ErrSession.
	SessionCreate SessionMode = "create"
)

// Session keeps an agent's conversation on disk (Config.Session), so that it outlives the
// process: one append-only JSONL file per session, Dir/ID.jsonl. The agent writes an entry
// for each change of the conversation (a user turn, an assistant message as it ends, a round
// of tool results, a canceled turn's partial message, a Truncate, an Import, a compaction,
// whose summarized messages stay in the file) and for each change of provider, model,
// system prompt, thinking or max tokens — never an API key or a base URL. Each entry is
// written at once and synced to disk (unless NoFsync) before the call that made it returns:
// a process killed at any instant loses at most the message being streamed.
//
// An agent made with a session resumes its conversation (a torn last line, left by a crash
// mid-write, is cut off: SessionInfo.TornBytes) and holds the session's lock while it
// lives: a second agent on the same session, in this process or another, fails with
// ErrSessionLocked. A write that fails fails the call that made it with ErrSession.
//
//	agent, err := panto.NewAgent(panto.Config{Provider: "anthropic", Model: "claude-sonnet-4-5",
//		Session: &panto.Session{ID: "refactor-parser"}})
type Session struct {
	// Dir is the folder of the session files, made if missing. "": $XDG_DATA_HOME/panto/sessions
	// (~/.local/share/panto/sessions).
	Dir string
	// ID names the session: 1 to 128 of [A-Za-z0-9._-], not starting with ".". "": a new
	// one, "YYYYMMDDTHHMMSSZ-" and 8 random hex digits (Agent.Session tells it).
	ID      string
	Mode    SessionMode // "": SessionOpen
	NoFsync bool        // write entries without syncing them to disk (faster, not durable)
}

// MarshalJSON writes the object panto_agent_new reads ({"dir", "id", "mode", "fsync"}),
// leaving out the fields at their defaults.
func (s Session) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if s.Dir != "" {
		m["dir"] = s.Dir
	}
	if s.ID != "" {
		m["id"] = s.ID
	}
	if s.Mode != "" {
		m["mode"] = s.Mode
	}
	if s.NoFsync {
		m["fsync"] = false
	}
	return json.Marshal(m)
}

// SessionInfo is the session an agent writes to.
type SessionInfo struct {
	ID        string
	Path      string // the session's file
	Resumed   bool   // the session existed when the agent opened it
	TornBytes int64  // the bytes of a torn last line cut off when it was opened; mostly 0
}

// Session tells which session the agent writes to. An agent made without one gives an
// *Error matching ErrState.
func (a *Agent) Session() (SessionInfo, error) {
	var info SessionInfo
	err := a.c.do(func(native *C.PantoAgent) C.int { return sessionInfo(native, &info) })
	return info, err
}

// sessionInfo copies the agent's session info into out. The agent's call lock must be held.
func sessionInfo(native *C.PantoAgent, out *SessionInfo) C.int {
	ci := C.panto_go_session_info_init()
	rc := C.panto_agent_session(native, &ci)
	if rc >= 0 {
		*out = SessionInfo{ID: goString(ci.id), Path: goString(ci.path),
			Resumed: ci.resumed != 0, TornBytes: int64(ci.torn_bytes)}
	}
	return rc
}

// Fork branches the session at messageCount: a new session (newID, or a new id when "")
// whose file names its parent and holds the first messageCount messages. The agent goes on
// in it, its conversation truncated to messageCount, and lets go of the old session, which
// is unchanged (another agent may resume it). It returns the new session's info.
//
// It fails, changing nothing, as Truncate does (ErrInvalidArgument, ErrConversation,
// ErrBusy), with ErrSession when newID is taken or invalid or a write failed, and with
// ErrState when the agent has no session.
func (a *Agent) Fork(messageCount int, newID string) (SessionInfo, error) {
	if messageCount < 0 {
		return SessionInfo{}, &Error{Code: ErrInvalidArgument, Message: "a fork keeps a negative number of messages"}
	}
	var info SessionInfo
	err := a.c.do(func(native *C.PantoAgent) C.int {
		if rc := C.panto_agent_fork_session(native, C.size_t(messageCount), pantoString(newID)); rc < 0 {
			return rc
		}
		return sessionInfo(native, &info)
	})
	return info, err
}

// SessionSummary describes a session file of a folder (ListSessions).
type SessionSummary struct {
	ID            string         `json:"id"`
	Path          string         `json:"path"`
	Created       time.Time      `json:"created"`
	Updated       time.Time      `json:"updated"` // its last entry
	MessageCount  int            `json:"message_count"`
	FirstUserText string         `json:"first_user_text"` // the first text of the first user message; "" if none
	Cwd           string         `json:"cwd"`             // the working folder of the process that created it
	Parent        *SessionParent `json:"parent"`          // the session it was forked from; nil if none
}

// SessionParent is the session a fork branched from, and where.
type SessionParent struct {
	ID           string `json:"id"`
	MessageCount int    `json:"message_count"`
}

// ListSessions lists the sessions of dir ("": the default folder, see Session.Dir), newest
// first. A missing folder has none; a file that is not a session is left out; a session an
// agent holds is listed. A folder that cannot be read gives an *Error matching ErrSession.
func ListSessions(dir string) ([]SessionSummary, error) {
	if err := abiCheck(); err != nil {
		return nil, err
	}
	cdir := C.PantoString{}
	if dir != "" {
		cdir = pantoString(dir)
	}
	var list *C.PantoSessionList
	rc := C.panto_session_list(cdir, &list)
	defer C.panto_session_list_free(list)
	if rc < 0 {
		if list == nil {
			return nil, &Error{Code: Code(rc)}
		}
		var e C.PantoError
		C.panto_go_session_list_error(list, &e)
		return nil, fromNative(rc, &e)
	}
	var js C.PantoString
	if rc := C.panto_session_list_json(list, &js); rc < 0 {
		return nil, &Error{Code: Code(rc)}
	}
	sessions := []SessionSummary{}
	if err := json.Unmarshal([]byte(goString(js)), &sessions); err != nil {
		return nil, err
	}
	return sessions, nil
}
