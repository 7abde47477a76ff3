package panto

/*
#include "panto.h"

// PANTO_MCP_STATUS_INIT as a function, so the binding follows the header's initialiser.
static PantoMcpStatus panto_go_mcp_status_init(void) {
    PantoMcpStatus s = PANTO_MCP_STATUS_INIT;
    return s;
}
*/
import "C"

// MCPState is where an MCP server stands (MCPServerStatus.State).
type MCPState string

const (
	// MCPNotStarted: no turn has needed it yet (servers start at a turn).
	MCPNotStarted MCPState = "not_started"
	// MCPReady: its handshake made and its tools listed.
	MCPReady MCPState = "ready"
	// MCPFailed: it could not start, or broke during a call (Error says why); it starts
	// again at the next turn.
	MCPFailed MCPState = "failed"
	// MCPClosed: its process exited while no request waited; it starts again at the next turn.
	MCPClosed MCPState = "closed"
)

var mcpStates = map[C.int32_t]MCPState{
	C.PANTO_MCP_NOT_STARTED: MCPNotStarted, C.PANTO_MCP_READY: MCPReady,
	C.PANTO_MCP_FAILED: MCPFailed, C.PANTO_MCP_CLOSED: MCPClosed,
}

// MCPServerStatus is one of the agent's MCP servers as Agent.MCPStatus gives it.
type MCPServerStatus struct {
	Name      string   // its key in Config.MCPServers: its tools' prefix
	Transport string   // "stdio" or "http"
	State     MCPState //
	// From its last initialize answer ("" before it).
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	ToolCount       int    // the tools of it the agent offers (after its allow-list)
	Error           string // MCPFailed: why, as the turn or the call was told
	StderrTail      string // what it wrote to stderr last (over HTTP: why its last exchange failed)
}

// MCPStatus gives each MCP server of the agent (Config.MCPServers), in name order. Call it
// between turns. It returns ErrClosed after Close.
func (a *Agent) MCPStatus() ([]MCPServerStatus, error) {
	var out []MCPServerStatus
	err := a.c.do(func(native *C.PantoAgent) C.int {
		var count C.size_t
		if rc := C.panto_agent_mcp_count(native, &count); rc < 0 {
			return rc
		}
		out = make([]MCPServerStatus, 0, int(count))
		for i := C.size_t(0); i < count; i++ {
			st := C.panto_go_mcp_status_init()
			if rc := C.panto_agent_mcp_status(native, i, &st); rc < 0 {
				return rc
			}
			transport := "stdio"
			if st.transport == C.PANTO_MCP_HTTP {
				transport = "http"
			}
			out = append(out, MCPServerStatus{
				Name: goString(st.name), Transport: transport, State: mcpStates[st.state],
				ProtocolVersion: goString(st.protocol_version), ServerName: goString(st.server_name),
				ServerVersion: goString(st.server_version), ToolCount: int(st.tool_count),
				Error: goString(st.error), StderrTail: goString(st.stderr_tail),
			})
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
