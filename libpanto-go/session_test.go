package panto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"panto.dev/panto"
)

func sessionConfig(dir, id string, mode panto.SessionMode) panto.Config {
	cfg := testConfig("anthropic")
	cfg.Session = &panto.Session{Dir: dir, ID: id, Mode: mode}
	return cfg
}

func sessionInfo(t *testing.T, agent *panto.Agent) panto.SessionInfo {
	t.Helper()
	info, err := agent.Session()
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	return info
}

func TestSessionIsResumedByAnotherAgent(t *testing.T) {
	dir := t.TempDir()
	loadScenario(t, scenario(textAnswer("Hi!"), textAnswer("Still here.")))
	first := newAgent(t, sessionConfig(dir, "chat", ""))
	info := sessionInfo(t, first)
	if info != (panto.SessionInfo{ID: "chat", Path: filepath.Join(dir, "chat.jsonl")}) {
		t.Fatalf("a new session's info = %+v", info)
	}
	runTurns(t, first, "Hello")
	saved := export(t, first)
	first.Close()

	again := newAgent(t, sessionConfig(dir, "chat", panto.SessionResume))
	if info := sessionInfo(t, again); !info.Resumed || info.TornBytes != 0 || info.ID != "chat" {
		t.Fatalf("the resumed session's info = %+v", info)
	}
	if got := export(t, again); !bytes.Equal(got, saved) {
		t.Fatalf("the resumed conversation differs:\n%s\n%s", saved, got)
	}
	runTurns(t, again, "Are you there?")
	if msgs := requestMessages(t, 1); len(msgs) != 3 {
		t.Fatalf("the resumed agent's request carries %d messages, want 3", len(msgs))
	}
}

func TestSessionFileHoldsNoAPIKey(t *testing.T) {
	dir := t.TempDir()
	loadScenario(t, scenario(textAnswer("Hi!")))
	agent := newAgent(t, sessionConfig(dir, "secret", ""))
	runTurns(t, agent, "Hello")
	data, err := os.ReadFile(sessionInfo(t, agent).Path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("test-key")) || !bytes.Contains(data, []byte("Hello")) {
		t.Fatalf("the session file:\n%s", data)
	}
}

func TestSessionErrorsMatchTheirKinds(t *testing.T) {
	dir := t.TempDir()
	newAgent(t, sessionConfig(dir, "held", ""))

	_, err := panto.NewAgent(sessionConfig(dir, "held", ""))
	asPantoError(t, err, panto.ErrSessionLocked)
	if !errors.Is(err, panto.ErrSession) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a locked session's error %v should match ErrSession, not fs.ErrNotExist", err)
	}

	_, err = panto.NewAgent(sessionConfig(dir, "missing", panto.SessionResume))
	asPantoError(t, err, panto.ErrNoSuchSession)
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, panto.ErrSession) {
		t.Errorf("a missing session's error %v should match fs.ErrNotExist and ErrSession", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "missing.jsonl")); !errors.Is(statErr, fs.ErrNotExist) {
		t.Errorf("resuming a missing session made its file: %v", statErr)
	}

	_, err = panto.NewAgent(sessionConfig(dir, "held", panto.SessionCreate))
	if perr := asPantoError(t, err, panto.ErrSession); perr.Message == "" {
		t.Errorf("creating an existing session: %v, want a message saying why", err)
	}

	_, err = panto.NewAgent(sessionConfig(dir, ".hidden", ""))
	if err == nil {
		t.Error("an id starting with a dot was accepted")
	}

	if _, err := newAgent(t, testConfig("anthropic")).Session(); err == nil {
		t.Error("Session of an agent without one succeeded")
	} else {
		asPantoError(t, err, panto.ErrState)
	}
}

