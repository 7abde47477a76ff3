// panto.h compiles as C++20 with every initialiser macro and inline function used: the
// designated initialisers of the *_INIT macros are C++20 (and C99). Compiled, not run, by
// `make test-c`: g++ -std=c++20 -Wall -Werror -pedantic -fsyntax-only.
#include "panto.h"

int use_every_macro(PantoAgent *agent, PantoStream *stream) {
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoEvent batch[2] = {PANTO_EVENT_INIT, PANTO_EVENT_INIT};
    PantoError err = PANTO_ERROR_INIT;
    PantoInput input = PANTO_INPUT_INIT;
    PantoConnections connections = PANTO_CONNECTIONS_INIT;
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    PantoString text = panto_cstr("Hello");
    input.text = text;
    result.call_id = panto_cstr("toolu_1");
    result.content = panto_cstr(nullptr);
    int rc = panto_agent_connections(agent, &connections) + panto_stream_error(stream, &err);
    rc += panto_next_event(stream, &ev) + panto_stream_submit_tool_result(stream, &result);
    size_t n = 0;
    rc += panto_next_events(stream, batch, 2, &n, nullptr);
    PantoStream *next = nullptr;
    rc += panto_agent_run(agent, &input, &next);
    return rc + static_cast<int>(PANTO_TOOL_FORMAT_OPENAI);
}
