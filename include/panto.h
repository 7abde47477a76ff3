/*
 * panto.h — the C ABI of panto, an LLM-agent runtime.
 *
 * Shape of the API (sqlite's step model):
 *
 *     PantoAgent *agent;
 *     if (panto_agent_new(panto_cstr(config_json), &agent) < 0) { ...; panto_agent_free(agent); }
 *     PantoInput input = PANTO_INPUT_INIT;
 *     input.text = panto_cstr("Hello");
 *     PantoStream *stream;
 *     panto_agent_run(agent, &input, &stream);
 *     PantoEvent ev = PANTO_EVENT_INIT;
 *     int rc;
 *     while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) { ...use ev... }
 *     if (rc < 0) { PantoError err = PANTO_ERROR_INIT; panto_stream_error(stream, &err); ... }
 *     panto_stream_free(stream);
 *     panto_agent_free(agent);
 *
 * Conventions:
 *  - Functions return an int status: PANTO_OK (0), PANTO_EVENT or PANTO_DONE (positive),
 *    or a negative PANTO_ERR_* code.
 *  - Strings are PantoString {ptr, len}, UTF-8, in both directions; they are NOT
 *    NUL-terminated unless said, and a NUL byte inside one is a character like any other.
 *    Text the model reads (a run's text, a tool result) is taken as it is, except that
 *    invalid UTF-8 sequences are replaced by U+FFFD; identifiers and JSON (config, tool specs,
 *    call ids) must be valid UTF-8, or the call fails with detail. panto_cstr() makes a
 *    PantoString of a NUL-terminated string.
 *  - Borrowed data states how long it lives. Event data lives until the next call on the
 *    same stream; error detail lives until the stream is freed.
 *  - Every object returned through an out-pointer belongs to the caller and is freed by its
 *    own _free function, which accepts NULL.
 *  - Error detail lives on the handle, never in thread-local state: a call on an agent that
 *    fails leaves it on the agent (panto_agent_error), a call on a stream on the stream
 *    (panto_stream_error), a call on a tool set on the tool set (panto_tools_error).
 *  - Growable structs carry `size` first; initialise them with their *_INIT macro (a
 *    designated initializer, `{.size = sizeof(T)}`: C99, and C++20; g++ -Wextra warns that it
 *    leaves fields out, which are zero). The library reads and
 *    writes only the fields that fit in `size`, so callers built against an older header keep
 *    working, and fields are only ever appended.
 *  - An agent and its streams are not thread-safe: use one from one thread at a time. Two
 *    calls are the exceptions: panto_stream_cancel and panto_stream_free may be called from
 *    any thread, also while another thread is blocked in panto_next_event(s) of the stream.
 *  - One close policy, whatever ends a turn early (panto_stream_cancel, panto_stream_free
 *    of an unfinished stream, a binding's close or its garbage collector): the connection is
 *    closed, what the model sent so far stays in the conversation as an assistant message
 *    whose stop reason is "aborted" (events given back with panto_stream_unread excluded),
 *    tool calls of it that got no result get an error result, and the agent can run the next
 *    turn.
 *
 * Changing this header: bump PANTO_ABI_VERSION when a layout or meaning changes; only append
 * fields to structs and values to enums; update libpanto-c/src/abi.zig (checked by
 * `zig build test`), and every binding in the same change.
 */
#ifndef PANTO_H
#define PANTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the ABI changes; compare with panto_abi_version() at load time. */
#define PANTO_ABI_VERSION 3

/* The version of panto this header belongs to (panto_version() is the linked library's). */
#define PANTO_VERSION_MAJOR 0
#define PANTO_VERSION_MINOR 1
#define PANTO_VERSION_PATCH 0
#define PANTO_VERSION "0.1.0"

/* ---- Status codes --------------------------------------------------------------------- */

typedef enum PantoStatus {
    PANTO_OK = 0,
    PANTO_EVENT = 1, /* panto_next_event filled an event */
    PANTO_DONE = 2,  /* the turn is over: every later call returns DONE again */
    PANTO_WOULD_BLOCK = 3, /* panto_step_event(s): nothing before the PantoWait it filled is
                              over; wait for it, then step again (not an error) */

    /* Errors of the call itself. */
    PANTO_ERR_INVALID_ARGUMENT = -1, /* NULL where a value is needed, bad UTF-8, ... */
    PANTO_ERR_OUT_OF_MEMORY = -2,
    PANTO_ERR_CONFIG = -3, /* the agent configuration was refused */
    PANTO_ERR_BUSY = -4,   /* the agent already has a stream that is not finished */
    PANTO_ERR_RESULT_PENDING = -5, /* a host tool call awaits panto_stream_submit_tool_result;
                                      the stream is unchanged: submit, then call again */
    PANTO_ERR_NO_SUCH_CALL = -6,   /* no tool call with that id awaits a result */
    PANTO_ERR_STATE = -7,          /* the call does not fit the object's state, e.g.
                                      panto_stream_reopen on a stream that did not fail */
    PANTO_ERR_APPROVAL_PENDING = -8, /* every call of the round that could run is done, and a
                                        call listed by APPROVAL_REQUEST waits for
                                        panto_stream_approve / panto_stream_deny; the stream is
                                        unchanged: answer, then call again. RESULT_PENDING
                                        comes first while a host call awaits its result */

    /* Errors of a turn (from panto_next_event; sticky). */
    PANTO_ERR_AUTHENTICATION = -10, /* HTTP 401 */
    PANTO_ERR_PERMISSION = -11,     /* HTTP 403 */
    PANTO_ERR_NOT_FOUND = -12,      /* HTTP 404 */
    PANTO_ERR_INVALID_REQUEST = -13, /* HTTP 400, 413, 422 */
    PANTO_ERR_RATE_LIMIT = -14,     /* HTTP 429 */
    PANTO_ERR_OVERLOADED = -15,     /* HTTP 529 or an overloaded_error event */
    PANTO_ERR_SERVER = -16,         /* HTTP 5xx, or another status / error event */
    PANTO_ERR_TIMEOUT = -17,        /* first byte, idle or total timeout (see config) */
    PANTO_ERR_CONNECTION = -18, /* connect failed, connection reset, TLS failure */
    PANTO_ERR_PROTOCOL = -19,   /* malformed stream: bad SSE, bad JSON, cut short */
    PANTO_ERR_CANCELED = -20,       /* panto_stream_cancel */
    PANTO_ERR_TOOL_LOOP = -21,
    PANTO_ERR_CAPABILITY = -22,
    PANTO_ERR_CONVERSATION = -23,   /* a conversation (import, truncate) was refused: the
                                       message names the first problem; nothing changed */
    PANTO_ERR_SESSION = -24,        /* the session store failed: a file could not be created,
                                       written or read, or is not a session */
    PANTO_ERR_SESSION_LOCKED = -25, /* another agent (of any process) has the session open */
    PANTO_ERR_NO_SUCH_SESSION = -26, /* no session with that id in the directory */
    PANTO_ERR_OUTPUT = -27,         /* panto_stream_final_json: the model's answer is not the
                                       JSON that response_format asked for (not JSON, or not
                                       of the schema); PantoError.output holds its text */

    PANTO_STATUS_FORCE_INT = 0x7fffffff
} PantoStatus;

/* A stable lower-case name for a status ("event", "done", "authentication", ...).
 * Static storage, NUL-terminated; "unknown" for a value it does not know. */
const char *panto_status_name(int status);

/* ---- Version -------------------------------------------------------------------------- */

/* The PANTO_ABI_VERSION the library was built with. */
uint32_t panto_abi_version(void);

/* The library's version as a static NUL-terminated string, e.g. "0.1.0". */
const char *panto_version(void);

/* ---- Strings, events, errors ---------------------------------------------------------- */

/* A borrowed UTF-8 string; ptr may be NULL when len is 0. */
typedef struct PantoString {
    const char *ptr;
    size_t len;
} PantoString;

/* A PantoString of a NUL-terminated string (NULL gives {NULL, 0}). */
static inline PantoString panto_cstr(const char *s) {
    PantoString out = {s, 0};
    if (s) while (s[out.len]) out.len++;
    return out;
}

/* ---- Content parts: text, images and PDFs ---------------------------------------------- */

typedef enum PantoPartKind {
    PANTO_PART_TEXT = 1,     /* text */
    PANTO_PART_MEDIA = 2,    /* given: the raw bytes of an image or a PDF (panto finds which) */
    PANTO_PART_IMAGE = 3,    /* reported: an image as sent to the model */
    PANTO_PART_DOCUMENT = 4, /* reported: a PDF as sent to the model */
    PANTO_PART_KIND_FORCE_INT = 0x7fffffff
} PantoPartKind;

/* "text", "media", "image", "document"; "unknown" otherwise. Static, NUL-terminated. */
const char *panto_part_kind_name(int kind);

/* One piece of a user message or a tool result that the caller gives: text, or media as raw
 * bytes (a file's contents, a screenshot). panto detects the format by its bytes (PNG, JPEG,
 * GIF, WEBP, BMP, PDF; a media_type hint that contradicts them loses), fits images to the
 * providers' rules (at most 2000x2000 pixels, aspect kept; under 4.5 MB of base64; BMP and
 * large GIFs become PNG; an image already within the rules is sent byte for byte), passes PDFs
 * through (up to 20 MB), and turns what it cannot send (unknown bytes, a corrupt or truncated
 * image, more than 100 megapixels, an oversized PDF) into a short text part saying what was
 * dropped and why: bad media never fails a call. The bytes are read during the call only.
 * Fixed layout: arrays of it are passed, so it never grows. */
typedef struct PantoPart {
    int32_t kind;           /* PANTO_PART_TEXT or PANTO_PART_MEDIA */
    uint32_t reserved0;     /* 0 */
    PantoString text;       /* TEXT: the text */
    PantoString media_type; /* MEDIA: a hint such as "image/png"; may be empty */
    PantoString name;       /* MEDIA: a file name, optional (a PDF's name is shown to the model) */
    const void *data;       /* MEDIA: the bytes */
    size_t data_len;
} PantoPart;