func TestCodesMatchTheWiderErrors(t *testing.T) {
	for _, tc := range []struct {
		code            panto.Code
		session, noFile bool
	}{
		{panto.ErrSession, true, false},
		{panto.ErrSessionLocked, true, false},
		{panto.ErrNoSuchSession, true, true},
		{panto.ErrConversation, false, false},
		{panto.ErrNotFound, false, false}, // an HTTP 404 is not a missing file
	} {
		if got := errors.Is(tc.code, panto.ErrSession); got != tc.session {
			t.Errorf("errors.Is(%v, ErrSession) = %v", tc.code, got)
		}
		if got := errors.Is(tc.code, fs.ErrNotExist); got != tc.noFile {
			t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v", tc.code, got)
		}
	}
}

// A crash mid-write leaves a torn last line: the next agent cuts it off and says so.
func TestTornLastLineIsCutOff(t *testing.T) {
	dir := t.TempDir()
	loadScenario(t, scenario(textAnswer("Hi!")))
	agent := newAgent(t, sessionConfig(dir, "torn", ""))
	runTurns(t, agent, "Hello")
	saved := export(t, agent)
	path := sessionInfo(t, agent).Path
	agent.Close()
	intact, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"type":"message","message":{"role":"us`
	if err := os.WriteFile(path, append(bytes.Clone(intact), torn...), 0o600); err != nil {
		t.Fatal(err)
	}

	again := newAgent(t, sessionConfig(dir, "torn", ""))
	if info := sessionInfo(t, again); info.TornBytes != int64(len(torn)) || !info.Resumed {
		t.Fatalf("info = %+v, want %d torn bytes", info, len(torn))
	}
	if got := export(t, again); !bytes.Equal(got, saved) {
		t.Fatalf("the conversation after a torn line:\n%s\nwant\n%s", got, saved)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, intact) {
		t.Fatalf("the torn line is still in the file:\n%s", data)
	}
}

func TestForkBranchesIntoANewSession(t *testing.T) {
	dir := t.TempDir()
	loadScenario(t, scenario(textAnswer("One."), textAnswer("Two."), textAnswer("Other two.")))
	agent := newAgent(t, sessionConfig(dir, "trunk", ""))
	runTurns(t, agent, "first", "second")

	info, err := agent.Fork(2, "branch")
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if info.ID != "branch" || info.Path != filepath.Join(dir, "branch.jsonl") {
		t.Fatalf("the fork's info = %+v", info)
	}
	if n := messageCount(t, agent); n != 2 {
		t.Fatalf("after Fork(2): %d messages", n)
	}
	runTurns(t, agent, "second, differently")

	sessions, err := panto.ListSessions(dir)
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	byID := map[string]panto.SessionSummary{}
	for _, s := range sessions {
		byID[s.ID] = s
	}
	trunk, branch := byID["trunk"], byID["branch"]
	if len(sessions) != 2 || trunk.MessageCount != 4 || trunk.Parent != nil || trunk.FirstUserText != "first" {
		t.Fatalf("sessions = %+v", sessions)
	}
	if branch.MessageCount != 4 || branch.Parent == nil || *branch.Parent != (panto.SessionParent{ID: "trunk", MessageCount: 2}) ||
		branch.Created.IsZero() {
		t.Fatalf("the branch = %+v (parent %+v)", branch, branch.Parent)
	}
	if branch.Updated.Before(branch.Created) {
		t.Errorf("the branch was updated (%v) before it was created (%v)", branch.Updated, branch.Created)
	}
	// (Which comes first is not checked: both were written within the file clock's tick.)

	// The trunk is unchanged, and free: the agent let go of it.
	trunkAgent := newAgent(t, sessionConfig(dir, "trunk", panto.SessionResume))
	if msgs := conversation(t, trunkAgent); len(msgs) != 4 || msgs[3].Content[0].Text != "Two." {
		t.Fatalf("the trunk after the fork = %+v", msgs)
	}
}

func TestForkRefusalsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	loadScenario(t, scenario(textAnswer("One.")))
	agent := newAgent(t, sessionConfig(dir, "trunk", ""))
	runTurns(t, agent, "first")
	newAgent(t, sessionConfig(dir, "taken", ""))

	for name, tc := range map[string]struct {
		k    int
		id   string
		code panto.Code
	}{
		"past the end": {3, "b1", panto.ErrInvalidArgument},
		"negative":     {-1, "b2", panto.ErrInvalidArgument},
		"a taken id":   {1, "taken", panto.ErrSession},
		"a bad id":     {1, "a/b", panto.ErrSession},
	} {
		_, err := agent.Fork(tc.k, tc.id)
		if err == nil {
			t.Fatalf("Fork %s succeeded", name)
		}
		asPantoError(t, err, tc.code)
		if info := sessionInfo(t, agent); info.ID != "trunk" || messageCount(t, agent) != 2 {
			t.Fatalf("a refused Fork (%s) changed the agent: %+v", name, info)
		}
	}

	if _, err := newAgent(t, testConfig("anthropic")).Fork(0, ""); err == nil {
		t.Fatal("Fork without a session succeeded")
	} else {
		asPantoError(t, err, panto.ErrState)
	}
}

