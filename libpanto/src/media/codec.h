/* The C side of libpanto's media pipeline (libpanto/src/media/): thin shims over Debian's
 * codec libraries, so that their error paths (libjpeg's longjmp, libpng's) never cross a Zig
 * frame. Every function returns 0 on success and a PANTO_MEDIA_* failure otherwise; nothing
 * aborts or prints. Pixels are 8-bit, interleaved, `channels` per pixel (1 gray, 2 gray+alpha,
 * 3 RGB, 4 RGBA), rows packed. Decoded pixels and encodings are written into memory asked of
 * the caller's allocator (`panto_media_alloc`), which the caller owns even on failure. */
#ifndef PANTO_MEDIA_CODEC_H
#define PANTO_MEDIA_CODEC_H
#include <stddef.h>
#include <stdint.h>

enum {
    PANTO_MEDIA_OK = 0,
    PANTO_MEDIA_CORRUPT = 1,     /* the codec refused the bytes */
    PANTO_MEDIA_NO_MEMORY = 2,   /* the caller's allocator said no */
    PANTO_MEDIA_TOO_LARGE = 3,   /* more pixels than max_pixels */
};

/* Returns `size` bytes, or NULL when memory runs out. At most one call a decode or encode. */
typedef uint8_t *(*panto_media_alloc)(void *ctx, size_t size);

typedef struct {
    uint32_t width, height, channels;
} panto_media_shape;

int panto_png_decode(const uint8_t *data, size_t len, uint64_t max_pixels, panto_media_alloc alloc, void *ctx, panto_media_shape *out);
int panto_png_encode(const uint8_t *pixels, panto_media_shape shape, panto_media_alloc alloc, void *ctx, size_t *out_len);

/* Decodes at the smallest of libjpeg's DCT scalings (M/8) that is still at least want_w x
 * want_h (0, 0: full size). */
int panto_jpeg_decode(const uint8_t *data, size_t len, uint64_t max_pixels, uint32_t want_w, uint32_t want_h, panto_media_alloc alloc, void *ctx, panto_media_shape *out);
/* channels 1 or 3. */
int panto_jpeg_encode(const uint8_t *pixels, panto_media_shape shape, int quality, panto_media_alloc alloc, void *ctx, size_t *out_len);

/* Decodes the first frame, scaled by libwebp to want_w x want_h (0, 0: full size).
 * `lossless` tells whether the bitstream was lossless (VP8L). */
int panto_webp_decode(const uint8_t *data, size_t len, uint64_t max_pixels, uint32_t want_w, uint32_t want_h, panto_media_alloc alloc, void *ctx, panto_media_shape *out, int *lossless);
/* channels 3 or 4; quality < 0: lossless. */
int panto_webp_encode(const uint8_t *pixels, panto_media_shape shape, int quality, panto_media_alloc alloc, void *ctx, size_t *out_len);

/* The first frame on the logical screen: RGBA when it has a transparent color, else RGB. */
int panto_gif_decode(const uint8_t *data, size_t len, uint64_t max_pixels, panto_media_alloc alloc, void *ctx, panto_media_shape *out);

/* stb_image_resize (Mitchell filter, alpha-weighted) from in_shape to out_shape's size. */
int panto_resize(const uint8_t *in, panto_media_shape in_shape, uint8_t *out, panto_media_shape out_shape);

#endif