/* A part as it was sent to the model, as events report it (fixed layout). */
typedef struct PantoPartInfo {
    int32_t kind;     /* PANTO_PART_TEXT, PANTO_PART_IMAGE or PANTO_PART_DOCUMENT */
    uint32_t width;   /* IMAGE: pixels after fitting */
    uint32_t height;  /* IMAGE */
    uint32_t reserved0;
    PantoString text;       /* TEXT: the text (a dropped attachment's note too) */
    PantoString media_type; /* IMAGE, DOCUMENT: "image/png", "image/jpeg", "image/gif",
                               "image/webp", "application/pdf" */
    PantoString name;       /* IMAGE, DOCUMENT: the name given, or "" */
    PantoString data;       /* IMAGE, DOCUMENT: the bytes sent, base64 (as the conversation
                               keeps them; decode only if you need them) */
    uint64_t byte_size;     /* IMAGE, DOCUMENT: the size of the bytes sent (not of base64) */
} PantoPartInfo;

/* A turn is one or more assistant messages; between them, the tool calls of the previous one
 * run:
 *
 *   MESSAGE_START, (BLOCK_START, [TOOL_DETAILS], CONTENT_DELTA*, BLOCK_COMPLETE)*, MESSAGE_END,
 *   [TOOL_CALL_START*, TOOL_PROGRESS*, TOOL_RESULT*, MESSAGE_START, ..., MESSAGE_END]*,
 *   MESSAGE_COMPLETE
 */
typedef enum PantoEventKind {
    PANTO_EVENT_MESSAGE_START = 1,    /* id, model: an assistant message begins */
    PANTO_EVENT_BLOCK_START = 2,      /* index, block_kind */
    PANTO_EVENT_CONTENT_DELTA = 3,    /* index, block_kind, text: the new fragment (for a
                                         TOOL_CALL block, a fragment of the input JSON) */
    PANTO_EVENT_BLOCK_COMPLETE = 4,   /* index, block_kind, text: the whole block */
    PANTO_EVENT_MESSAGE_COMPLETE = 5, /* stop_reason, provider_stop_reason, usage: the turn is
                                         over (usage summed over its messages); terminal */
    PANTO_EVENT_MESSAGE_END = 6,      /* stop_reason, provider_stop_reason, usage: one
                                         assistant message ended */
    PANTO_EVENT_TOOL_DETAILS = 7,     /* index, id, name: the model named a tool; its input
                                         follows as CONTENT_DELTA fragments */
    PANTO_EVENT_TOOL_CALL_START = 8,  /* id, name, text: the complete input as a JSON object;
                                         awaiting_result: 1 when the host must run the tool and
                                         submit its result (panto_stream_submit_tool_result),
                                         0 when panto handles the call; sequential. The
                                         TOOL_CALL_STARTs of a message come one after another;
                                         then panto_next_event returns
                                         PANTO_ERR_RESULT_PENDING (or queued TOOL_PROGRESS
                                         events) until every host call has its result */
    PANTO_EVENT_TOOL_RESULT = 9,      /* id, name, text: the result sent to the model, is_error,
                                         parts, part_count (see PantoEvent) */
    PANTO_EVENT_PROVIDER_RETRY = 10,  /* attempt (1 for the first retry), delay_ms, http_status
                                         (0 when not an HTTP answer), text: the reason. The
                                         next call waits delay_ms, then asks again; the message
                                         starts over with a new MESSAGE_START */
    PANTO_EVENT_COMPACTION_START = 11, /* tokens_before: the context's estimated size; text:
                                          why, "threshold" (before a request that would pass
                                          context_window - reserve_tokens) or "manual" */
    PANTO_EVENT_COMPACTION_END = 12,   /* tokens_before, tokens_after (estimated, with the
                                          summary), message_count: the messages summarized,
                                          text: the summary */
    PANTO_EVENT_TOOL_PROGRESS = 13,    /* id, name, text, fraction: a host tool running for the
                                          call reported progress (panto_stream_tool_progress) */
    PANTO_EVENT_APPROVAL_REQUEST = 14, /* approvals, approval_count: the calls of the round that
                                          wait for a person's answer (the tool says "approval":
                                          "always", or an approval_rules entry says "ask").
                                          Comes before the round's TOOL_CALL_STARTs; those
                                          calls get theirs only once approved (awaiting_result
                                          as any call) or denied (awaiting_result 0, then a
                                          TOOL_RESULT error with the reason) */
    PANTO_EVENT_USER_MESSAGE = 15,     /* text, name: a message of the user's entered the
                                          conversation (panto_stream_steer after a tool round's
                                          results, name "steer"; panto_stream_follow_up, or a
                                          steer no round took, as the next turn's user message,
                                          name "follow_up") */
    PANTO_EVENT_KIND_FORCE_INT = 0x7fffffff
} PantoEventKind;

typedef enum PantoBlockKind {
    PANTO_BLOCK_NONE = 0,
    PANTO_BLOCK_TEXT = 1,
    PANTO_BLOCK_THINKING = 2,
    PANTO_BLOCK_TOOL_CALL = 3,
    PANTO_BLOCK_REDACTED_THINKING = 4, /* text: the provider's opaque data (no deltas) */
    /* A block of the provider's that panto keeps without reading it (Anthropic's server tools'
     * calls and results: server_tool_use, web_search_tool_result, ...; compaction; types added
     * later). CONTENT_DELTA: its input's JSON as it streams (a server_tool_use's);
     * BLOCK_COMPLETE: text is the block's JSON object as received, name its type. */
    PANTO_BLOCK_SERVER_BLOCK = 5,
    PANTO_BLOCK_KIND_FORCE_INT = 0x7fffffff
} PantoBlockKind;

/* Why the model stopped, the same set for every provider. */
typedef enum PantoStopReason {
    PANTO_STOP_NONE = 0,
    PANTO_STOP_END_TURN = 1,      /* anthropic end_turn, openai stop */
    PANTO_STOP_MAX_TOKENS = 2,    /* anthropic max_tokens, openai length */
    PANTO_STOP_STOP_SEQUENCE = 3, /* anthropic stop_sequence */
    PANTO_STOP_TOOL_USE = 4,      /* anthropic tool_use, openai tool_calls / function_call */
    PANTO_STOP_REFUSAL = 5,       /* anthropic refusal */
    PANTO_STOP_CONTENT_FILTER = 6, /* openai content_filter */
    PANTO_STOP_PAUSE_TURN = 7,    /* anthropic pause_turn */
    PANTO_STOP_ABORTED = 8,       /* the turn was canceled */
    PANTO_STOP_OTHER = 9,         /* a value panto does not know; see provider_stop_reason */
    PANTO_STOP_BUDGET = 10,       /* MESSAGE_COMPLETE only: the turn's budget (config "budget")
                                     is spent; provider_stop_reason names it: "output_tokens",
                                     "tool_rounds", "wall_ms" or "cost_usd" */
    PANTO_STOP_REASON_FORCE_INT = 0x7fffffff
} PantoStopReason;

/* Stable lower-case names ("message_start", "text", "end_turn", ...): static, NUL-terminated;
 * "unknown" for a value they do not know. */
const char *panto_event_kind_name(int kind);
const char *panto_block_kind_name(int kind);
const char *panto_stop_reason_name(int reason);

/* Token counts, normalized across providers. input_tokens excludes cached tokens. */
typedef struct PantoUsage {
    uint64_t input_tokens;
    uint64_t output_tokens;
    uint64_t cache_read_tokens;
    uint64_t cache_write_tokens;
    uint64_t reasoning_tokens;
} PantoUsage;

/* A tool call that waits for a person's answer (APPROVAL_REQUEST). Fixed layout. */
typedef struct PantoApprovalCall {
    PantoString id;
    PantoString name;
    PantoString input; /* the input as a JSON object */
} PantoApprovalCall;

/* One event. Which fields mean something depends on `kind` (see PantoEventKind); the others
 * are zero. Strings are borrowed until the next call on the same stream. */
typedef struct PantoEvent {
    uint32_t size; /* sizeof(PantoEvent), set by PANTO_EVENT_INIT */
    int32_t kind;  /* PantoEventKind */
    uint32_t index; /* content block index within the message */
    int32_t block_kind; /* PantoBlockKind */
    PantoString text;
    PantoString id;    /* MESSAGE_START: the provider's message id */
    PantoString model; /* MESSAGE_START: the model that answers */
    int32_t stop_reason; /* MESSAGE_END, MESSAGE_COMPLETE: PantoStopReason */
    int32_t is_error;    /* TOOL_RESULT: 1 when the result is an error */
    PantoString provider_stop_reason; /* MESSAGE_END, MESSAGE_COMPLETE: the provider's value */
    PantoUsage usage; /* MESSAGE_END: the message's usage; MESSAGE_COMPLETE: the turn's */
    PantoString name; /* TOOL_*: the tool's name; BLOCK_COMPLETE of a SERVER_BLOCK: its type;
                         BLOCK_COMPLETE of a TEXT block: its citations (Anthropic's), a JSON
                         array of the citation objects as received, "" when it has none */
    int32_t awaiting_result; /* TOOL_CALL_START: see PantoEventKind */
    uint32_t attempt;        /* PROVIDER_RETRY */
    int32_t http_status;     /* PROVIDER_RETRY */
    int32_t reserved0;
    uint64_t delay_ms;       /* PROVIDER_RETRY */
    /* TOOL_RESULT: the result's parts in order, as sent (text and the notes of dropped media
     * as TEXT, fitted media as IMAGE / DOCUMENT); part_count 0 for a result that is one text
     * (then text is all of it). With parts, text is their TEXT parts joined with "\n".
     * Borrowed like the strings. */
    const PantoPartInfo *parts;
    size_t part_count;
    uint64_t tokens_before; /* COMPACTION_START, COMPACTION_END */
    uint64_t tokens_after;  /* COMPACTION_END */
    uint64_t message_count; /* COMPACTION_END */
    double fraction;        /* TOOL_PROGRESS: 0 to 1, or -1 when the tool gave text only */
    int32_t sequential;     /* TOOL_CALL_START: 1 when the call must run alone: after the
                               calls before it have their results, before the calls after it
                               start (its tool is "sequential", or the agent's tool_execution
                               is "sequential"); 0: it may run alongside the others */
    int32_t reserved1;
    PantoString request_id; /* MESSAGE_START: the provider's request id (the request-id or
                               x-request-id header), "" when it sent none */
    /* MESSAGE_END, MESSAGE_COMPLETE: Anthropic's server tools run for the message (the turn),
     * its usage.server_tool_use; apart from `usage`, which stays as it was (sized structs) */
    uint64_t web_search_requests;
    uint64_t web_fetch_requests;
    double cost; /* MESSAGE_END: the message's usage's cost in USD at the model's list prices
                    (the model catalog, or the config's model_info); MESSAGE_COMPLETE: the
                    turn's; -1 when a price it needs is unknown */
    /* APPROVAL_REQUEST: the calls that wait for an answer, in call order. Borrowed like the
     * strings. */
    const PantoApprovalCall *approvals;
    size_t approval_count;
} PantoEvent;