func TestListSessions(t *testing.T) {
	sessions, err := panto.ListSessions(filepath.Join(t.TempDir(), "none"))
	if err != nil || sessions == nil || len(sessions) != 0 {
		t.Fatalf("a missing folder: %v, %v; want no sessions", sessions, err)
	}

	dir := t.TempDir()
	newAgent(t, sessionConfig(dir, "empty", ""))
	if err := os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("not a session\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sessions, err = panto.ListSessions(dir)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("ListSessions = %+v, %v; want the one session", sessions, err)
	}
	if s := sessions[0]; s.ID != "empty" || s.MessageCount != 0 || s.FirstUserText != "" ||
		s.Path != filepath.Join(dir, "empty.jsonl") || s.Cwd == "" {
		t.Fatalf("the session = %+v", s)
	}
}

func TestNewSessionGetsAnID(t *testing.T) {
	dir := t.TempDir()
	agent := newAgent(t, sessionConfig(dir, "", ""))
	info := sessionInfo(t, agent)
	if len(info.ID) != len("20260101T000000Z-0123abcd") || !strings.HasSuffix(info.Path, info.ID+".jsonl") {
		t.Fatalf("a made id: %+v", info)
	}
}

func TestSessionAndCompactionConfigJSON(t *testing.T) {
	for _, tc := range []struct {
		cfg  any
		want string
	}{
		{panto.Config{Provider: "anthropic", Model: "m", Session: &panto.Session{}, Compaction: &panto.Compaction{}},
			`{"provider":"anthropic","model":"m","compaction":{"enabled":true},"session":{}}`},
		{panto.Config{Session: &panto.Session{Dir: "/d", ID: "s", Mode: panto.SessionResume, NoFsync: true},
			Compaction: &panto.Compaction{Disabled: true, ContextWindow: 1000, ReserveTokens: 10, KeepRecentTokens: 20, Prompt: "p"}},
			`{"session":{"dir":"/d","id":"s","mode":"resume","fsync":false},
			  "compaction":{"enabled":false,"context_window":1000,"reserve_tokens":10,"keep_recent_tokens":20,"prompt":"p"}}`},
		{panto.ConfigPatch{Compaction: &panto.Compaction{KeepRecentTokens: 5}},
			`{"compaction":{"enabled":true,"keep_recent_tokens":5}}`},
	} {
		b, err := json.Marshal(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, b, tc.want)
	}
}

// Without a Dir, sessions live in $XDG_DATA_HOME/panto/sessions, which ListSessions("")
// lists.
func TestDefaultSessionFolder(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	agent := newAgent(t, sessionConfig("", "here", ""))
	want := filepath.Join(data, "panto", "sessions", "here.jsonl")
	if info := sessionInfo(t, agent); info.Path != want {
		t.Fatalf("the session's path = %q, want %q", info.Path, want)
	}
	sessions, err := panto.ListSessions("")
	if err != nil || len(sessions) != 1 || sessions[0].Path != want {
		t.Fatalf("ListSessions(\"\") = %+v, %v", sessions, err)
	}
}
