/* Images from C: a user turn with a picture, and a tool that hands the model another one.
 * `image [FILE]`: FILE is an image (PNG, JPEG, GIF, WEBP, BMP) or a PDF; without one the
 * example draws a small BMP itself. panto finds the format by the bytes and fits the image to
 * the provider's rules (a BMP is sent as PNG). See examples/README.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "example_config.h"

static void put_le(unsigned char *p, uint32_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A w x h 24-bit BMP: a diagonal gradient, the simplest image to write by hand. */
static unsigned char *draw_bmp(uint32_t w, uint32_t h, size_t *len) {
    uint32_t row = (w * 3 + 3) / 4 * 4, pixels = row * h;
    unsigned char *b = calloc(1, 54 + (size_t)pixels);
    if (!b) return NULL;
    memcpy(b, "BM", 2);
    put_le(b + 2, 54 + pixels, 4);
    put_le(b + 10, 54, 4);
    put_le(b + 14, 40, 4);
    put_le(b + 18, w, 4);
    put_le(b + 22, h, 4);
    put_le(b + 26, 1, 2);
    put_le(b + 28, 24, 2);
    put_le(b + 34, pixels, 4);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            unsigned char *px = b + 54 + y * row + x * 3; /* B, G, R */
            px[0] = (unsigned char)(x * 4);
            px[1] = (unsigned char)(y * 5);
            px[2] = 200;
        }
    *len = 54 + (size_t)pixels;
    return b;
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    if (!f) return NULL;
    for (;;) {
        if (*len == cap) {
            unsigned char *grown = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!grown) { free(buf); fclose(f); return NULL; }
            buf = grown;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        if (got == 0) break;
        *len += got;
    }
    fclose(f);
    return buf;
}

/* Prints a TOOL_RESULT's parts: text, and the media as sent (after fitting). */
static void print_parts(const PantoEvent *ev) {
    if (ev->part_count == 0) printf("  <- %.*s\n", (int)ev->text.len, ev->text.ptr);
    for (size_t i = 0; i < ev->part_count; i++) {
        const PantoPartInfo *p = &ev->parts[i];
        if (p->kind == PANTO_PART_TEXT)
            printf("  <- %.*s\n", (int)p->text.len, p->text.ptr);
        else
            printf("  <- %s %.*s, %ux%u, %llu bytes\n", panto_part_kind_name(p->kind), (int)p->media_type.len,
                   p->media_type.ptr, p->width, p->height, (unsigned long long)p->byte_size);
    }
}

int main(int argc, char **argv) {
    char config[2048];
    if (!example_config(config, sizeof config, NULL)) { fprintf(stderr, "configuration too long\n"); return 1; }

    size_t picture_len = 0, screen_len = 0;
    const char *name = argc > 1 ? strrchr(argv[1], '/') : NULL;
    name = argc > 1 ? (name ? name + 1 : argv[1]) : "gradient.bmp";
    unsigned char *picture = argc > 1 ? read_file(argv[1], &picture_len) : draw_bmp(64, 48, &picture_len);
    unsigned char *screen = draw_bmp(32, 32, &screen_len);
    if (!picture || !screen) { fprintf(stderr, "cannot read %s\n", argc > 1 ? argv[1] : "the image"); return 1; }

    PantoAgent *agent = NULL;
    if (panto_agent_new(panto_cstr(config), &agent) < 0 ||
        panto_agent_add_tool(agent, panto_cstr("{\"name\":\"screenshot\",\"description\":\"Takes a screenshot of the screen.\","
                                               "\"input_schema\":{\"type\":\"object\",\"properties\":{}}}")) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "setup failed: %.*s\n", (int)err.message.len, err.message.ptr);
        panto_agent_free(agent);
        return 1;
    }

    /* The turn: text, then the picture's raw bytes (no media type needed: panto reads them). */
    PantoPart turn[2] = {
        {.kind = PANTO_PART_TEXT, .text = panto_cstr("What is in this picture? Then take a screenshot and compare.")},
        {.kind = PANTO_PART_MEDIA, .name = panto_cstr(name), .data = picture, .data_len = picture_len},
    };
    PantoInput input = PANTO_INPUT_INIT;
    input.parts = turn;
    input.part_count = 2;
    PantoStream *stream = NULL;
    int rc = panto_agent_run(agent, &input, &stream);
    printf("[c] ");
    PantoEvent ev = PANTO_EVENT_INIT;
    while (rc >= 0 && (rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_TOOL_CALL_START) {
            printf("\n  -> %.*s(%.*s)\n", (int)ev.name.len, ev.name.ptr, (int)ev.text.len, ev.text.ptr);
            if (ev.awaiting_result) {
                /* The tool's result: a line of text and the screenshot's raw bytes. */
                PantoPart shot = {.kind = PANTO_PART_MEDIA, .name = panto_cstr("screen.bmp"), .data = screen, .data_len = screen_len};
                PantoToolResult answer = PANTO_TOOL_RESULT_INIT;
                answer.call_id = ev.id; /* (borrowed until the next call: this one) */
                answer.content = panto_cstr("The screen right now:");
                answer.parts = &shot;
                answer.part_count = 1;
                panto_stream_submit_tool_result(stream, &answer);
            }
        } else if (ev.kind == PANTO_EVENT_TOOL_RESULT) {
            print_parts(&ev);
        } else if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
        }
    }
    if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "\nturn failed (%s): %.*s\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
    }
    printf("\n");
    panto_stream_free(stream);
    panto_agent_free(agent);
    free(picture);
    free(screen);
    return rc < 0 ? 1 : 0;
}