#define PANTO_EVENT_INIT {.size = sizeof(PantoEvent)}

/* Detail of a failure. Strings are borrowed until the next call on the same handle that
 * fails, or until it is freed. */
typedef struct PantoError {
    uint32_t size; /* sizeof(PantoError), set by PANTO_ERROR_INIT */
    int32_t code;  /* the negative PantoStatus, or 0 when there is no error */
    int32_t http_status; /* 0 when the failure was not an HTTP answer */
    int32_t reserved0;
    PantoString type;       /* the provider's error type, e.g. "authentication_error" */
    PantoString message;    /* human-readable; never contains an API key */
    PantoString request_id; /* the provider's request id, when known */
    double retry_after;     /* seconds the provider asked to wait (retry-after-ms, retry-after),
                               -1 when it did not say */
    PantoString headers;    /* a JSON object of the failed response's headers of interest,
                               names in lower case: request-id, x-request-id, retry-after,
                               retry-after-ms, x-should-retry, anthropic-ratelimit-*,
                               x-ratelimit-*, x-amzn-requestid, x-amzn-errortype (Bedrock's
                               exception name); "{}" when none or no HTTP answer */
    PantoString output;     /* PANTO_ERR_OUTPUT: the model's text, as it came */
} PantoError;

#define PANTO_ERROR_INIT {.size = sizeof(PantoError)}

/* ---- Agent ---------------------------------------------------------------------------- */

typedef struct PantoAgent PantoAgent;
typedef struct PantoStream PantoStream;

/* Creates an agent from a JSON object (UTF-8 text of config_json.len bytes):
 *   provider    "anthropic" | "openai" | "openai-responses" | "gemini" | "bedrock"   (required;
 *               "openai" is Chat Completions and the servers that copy it, "openai-responses"
 *               the Responses API, "gemini" the Google Gemini API, "bedrock" AWS Bedrock's
 *               ConverseStream)
 *   model       string                                      (required)
 *   base_url    string, default $ANTHROPIC_BASE_URL, $OPENAI_BASE_URL,
 *               $GOOGLE_GEMINI_BASE_URL or $AWS_ENDPOINT_URL_BEDROCK_RUNTIME (then
 *               $AWS_ENDPOINT_URL), else
 *               https://api.anthropic.com, https://api.openai.com/v1 (both OpenAI APIs),
 *               https://generativelanguage.googleapis.com or
 *               https://bedrock-runtime.{$AWS_REGION or $AWS_DEFAULT_REGION}.amazonaws.com
 *   api_key     string, default $ANTHROPIC_API_KEY, $OPENAI_API_KEY, $GOOGLE_API_KEY
 *               (then $GEMINI_API_KEY, as google-genai reads them) or
 *               $AWS_BEARER_TOKEN_BEDROCK (bedrock: a Bedrock API key, sent as a bearer
 *               token; without one, $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, with
 *               $AWS_SESSION_TOKEN, sign each request with SigV4 for the region above)
 *   system      string, the system prompt
 *   max_tokens  integer, default 4096
 *   tools       array of tool specs (see panto_agent_add_tool)
 *   capabilities         array of strings: what this agent is granted
 *   max_tool_iterations  integer, default 10: tool rounds a turn may take
 *   read_tool   object {"root": dir, "max_bytes": int (default 65536), "confined": bool
 *               (default true; false: a path outside the root is read too, for an approval
 *               rule with "outside" to ask about)}: enables the native `read` tool (requires
 *               the capability "fs.read")
 *   thinking    "off" (default) | "minimal" | "low" | "medium" | "high": Anthropic extended
 *               thinking with budget_tokens 1024 / 2048 / 8192 / 16384 (max_tokens is raised
 *               above the budget when needed); OpenAI reasoning_effort of the same name
 *               (openai-responses: reasoning {"effort", "summary": "auto"}, the summaries
 *               streamed as thinking; gemini: thinkingConfig {"includeThoughts": true,
 *               "thinkingLevel"}, the thought summaries streamed as thinking; bedrock: only
 *               {"budget_tokens": N}, as Claude's thinking in additionalModelRequestFields)
 *   retry       object {"max_retries": 2, "initial_delay_ms": 500, "max_delay_ms": 8000,
 *               "max_retry_after_ms": 60000}: retries on HTTP 408, 409, 429, 5xx and connection
 *               errors, and on an error event or dropped connection before any content of the
 *               message was delivered; backoff initial·2^n capped at max, with jitter;
 *               retry-after-ms / Retry-After (seconds, fractional too, or an HTTP date)
 *               honored up to max_retry_after_ms (beyond, 1e308 and inf included: the error
 *               is returned; a negative, NaN or unreadable value is ignored); x-should-retry
 *               honored
 *   timeouts    object {"connect_ms": 10000, "first_byte_ms": 60000, "idle_ms": 90000,
 *               "total_ms": 600000}: to open a connection (the host name's lookup, the TCP
 *               connects to its addresses in turn, a proxy's CONNECT tunnel, the TLS
 *               handshake); from sending a request to its response head;
 *               between two events that carry progress (pings and SSE comments do not;
 *               progress is sampled every idle_ms/8, 1 ms at least, so the idle limit may end
 *               a turn that much late); for all the provider calls of a turn. 0 disables one.
 *               Each ends the turn with PANTO_ERR_TIMEOUT (not retried).
 *   keep_alive  object {"idle_ms": 60000}: how long a connection may stay unused and still
 *               carry the agent's next request (one idle longer is closed then; one the server
 *               closed meanwhile is replaced silently); 0: no connection is kept alive, each
 *               request opens one, closed after its response. HTTPS through a proxy keeps its
 *               CONNECT tunnel (and TLS session) alive the same way, for the same proxy, host
 *               and port. panto_agent_connections counts connections opened and reused.
 *   tool_execution  "parallel" (default) | "sequential": whether the host tool calls of one
 *               message may run at the same time (PantoEvent.sequential); a tool spec's
 *               "sequential": true makes that tool's calls run alone either way
 *   log         object {"level": "off" | "debug" | "body", "file": path}: see PANTO_LOG below;
 *               the config wins over the environment; file (appended to) defaults to stderr
 *   mcp_servers object of MCP servers (stdio or Streamable HTTP) by name, whose tools the agent offers (docs/mcp.md):
 *               {"NAME": {"command": string, "args": [string], "env": {NAME: value}, "cwd":
 *               path, "tools": [allowed MCP tool names], "requires": [capabilities every
 *               tool of the server needs], "timeout_ms": 60000, "init_timeout_ms": 30000}}.
 *               NAME: a letter, then up to 23 letters, digits, '_' or '-', without "__". A
 *               server gets only PATH, HOME and its "env". Started at the agent's first turn
 *               (and again at a turn after it died); its tools are offered as NAME__TOOL
 *               (bytes outside [A-Za-z0-9_-] as '_'; cut with a hash past 64 bytes) and run
 *               by panto (awaiting_result false). One that cannot start fails that turn,
 *               before any request, with PANTO_ERR_CONFIG (error type "mcp_server_error",
 *               the message names the server); one that fails during a call (exits, times
 *               out, breaks the protocol) gives that call an error result naming it, and the
 *               turn goes on. Servers end when the agent is freed. Not by set_config.
 *               A Streamable HTTP server: {"url": "https://...", "headers": {NAME: value}}
 *               (a bearer token is a header) with the keys above but command, args, env, cwd
 *   budget      object {"output_tokens": N, "tool_rounds": N, "wall_ms": N, "cost_usd": X},
 *               each left out or null for none: what one turn may spend (a turn's options may
 *               change each).
 *               Reaching one ends the turn normally, MESSAGE_COMPLETE with PANTO_STOP_BUDGET
 *               and provider_stop_reason the budget's name. output_tokens: the turn's sum at
 *               each MESSAGE_END; tool_rounds: rounds (and pause_turn continuations) taken.
 *               Both are looked at before another round: its calls get the error result
 *               "Skipped: the turn's budget is spent." (no TOOL_CALL_START). wall_ms: from the
 *               turn's first request; a request it interrupts ends as a cancel would (what
 *               was streamed kept, stored with stop reason "aborted", no MESSAGE_END), and a
 *               round that ends past it sends no request. cost_usd: dollars (above 0) at the
 *               model's list prices (the model catalog, or model_info), the turn's sum at each
 *               MESSAGE_END as output_tokens; a model whose input or output price is unknown
 *               fails the turn before its first request (PANTO_ERR_CONFIG, "config_error").
 *               max_tool_iterations and timeouts.total_ms stay errors
 *
 * Request parameters (docs/requests.md has each provider's wire form). Left out, a parameter
 * is not sent and the provider's default applies. One that a provider does not have is
 * refused with PANTO_ERR_CONFIG when the agent's provider is that one, also by a set_config
 * that switches provider while it is set (set it to null in the same call):
 *   temperature        number, Anthropic 0 to 1, OpenAI 0 to 2
 *   top_p              number, 0 to 1
 *   top_k              integer >= 1 (Anthropic)
 *   stop               string or array of non-empty strings (OpenAI: at most 4); Anthropic
 *                      stop_sequences
 *   seed               integer (OpenAI)
 *   presence_penalty, frequency_penalty   number, -2 to 2 (OpenAI)
 *   metadata           object of string values, at most 16 (OpenAI)
 *   user               string: who the end user is (Anthropic metadata.user_id, OpenAI user)
 *   parallel_tool_calls  true | false: whether the model may ask for several tools in one
 *                      message (OpenAI parallel_tool_calls, Anthropic
 *                      tool_choice.disable_parallel_tool_use); sent only with tools
 *   tool_choice        "auto" | "none" | "required" ("any" is the same) | {"name": tool}: a
 *                      named tool the agent may not use fails the turn with PANTO_ERR_CONFIG
 *   service_tier       Anthropic "auto" | "standard_only"; OpenAI "auto" | "default" | "flex"
 *                      | "scale" | "priority"
 *   thinking           besides the levels above, {"budget_tokens": N} (Anthropic, N >= 1024;
 *                      max_tokens is raised above it when needed)
 *   reasoning_effort   "minimal" | "low" | "medium" | "high" (OpenAI): wins over thinking
 *   interleaved_thinking  true | false (Anthropic): thinking between tool calls (the beta
 *                      header interleaved-thinking-2025-05-14); default: on when thinking is on
 *                      and the agent has tools
 *   response_format    {"type": "text"} | {"type": "json_object"} (OpenAI) | {"type":
 *                      "json_schema", "schema": object schema, "name": string (default
 *                      "response"), "strict": bool}: structured output (OpenAI
 *                      response_format, Anthropic output_config.format); see
 *                      panto_stream_final_json. Without "strict", OpenAI's strict mode is on
 *                      exactly when the schema meets its rules: every object sets
 *                      "additionalProperties": false and requires all its properties, and no
 *                      schema is empty
 *   cache              object {"mode": "auto" | "off", "ttl": "5m" | "1h" (Anthropic, Bedrock), "key":
 *                      string (OpenAI prompt_cache_key), "retention": "in_memory" | "24h"
 *                      (OpenAI prompt_cache_retention)}: prompt caching. Anthropic, mode
 *                      "auto" (the default): cache_control breakpoints on the last tool, the
 *                      system prompt and the last message of each request, so each request
 *                      reuses the prefix the one before wrote; a user message the caller marked
 *                      (PantoInput options {"cache_breakpoint": true}) is a breakpoint too,
 *                      in either mode (at most 4 in all: the most recent marks win); "off":
 *                      the marks only. Bedrock: the same points as cachePoint blocks, for
 *                      Claude and Nova models. OpenAI caches by itself; key and retention steer it
 *   extra_headers      object of header name -> string value, sent with every request;
 *                      refused for the headers panto writes (authorization, x-api-key,
 *                      content-type, content-length, host, accept, accept-encoding,
 *                      connection, transfer-encoding, anthropic-version); an anthropic-beta
 *                      value is added to panto's own
 *   extra_body         object merged into the request's JSON body: the escape hatch for a
 *                      parameter panto does not know. Refused for the keys panto writes
 *                      (model, messages, system, tools, stream, stream_options, max_tokens,
 *                      max_completion_tokens, and the keys of the parameters above)
 *   server_tools       array of provider-hosted tools (Anthropic): each the API's tool object,
 *                      with a string "type" and "name", sent in the request's tools as given,
 *                      before the agent's own tools, e.g. {"type": "web_search_20250305",
 *                      "name": "web_search", "max_uses": 3}; {"type": "web_fetch_20250910",
 *                      "name": "web_fetch"}; {"type": "code_execution_20250825", "name":
 *                      "code_execution"}. The beta header a type needs (code_execution_20250522:
 *                      code-execution-2025-05-22) is added to anthropic-beta. Their blocks come back as
 *                      PANTO_BLOCK_SERVER_BLOCK; a turn the server pauses (PANTO_STOP_PAUSE_TURN)
 *                      goes on by itself. openai and openai-responses refuse them. An MCP
 *                      toolset has "mcp_server_name" instead of "name": {"type": "mcp_toolset",
 *                      "mcp_server_name": "docs"}. A name equal to one of the agent's tools
 *                      fails the turn (PANTO_ERR_CONFIG)
 *   hosted_mcp_servers array of remote MCP servers for Anthropic's MCP connector (not the
 *                      agent's own MCP servers): each the API's object, with a string "type"
 *                      and "name" (unique), sent in the body's mcp_servers as given, e.g.
 *                      {"type": "url", "url": "https://mcp.example.com/sse", "name": "docs",
 *                      "authorization_token": "..."}; an mcp_toolset of server_tools must name
 *                      one. panto adds mcp-client-2025-11-20 to anthropic-beta unless
 *                      extra_headers' names an mcp-client-... version. Other providers refuse
 *                      them
 *
 * Without base_url, ANTHROPIC_BASE_URL or OPENAI_BASE_URL (read when the agent is created, and
 * by a set_config that sets base_url to null, as the official SDKs do) is
 * the endpoint. A set_config that switches provider derives base_url and api_key again for
 * the new provider (its variables, else its public endpoint), unless given: a base_url given
 * earlier stays (a gateway), and so does an api_key given with it; a key given without one
 * does not follow (it would reach the other provider's server); a base_url or api_key in the
 * switching call itself is taken as it is (null: from the new provider's variable). A turn to
 * the provider's public endpoint without an API key (neither api_key nor the variable) fails before any request with
 * PANTO_ERR_AUTHENTICATION whose message names the variable to set; a custom base_url may go
 * without one (no authorization header is sent).
 *
 * Unknown keys are refused, and so are control characters (CR, LF, NUL...) in model,
 * base_url (a space too) and api_key, the configured key or the environment's: they would
 * end a header or split the request line. The message names the key, never its value.
 *
 * The network comes from the environment, read at each request (as curl does): HTTPS_PROXY,
 * HTTP_PROXY, ALL_PROXY and NO_PROXY, upper or lower case (credentials in the proxy URL,
 * percent-encoded: http://user:password@proxy:3128), and SSL_CERT_FILE (a PEM bundle that
 * replaces the system's CA store). HTTPS goes through a proxy's CONNECT tunnel with TLS end to
 * end: the proxy sees the host name, never the request. A proxy that refuses the tunnel (407
 * included) ends the turn with PANTO_ERR_CONNECTION, its answer in the message; so does a
 * proxy variable holding a control character (the message does not quote it). Host names
 * are looked up in /etc/hosts, then at the nameservers of /etc/resolv.conf (A and AAAA; the
 * addresses are tried in turn, IPv6 and IPv4 alternating), within connect_ms, and a cancel
 * ends the lookup; PANTO_RESOLV_CONF names another resolv.conf, whose nameserver lines may
 * carry a port ("nameserver 127.0.0.1:5353"), for tests.
 *
 * PANTO_LOG=debug in the environment when an agent is created makes it write one line to
 * stderr per request (its method and URL, which connection: its number, host:port, new or
 * reused, through a proxy or not; then its status and time to the response head), one per
 * retry decision (the attempt, the delay and why) and one per connection closed (and why:
 * idle too long, closed by the server, its request failed, canceled, ...). PANTO_LOG=body
 * adds each request's JSON body. Never an API key or an authorization header. Off by
 * default.
 *
 * Like sqlite3_open, on PANTO_ERR_CONFIG *out_agent is still set: read the reason with
 * panto_agent_error(), then free it. On PANTO_ERR_OUT_OF_MEMORY or PANTO_ERR_INVALID_ARGUMENT
 * *out_agent is set to NULL. */
