/* The first frame of a GIF through giflib's record-level reader (DGifSlurp would decode every
 * frame of an animation), painted on the logical screen. giflib reports errors by return value. */
#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "codec.h"

struct source {
    const uint8_t *data;
    size_t len, at;
};

static int read_source(GifFileType *gif, GifByteType *into, int want) {
    struct source *src = gif->UserData;
    size_t n = src->len - src->at;
    if ((size_t)want < n) n = (size_t)want;
    memcpy(into, src->data + src->at, n);
    src->at += n;
    return (int)n;
}

/* Paints the image at the current record onto canvas (RGBA, screen-sized). */
static int paint_frame(GifFileType *gif, int transparent, uint8_t *canvas) {
    if (DGifGetImageDesc(gif) == GIF_ERROR) return PANTO_MEDIA_CORRUPT;
    GifImageDesc *desc = &gif->Image;
    ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
    if (map == NULL || desc->Width <= 0 || desc->Height <= 0) return PANTO_MEDIA_CORRUPT;
    GifPixelType *line = malloc((size_t)desc->Width);
    if (line == NULL) return PANTO_MEDIA_NO_MEMORY;
    static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        for (int y = desc->Interlace ? start[pass] : 0; y < desc->Height; y += desc->Interlace ? step[pass] : 1) {
            if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) {
                free(line);
                return PANTO_MEDIA_CORRUPT;
            }
            long row = (long)desc->Top + y;
            if (row < 0 || row >= gif->SHeight) continue;
            for (int x = 0; x < desc->Width; x++) {
                long col = (long)desc->Left + x;
                if (col < 0 || col >= gif->SWidth || line[x] == transparent || line[x] >= map->ColorCount) continue;
                uint8_t *px = canvas + ((size_t)row * (size_t)gif->SWidth + (size_t)col) * 4;
                GifColorType c = map->Colors[line[x]];
                px[0] = c.Red;
                px[1] = c.Green;
                px[2] = c.Blue;
                px[3] = 255;
            }
        }
    }
    free(line);
    return PANTO_MEDIA_OK;
}

int panto_gif_decode(const uint8_t *data, size_t len, uint64_t max_pixels, panto_media_alloc alloc, void *ctx, panto_media_shape *out) {
    struct source src = {data, len, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&src, read_source, &error);
    if (gif == NULL) return PANTO_MEDIA_CORRUPT;
    int status = PANTO_MEDIA_CORRUPT;
    if (gif->SWidth <= 0 || gif->SHeight <= 0) goto done;
    if ((uint64_t)gif->SWidth * (uint64_t)gif->SHeight > max_pixels) {
        status = PANTO_MEDIA_TOO_LARGE;
        goto done;
    }
    size_t pixels = (size_t)gif->SWidth * (size_t)gif->SHeight;
    uint8_t *canvas = alloc(ctx, pixels * 4);
    if (canvas == NULL) {
        status = PANTO_MEDIA_NO_MEMORY;
        goto done;
    }
    memset(canvas, 0, pixels * 4);
    int transparent = -1;
    for (;;) {
        GifRecordType record;
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) goto done;
        if (record == IMAGE_DESC_RECORD_TYPE) {
            status = paint_frame(gif, transparent, canvas);
            break;
        }
        if (record != EXTENSION_RECORD_TYPE) goto done; /* the trailer before any image */
        int code;
        GifByteType *ext;
        if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) goto done;
        if (code == GRAPHICS_EXT_FUNC_CODE && ext != NULL && ext[0] >= 4 && (ext[1] & 1)) transparent = ext[4];
        while (ext != NULL)
            if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) goto done;
    }
    if (status == PANTO_MEDIA_OK) {
        out->width = (uint32_t)gif->SWidth;
        out->height = (uint32_t)gif->SHeight;
        out->channels = 4;
        if (transparent < 0) { /* opaque: RGB, in place */
            for (size_t i = 0; i < pixels; i++) memmove(canvas + i * 3, canvas + i * 4, 3);
            out->channels = 3;
        }
    }
done:
    DGifCloseFile(gif, &error);
    return status;
}