int panto_agent_new(PantoString config_json, PantoAgent **out_agent);

/* Frees the agent. NULL is allowed. Streams of the agent that are still alive keep working
 * until they are freed; the last of them frees the agent (like sqlite3_close_v2). */
void panto_agent_free(PantoAgent *agent);

/* Detail of the agent's last failed call (panto_agent_new, panto_agent_run, ...); returns its code
 * (0 if none). out_error may be NULL to get the code alone. Strings are borrowed until the
 * next call on the agent. */
int panto_agent_error(const PantoAgent *agent, PantoError *out_error);

/* Changes the configuration: a JSON object holding only the keys to change (any key of
 * panto_agent_new, except "tools"; a provider switch: see base_url above). Refused while a
 * stream of the agent is unfinished (PANTO_ERR_BUSY) or when a value is invalid
 * (PANTO_ERR_CONFIG; nothing changed). */
int panto_agent_set_config(PantoAgent *agent, PantoString config_json);

/* The agent's settings as a JSON object, in the keys and values panto_agent_new takes:
 * "provider", "model", "base_url" (the address requests go to, whether given or derived from
 * the provider's environment variable or default), "system" (null: none), "max_tokens",
 * "thinking", "max_tool_iterations", "capabilities" and "budget" (each budget null when
 * none). Never the API key; not the tools. Read
 * it after a provider switch (panto_agent_set_config) to see the address and model it gave.
 * Allowed while a stream runs (its turn's options are not the agent's). The string is
 * borrowed until the next call on the agent. */
int panto_agent_settings(PantoAgent *agent, PantoString *out_json);

/* What a turn starts with: the user message. Fields are appended as inputs grow; a field left
 * zero is absent. */
typedef struct PantoInput {
    uint32_t size; /* sizeof(PantoInput), set by PANTO_INPUT_INIT */
    uint32_t reserved0;
    PantoString text; /* the user message's text; may be empty when parts are given */
    const PantoPart *parts; /* more of the message, after text: text and media parts */
    size_t part_count;
    PantoString options; /* this turn's request options: a JSON object of request parameters
                            (the keys of "Request parameters" in panto_agent_new, and
                            max_tokens, system, budget) that override the configuration for this turn
                            only, and "cache_breakpoint": true (the user message is a cache
                            breakpoint, kept in the conversation). Refused like set_config
                            (PANTO_ERR_CONFIG, detail in panto_agent_error; nothing appended).
                            {NULL, 0}: none */
} PantoInput;

#define PANTO_INPUT_INIT {.size = sizeof(PantoInput)}

/* Starts a turn: appends the input to the conversation as a user message and returns a
 * stream that runs the turn. Nothing is sent until the first panto_next_event. An agent has
 * at most one unfinished stream at a time (PANTO_ERR_BUSY). */
int panto_agent_run(PantoAgent *agent, const PantoInput *input, PantoStream **out_stream);

/* Starts a turn that answers the conversation as it is, appending no user message: its last
 * message must be the user's (a turn's text, a tool round's results), e.g. a conversation
 * imported from another process or worker (panto_agent_import), or one whose turn failed and
 * kept its results. options: as PantoInput.options ({NULL, 0}: none). The turn is a turn like
 * any other (events, steers, follow-ups, budgets); one that fails keeping nothing leaves the
 * conversation as it was (its last message was not this turn's to take back).
 * PANTO_ERR_CONVERSATION when the conversation does not end with a user message (nothing to
 * answer); PANTO_ERR_BUSY, PANTO_ERR_CONFIG as panto_agent_run. */
int panto_agent_continue(PantoAgent *agent, PantoString options, PantoStream **out_stream);

/* ---- A tool round left waiting for a person -------------------------------------------- */

/* A stream freed or canceled while a call listed by APPROVAL_REQUEST still waits for its
 * answer does not answer it: the agent keeps the round (pending), the conversation ending
 * with the round's assistant message. With a session the round is written to the session file
 * at each change (a call handed out, the wait for the answer), so that an agent opening the
 * session in another process, after this one ended or was killed (SIGKILL), has it too. A
 * round cut by the end of the process without any question pending (a crash in any round)
 * is pending the same way, its unanswered calls "started".
 * Then either panto_agent_resume goes on with the round, or the next turn (panto_agent_run,
 * panto_agent_continue, panto_agent_compact) first answers every call left, as an error
 * result that says why ("The user did not approve this call before moving on.", "The call
 * was not run: the user moved on before it started.", "The process ended before this call
 * finished."), so that no request carries a call without its result; the new user message
 * then joins the results in one user message. */
typedef enum PantoPendingState {
    PANTO_PENDING_ASK = 0,      /* waits for a person's answer */
    PANTO_PENDING_TO_RUN = 1,   /* has its answer (or needed none) and was not run yet: runs
                                   when the turn is resumed */
    PANTO_PENDING_STARTED = 2,  /* was handed to its runner and left no result: the process
                                   ended while it ran. Never run again (its effects may have
                                   happened): resuming answers it "The process ended before
                                   this call finished." */
    PANTO_PENDING_ANSWERED = 3, /* has its result (it ran, was denied, or panto answered it) */
} PantoPendingState;

/* A call of the pending round. Fixed layout. */
typedef struct PantoPendingCall {
    PantoString id;
    PantoString name;
    PantoString input; /* the input as a JSON object */
    int32_t state;     /* PantoPendingState */
    int32_t reserved;
} PantoPendingCall;

/* The pending round's calls, in call order (*out_count 0 and *out_calls NULL when no round
 * waits). The array and its strings are the agent's, valid until the next call on the agent.
 * PANTO_ERR_BUSY while a stream of the agent is unfinished. */
int panto_agent_pending_round(PantoAgent *agent, const PantoPendingCall **out_calls, size_t *out_count);

/* Goes on with the pending round, in a new stream: APPROVAL_REQUEST lists the calls still
 * asked about (answer them with panto_stream_approve / panto_stream_deny as in any round),
 * then a TOOL_CALL_START for each other call (awaiting_result 0 for those answered already:
 * they are not run again, their TOOL_RESULT comes with the round's), and the turn goes on as
 * any turn (steers, follow-ups, budgets apply). Freed again while a call waits, the stream
 * leaves the round pending again. options: as PantoInput.options ({NULL, 0}: none).
 * PANTO_ERR_STATE when no round waits; PANTO_ERR_BUSY, PANTO_ERR_CONFIG as panto_agent_run. */
int panto_agent_resume(PantoAgent *agent, PantoString options, PantoStream **out_stream);

/* ---- Conversations -------------------------------------------------------------------- */

/* A conversation is a versioned JSON document (docs/conversations.md has it all):
 *
 *   {"version": 1, "messages": [message, ...]}
 *
 * A message is {"role": "user"|"assistant", "content": [block, ...]} and, on an assistant
 * message, "provider" ("anthropic"|"openai"|"openai-responses"|"gemini"|"bedrock"), "model", "stop_reason" (a PantoStopReason name;
 * "aborted" for a canceled turn) and "usage" {"input_tokens", "output_tokens",
 * "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}; a user message marked as a
 * cache breakpoint (PantoInput options "cache_breakpoint") has "cache": true after "content";
 * a message that holds the summary of compacted messages also has "compaction":
 * {"message_count", "tokens_before"}.
 * Blocks:
 *   {"type": "text", "text", "citations" (an assistant's text that has them: its citations,
 *       a JSON array of the citation objects as the provider sent them, a string)}
 *   {"type": "thinking", "text", "signature" (when the provider gave one)}
 *   {"type": "redacted_thinking", "text": the provider's opaque data}
 *   {"type": "image"|"document", "media_type", "data" (base64), "name" (when given)}
 *   {"type": "tool_call", "id", "name", "input": a JSON object}
 *   {"type": "tool_result", "id", "content", "is_error"}: content is a string, or an array of
 *       text, image and document blocks when the result has media.
 *   {"type": "server_block", "name": its type, "json": its JSON object as the provider sent
 *       it, a string}: a provider's block panto keeps without reading it (Anthropic's server
 *       tools' calls and results, compaction, types added later).
 * Keys come in this order; export -> import -> export gives the same bytes.
 *
 * A conversation is stored in this neutral form and written for whichever provider the next
 * request goes to, so set_config may switch provider or model between turns: thinking blocks
 * (and their signatures), server blocks and a text's citations go only to the provider and
 * model that made them and are left out elsewhere (the text is sent without its citations) (an assistant message left empty is left out; an empty text
 * block is never sent); a tool-call id the target does not
 * accept (Anthropic and OpenAI: 1 to 40 of [a-zA-Z0-9_-]) is sent as "call_" and the first 32
 * hex digits of its SHA-256, for the call and its result alike. */

/* The conversation's messages: the "messages" array of panto_agent_export. Borrowed until
 * the next call on the agent. */
int panto_agent_conversation(PantoAgent *agent, PantoString *out_json);

/* The conversation as a versioned document (above). Borrowed until the next call on the
 * agent. */
int panto_agent_export(PantoAgent *agent, PantoString *out_json);

/* Replaces the conversation with a document of panto_agent_export (of any language, any
 * agent). Everything is checked first: JSON, version, roles, blocks and their keys, base64
 * and media types, every tool call answered by one result in the next message and every
 * result answering a call; PANTO_ERR_CONVERSATION names the first problem (panto_agent_error)
 * and the agent is unchanged. PANTO_ERR_BUSY while a stream of the agent is unfinished. */
int panto_agent_import(PantoAgent *agent, PantoString json);

/* The number of messages in the conversation. */
int panto_agent_message_count(const PantoAgent *agent, size_t *out_count);

/* What the conversation's assistant messages used and cost so far: their usages summed, and
 * their cost in USD at the model catalog's list prices, each message priced at the provider
 * and model that wrote it (config "model_info" prices only the agent's own model; the
 * config's cache ttl prices every cache write). *out_cost is -1 when one message's cost is
 * unknown (a model the catalog lacks, a message that does not say its model). A compaction
 * leaves out the messages it replaced, and its own summary request is not a message. Either
 * out pointer may be NULL. */
int panto_agent_spent(const PantoAgent *agent, PantoUsage *out_usage, double *out_cost);

/* Keeps the first message_count messages and drops the rest. PANTO_ERR_INVALID_ARGUMENT when message_count is
 * larger than the count; PANTO_ERR_CONVERSATION when it would keep tool calls without their
 * results; PANTO_ERR_BUSY while a stream is unfinished. Nothing changes on failure. */
int panto_agent_truncate(PantoAgent *agent, size_t message_count);

/* A turn that fails or is canceled before keeping anything after its user message (no
 * answer, not even a partial one) takes that message back out as it fails, so the
 * conversation is as before the turn and no request carries two user messages in a row
 * (panto_stream_reopen puts it back). One that kept something (a partial answer, tool calls
 * and their results) stays whole; this call removes it: the user message of the last turn
 * and every message after it, when that turn failed or was canceled. out_removed (may be
 * NULL) is the number of messages removed, 0 when there is nothing to roll back (the last
 * turn ended well or kept nothing, or the conversation was edited, imported or compacted
 * since). PANTO_ERR_BUSY while a stream is unfinished; PANTO_ERR_SESSION when the session
 * file cannot record it. Nothing changes on failure. */
int panto_agent_rollback_turn(PantoAgent *agent, size_t *out_removed);

/* ---- The model catalog and cost ------------------------------------------------------- *
 *
 * panto knows the limits, list prices and abilities of the models of the providers it speaks
 * (a catalog generated from litellm's model table, pinned; docs/design/model-catalog.md), by
 * provider and model name, a dated version of a listed alias too; a model it lacks is unknown.
 * MESSAGE_END and MESSAGE_COMPLETE carry their usage's cost (PantoEvent.cost; -1: unknown).
 * What the catalog says the model cannot take fails the turn with PANTO_ERR_CONFIG (type
 * "config_error") before any request: a max_tokens above its most output tokens, thinking
 * for a model without it, an image for a model that takes none (model_info overrides).
 * Config key "model_info" says what the catalog lacks or what differs, each key optional and
 * over the catalog's: {"max_input_tokens": N, "max_output_tokens": N, "price": {"input",
 * "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning"} (USD per million
 * tokens), "long_context": {"above": N, and the same prices but reasoning: the prices of a
 * whole request once its prompt passes N tokens}, "abilities": {"tools", "images", "pdfs",
 * "thinking", "structured_output", "caching": true or false}}. */

/* What panto knows of a provider's model, as a JSON object in the keys of "model_info" above,
 * after its "name" (the catalog's, e.g. the undated alias a dated name was found by):
 * "max_input_tokens", "max_output_tokens", "price" and "long_context" hold only what is known
 * (a missing key is unknown, never zero), "abilities" all six, and "catalog" the catalog's
 * source ("litellm 1.110.2"), null when only the config's model_info knows the model. The
 * JSON "null" for a model panto knows nothing of.
 *
 * panto_model_info: the catalog's entry, by provider name (as the config's "provider") and
 * model. As snprintf: *out_len is the JSON's whole length; as much of it as fits is written to
 * buf (no NUL added). 2,048 bytes hold every entry. PANTO_ERR_INVALID_ARGUMENT for NULL where
 * a value is needed. Any thread, no agent needed. */
int panto_model_info(PantoString provider, PantoString model, char *buf, size_t capacity, size_t *out_len);

/* The agent's model as its requests see it: the catalog's entry with the config's model_info
 * over it (after a model switch too). Borrowed until the next call on the agent. */
int panto_agent_model_info(PantoAgent *agent, PantoString *out_json);

/* ---- Token counting ------------------------------------------------------------------- */

typedef struct PantoTokenCount {
    uint32_t size;         /* sizeof(PantoTokenCount), set by PANTO_TOKEN_COUNT_INIT */
    int32_t estimated;     /* 1: panto's estimate (the provider has no counting endpoint) */
    uint64_t input_tokens; /* the request's input tokens */
} PantoTokenCount;

#define PANTO_TOKEN_COUNT_INIT {.size = sizeof(PantoTokenCount)}

/* The input tokens of the request the next turn would send with `input` (NULL: the
 * conversation as it is): the conversation, the input as its user message (text and parts,
 * as panto_agent_run would append it; input.options is not read), the system prompt, the
 * tools and thinking, asked of the provider's counting endpoint (Anthropic count_tokens,
 * Gemini countTokens, OpenAI Responses input_tokens, Bedrock CountTokens) under the agent's
 * timeouts and on its connections. OpenAI Chat Completions has no such endpoint: the count is
 * compaction's estimate and `estimated` is 1. Nothing is appended to the conversation.
 * Blocks until the answer. PANTO_ERR_BUSY while a stream of the agent is unfinished; a
 * failed request returns the code a turn's would (PANTO_ERR_AUTHENTICATION,
 * PANTO_ERR_TIMEOUT, ...), its detail (type, HTTP status, request id) in panto_agent_error. */
int panto_agent_count_tokens(PantoAgent *agent, const PantoInput *input, PantoTokenCount *out);

/* ---- Model lists ---------------------------------------------------------------------- */

/* The models the configured provider lists for the account, every page followed (Anthropic
 * and OpenAI GET /v1/models, as OpenAI-compatible servers answer it too; Gemini GET
 * /v1beta/models; Bedrock ListFoundationModels on the control plane, bedrock.REGION, or
 * AWS_ENDPOINT_URL_BEDROCK), as a JSON array in the provider's order, each entry
 *     {"id": "...", "display_name": "..." (when given), "created": "2025-09-29T00:00:00Z"
 *      (RFC 3339, when given), "model_info": panto_model_info's object for it, or null}
 * (the catalog's entry: the config's model_info is not applied). Under the agent's timeouts
 * and on its connections; blocks until the last page. Borrowed until the next call on the
 * agent. PANTO_ERR_BUSY while a stream of the agent is unfinished; a failed request returns
 * the code a turn's would (PANTO_ERR_AUTHENTICATION, PANTO_ERR_RATE_LIMIT, PANTO_ERR_TIMEOUT,
 * ...), its detail (type, HTTP status, request id) in panto_agent_error. */
int panto_agent_list_models(PantoAgent *agent, PantoString *out_json);

/* ---- Compaction ----------------------------------------------------------------------- *
 *
 * Config key "compaction": {"enabled": true, "context_window": N, "reserve_tokens": 16384,
 * "keep_recent_tokens": 20000, "prompt": string}. context_window defaults to the model's
 * most input tokens (the model catalog, or config "model_info"; an unknown model has none,
 * and then only panto_agent_compact compacts). Before each request of a turn whose context is estimated
 * past context_window - reserve_tokens, the older messages are summarized by the model in a
 * separate request (system prompt: "prompt", default in docs/conversations.md) and replaced by
 * one user message holding the summary; the most recent messages, about keep_recent_tokens,
 * stay, and a tool call is never separated from its result. The estimate: the input, cache
 * and output tokens of the last assistant message's usage, plus about one token per 4
 * characters of what came after it (an image or a document counts 4,800 characters). The turn
 * shows COMPACTION_START and COMPACTION_END before the request's MESSAGE_START. A summary
 * request that fails fails the turn with its error, and the conversation is unchanged. */

/* Compacts now: a stream of COMPACTION_START, COMPACTION_END and MESSAGE_COMPLETE (the summary
 * request's stop reason and usage), read and canceled like a turn's. PANTO_ERR_STATE when
 * nothing is older than keep_recent_tokens (nothing to compact); PANTO_ERR_BUSY while a
 * stream is unfinished. */
int panto_agent_compact(PantoAgent *agent, PantoStream **out_stream);

/* panto_agent_compact with the user's instructions for this summary ("keep the API names and
 * the failing test"): appended to the compaction prompt of this summary request alone, after
 * a line saying they are the user's; the config's "prompt" is unchanged. An empty string (or
 * one of blanks) is none, as panto_agent_compact. */
int panto_agent_compact_with(PantoAgent *agent, PantoString instructions, PantoStream **out_stream);

/* ---- Sessions -------------------------------------------------------------------------- *
 *
 * Config key "session" (panto_agent_new only): {"dir": D, "id": I, "mode": M, "fsync": true}.
 * D defaults to $XDG_DATA_HOME/panto/sessions (~/.local/share/panto/sessions); it is made if
 * missing. I: 1 to 128 of [A-Za-z0-9._-], not starting with "."; a new id is made when left
 * out. M: "open" (the default: resume I if it exists, else create it), "resume" (it must
 * exist: PANTO_ERR_NO_SUCH_SESSION) or "create" (it must not: PANTO_ERR_SESSION).
 *
 * A session is one append-only JSONL file, D/I.jsonl: a header line {"type": "session",
 * "version": 1, "id", "created", "cwd", "parent" (forks: {"id", "message_count"})}, then one
 * entry per change of the conversation: a message appended (a user turn, an assistant
 * message as it ends, a round of tool results, a canceled turn's partial message), a
 * truncation, an import, a compaction (its summary; the messages it replaced stay in the
 * file), a configuration change (provider, model, system, thinking, max_tokens: never an
 * API key, a base URL or any other key), and a name its user gave the session ({"type":
 * "name", "name"}: the last one holds; the Zig API's Agent.setSessionName writes it; a
 * panto older than this entry refuses the file). Nothing is rewritten in place. Each entry is
 * written with one write and fsync'ed ("fsync": false skips that) before the call that made
 * it returns: a process killed at any instant loses at most the message being streamed.
 * Opening replays the file; a torn last line (a crash mid-write) is cut off the file and
 * counted in torn_bytes. The agent holds an exclusive lock (flock) on the file while it lives:
 * a second agent, in this process or another, gets PANTO_ERR_SESSION_LOCKED. A write that
 * fails fails the call that made it with PANTO_ERR_SESSION. */

typedef struct PantoSessionInfo {
    uint32_t size; /* sizeof(PantoSessionInfo), set by PANTO_SESSION_INFO_INIT */
    int32_t resumed;    /* 1: the session existed when the agent opened it */
    PantoString id;
    PantoString path;   /* the session's file */
    uint64_t torn_bytes; /* bytes of a torn last line cut off when it was opened; 0 mostly */
} PantoSessionInfo;

#define PANTO_SESSION_INFO_INIT {.size = sizeof(PantoSessionInfo)}

/* The agent's session; strings borrowed until the next call on the agent. PANTO_ERR_STATE
 * when the agent has none. */
int panto_agent_session(PantoAgent *agent, PantoSessionInfo *out_info);

/* Forks the agent's session at message_count: a new session (id new_id, or a new id when
 * empty) whose header names its parent, holding the first message_count messages; the agent
 * goes on in it (the conversation is truncated to message_count) and lets go of the old one,
 * which is unchanged. Errors as panto_agent_truncate, PANTO_ERR_SESSION (new_id taken or
 * invalid, a write failed), PANTO_ERR_STATE without a session; nothing changes on failure. */
int panto_agent_fork_session(PantoAgent *agent, size_t message_count, PantoString new_id);

/* The sessions of a directory (dir {NULL, 0}: the default one), newest first, as a JSON
 * array of {"id", "path", "created", "updated" (RFC 3339, UTC, milliseconds), "message_count",
 * "first_user_text" (the first text of the first user message, "" if none), "cwd", "parent"
 * (null or {"id", "message_count"}), "name" (null, or the name its user gave it last)}. A missing directory has none; a file that is not a
 * session is left out; a locked session is listed. */
typedef struct PantoSessionList PantoSessionList;

/* Like panto_agent_new, on PANTO_ERR_SESSION *out_list is still set: read the reason with
 * panto_session_list_error, then free it. */
int panto_session_list(PantoString dir, PantoSessionList **out_list);
int panto_session_list_json(const PantoSessionList *list, PantoString *out_json); /* borrowed
                                                                   until the list is freed */
int panto_session_list_error(const PantoSessionList *list, PantoError *out_error);
void panto_session_list_free(PantoSessionList *list);

/* What the agent's connections did so far. Requests of an agent (the tool rounds of a turn,
 * later turns) share a kept-alive connection while it is healthy (see keep_alive in
 * panto_agent_new). A request that finds the kept-alive connection closed by the server is
 * sent again on a new one, silently: then both count. */
typedef struct PantoConnections {
    uint32_t size; /* sizeof(PantoConnections), set by PANTO_CONNECTIONS_INIT */
    uint32_t reserved0;
    uint64_t opened; /* connections opened: TCP connections, and CONNECT tunnels through a proxy */
    uint64_t reused; /* requests sent on a connection kept alive from an earlier request */
} PantoConnections;

#define PANTO_CONNECTIONS_INIT {.size = sizeof(PantoConnections)}

/* Fills *out_connections (set its size first: PANTO_CONNECTIONS_INIT). Call it between turns
 * or on the thread that runs the agent's turns, not while panto_next_event of its stream
 * runs on another thread. */
int panto_agent_connections(const PantoAgent *agent, PantoConnections *out_connections);

/* ---- MCP servers' status --------------------------------------------------------------- *
 *
 * Where each of the agent's MCP servers (config key mcp_servers, docs/mcp.md) stands, for a
 * program that shows them (the panto command's /mcp). Servers are numbered from 0 in name
 * order, as they start. */

typedef enum PantoMcpState {
    PANTO_MCP_NOT_STARTED = 0, /* no turn has needed it yet (servers start at a turn) */
    PANTO_MCP_READY = 1,       /* its handshake made and its tools listed */
    PANTO_MCP_FAILED = 2,      /* it could not start, or broke during a call (error says why);
                                  started again at the next turn */
    PANTO_MCP_CLOSED = 3       /* its process exited while no request waited (stdio); started
                                  again at the next turn */
} PantoMcpState;

typedef enum PantoMcpTransport {
    PANTO_MCP_STDIO = 0, /* a command panto spawns */
    PANTO_MCP_HTTP = 1   /* a URL, over Streamable HTTP */
} PantoMcpTransport;

typedef struct PantoMcpStatus {
    uint32_t size;      /* sizeof(PantoMcpStatus), set by PANTO_MCP_STATUS_INIT */
    int32_t state;      /* PantoMcpState */
    int32_t transport;  /* PantoMcpTransport */
    uint32_t reserved0;
    PantoString name;             /* its key in mcp_servers: its tools' prefix */
    PantoString protocol_version; /* agreed in its last handshake, e.g. "2025-11-25"; "" before */
    PantoString server_name;      /* its initialize answer's serverInfo, "" when none */
    PantoString server_version;
    uint64_t tool_count; /* the tools of it the agent offers (after its "tools" allow-list) */
    PantoString error;       /* FAILED: why, as the turn (mcp_server_error) or the call was told */
    PantoString stderr_tail; /* FAILED, CLOSED: the last bytes (up to 4 KiB) it wrote to stderr;
                                over HTTP, why its last exchange failed */
} PantoMcpStatus;

#define PANTO_MCP_STATUS_INIT {.size = sizeof(PantoMcpStatus)}

/* How many MCP servers the agent has (0 without mcp_servers). */
int panto_agent_mcp_count(PantoAgent *agent, size_t *out_count);

/* Fills *out_status (set its size first: PANTO_MCP_STATUS_INIT) with server `index`'s
 * status; strings borrowed until the next call on the agent. PANTO_ERR_INVALID_ARGUMENT for
 * an index past the last. Call it between turns, not while a stream of the agent runs on
 * another thread. */
int panto_agent_mcp_status(PantoAgent *agent, size_t index, PantoMcpStatus *out_status);

/* ---- Tools ---------------------------------------------------------------------------- */

/* A tool spec is a JSON object:
 *   {"name": "get_weather", "description": "...", "input_schema": {JSON Schema of an object},
 *    "capabilities": ["net"], "sequential": true}   (capabilities: what the tool requires;
 *    sequential: its calls run alone, see PantoEvent.sequential; both optional)
 * The rules a spec must meet (its name: 1 to 64 of [a-zA-Z0-9_-]; its schema an object
 * schema; its keys known) are checked by the library alone, here and in panto_tools_add. */

/* Registers a host tool (one the embedding program runs) from a spec. Names are unique (a
 * second tool of the same name is refused with PANTO_ERR_CONFIG, detail in
 * panto_agent_error). Only tools whose capabilities the agent was granted are sent to the
 * model. Must not be called while a stream of the agent is unfinished (PANTO_ERR_BUSY). */
int panto_agent_add_tool(PantoAgent *agent, PantoString tool_json);

/* The formats tools are exported in. */
typedef enum PantoToolFormat {
    PANTO_TOOL_FORMAT_PANTO = 1,     /* the specs as registered, with "native": true|false */
    PANTO_TOOL_FORMAT_ANTHROPIC = 2, /* {name, description, input_schema} */
    PANTO_TOOL_FORMAT_OPENAI = 3,    /* {type: "function", function: {name, description,
                                        parameters}} */
    PANTO_TOOL_FORMAT_FORCE_INT = 0x7fffffff
} PantoToolFormat;

/* The tools of the agent as a JSON array in `format` (PantoToolFormat). With
 * only_allowed != 0, only the tools the agent may use. Borrowed until the next call on the
 * agent. */
int panto_agent_tools(PantoAgent *agent, int format, int only_allowed, PantoString *out_json);

/* A tool set: tool specs checked and exported without an agent, e.g. by a binding that
 * declares tools in its own language (Python type hints, Go struct tags, Lua tables) and
 * hands the specs to the library, or by a program that sends them to a provider itself. */
typedef struct PantoTools PantoTools;

int panto_tools_new(PantoTools **out_tools);

/* Frees the set. NULL is allowed. */
void panto_tools_free(PantoTools *tools);

/* Checks a spec and adds it to the set: PANTO_ERR_CONFIG (detail in panto_tools_error, which
 * names the rule) when the spec is refused or its name is already in the set; nothing is
 * added then. */
int panto_tools_add(PantoTools *tools, PantoString tool_json);

/* The tools of the set as a JSON array in `format` (PantoToolFormat). capabilities_json is a
 * JSON array of strings, the capabilities granted: only the tools that require none beyond
 * them are exported. {NULL, 0}: all tools. Borrowed until the next call on the set. */
int panto_tools_export(PantoTools *tools, int format, PantoString capabilities_json, PantoString *out_json);

/* Detail of the set's last failed call; returns its code (0 if none). out_error may be
 * NULL. */
int panto_tools_error(const PantoTools *tools, PantoError *out_error);

/* ---- Stream --------------------------------------------------------------------------- */

/* Reads just enough of the turn to produce the next event.
 * Returns PANTO_EVENT (ev filled), PANTO_DONE (the turn ended after MESSAGE_COMPLETE) or a
 * negative error; DONE and errors are sticky: every later call returns the same. */
int panto_next_event(PantoStream *stream, PantoEvent *ev);

/* Reads up to `capacity` events in one call: for a binding to which each call into the
 * library costs more than an event (Python through ctypes, Go through cgo; the Lua module,
 * which calls the library from Zig, reads one event at a time). The first event comes as
 * panto_next_event reads it, waiting for the provider as needed; then come the events that
 * continue the message being streamed and can be decoded from what was already received,
 * without waiting.
 *
 *   PantoEvent events[128] = {PANTO_EVENT_INIT};    (only the first one's size is read)
 *   size_t n;
 *   while ((rc = panto_next_events(stream, events, 128, &n, NULL)) == PANTO_EVENT)
 *       for (size_t i = 0; i < n; i++) { ...use events[i]... }
 *
 * Returns PANTO_EVENT with *out_count (>= 1) events filled, or, with *out_count = 0, what
 * panto_next_event would have returned: PANTO_DONE, PANTO_ERR_RESULT_PENDING, or the error of
 * the turn (sticky). What a batch holds, so that nothing is read further than needed:
 *  - after its first event, only BLOCK_START, CONTENT_DELTA, BLOCK_COMPLETE and TOOL_DETAILS
 *    of the message being streamed. MESSAGE_END, TOOL_CALL_START, TOOL_RESULT,
 *    MESSAGE_COMPLETE and PROVIDER_RETRY each come first in a batch and end it: submit the
 *    result of a TOOL_CALL_START with awaiting_result = 1 before the next call, as with
 *    panto_next_event; after MESSAGE_COMPLETE the next call returns PANTO_DONE.
 *  - a failure met after its first event ends it: the events before the failure are
 *    returned, and the failure by the next call.
 * A batch holds fewer than `capacity` events whenever the data received so far runs out.
 *
 * `events` is an array of `capacity` events; set the `size` of the first (PANTO_EVENT_INIT):
 * the library takes it as the size of every element (a program built against an older
 * header has a smaller PantoEvent) and sets it in each element it fills. The strings of a
 * batch are copies in one block of memory owned by the stream, in the order of the events,
 * each followed by a NUL byte (not counted in its len; a string may hold NULs of its own).
 * *out_strings describes the block when out_strings is not NULL: a binding may copy it at
 * once and cut it into strings. They stay valid until the stream reads again
 * (panto_next_event, panto_next_events), is reopened or freed.
 *
 * A NULL stream, events or out_count, a capacity of 0, or a first `size` that is smaller than
 * 8 or not a multiple of PantoEvent's alignment: PANTO_ERR_INVALID_ARGUMENT, nothing read. */
int panto_next_events(PantoStream *stream, PantoEvent *events, size_t capacity, size_t *out_count, PantoString *out_strings);

/* ---- Driving a stream without blocking -------------------------------------------------
 *
 * panto_step_event is panto_next_event that never waits: where next would block, it returns
 * PANTO_WOULD_BLOCK and says in a PantoWait what to wait for, so one thread can drive many
 * streams from its own event loop (poll, epoll, kqueue-style loops, asyncio, Go's netpoller):
 *
 *   PantoEvent ev = PANTO_EVENT_INIT;
 *   PantoWait wait = PANTO_WAIT_INIT;
 *   for (;;) {
 *       int rc = panto_step_event(stream, &ev, &wait);
 *       if (rc == PANTO_EVENT) { ...use ev...; continue; }
 *       if (rc != PANTO_WOULD_BLOCK) break;   (PANTO_DONE, or an error as panto_next_event's)
 *       ...wait until wait.fd is ready for wait.events, or until wait.deadline_ns...
 *   }
 *
 * The turn is the same as panto_next_event's, event for event: the same retries, tool
 * rounds, compaction, errors and close policy; only its waits come back to the caller.
 *  - The descriptor may change between steps (a retry on a new connection, a reconnect):
 *    take it from each PANTO_WOULD_BLOCK (epoll: EPOLL_CTL_MOD, or DEL then ADD). It is the
 *    stream's: do not read, write or close it. During a retry's delay it is the stream's own
 *    wake descriptor (an eventfd that only a cancel makes readable) and the deadline the
 *    delay's end; fd -1 (wait for the deadline only) if no eventfd could be made.
 *  - The deadline (CLOCK_MONOTONIC, as clock_gettime gives it) is the turn's timeouts
 *    (connect_ms, first_byte_ms, idle_ms, total_ms) and retry delays: step again once it has
 *    passed, whatever the descriptor says; a timeout then fails the step with
 *    PANTO_ERR_TIMEOUT, as on the blocking path. No thread of panto's keeps the time of a
 *    stepped stream: if the loop does not step it, nothing happens.
 *  - A ready descriptor may still have nothing for the turn (a TLS record half there): the
 *    step returns PANTO_WOULD_BLOCK again. A fast server may answer before any wait: a
 *    whole turn may step through without one.
 *  - A host tool call (TOOL_CALL_START with awaiting_result = 1) gives
 *    PANTO_ERR_RESULT_PENDING as with panto_next_event: nothing to wait for but the
 *    caller's own panto_stream_submit_tool_result.
 *  - panto_stream_cancel, from any thread, also while the loop waits: the descriptor becomes
 *    readable at once (the socket is shut down), and the next step returns
 *    PANTO_ERR_CANCELED. During a retry's delay the wake descriptor becomes readable the
 *    same way.
 *  - panto_stream_free, from any thread: while another thread is in a step call, as for
 *    panto_next_event; while the loop waits, at once: the stream is released (its descriptor
 *    closed; epoll forgets a closed descriptor by itself) and the loop must not step it again.
 *  - A stream is stepped or read by panto_next_event(s), never both: the first call decides,
 *    the other fails with PANTO_ERR_STATE (the stream unchanged), except that once a stepped
 *    turn is over panto_next_event and panto_stream_final_message / _final_json read its end.
 *  - Linux on x86_64 and aarch64 (each stepped stream runs its turn on a stack of its
 *    own, 512 KB reserved, a few pages used); elsewhere PANTO_ERR_STATE. */

typedef enum PantoWaitEvents {
    PANTO_WAIT_READ = 1,  /* the descriptor readable (POLLIN, EPOLLIN) */
    PANTO_WAIT_WRITE = 2, /* the descriptor writable (POLLOUT, EPOLLOUT) */
    PANTO_WAIT_EVENTS_FORCE_INT = 0x7fffffff
} PantoWaitEvents;

/* What a step that returned PANTO_WOULD_BLOCK waits for: fd ready for events, or the
 * deadline, whichever comes first. */
typedef struct PantoWait {
    uint32_t size;       /* sizeof(PantoWait), set by PANTO_WAIT_INIT */
    int32_t fd;          /* the descriptor, or -1: none (the deadline only) */
    uint32_t events;     /* a PantoWaitEvents (0 when fd is -1) */
    uint32_t reserved0;
    int64_t deadline_ns; /* CLOCK_MONOTONIC nanoseconds: step again then at the latest; -1: none */
} PantoWait;

#define PANTO_WAIT_INIT {.size = sizeof(PantoWait)}

/* The next event without waiting: PANTO_EVENT (ev filled, borrowed until the next call on
 * the stream), PANTO_DONE, PANTO_WOULD_BLOCK (*wait filled: wait, then call again) or what
 * panto_next_event returns otherwise (errors sticky, PANTO_ERR_RESULT_PENDING). See above.
 * A NULL stream, ev or wait, or a size too small: PANTO_ERR_INVALID_ARGUMENT. */
int panto_step_event(PantoStream *stream, PantoEvent *ev, PantoWait *wait);

/* panto_next_events without waiting: PANTO_EVENT with *out_count (>= 1) events, the batch as
 * panto_next_events makes it (its first event where the step would have given one, then
 * what continues the message and was received already); PANTO_WOULD_BLOCK with *out_count
 * = 0 and *wait filled; or, with *out_count = 0, what panto_step_event returns otherwise.
 * Arguments, strings and panto_stream_unread as for panto_next_events. */
int panto_step_events(PantoStream *stream, PantoEvent *events, size_t capacity, size_t *out_count, PantoString *out_strings, PantoWait *wait);

/* Gives back the last `count` events of the last panto_next_events batch, which the caller
 * did not use: typically a binding that read a batch ahead of its user, who stopped early.
 * The next call returns them again, strings and all (panto_next_events as one batch,
 * panto_next_event one by one), and a turn canceled before that keeps in the conversation
 * only what came before them, as if they had never been read. Only events that continue a
 * message can be given back (BLOCK_START, CONTENT_DELTA, BLOCK_COMPLETE, TOOL_DETAILS), and
 * a MESSAGE_START that begins the batch, together with the whole batch (a message none of
 * which the caller saw leaves nothing in the conversation); only events of the last batch
 * that are not given back already, and only while no later event
 * was read: otherwise PANTO_ERR_INVALID_ARGUMENT, and nothing changes. count 0 does nothing.
 * Returns PANTO_OK. Like every stream call but panto_stream_cancel and panto_stream_free, not
 * while another thread is in a call on the same stream. */
int panto_stream_unread(PantoStream *stream, size_t count);

/* The result of a host tool call. Fields are appended as results grow. */
typedef struct PantoToolResult {
    uint32_t size;    /* sizeof(PantoToolResult), set by PANTO_TOOL_RESULT_INIT */
    int32_t is_error; /* != 0: the tool failed; the turn goes on, the model sees the error */
    PantoString call_id; /* the id of TOOL_CALL_START */
    PantoString content; /* the text that goes back to the model; may be empty with parts */
    const PantoPart *parts; /* more of the result, after content: text and media parts (see
                               PantoPart); media are fitted during this call */
    size_t part_count;
} PantoToolResult;

#define PANTO_TOOL_RESULT_INIT {.size = sizeof(PantoToolResult)}

/* Gives the result of a host tool call announced by TOOL_CALL_START with awaiting_result = 1.
 * Returns PANTO_OK, or PANTO_ERR_NO_SUCH_CALL when no call with that id awaits a result
 * (detail in panto_stream_error; the stream is unchanged). */
int panto_stream_submit_tool_result(PantoStream *stream, const PantoToolResult *result);

/* Reports progress of a host tool call announced by TOOL_CALL_START with awaiting_result = 1
 * that has no result yet: queues a TOOL_PROGRESS event (text: what the tool says, may be
 * empty; fraction: 0 to 1, or negative for none), which panto_next_event returns before any
 * other event of the round (the TOOL_CALL_STARTs still to come, PANTO_ERR_RESULT_PENDING).
 * Tools may run at the same time (see PantoEvent.sequential): their program submits results
 * and progress in any order, from the thread that reads the stream; the results go to the
 * model, and come as TOOL_RESULT events, in call order. PANTO_ERR_NO_SUCH_CALL when no call
 * with that id awaits a result; PANTO_ERR_INVALID_ARGUMENT for a fraction above 1 or NaN. */
int panto_stream_tool_progress(PantoStream *stream, PantoString call_id, PantoString text, double fraction);

/* Answers a call that APPROVAL_REQUEST listed. Approve: its TOOL_CALL_START comes at the next
 * read and it runs as any call of the round. Deny: its result is an error telling the model
 * "The user denied this call: REASON" (reason may be empty; invalid UTF-8 becomes U+FFFD).
 * From any thread, as panto_stream_submit_tool_result (not during another call on the
 * stream). PANTO_ERR_INVALID_ARGUMENT when no call with that id waits for an answer
 * (unknown, answered already, or not of the current round). No timeout runs while a call
 * waits: a person may take their time. */
int panto_stream_approve(PantoStream *stream, PantoString call_id);
int panto_stream_deny(PantoStream *stream, PantoString call_id, PantoString reason);

/* Says something to the turn while it runs (a copy of text is queued; never empty).
 * Steer: the message joins the conversation at the end of the current (or next) tool round,
 * after the round's results in the same user message, and the model reads it in the round's
 * next request; when no tool round comes before the turn ends, it starts a new turn of this
 * stream as a follow-up does. Follow-up: a new turn of this stream starts when the current one
 * ends: after its MESSAGE_COMPLETE, panto_next_event goes on with the new turn's events
 * (USER_MESSAGE first), and DONE comes after the last turn's MESSAGE_COMPLETE. The new turn
 * has its own usage, cost, budget and timeouts, and the stream's turn options.
 * A steer queued while a call of the round waits for a person's answer (APPROVAL_PENDING)
 * skips that call: the user moved on. It gets its TOOL_CALL_START (awaiting_result 0) and the
 * error result "Skipped: the user steered.", and the steer goes to the model with the round's
 * results.
 * USER_MESSAGE marks where each message entered the conversation. May be called from any
 * thread, also while another thread is in panto_next_event(s) or steps the stream; it wakes
 * nothing: the stream takes the message as it goes on. Returns PANTO_OK;
 * PANTO_ERR_INVALID_ARGUMENT for an empty text; PANTO_ERR_STATE when the stream's turns are
 * over (after DONE, a failure or a cancel: run a new turn) or it is a compaction's: once the
 * last turn's MESSAGE_COMPLETE was read (panto_next_events reads it with the events before it,
 * and a binding's batches may read it before the program sees it), a message comes too late
 * and is refused, never lost. These
 * two calls leave no detail for panto_stream_error (it may be another thread's). */
int panto_stream_steer(PantoStream *stream, PantoString text);
int panto_stream_follow_up(PantoStream *stream, PantoString text);

/* Takes back the steers and follow-ups queued on the stream that it has not taken yet (the
 * user changed their mind: a terminal's Alt-Up): they will not reach the model. *out_json is
 * a JSON array of {"source": "steer" | "follow_up", "text": ...} in the order they were queued
 * ("[]" when none is left: one a tool round or a turn took already comes as its USER_MESSAGE),
 * borrowed until the next panto_stream_withdraw_queued on the stream or its free. May be
 * called from any thread, as panto_stream_steer (one such call at a time on a stream: its JSON
 * is the stream's). Returns PANTO_OK, PANTO_ERR_OUT_OF_MEMORY (nothing taken back, or what
 * was taken back lost), or PANTO_ERR_INVALID_ARGUMENT (a NULL argument); it leaves no detail
 * for panto_stream_error. */
int panto_stream_withdraw_queued(PantoStream *stream, PantoString *out_json);

/* The shortest program: reads the rest of the turn (events not read yet are read and let go)
 * and gives its end. *out_complete (may be NULL; set its size: PANTO_EVENT_INIT) is the
 * MESSAGE_COMPLETE event, *out_text (may be NULL) the text of the turn's last assistant
 * message (its text blocks joined): borrowed until the stream is freed. Returns PANTO_OK, or
 * what panto_next_event returned: an error of the turn (sticky), or
 * PANTO_ERR_RESULT_PENDING when a host tool call awaits a result (submit it, call again):
 * then *out_complete is the TOOL_CALL_START of the first call still awaiting one (its
 * strings valid until the next call on the stream), since its own event was let go. */
int panto_stream_final_message(PantoStream *stream, PantoEvent *out_complete, PantoString *out_text);

/* As panto_stream_final_message, then checks the text against the response_format of the
 * turn: JSON text (a "json_schema" format: of the schema, by the rules tool inputs are checked
 * by) gives PANTO_OK and *out_json, the text as it came; otherwise PANTO_ERR_OUTPUT, whose
 * message says what is wrong and whose output is the text. PANTO_ERR_STATE when the turn had
 * no JSON response_format. */
int panto_stream_final_json(PantoStream *stream, PantoString *out_json);

/* Cancels the turn (the close policy, see the top of this file). May be called from any
 * thread, also while panto_next_event is blocked in another: that call returns
 * PANTO_ERR_CANCELED promptly. The partial message is in the conversation once a call of
 * panto_next_event(s) has returned PANTO_ERR_CANCELED, or the stream is freed; later calls
 * return PANTO_ERR_CANCELED again. Returns PANTO_OK; canceling
 * twice, or a finished stream, is harmless. */
int panto_stream_cancel(PantoStream *stream);

/* Runs the failed turn again after a failure at the provider-open boundary (an HTTP error
 * answer or a connection failure before any event of the message), typically after
 * panto_agent_set_config: the user message is not appended twice. The turn's options
 * (PantoInput.options) are applied again to the agent's configuration as it is now:
 * PANTO_ERR_CONFIG when they no longer fit it (a parameter of the other provider, say; the
 * reason in panto_stream_error). A turn that kept nothing took its user message back out as
 * it failed (see panto_agent_rollback_turn): it is appended again, after any turn run
 * meanwhile. PANTO_ERR_STATE when the stream did not fail that way; PANTO_ERR_BUSY when
 * another stream of the agent is unfinished; PANTO_ERR_SESSION when the session file cannot
 * record the user message again. */
int panto_stream_reopen(PantoStream *stream);

/* Detail of the stream's last failure, of the turn (sticky: panto_next_event returns it again)
 * or of a call on the stream that failed since (panto_stream_submit_tool_result,
 * panto_stream_unread, panto_stream_reopen); returns its code (0 if none). out_error may be
 * NULL. */
int panto_stream_error(const PantoStream *stream, PantoError *out_error);

/* Frees the stream. NULL is allowed. A turn not yet ended ends by the close policy (see the
 * top of this file), exactly as if panto_stream_cancel had been called. May be called from
 * any thread, also while another thread is blocked in panto_next_event(s) of the stream:
 * that call returns PANTO_ERR_CANCELED and the stream is released when it has returned; the
 * blocked thread must not use the stream again. */
void panto_stream_free(PantoStream *stream);

#ifdef __cplusplus
}
#endif

#endif /* PANTO_H */
